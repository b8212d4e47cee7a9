"""Certified judging by simulation (model C, tests/unit/certified_models.py): validity.md's section.

    python tests/benchmarks/bench_certified.py [--runs 1000]

Per design and calibration size: the share of runs whose realized disagreement among the fresh
items at or above the threshold exceeds alpha (abstaining never does), with its exact 95%
interval; the target is at most delta. Beside it the share of runs that accept, the coverage
(share of the fresh items accepted, mean over accepting runs) and the realized agreement. Then
the cascade of two judges (delta split evenly; beside it, each judge at the full delta as the
released code has it), the released code's fallback on the judge at chance, and conformal
alignment's realized false discovery rate (mean share of disagreements among the selected).
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

from certified_models import (  # noqa: E402
    CASCADE_WHAT,
    DESIGNS,
    SIZES,
    Pool,
    simulate_cascade,
    simulate_fdr,
    simulate_pac,
)


def rate(k: int, n: int) -> str:
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k / n:.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    t0 = time.time()
    print(
        "| design | calibration items | violations (> alpha) [95%] | runs accepting | coverage "
        "| realized agreement | worst generator / class over alpha |"
    )
    print("|---|---|---|---|---|---|---|")
    for d in DESIGNS:
        pool = Pool.of(d)
        for n in SIZES:
            t = simulate_pac(d, n, a.runs, pool=pool)
            acc = max(1, t.accepted)
            print(
                f"| {d.name} | {n} | {rate(t.violations, t.runs)} | {t.accepted / t.runs:.1%} | "
                f"{t.coverage / acc:.1%} | {t.agreement / acc:.3f} | "
                f"{rate(t.group_violations, t.runs)} |"
            )
    print()
    print(f"Cascade ({CASCADE_WHAT}):")
    print()
    print("| calibration items | delta per judge | violations [95%] | runs accepting | coverage |")
    print("|---|---|---|---|---|")
    for n in SIZES:
        for full in (False, True):
            t = simulate_cascade(n, a.runs, full_delta=full)
            acc = max(1, t.accepted)
            print(
                f"| {n} | {'0.1 (released code)' if full else '0.05 (split)'} | "
                f"{rate(t.violations, t.runs)} | {t.accepted / t.runs:.1%} | "
                f"{t.coverage / acc:.1%} |"
            )
    print()
    chance = next(d for d in DESIGNS if d.name == "chance")
    pool = Pool.of(chance)
    for n in SIZES:
        t = simulate_pac(chance, n, a.runs, pool=pool, released=True)
        print(
            f"- judge at chance, {n} calibration items, the released code's fallback (the highest "
            f"threshold when none passes): accepted in {t.accepted / t.runs:.1%} of runs, "
            f"violations {rate(t.violations, t.runs)}, realized agreement "
            f"{t.agreement / max(1, t.accepted):.3f}"
        )
    print()
    print("| design | calibration items | realized FDR, mean [95%] (q = 0.1) | share selected |")
    print("|---|---|---|---|")
    for d in DESIGNS:
        for n in SIZES:
            f = simulate_fdr(d, n, a.runs)
            m, lo, hi = f.mean_and_interval()
            print(f"| {d.name} | {n} | {m:.3f} [{lo:.3f}, {hi:.3f}] | {f.selected / f.runs:.1%} |")
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
