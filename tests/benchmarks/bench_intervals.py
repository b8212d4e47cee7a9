"""Intervals and tests off the happy path: the simulations behind validity.md's
rows for points 3 (position test on a fixed layout), 5 (calibration error and test), 4 (MACE
competence with unbalanced truth) and 8 (Bradley-Terry on unbalanced designs).

Run from the repository root, one section or all (sizes fit a shared 2-core machine):
    PYTHONPATH=. python tests/benchmarks/bench_intervals.py [position|calibration|mace|bt] [runs]
The drift figures (point 6) are tests/benchmarks/bench_drift.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))

from annotator.stats.bootstrap import ItemBootstrap  # noqa: E402
from annotator.stats.judge_calibration import (  # noqa: E402
    bin_of,
    consistency_test,
    register_calibration,
)
from annotator.stats.pair_tallies import coded_votes  # noqa: E402
from annotator.stats.position_bias import holm, layout_check, pooled_test, position_bias  # noqa: E402


def wilson(hits: int, n: int) -> str:
    """rate [95% Wilson interval]"""
    if n == 0:
        return "n/a"
    z = norm.isf(0.025)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{p:.1%} [{max(0.0, centre - half):.1%}, {min(1.0, centre + half):.1%}] ({hits}/{n})"


# ---- point 3 -----------------------------------------------------------------------------


def old_flags(v) -> bool:
    """What the report printed before: the pooled sign-flip p or any Holm-adjusted rater flag."""
    from scipy.stats import binomtest

    c = coded_votes(v)
    if pooled_test(c, 10, 0.05)["p_value"] < 0.05:
        return True
    ps = {}
    for r, rows in c.groupby("rater"):
        left = int((rows["choice"] == "left").sum())
        n = left + int((rows["choice"] == "right").sum())
        if n:
            ps[r] = binomtest(left, n, 0.5).pvalue
    return any(p < 0.05 for p in holm(ps).values())


def position(runs: int) -> None:
    from test_intervals_hold import pair_votes  # model P of validity.md, layouts as named

    rng = np.random.default_rng(2301)
    print("| layout (no position bias), 20 cases | any side flag before | any side flag now |")
    print("|---|---|---|")
    for layout in ("generator", "random", "per_rater"):
        old = new = 0
        for _ in range(runs):
            v = pair_votes(rng, 20, layout=layout)
            old += old_flags(v)
            pb = position_bias(v)
            new += bool(pb["p_value"] is not None and pb["p_value"] < 0.05) or bool(
                pb["flagged_raters"]
            )
        print(f"| {layout} | {wilson(old, runs)} | {wilson(new, runs)} |")
    print("\n| randomized layout: declared not randomized | 5 cases (30 pairs) | 10 | 25 |")
    print("|---|---|---|---|")
    for layout in ("random", "per_rater"):
        cells = []
        for cases in (5, 10, 25):
            fixed = sum(
                not layout_check(coded_votes(pair_votes(rng, cases, layout=layout)))["randomized"]
                for _ in range(runs)
            )
            cells.append(wilson(fixed, runs))
        print(f"| {layout} | " + " | ".join(cells) + " |")


# ---- point 5 -----------------------------------------------------------------------------


def _truth(shrink: float) -> tuple[float, float]:
    """(binned L2 calibration error, binned L1 ECE) of the judge of `calibration`."""
    c = np.random.default_rng(0).uniform(0.5, 1.0, 4_000_000)
    gap = (1 - shrink) * (c - 0.5) + 0.5 - c
    b = bin_of(c)
    w = np.bincount(b, minlength=10) / len(c)
    g = np.bincount(b, weights=gap, minlength=10) / np.maximum(np.bincount(b, minlength=10), 1)
    return float(np.sqrt((w * g**2).sum())), float((w * np.abs(g)).sum())


def calibration(runs: int) -> None:
    """Confidence ~ U(0.5, 1); right with probability 0.5 + (1 - shrink)(c - 0.5)."""
    rng = np.random.default_rng(2305)
    print(
        "| judge | items | debiased CE: mean [truth] | its 95% interval covers | test says "
        "miscalibrated | plug-in ECE: mean [truth] | plug-in interval covers |"
    )
    print("|---|---|---|---|---|---|---|")
    for shrink, name in (
        (0.0, "calibrated"),
        (0.2, "overconfident (shrink 0.2)"),
        (0.4, "overconfident (shrink 0.4)"),
    ):
        t2, t1 = _truth(shrink)
        for n in (50, 200, 1000):
            cov = rej = cov_old = 0
            est, plug = [], []
            for r in range(runs):
                conf = rng.uniform(0.5, 1.0, n)
                y = (rng.random(n) < 0.5 + (1 - shrink) * (conf - 0.5)).astype(float)
                plan = ItemBootstrap(n, 1000, r)
                e, _, p = register_calibration(plan, np.arange(n), conf, y)
                plan.run()
                d, old = e.resolve(), p.resolve()
                cov += d["low"] - 1e-12 <= t2 <= d["high"] + 1e-12
                cov_old += old["low"] - 1e-12 <= t1 <= old["high"] + 1e-12
                rej += consistency_test(conf, y, seed=r)["miscalibrated"]
                est.append(d["estimate"])
                plug.append(old["estimate"])
            print(
                f"| {name} | {n} | {np.mean(est):.3f} [{t2:.3f}] | {wilson(cov, runs)} | "
                f"{wilson(rej, runs)} | {np.mean(plug):.3f} [{t1:.3f}] | {wilson(cov_old, runs)} |"
            )


# ---- point 4 -----------------------------------------------------------------------------

COMPETENCE = (0.9, 0.7, 0.7, 0.5, 0.3)
TRUTH = {
    "uniform (1/3 each)": [1 / 3] * 3,
    "60/20/20": [0.6, 0.2, 0.2],
    "80/10/10": [0.8, 0.1, 0.1],
    "90/5/5": [0.9, 0.05, 0.05],
    "yes/no 85/15": [0.85, 0.15],
}


def mace_coverage(runs: int) -> None:
    """Five raters who know the answer with probability COMPETENCE (else answer uniformly),
    150 items, three answers (two for yes/no), truth drawn from the stated prior."""
    import pandas as pd

    from annotator.stats import competence as comp

    rng = np.random.default_rng(2304)
    print(
        "| truth prior | MACE as before (uniform truth, 10 rounds) | prior learned, "
        f"{comp.K_STEPS} rounds | best rater (0.9) | worst (0.3) | mean estimates |"
    )
    print("|---|---|---|---|---|---|")
    for name, prior in TRUTH.items():
        k = len(prior)
        hit_old = np.zeros(5)
        hit = np.zeros(5)
        est = np.zeros(5)
        for s in range(runs):
            truth = rng.choice(k, p=prior, size=150)
            rows = []
            for r, c in enumerate(COMPETENCE):
                ans = np.where(rng.random(150) < c, truth, rng.integers(0, k, 150))
                rows.append(pd.DataFrame({"idx": np.arange(150), "rater": f"r{r}", "code": ans}))
            h = pd.concat(rows, ignore_index=True).astype({"code": float})
            for learn, steps, acc in ((False, 10, hit_old), (True, comp.K_STEPS, hit)):
                old = (comp.LEARN_PRIOR, comp.K_STEPS)
                comp.LEARN_PRIOR, comp.K_STEPS = learn, steps
                try:
                    out, _ = comp.competence_figures(
                        h, ordinal=False, n_boot=200, seed=s, gate=False
                    )
                finally:
                    comp.LEARN_PRIOR, comp.K_STEPS = old
                for i, c in enumerate(COMPETENCE):
                    f = out[f"r{i}"]
                    acc[i] += f["low"] is not None and f["low"] <= c <= f["high"]
                    if learn:
                        est[i] += f["estimate"]
        n = runs * 5
        print(
            f"| {name} | {wilson(int(hit_old.sum()), n)} | {wilson(int(hit.sum()), n)} | "
            f"{wilson(int(hit[0]), runs)} | {wilson(int(hit[4]), runs)} | "
            f"{', '.join(f'{e:.2f}' for e in est / runs)} |"
        )


# ---- point 8 -----------------------------------------------------------------------------

BT_STRENGTH = {"g0": 0.8, "g1": 0.4, "g2": 0.0, "g3": -0.2, "g4": -0.4, "g5": -0.6}


def unbalanced_votes(rng, n_cases, *, tau=1.0, inter=0.0, raters=3, tie=0.1):
    """Model U: six generators; each case holds a random 3 or 4 of them and shows each of their
    pairs 1-3 times; a generator's output quality = strength + case effect N(0, inter) (the same
    generator is better at some cases) + N(0, tau); three raters vote, one random layout a pair."""
    import math

    import pandas as pd

    from annotator.stats.frames import PAIR_COLUMNS

    rows, gens = [], sorted(BT_STRENGTH)
    for c in range(n_cases):
        effect = {g: rng.normal(0, inter) for g in gens}
        sub = sorted(rng.choice(len(gens), size=int(rng.integers(3, 5)), replace=False))
        for ai, a in enumerate(sub):
            for b in sub[ai + 1 :]:
                for k in range(int(rng.integers(1, 4))):
                    ga, gb = gens[a], gens[b]
                    qa = BT_STRENGTH[ga] + effect[ga] + rng.normal(0, tau)
                    qb = BT_STRENGTH[gb] + effect[gb] + rng.normal(0, tau)
                    pid = f"c{c}-{a}{b}-{k}"
                    a_left = rng.random() < 0.5
                    il, ir = (f"{pid}-a", f"{pid}-b") if a_left else (f"{pid}-b", f"{pid}-a")
                    gl, gr = (ga, gb) if a_left else (gb, ga)
                    for r in range(raters):
                        if rng.random() < tie:
                            ch = "both"
                        else:
                            ql, qr = (qa, qb) if a_left else (qb, qa)
                            ch = "left" if rng.random() < 1 / (1 + math.exp(qr - ql)) else "right"
                        rows.append((pid, f"c{c}", il, ir, gl, gr, f"r{r}", ch, None))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def bt(runs: int) -> None:
    from annotator.stats import bradley_terry as btm

    print(
        "| model U | cases | pairs within cases (before) | whole cases, t on the bootstrap SE "
        "(now) |"
    )
    print("|---|---|---|---|")
    rng = np.random.default_rng(2308)
    for inter in (0.0, 0.7):
        big = unbalanced_votes(np.random.default_rng(0), 3000, inter=inter)
        truth = btm.bradley_terry(big, n_boot=0, by_case=False)["pooled"]
        for cases in (20, 40):
            hits = {"pairs": 0, "cases": 0}
            total = 0
            for s in range(runs):
                v = unbalanced_votes(rng, cases, inter=inter)
                new = btm.bradley_terry(v, n_boot=400, seed=s, by_case=False)["pooled"]
                old_min, btm.MIN_CASES_CASE_BOOT = btm.MIN_CASES_CASE_BOOT, 10**9
                try:
                    old = btm.bradley_terry(v, n_boot=400, seed=s, by_case=False)["pooled"]
                finally:
                    btm.MIN_CASES_CASE_BOOT = old_min
                for g, f in new.items():
                    t = truth[g]["estimate"]
                    hits["cases"] += f["low"] <= t <= f["high"]
                    hits["pairs"] += old[g]["low"] <= t <= old[g]["high"]
                    total += 1
            print(
                f"| case effect sd {inter} | {cases} | {wilson(hits['pairs'], total)} | "
                f"{wilson(hits['cases'], total)} |"
            )


def bt_few(runs: int) -> None:
    """Model U below 10 cases: the pair bootstrap within cases (the cases held fixed)
    against the case bootstrap with t on the cases less one."""
    from annotator.stats import bradley_terry as btm

    print("| model U | cases | pairs within cases | whole cases, t(C - 1) |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(4006)
    for inter in (0.0, 0.7):
        big = unbalanced_votes(np.random.default_rng(0), 3000, inter=inter)
        truth = btm.bradley_terry(big, n_boot=0, by_case=False)["pooled"]
        for cases in (2, 3, 4, 6, 8, 12):
            hits = {"pairs": 0, "cases": 0}
            total = 0
            for s in range(runs):
                v = unbalanced_votes(rng, cases, inter=inter)
                old_min = btm.MIN_CASES_CASE_BOOT
                try:
                    btm.MIN_CASES_CASE_BOOT = 2
                    by_cases = btm.bradley_terry(v, n_boot=400, seed=s, by_case=False)["pooled"]
                    btm.MIN_CASES_CASE_BOOT = 10**9
                    by_pairs = btm.bradley_terry(v, n_boot=400, seed=s, by_case=False)["pooled"]
                finally:
                    btm.MIN_CASES_CASE_BOOT = old_min
                for g, f in by_cases.items():
                    if g not in truth or f.get("low") is None or by_pairs[g].get("low") is None:
                        continue
                    t = truth[g]["estimate"]
                    hits["cases"] += f["low"] <= t <= f["high"]
                    hits["pairs"] += by_pairs[g]["low"] <= t <= by_pairs[g]["high"]
                    total += 1
            print(
                f"| case effect sd {inter} | {cases} | {wilson(hits['pairs'], total)} | "
                f"{wilson(hits['cases'], total)} |",
                flush=True,
            )


SECTIONS = {
    "bt_few": bt_few,
    "position": position,
    "calibration": calibration,
    "mace": mace_coverage,
    "bt": bt,
}


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    for name, fn in SECTIONS.items():
        if which in ("all", name):
            t0 = time.perf_counter()
            print(f"\n## {name} ({runs} runs per cell)\n")
            fn(runs)
            print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
