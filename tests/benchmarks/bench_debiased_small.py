"""The debiased figures at small samples (validity.md, model H at small samples): the coverage of
the intervals the report prints, and how often it prints one, at 10-40 sampled items.

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_small.py [--runs 1000]

Model H as in bench_debiased.py (one generator, five judges, independent items or 40 cases, a
uniform or an active sample, N = 10 n judged items). The report prints an interval only from
MIN_UNITS_FOR_INTERVAL effective sampled items (Kish's, `PPIResult.units`); below it the
estimate alone. Coverage is counted over the studies with an interval.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_debiased as model  # noqa: E402

from annotator.stats.debiased import MIN_UNITS_FOR_INTERVAL  # noqa: E402

DESIGNS = ("independent, uniform", "cases, uniform", "independent, active", "cases, active")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--sizes", default="10,15,20,30,40")
    a = ap.parse_args()
    model.SMALL = True  # the report's interval
    rng = np.random.default_rng(20261205)
    theta = model.truth(rng)
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"truth {theta:.4f}; runs {a.runs}; interval from {MIN_UNITS_FOR_INTERVAL} units")
    print("| design | judge | " + " | ".join(f"n={n}" for n in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for design in DESIGNS:
        for judge in model.JUDGES:
            cells = []
            for n in sizes:
                printed = covered = 0
                units = []
                for _ in range(a.runs):
                    try:
                        r = model.one(rng, n, design.startswith("cases"), judge,
                                      design.split(", ")[1], theta)  # fmt: skip
                    except ValueError:  # an active draw of fewer than two items: no figure
                        continue
                    units.append(r.units)
                    if r.units >= MIN_UNITS_FOR_INTERVAL:
                        printed += 1
                        covered += r.ppi.low <= theta <= r.ppi.high
                if printed:
                    lo, hi = model.wilson(covered, printed)
                    cov = f"{covered / printed:.1%} [{lo:.1%}, {hi:.1%}]"
                else:
                    cov = "-"
                cells.append(
                    f"{cov}, printed {printed / a.runs:.0%} (units {np.median(units):.0f})"
                )
            print(f"| {design} | {judge} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
