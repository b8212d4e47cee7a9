"""Drift charts (annotator/stats/drift.py): false flags of steady raters of four noise levels, of
a rater with a constant offset, and detection of a one-point shift, simulated with the module's
own vectorised charts (`flag_runs`), answers clipped to the scale.

Setup (ui_mockup-like): 2 gates + 2 scales 0-5 watched at once; each anchor's scale reference is
drawn from P_REF on 0..5 (mostly 1..4) and the answer is clip(reference + deviation [+ shift], 0, 5), so a +1
shift at a reference of 5 cannot show. Gate references PASS with probability P_PASS; a flipped
PASS reads -1, a flipped FAIL +1. "old" is the stricter alternative kept for
comparison (the reference chart and a combined chart on raw deviations decide too). Run from the repository root:
    PYTHONPATH=. python tests/benchmarks/bench_drift.py [runs]
"""

import platform
import sys
import time

import numpy as np
from scipy.stats import beta
from scipy.stats import t as student_t

from annotator.stats.drift import (
    K_REF,
    K_REF_BINARY,
    MIN_OFFSET_ANCHORS,
    OFFSET_TOLERANCE,
    flag_runs,
)

P_PASS = 0.6
TOP = 5
P_REF = [0.03, 0.20, 0.27, 0.27, 0.20, 0.03]  # anchors' scale references 0..5, as test_drift.py
RATERS = {  # scale deviation law (before clipping), gate flip rate: none of them drifts
    "quiet (-1/0/+1 at .03/.94/.03, gates 3%)": (
        lambda rng, s: rng.choice([-1, 0, 1], p=[0.03, 0.94, 0.03], size=s),
        0.03,
    ),
    "steady (.15/.70/.15, gates 15%; sd 0.55)": (
        lambda rng, s: rng.choice([-1, 0, 1], p=[0.15, 0.70, 0.15], size=s),
        0.15,
    ),
    "DSG-TIFA-like (round(N(-0.3, 0.7)), gates 20%; sd 0.75)": (
        lambda rng, s: np.rint(rng.normal(-0.3, 0.7, s)),
        0.20,
    ),
    "noisy (-2..2 at .05/.2/.5/.2/.05, gates 25%; sd 0.89)": (
        lambda rng, s: rng.choice([-2, -1, 0, 1, 2], p=[0.05, 0.2, 0.5, 0.2, 0.05], size=s),
        0.25,
    ),
    "severe by 0.75 (round(N(-0.75, 0.7)), gates 20%)": (
        lambda rng, s: np.rint(rng.normal(-0.75, 0.7, s)),
        0.20,
    ),
}
K_REFS = [K_REF, K_REF, K_REF_BINARY, K_REF_BINARY]


def devs(rng, law, flip, runs, steps, shift_at=None, shifted=2, ref=None):
    """Deviation series per metric (scales clipped to 0..TOP around each anchor's reference)."""
    out = []
    for i in range(2):
        r = (
            rng.choice(TOP + 1, p=P_REF, size=(runs, steps))
            if ref is None
            else np.full((runs, steps), ref)
        )
        d = law(rng, (runs, steps)).astype(float)
        if shift_at is not None and i < shifted:
            d[:, shift_at:] += 1
        out.append(np.clip(r + d, 0, TOP) - r)
    for _ in range(2):
        flips = rng.random((runs, steps)) < flip
        out.append((flips * np.where(rng.random((runs, steps)) < P_PASS, -1, 1)).astype(float))
    return out


def offset_flags(d):
    """report's calibration_offset rule on a runs x T scale series: t interval excludes 0 and
    |mean| >= OFFSET_TOLERANCE."""
    n = d.shape[1]
    assert n >= MIN_OFFSET_ANCHORS
    m, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
    half = student_t.ppf(0.975, n - 1) * sd / np.sqrt(n)
    return ((m - half > 0) | (m + half < 0)) & (np.abs(m) >= OFFSET_TOLERANCE)


def band(hits, n):
    lo = beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    hi = beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return f"{hits / n:.1%} [{lo:.1%}, {hi:.1%}]"


def main(runs: int = 2000) -> None:
    rng = np.random.default_rng(2026)
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
        f"{runs} runs per cell; answers clipped to 0..{TOP}, references 0..{TOP} at {P_REF}"
    )
    print(
        "| rater | drift flag within 100 anchors (false) | old rule | offset finding at 100 anchors "
        "| +1 on both scales from 30: flagged at 30..44 | old rule | +1 on one scale |"
    )
    print("|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for name, (law, flip) in RATERS.items():
        null = devs(rng, law, flip, runs, 100)
        fa = int((flag_runs(null, K_REFS) < 100).sum())
        old = int((flag_runs(null, K_REFS, reference=True, centre=False) < 100).sum())
        off = int((offset_flags(null[0]) | offset_flags(null[1])).sum())
        shifted = devs(rng, law, flip, runs, 45, shift_at=30)
        first = flag_runs(shifted, K_REFS)
        both = int(((first >= 30) & (first < 45)).sum())
        first = flag_runs(shifted, K_REFS, reference=True, centre=False)
        both_old = int(((first >= 30) & (first < 45)).sum())
        first = flag_runs(devs(rng, law, flip, runs, 45, shift_at=30, shifted=1), K_REFS)
        one = int(((first >= 30) & (first < 45)).sum())
        print(
            f"| {name} | {band(fa, runs)} | {band(old, runs)} | {band(off, runs)} | "
            f"{band(both, runs)} | {band(both_old, runs)} | {band(one, runs)} |"
        )
    print("\nPer-anchor detectability: +1 on both scales from 30, flagged at 30..44, every anchor")
    print("with the same reference (DSG-TIFA-like rater)")
    print("| reference | flagged at 30..44 |")
    print("|---|---|")
    law, flip = RATERS["DSG-TIFA-like (round(N(-0.3, 0.7)), gates 20%; sd 0.75)"]
    for ref in range(TOP + 1):
        first = flag_runs(devs(rng, law, flip, runs, 45, shift_at=30, ref=ref), K_REFS)
        print(f"| {ref} | {band(int(((first >= 30) & (first < 45)).sum()), runs)} |")
    print("\nUnclipped answers (no scale bounds), old rule: +1 on both scales from 30")
    for name, (law, flip) in RATERS.items():
        d = []
        for _ in range(2):
            x = law(rng, (runs, 45)).astype(float)
            x[:, 30:] += 1
            d.append(x)
        d += devs(rng, law, flip, runs, 45)[2:]
        first = flag_runs(d, K_REFS, reference=True, centre=False)
        print(f"- {name}: old rule {band(int(((first >= 30) & (first < 45)).sum()), runs)}")
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
