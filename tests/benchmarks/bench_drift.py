"""Drift charts (annotator/stats/drift.py): false flags of steady raters of four noise levels and
detection of a one-point shift, simulated with the module's own vectorised charts (`flag_runs`).

Setup (ui_mockup-like): 2 gates + 2 scales 0-5 watched at once, each with the calibrated and the
reference chart, plus the combined chart. Gate references PASS with probability P_PASS; a flipped
PASS reads -1, a flipped FAIL +1. Run from the repository root:
    PYTHONPATH=. python tests/benchmarks/bench_drift.py [runs]
"""

import platform
import sys
import time

import numpy as np
from scipy.stats import beta

from annotator.stats.drift import K_REF, K_REF_BINARY, first_alarm, flag_runs

P_PASS = 0.6
RATERS = {  # scale deviation law, gate flip rate: steady raters, none of them drifts
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
}
K_REFS = [K_REF, K_REF, K_REF_BINARY, K_REF_BINARY]


def devs(rng, law, flip, runs, steps, shift_at=None, shifted=2):
    out = []
    for i in range(2):
        d = law(rng, (runs, steps)).astype(float)
        if shift_at is not None and i < shifted:
            d[:, shift_at:] += 1
        out.append(d)
    for _ in range(2):
        flips = rng.random((runs, steps)) < flip
        out.append((flips * np.where(rng.random((runs, steps)) < P_PASS, -1, 1)).astype(float))
    return out


def band(hits, n):
    lo = beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    hi = beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return f"{hits / n:.1%} [{lo:.1%}, {hi:.1%}]"


def main(runs: int = 4000) -> None:
    rng = np.random.default_rng(2026)
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
        f"{runs} runs per cell"
    )
    print(
        "| steady rater | false flag within 100 anchors | +1 on both scales from 30: flagged at 30..44 "
        "| +1 on one scale | old chart (k 0.5, h 3.5 points): false flag within 100 |"
    )
    print("|---|---|---|---|---|")
    t0 = time.perf_counter()
    for name, (law, flip) in RATERS.items():
        null = devs(rng, law, flip, runs, 100)
        fa = int((flag_runs(null, K_REFS) < 100).sum())
        old = int((np.min([first_alarm(d, 0.5, 3.5)[0] for d in null], axis=0) < 100).sum())
        first = flag_runs(devs(rng, law, flip, runs, 45, shift_at=30), K_REFS)
        both = int(((first >= 30) & (first < 45)).sum())
        first = flag_runs(devs(rng, law, flip, runs, 45, shift_at=30, shifted=1), K_REFS)
        one = int(((first >= 30) & (first < 45)).sum())
        print(
            f"| {name} | {band(fa, runs)} | {band(both, runs)} | {band(one, runs)} | {band(old, runs)} |"
        )
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
