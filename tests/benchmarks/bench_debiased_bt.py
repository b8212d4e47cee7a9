"""Coverage of PPI++ Bradley-Terry intervals and of the rank-sets (stats/debiased_bt.py).

    python tests/benchmarks/bench_debiased_bt.py [--runs 1000]

Designs the code was not written against: 5 generators with true strengths
(0, 0.5, -0.4, 0.9, 0.15), pair outcomes from Bradley-Terry; a judge whose vote is the truth
flipped with probability 0.15 (good), 0.5 (useless) or flipped towards gen-b on every pair it is
in (an error that depends on the generator, 30%); 60 or 200 human-labelled pairs among 2,000;
independent pairs or 6 pairs a case sharing a case effect (a case-level shift of the first
generator's log-odds, sd 0.5). Per run: whether each strength's 95% interval holds the truth
(coverage per generator, pooled), and whether all five rank-sets hold the true ranks together
(target >= 95%). Prints each rate with its 95% Clopper-Pearson interval and the mean lam.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotator.stats.debiased_bt import design, ppi_bradley_terry, rank_sets  # noqa: E402

NAMES = ["gen-a", "gen-b", "gen-c", "gen-d", "gen-e"]
TRUE = np.array([0.0, 0.5, -0.4, 0.9, 0.15])
TRUE_RANK = {g: int(r) for g, r in zip(NAMES, 1 + np.argsort(np.argsort(-TRUE)), strict=True)}


def cp(k: int, n: int) -> str:
    lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k / n:.1%} [{lo:.1%}, {hi:.1%}]"


def one_run(rng, n_lab: int, judge: str, per_case: int, total: int = 2000):
    a = rng.integers(0, 5, total)
    b = (a + rng.integers(1, 5, total)) % 5
    first, second = np.minimum(a, b), np.maximum(a, b)
    cases = np.arange(total) // per_case
    shift = rng.normal(0, 0.5, cases.max() + 1)[cases] if per_case > 1 else 0.0
    d = TRUE[first] - TRUE[second] + shift
    y = (rng.random(total) < 1 / (1 + np.exp(-d))).astype(float)
    if judge == "good":
        f = np.where(rng.random(total) < 0.15, 1 - y, y)
    elif judge == "useless":
        f = (rng.random(total) < 0.5).astype(float)
    else:  # prefers gen-b (index 1) whenever it is in the pair
        towards = np.where(first == 1, 1.0, np.where(second == 1, 0.0, np.nan))
        flip = ~np.isnan(towards) & (rng.random(total) < 0.3)
        f = np.where(flip, towards, np.where(rng.random(total) < 0.15, 1 - y, y))
    lab = np.zeros(total, bool)
    lab[rng.choice(total, n_lab, replace=False)] = True
    x = design(np.array(NAMES)[first], np.array(NAMES)[second], NAMES)
    kw = {}
    if per_case > 1:
        kw = {"cluster_labelled": cases[lab], "cluster_unlabelled": cases[~lab]}
    fit = ppi_bradley_terry(NAMES, x[lab], y[lab], f[lab], x[~lab], f[~lab], **kw)
    lo, hi = fit.interval(0.05)
    covered = (lo[1:] <= TRUE[1:]) & (TRUE[1:] <= hi[1:])
    ranks = rank_sets(NAMES, fit.strength, fit.cov, 0.05, dims=4)
    all_ranks = all(r[0] <= TRUE_RANK[g] <= r[1] for g, r in ranks.items())
    width = float(np.mean([r[1] - r[0] for r in ranks.values()]))
    return covered, all_ranks, fit.lam, width


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(2024)
    print("design | strength coverage | rank-sets simultaneous | mean lam | mean rank-set width")
    for per_case in (1, 6):
        for n_lab in (60, 200):
            for judge in ("good", "useless", "biased"):
                cov, ranks, lams, widths = [], [], [], []
                for _ in range(args.runs):
                    c, r, lam, w = one_run(rng, n_lab, judge, per_case)
                    cov.append(c)
                    ranks.append(r)
                    lams.append(lam)
                    widths.append(w)
                cov_a = np.concatenate(cov)
                print(
                    f"{judge} judge, {n_lab} labelled, {per_case} pair(s) a case | "
                    f"{cp(int(cov_a.sum()), len(cov_a))} | {cp(int(sum(ranks)), len(ranks))} | "
                    f"{np.mean(lams):.2f} | {np.mean(widths):.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
