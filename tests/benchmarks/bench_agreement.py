"""Benchmarks of the agreement statistics (figures in tests/benchmarks/agreement.md).

Run: python tests/benchmarks/bench_agreement.py [--quick | --curve [--sizes 10k,100k,1M,10M]]

1. Krippendorff's alpha (ordinal, 0-5) on 100,000 items x 50 raters with a
   1000-resample item bootstrap, as a ratio to ONE plain krippendorff.alpha call
   on the same reliability matrix in the same run.
2. build_report on a synthetic study of 1,000,000 human judgement rows
   (20,000 items x 10 raters x 5 metrics of the ui_mockup rubric) plus one
   judge, with n_boot=1000.
3. --curve: build_report time and peak memory at 10k, 100k, 1M (and 10M) judgement rows, each
   size in a fresh process (its own peak RSS), and the fitted exponents of time ~ rows^a and
   memory ~ rows^b.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotator.ingest.rubrics import load_rubric  # noqa: E402
from annotator.services.memory import set_memory_policy  # noqa: E402
from annotator.stats.agreement import krippendorff_alpha  # noqa: E402
from annotator.stats.frames import StudyFrames  # noqa: E402
from annotator.stats.report_model import build_report  # noqa: E402


def machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next(
            (ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")),
            "?",
        )
    except OSError:
        model = "?"
    import os

    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def ordinal_matrix(n_items: int, n_raters: int, seed: int = 0) -> np.ndarray:
    """Raters x items, values 0-5 around a latent item score, 5% missing."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(2.5, 1.3, size=n_items)
    data = np.clip(np.rint(latent[None, :] + rng.normal(0, 0.8, (n_raters, n_items))), 0, 5)
    data[rng.random(data.shape) < 0.05] = np.nan
    return data


def bench_alpha(n_items: int, n_raters: int, n_boot: int) -> dict[str, float]:
    data = ordinal_matrix(n_items, n_raters)
    t0 = time.perf_counter()
    plain = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    t_plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = krippendorff_alpha(data, level="ordinal", n_boot=n_boot, seed=0)
    t_ours = time.perf_counter() - t0
    assert abs(ours["estimate"] - plain) < 1e-9, (ours, plain)
    return {
        "plain_s": t_plain,
        "boot_s": t_ours,
        "ratio": t_ours / t_plain,
        "alpha": ours["estimate"],
        "low": ours["low"],
        "high": ours["high"],
    }


def synthetic_study(
    n_cases: int, n_generators: int, renders: int, n_raters: int, seed: int = 0
) -> StudyFrames:
    """ui_mockup study: every rater judges every item; one judge; sessions of 100."""
    rng = np.random.default_rng(seed)
    rubric = load_rubric(ROOT / "rubrics" / "ui_mockup.toml")
    gens = [f"gen{g}" for g in range(n_generators)]
    case = np.repeat(np.arange(n_cases), n_generators * renders)
    gen = np.tile(np.repeat(np.arange(n_generators), renders), n_cases)
    n = len(case)
    item_ids = np.array([f"it{i:06d}" for i in range(n)])
    items = pd.DataFrame(
        {
            "item_id": item_ids,
            "display_code": [f"D{i:06d}" for i in range(n)],
            "case_id": [f"case{c:04d}" for c in case],
            "cell_id": [f"cell{c:04d}" for c in case],
            "generator": np.array(gens)[gen],
            "slice": None,
        }
    )
    q = rng.normal(0, 1, n) + np.linspace(-0.5, 0.5, n_generators)[gen]
    tags = [m for m in rubric.metrics if m.kind == "tags"][0].options
    frames = []
    for r in range(n_raters):
        noise = rng.normal(0, 0.7, (4, n))
        order = rng.permutation(n)
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        base = {
            "item_id": item_ids,
            "rater": f"rater{r:02d}",
            "reason": None,
            "created_at": None,
            "session_id": [f"s{r}-{p // 100}" for p in position],
            "position": position % 100,
        }
        g1 = np.where(q + noise[0] > -0.8, "PASS", "FAIL")
        g2 = np.where(q + noise[1] > -0.5, "PASS", "FAIL")
        s1 = np.clip(np.rint(2.8 + 1.1 * q + noise[2]), 0, 5).astype(int)
        s2 = np.clip(np.rint(3.0 + 0.9 * q + noise[3]), 0, 5).astype(int)
        pick = rng.random((n, len(tags))) < 1 / (1 + np.exp(2.5 + 1.5 * q))[:, None]
        tag_vals = [tuple(t for t, p in zip(tags, row, strict=True) if p) for row in pick]
        for key, vals in (
            ("instruction_following", g1),
            ("text_rendering", g2),
            ("layout_hierarchy", s1),
            ("ui_affordance", s2),
            ("failure_tags", tag_vals),
        ):
            frames.append(pd.DataFrame({**base, "metric": key, "value": list(vals)}))
    judgements = pd.concat(frames, ignore_index=True)
    jn = rng.normal(0, 0.6, (2, n))
    judge = pd.concat(
        [
            pd.DataFrame(
                {
                    "item_id": item_ids,
                    "judge": "judge-a",
                    "metric": "instruction_following",
                    "value": np.where(q + jn[0] > -1.0, "PASS", "FAIL"),
                    "reason": None,
                }
            ),
            pd.DataFrame(
                {
                    "item_id": item_ids,
                    "judge": "judge-a",
                    "metric": "layout_hierarchy",
                    "value": np.clip(np.rint(3.0 + q + jn[1]), 0, 5).astype(int),
                    "reason": None,
                }
            ),
        ],
        ignore_index=True,
    )
    return StudyFrames(
        "bench",
        rubric,
        items=items,
        judgements=judgements,
        judge_scores=judge,
        settings={"release_gate": {"verdict_pass_rate": 0.5, "layout_hierarchy": 2.5}},
    )


