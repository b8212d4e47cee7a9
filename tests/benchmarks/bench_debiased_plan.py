"""Does the planner's number of labels give the width asked for? (validity.md, the planner)

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_plan.py [--runs 1000]

Each run: a pilot study of n0 human labels (model H of validity.md, a judge lenient by about
0.1 that is right 80% of the time, on 10 x the items; independent items, or 40 or 100 cases
with a case effect), the plan for `shrink` x the pilot's report-interval width
(stats/debiased_plan.plan_figure), then a fresh study of the planned size: the width got over
the target. Each clustered cell twice: the rule n (w/t)^2 alone (before), and with the pilot's
design effect (the planner). A plan the planner calls unreachable (these cases cannot give the
target) is counted apart, and its fresh study run at 10 x n0 labels: the width got there over
the target says whether the target was indeed out of reach. The pilot is
tests/unit/test_debiased_plan.py's `pilot_then_planned` (its fast checks: 200 runs of a cell).
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
        "| design | planner | pilot n0 | target / pilot width | width got / target: median | "
        "mean | 10-90% | > 1.1 | called unreachable | their width at 10 x n0 / target: "
        "median | time |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cells = [(None, True)] + [(k, de) for k in (40, 100) for de in (False, True)]
    for cases, deff in cells:
        for n0 in (30, 60, 200):
            for shrink in (0.5, 0.7):
                t0 = time.time()
                res = [
                    pilot_then_planned(rng, n0, shrink, cases=cases, design_effect=deff)
                    for _ in range(args.runs)
                ]
                r = np.array([w / t for t, w, capped in res if not capped])
                off = [w / t for t, w, capped in res if capped]
                lo, hi = np.quantile(r, [0.1, 0.9]) if len(r) else (np.nan, np.nan)
                design = f"cases ({cases})" if cases else "independent"
                planner = "design effect" if deff and cases else "n (w/t)^2"
                med = f"{np.median(r):.3f}" if len(r) else "-"
                mean = f"{r.mean():.3f}" if len(r) else "-"
                print(
                    f"| {design} | {planner} | {n0} | {shrink} | {med} | {mean} | "
                    f"{lo:.2f}-{hi:.2f} | {np.mean(r > 1.1) if len(r) else 0:.0%} | "
                    f"{len(off) / len(res):.0%} | "
                    f"{np.median(off) if off else float('nan'):.2f} | {time.time() - t0:.0f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
