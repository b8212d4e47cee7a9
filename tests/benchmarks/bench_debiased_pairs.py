"""Coverage of the debiased win rates (PPI++ on pairs) by simulation (validity.md, model P).

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_pairs.py [--runs 500]

Model P is tests/unit/test_debiased_pairs.py's `simulated_study` (the fast check there runs
300 studies of one cell): pairs "A vs B" in cases, A preferred with probability
sigmoid(0.3 + u_case + e_pair) (u ~ N(0, 0.6), e ~ N(0, 1)) when not a tie (15%); two humans
vote on a simple random sample of n pairs (averaged per pair), the judge on all N = 10 n
(the first human's vote with probability 0.7, else: `unbiased` another human-like vote,
`lenient` A; `constant` always A); independent: one pair per case; cases: 25 cases. The
target is A's superpopulation win rate (ties 1/2, cases equal). Each study goes through the
report's own function (`debiased_pairs_section`: the jackknife interval, t on units less one).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_debiased_pairs import simulated_study, true_win_rate  # noqa: E402

from annotator.stats.debiased_pairs import debiased_pairs_section  # noqa: E402


def wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.isf(0.025)
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=500)
    args = ap.parse_args()
    theta = true_win_rate()
    print(f"target win rate {theta:.4f}")
    rng = np.random.default_rng(20261203)
    for design in ("independent", "cases"):
        for judge in ("unbiased", "lenient", "constant"):
            for n in (50, 200):
                N = 10 * n
                cases, per = (N, 1) if design == "independent" else (25, N // 25)
                hits, ratio, eff = 0, [], []
                t0 = time.time()
                for _ in range(args.runs):
                    votes, jv, settings = simulated_study(
                        rng, n, cases=cases, per_case=per, judge=judge
                    )
                    fig = debiased_pairs_section(votes, jv, settings)["judges"]["J"]["by_pair"]
                    fig = fig["A vs B"]
                    p, h = fig["ppi"], fig["humans_only"]
                    hits += p["low"] <= theta <= p["high"]
                    ratio.append((p["high"] - p["low"]) / (h["high"] - h["low"]))
                    eff.append(fig["effective_human_labels"])
                lo, hi = wilson(hits, args.runs)
                print(
                    f"| {design} | {judge} | {n} | {hits / args.runs:.1%} [{lo:.1%}, {hi:.1%}] "
                    f"| {np.mean(ratio):.3f} | {np.mean(eff):.0f} | {time.time() - t0:.0f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