def bench_report(n_cases: int, n_boot: int) -> dict[str, float]:
    t0 = time.perf_counter()
    frames = synthetic_study(n_cases, 5, 4, 10)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = build_report(frames, n_boot=n_boot, seed=0, n_perm=200)
    t_report = time.perf_counter() - t0
    return {
        "rows": len(frames.judgements),
        "items": len(frames.items),
        "frames_s": t_build,
        "report_s": t_report,
        "findings": len(report["findings"]),
        "metrics": len(report["metrics"]),
    }


def report_point(rows: int, n_boot: int) -> dict[str, float]:
    """One point of the curve in this process: 20 items a case, 10 raters, 5 metrics."""
    n_cases = max(1, rows // 1000)
    r = bench_report(n_cases, n_boot)
    return {**r, "peak_mb": peak_rss_mb()}


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "km" else text) * mult)


def fit_exponent(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y on log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


def curve(sizes: list[int], n_boot: int, allocator: str) -> None:
    points = []
    print(
        f"{'judgement rows':>15} {'items':>8} {'frames s':>9} {'build_report s':>15} {'peak RSS MB':>12}"
    )
    for rows in sizes:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--point",
                str(rows),
                "--n-boot",
                str(n_boot),
                "--allocator",
                allocator,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            tail = (out.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{rows:>15,} failed (exit {out.returncode}): {tail}")
            continue
        p = json.loads(out.stdout.strip().splitlines()[-1])
        points.append(p)
        print(
            f"{p['rows']:>15,} {p['items']:>8,} {p['frames_s']:>9.1f} {p['report_s']:>15.1f} "
            f"{p['peak_mb']:>12.0f}"
        )
    if len(points) >= 2:
        xs = [p["rows"] for p in points]
        a = fit_exponent(xs, [p["report_s"] for p in points])
        b = fit_exponent(xs, [p["peak_mb"] for p in points])
        print(f"fitted: time ~ rows^{a:.2f}, peak memory ~ rows^{b:.2f} (1.00 = linear)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    ap.add_argument("--curve", action="store_true", help="report time and memory against size")
    ap.add_argument("--sizes", default="10k,100k,1M", help="judgement rows for --curve")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument(
        "--allocator",
        choices=["app", "default"],
        default="app",
        help="app: the memory policy the annotator command sets (services/memory.py); "
        "default: the allocator as it comes",
    )
    ap.add_argument("--point", type=int, help=argparse.SUPPRESS)  # one size, JSON out
    args = ap.parse_args()
    if args.allocator == "app":
        set_memory_policy()
    if args.point:
        print(json.dumps(report_point(args.point, args.n_boot)))
        return
    print(f"{machine()}; allocator: {args.allocator}")
    if args.curve:
        curve([parse_size(x) for x in args.sizes.split(",")], args.n_boot, args.allocator)
        return
    if args.quick:
        a = bench_alpha(10_000, 20, 200)
        r = bench_report(50, 200)
    else:
        a = bench_alpha(100_000, 50, 1000)
        r = bench_report(1000, 1000)
    print(
        f"alpha: plain krippendorff.alpha {a['plain_s']:.2f} s; alpha + bootstrap "
        f"{a['boot_s']:.2f} s; ratio {a['ratio']:.1f}x; alpha {a['alpha']:.4f} "
        f"[{a['low']:.4f}, {a['high']:.4f}]"
    )
    print(
        f"report: {r['rows']:,} judgement rows, {r['items']:,} items; frames {r['frames_s']:.1f} s; "
        f"build_report {r['report_s']:.1f} s; {r['metrics']} metric entries, "
        f"{r['findings']} findings"
    )
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
