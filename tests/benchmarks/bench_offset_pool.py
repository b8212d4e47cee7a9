"""Null check of the pooled offset spread off model V (validity.md, point 2): offsets independent
across the two scales ("indep"), or shared with unequal spread ("shared", layout sd a,
ui_affordance sd b); 3 humans and an exchangeable judge, 150 items, the scales only.

    python tests/benchmarks/bench_offset_pool.py shared 0.35 0.1 500
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

import verdict_model as vm  # noqa: E402
from bench_verdicts import SPECS, wilson  # noqa: E402

from annotator.stats.findings import held_out_difference, offset_pools  # noqa: E402


def draw(rng: np.random.Generator, n: int, mode: str, sds: tuple[float, float]) -> tuple:
    q = rng.normal(0, 1, n)
    eff = {m: rng.normal(0, 0.5, n) for m in vm.SCALES}

    def one() -> dict[str, np.ndarray]:
        o0 = rng.normal(0, 1)
        out = {}
        for m, sd in zip(vm.SCALES, sds, strict=True):
            o = (o0 if mode == "shared" else rng.normal(0, 1)) * sd
            x = 2.5 + 1.2 * (q + eff[m]) + o + rng.normal(0, 0.7, n)
            out[m] = np.clip(np.rint(x), 0, 5).astype(int)
        return out

    return [one() for _ in range(3)], one()


def main() -> None:
    mode, sa, sb, runs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    hits = dict.fromkeys(vm.SCALES, 0)
    either = 0
    for s in range(runs):
        humans, judge = draw(np.random.default_rng([s, 44]), 150, mode, (sa, sb))
        fr = {k: vm.long_codes(humans, k) for k in vm.SCALES}
        pools = offset_pools([SPECS[k] for k in vm.SCALES], fr)
        ps = []
        for k in vm.SCALES:
            r = held_out_difference(
                SPECS[k], fr[k], pd.Series(judge[k].astype(float)), n_relabel=499, pool=pools.get(k)
            )
            hits[k] += r["p_value"] < 0.05
            ps.append(r["p_value"])
        either += min(ps) < 0.025
    rates = {k: wilson(v, runs) for k, v in hits.items()}
    print(mode, sa, sb, runs, rates, "either < 0.025:", wilson(either, runs))


if __name__ == "__main__":
    main()
