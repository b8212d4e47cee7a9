"""Model R: generators on shared cases, a judge on every item, humans on a random sample of each
generator's items; the debiased figures' rank-sets (stats/debiased_ranks.py). Used by
tests/unit/test_debiased_ranks.py and tests/benchmarks/bench_debiased_ranks.py.

A case has a difficulty d ~ N(0, 1) shared by every generator's items of it ("shared") or none
("independent"); an item passes when a_g + s d + e > 0 (e ~ N(0, 1)), so generator g's true
pass rate is Phi(a_g / sqrt(1 + s^2)). The judge is the truth flipped 10% of the time and, in
"shared", on 30% of the cases lenient (it passes half of the failing items of every generator
there): errors correlated across generators through the case. Humans rate a uniform random
sample of `n_sampled` items per generator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

NAMES = ("gen-a", "gen-b", "gen-c", "gen-d")
TRUE = np.array([0.55, 0.62, 0.66, 0.78])  # pass rates, every rank distinct
TRUE_RANK = {g: int(r) for g, r in zip(NAMES, 1 + np.argsort(np.argsort(-TRUE)), strict=True)}


def study(
    rng: np.random.Generator,
    model: str = "shared",
    n_cases: int = 200,
    per_case: int = 1,
    n_sampled: int = 80,
) -> dict[str, pd.DataFrame]:
    """Each generator's items as stats/debiased.figure_and_terms takes them."""
    s = 1.2 if model == "shared" else 0.0
    d = rng.normal(size=n_cases)
    lenient = rng.random(n_cases) < (0.3 if model == "shared" else 0.0)
    case = np.repeat(np.arange(n_cases), per_case)
    out = {}
    for g, p in zip(NAMES, TRUE, strict=True):
        n = len(case)
        a = norm.ppf(p) * np.sqrt(1 + s**2)
        y = (a + s * d[case] + rng.normal(size=n) > 0).astype(float)
        f = np.where(rng.random(n) < 0.1, 1 - y, y)
        f = np.where(lenient[case] & (y == 0) & (rng.random(n) < 0.5), 1.0, f)
        drawn = np.zeros(n, bool)
        drawn[rng.choice(n, n_sampled, replace=False)] = True
        out[g] = pd.DataFrame(
            {
                "case_id": [f"case{c:04d}" for c in case],
                "f": f,
                "y": np.where(drawn, y, np.nan),
                "pi": n_sampled / n,
                "in_sample": drawn,
            }
        )
    return out
