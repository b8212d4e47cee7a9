"""Certified judging of pair votes by simulation (model CP, tests/unit/certified_pair_models.py):
validity.md's section "Certified judging", the pair table.

    python tests/benchmarks/bench_certified_pairs.py [--runs 1000]

Per design and calibration size (pairs with a clear human majority): the share of runs whose
realized disagreement among the fresh pairs at or above the threshold exceeds alpha (abstaining
never does), with its exact 95% interval, the target being at most delta; the share of runs that
accept, of those at the threshold 1.0 (the consistent pairs only), the coverage (share of the
fresh pairs accepted, mean over accepting runs) and the realized agreement.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from certified_pair_models import DESIGNS, SIZES, PairPool, simulate_pair_pac  # noqa: E402


def rate(k: int, n: int) -> str:
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k / n:.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    t0 = time.time()
    print(
        "| design | population disagreement (consistent / with one order / all) | calibration pairs "
        "| violations (> alpha) [95%] | runs accepting | at 1.0 | coverage | realized agreement |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for d in DESIGNS:
        pool = PairPool.of(d)
        pop = " / ".join(f"{pool.rate[t]:.3f}" for t in (1.0, 0.75, 0.5))
        for n in SIZES:
            t = simulate_pair_pac(d, n, a.runs, pool=pool)
            acc = t.accepted
            cov = f"{t.coverage / acc:.1%}" if acc else "—"
            agr = f"{t.agreement / acc:.3f}" if acc else "—"
            at1 = f"{t.at_consistent / acc:.0%}" if acc else "—"
            print(
                f"| {d.name} | {pop} | {n} | {rate(t.violations, t.runs)} | "
                f"{acc / t.runs:.1%} | {at1} | {cov} | {agr} |"
            )
    print()
    for d in DESIGNS:
        print(f"- {d.name}: {d.what}")
    print(f"\n{a.runs} runs per cell, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
