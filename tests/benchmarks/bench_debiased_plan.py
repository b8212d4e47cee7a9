"""Does the planner's number of labels give the width asked for? (validity.md, the planner)

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_plan.py [--runs 1000]

Each run: a pilot study of n0 human labels (model H of validity.md, a judge lenient by about
0.1 that is right 80% of the time, on 10 x the items; independent items, or 40 cases), the
plan for `shrink` x the pilot's report-interval width (stats/debiased_plan.plan_figure), then a
fresh study of the planned size: the width got over the target. The pilot is
tests/unit/test_debiased_plan.py's `pilot_then_planned` (its fast check: 200 runs of one cell).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_debiased_plan import pilot_then_planned  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(20261203)
    print(
        "| design | pilot n0 | target / pilot width | width got / target: mean | median | 10-90% | time |"
    )
    print("|---|---|---|---|---|---|---|")
    for cases in (None, 40):
        for n0 in (30, 60, 200):
            for shrink in (0.5, 0.7):
                t0 = time.time()
                r = np.array(
                    [
                        np.divide(*pilot_then_planned(rng, n0, shrink, cases=cases)[::-1])
                        for _ in range(args.runs)
                    ]
                )
                lo, hi = np.quantile(r, [0.1, 0.9])
                print(
                    f"| {'cases (40)' if cases else 'independent'} | {n0} | {shrink} | "
                    f"{r.mean():.3f} | {np.median(r):.3f} | {lo:.2f}-{hi:.2f} | "
                    f"{time.time() - t0:.0f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
