"""Stratified PPI++ (validity.md, model S): coverage of the `stratified` block's interval and its
width against the unstratified PPI++ interval the report prints beside it.

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_strata.py [--runs 1000]

Model S: a generator of N = 2,000 items, one per case, a pass rate; humans rate a uniform
sample of n (50 or 200); the judge scores every item with a confidence. Judges (none of them
the tertile model the strata assume):
- "steps": its error rate steps with its confidence at 0.6 and 0.85 (40%, 15%, 2%), lenient
  (wrong on a failing item: PASS) two times in three;
- "coin when unsure": right 99% of the time at confidence 0.75 or more, a coin below it
  (the case stratification is for: one lambda must average a judge worth nothing on half the
  items with one worth almost a label on the other);
- "by generator": errors that depend on the generator, not on its confidence (5% on gen-a,
  35% on gen-b, lenient), so the confidence strata split nothing that matters;
- "useless": a coin, confidences unrelated to anything.
The truth is the pass rate the items are drawn at (0.6): the estimator's variance counts the
judge's mean over the N items as a sample too, so against the N items' own pass rate every
interval over-covers (98-100% for the 5%-error judge at n = 200, the finite population
correction PPI++ does not make). Where the strata merge into one the
report prints the unstratified figure: counted so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_debiased import wilson  # noqa: E402

from annotator.stats.debiased import ppi_mean  # noqa: E402
from annotator.stats.debiased_strata import stratified_entry  # noqa: E402

N_ITEMS = 2000
P_PASS = 0.6
JUDGES = ("steps", "coin when unsure", "by generator: gen-a", "by generator: gen-b", "useless")


def study(rng: np.random.Generator, judge: str, n: int) -> tuple[pd.DataFrame, float]:
    """One generator's items as `_one_figure` takes them, and its true pass rate."""
    y = (rng.random(N_ITEMS) < P_PASS).astype(float)
    conf = rng.uniform(0.5, 1.0, N_ITEMS)
    if judge == "steps":
        err = np.select([conf < 0.6, conf < 0.85], [0.40, 0.15], 0.02)
    elif judge == "coin when unsure":
        err = np.where(conf < 0.75, 0.5, 0.01)
    elif judge.startswith("by generator"):
        err = np.full(N_ITEMS, 0.05 if judge.endswith("gen-a") else 0.35)
    else:
        err = np.full(N_ITEMS, np.nan)
    if judge == "useless":
        f = (rng.random(N_ITEMS) < 0.5).astype(float)
    else:
        wrong = rng.random(N_ITEMS) < err
        # lenient: a wrong judge passes a failing item two times in three, fails a passing one
        # the third
        lenient = rng.random(N_ITEMS) < 2 / 3
        f = np.where(wrong & ((y == 0) == lenient), 1.0 - y, y)
    drawn = np.zeros(N_ITEMS, dtype=bool)
    drawn[rng.choice(N_ITEMS, n, replace=False)] = True
    sub = pd.DataFrame(
        {
            "case_id": np.arange(N_ITEMS).astype(str),
            "y": np.where(drawn, y, np.nan),
            "f": f,
            "pi": n / N_ITEMS,
            "in_sample": drawn,
            "conf": np.round(conf, 3),
            "slice": None,
        }
    )
    return sub, P_PASS


def one(rng: np.random.Generator, judge: str, n: int) -> tuple[bool, bool, float, bool]:
    """(stratified covers, unstratified covers, width ratio, stratified)."""
    sub, theta = study(rng, judge, n)
    lab = sub["y"].notna().to_numpy()
    f = sub["f"].to_numpy()
    flat = ppi_mean(sub["y"].to_numpy()[lab], f[lab], f[~lab], small_sample=True)
    plain = flat.ppi.low <= theta <= flat.ppi.high
    block = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.1)["stratified"]
    if block is None:
        return plain, plain, 1.0, False
    return block["low"] <= theta <= block["high"], plain, block["width_ratio"], True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    a = ap.parse_args()
    rng = np.random.default_rng(20261205)
    print(f"runs {a.runs}; N = {N_ITEMS}")
    print("| judge | n | stratified coverage | PPI++ coverage | width ratio (mean) | "
          "stratified |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for judge in JUDGES:
        for n in (50, 100, 200):
            runs = [one(rng, judge, n) for _ in range(a.runs)]
            cov = sum(r[0] for r in runs)
            cov_p = sum(r[1] for r in runs)
            lo, hi = wilson(cov, a.runs)
            lo_p, hi_p = wilson(cov_p, a.runs)
            ratio = np.mean([r[2] for r in runs])
            strat = np.mean([r[3] for r in runs])
            print(
                f"| {judge} | {n} | {cov / a.runs:.1%} [{lo:.1%}, {hi:.1%}] | "
                f"{cov_p / a.runs:.1%} [{lo_p:.1%}, {hi_p:.1%}] | {ratio:.3f} | {strat:.0%} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
