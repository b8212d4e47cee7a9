"""Benchmark of the judge and rater reliability figures (figures in tests/benchmarks/reliability.md).

Run: python tests/benchmarks/bench_reliability.py [--quick]

The alternative-annotator test (every judge x metric), Dawid-Skene and MACE with their
item-bootstrap intervals (every rater x metric) on 10,000 items x 10 raters x 4 metrics (2 gates,
2 scales of the ui_mockup rubric; one judge on one gate and one scale), timed as the difference
between build_report with them and build_report without them, in the same run, same data.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_agreement import machine, peak_rss_mb, synthetic_study  # noqa: E402

from annotator.stats import report_model  # noqa: E402
from annotator.stats.alt_test import judge_alt_tests  # noqa: E402
from annotator.stats.competence import rater_competence  # noqa: E402

FOUR = ("instruction_following", "text_rendering", "layout_hierarchy", "ui_affordance")


def frames_4_metrics(n_cases: int):
    """500 cases x 5 generators x 4 renders = 10,000 items, 10 raters, the four non-tag metrics."""
    f = synthetic_study(n_cases, 5, 4, 10)
    f.judgements = f.judgements[f.judgements["metric"].isin(FOUR)].reset_index(drop=True)
    return f


def timed_report(frames, n_boot: int, with_reliability: bool) -> tuple[float, float, dict]:
    """Wall and CPU seconds of build_report (CPU time is steadier on shared cores)."""
    # the report without them: the two calls of report_model replaced by empty results
    report_model.judge_alt_tests = judge_alt_tests if with_reliability else (lambda *a, **k: {})
    report_model.rater_competence = (
        rater_competence if with_reliability else (lambda *a, **k: ({}, {}))
    )
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        rep = report_model.build_report(frames, n_boot=n_boot, seed=0, n_perm=200)
        return time.perf_counter() - t0, time.process_time() - c0, rep
    finally:
        report_model.judge_alt_tests = judge_alt_tests
        report_model.rater_competence = rater_competence


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1,000 items, 200 resamples")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(machine())
    n_cases, n_boot = (50, 200) if args.quick else (500, 1000)
    frames = frames_4_metrics(n_cases)
    print(f"{len(frames.items)} items, {len(frames.judgements)} human answers, n_boot {n_boot}")
    for _ in range(args.repeat):
        t_without, c_without, _ = timed_report(frames, n_boot, False)
        t_with, c_with, rep = timed_report(frames, n_boot, True)
        alt = rep["metrics"]["layout_hierarchy"]["judges"]["judge-a"]["alt_test"]
        comp = rep["raters"]["rater00"]["competence"]["layout_hierarchy"]
        print(
            f"report without {t_without:.1f} s; with alt-test + DS/MACE + bootstrap "
            f"{t_with:.1f} s; added {t_with - t_without:.1f} s; ratio {t_with / t_without:.2f}x"
        )
        print(
            f"  CPU time: without {c_without:.1f} s, with {c_with:.1f} s, "
            f"ratio {c_with / c_without:.2f}x"
        )
        print(
            f"  layout_hierarchy: alt-test winning rate {alt['winning_rate']:.2f} "
            f"(min passing epsilon {alt['min_passing_epsilon']}); rater00 competence "
            f"{comp['estimate']:.3f} [{comp['low']:.3f}, {comp['high']:.3f}]"
        )
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
