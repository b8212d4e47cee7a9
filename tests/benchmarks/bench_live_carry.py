"""A live estimate that carries the EM fits and resamples nothing, against one that fits them
again and draws one replicate (what it did before), alternating.

Run: python tests/benchmarks/bench_live_carry.py [--items 10000] [--raters 10] [--rounds 3]

The study of bench_dashboard.py (items x raters answers of the ui_mockup rubric; 10,000 x 10 =
500,000 metric judgements). After 100 new answers each round it times the live estimate
(`build_report(intervals_from=the last full report)`) twice on the same frames: before, with
the raters' competence and latent truth fitted again (`rater_competence`) and the shared item
bootstrap drawing one replicate; now, with them carried from the last full report
(`live_estimate.carry_competence`) and the bootstrap giving point estimates only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import build  # noqa: E402
from bench_live import add_answers  # noqa: E402

from annotator.services.live_frames import read_live, refresh  # noqa: E402
from annotator.services.memory import set_memory_policy  # noqa: E402
from annotator.services.study import DEFAULT_SETTINGS, Study  # noqa: E402
from annotator.stats import report_model  # noqa: E402
from annotator.stats.answers import human_answers, item_table  # noqa: E402
from annotator.stats.bootstrap import ItemBootstrap  # noqa: E402
from annotator.stats.competence import rater_competence  # noqa: E402
from annotator.stats.consensus import metric_specs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    set_memory_policy()
    carry = report_model.carry_competence
    points_only = ItemBootstrap.for_items

    def one_replicate(items, n_boot=1000, seed=0):  # noqa: ANN001, ANN202
        return points_only(items, max(1, n_boot), seed)

    with tempfile.TemporaryDirectory() as tmp:
        st = Study.open(build(Path(tmp) / "study", args.items, args.raters))
        settings = {**DEFAULT_SETTINGS, **st.db.all_settings()}
        live = read_live(st.db, st.rubric, st.name, settings)
        t = time.perf_counter()
        exact = report_model.build_report(live.frames, n_boot=1000)
        full = time.perf_counter() - t
        print(f"{len(live.frames.judgements):,} metric judgements; full report {full:.2f} s")
        for r in range(args.rounds):
            add_answers(st, f"late{r}", 100, r)
            live = refresh(live, st.db, st.rubric, st.name, settings)
            specs = metric_specs(live.frames.rubric)
            human = human_answers(live.frames, specs, item_table(live.frames))

            def fitted(_exact, _keys, _verdict, human=human, specs=specs):
                # the fits a live estimate made before (its n_boot is 1: no resampling)
                return rater_competence(human, specs, n_boot=1, seed=0)

            report_model.carry_competence = fitted
            ItemBootstrap.for_items = one_replicate  # type: ignore[method-assign]
            t = time.perf_counter()
            report_model.build_report(live.frames, n_boot=1000, intervals_from=exact)
            before = time.perf_counter() - t
            report_model.carry_competence = carry
            ItemBootstrap.for_items = points_only  # type: ignore[method-assign]
            t = time.perf_counter()
            report_model.build_report(live.frames, n_boot=1000, intervals_from=exact)
            after = time.perf_counter() - t
            print(
                f"round {r + 1}: before {before:.2f} s, now {after:.2f} s "
                f"({after / before:.0%}); of the full report {before / full:.1%} -> "
                f"{after / full:.1%}"
            )
        st.close()


if __name__ == "__main__":
    main()
