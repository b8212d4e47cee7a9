"""Simultaneous coverage of the debiased figures' rank-sets (stats/debiased_ranks.py; model R,
tests/unit/rank_models.py): validity.md's section.

    python tests/benchmarks/bench_debiased_ranks.py [--runs 1000]

Four generators (true pass rates 0.55, 0.62, 0.66, 0.78) on 200 shared cases, one item a case
or three (67 cases), 80 human labels per generator; cases with a shared difficulty and a judge
lenient on 30% of them (correlated errors), or independent generators. Per design: how often
the 95% ellipsoid the rank-sets read holds the true pass rates, how often all four rank-sets
hold the true ranks (Wilson intervals), and the mean rank-set width; with the joint covariance
and with its diagonal alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from test_debiased_ranks import coverage  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(2026)

    def pct(t: tuple[float, float, float]) -> str:
        return f"{t[0]:.1%} [{t[1]:.1%}, {t[2]:.1%}]"

    print("| design | ellipsoid | rank-sets | width | ellipsoid, diagonal | rank-sets, diagonal "
          "| width, diagonal |")  # fmt: skip
    for model in ("shared", "independent"):
        for per_case in (1, 3):
            c = coverage(rng, model, args.runs, per_case)
            print(
                f"| {model}, {per_case} a case | {pct(c['ellipsoid'])} | {pct(c['ranks'])} | "
                f"{c['width']:.2f} | {pct(c['ellipsoid_diag'])} | {pct(c['ranks_diag'])} | "
                f"{c['width_diag']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
