"""Generators' ranks as sets from their debiased (PPI++) figures: one judge, one figure.

Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez ("Prediction-powered ranking of large language
models", NeurIPS 2024) rank K generators from prediction-powered estimates and their JOINT
covariance: each generator's rank-set holds its true rank, all K together, with probability
at least 1 - alpha (stats/debiased_bt.rank_sets reads the confidence ellipsoid).

The generators' estimates are correlated: the same case (prompt) has items of every generator,
rated by the same humans and scored by the same judge, so a hard case or a case the judge
misreads moves all of them. Each estimate's published variance (stats/debiased.ppi_mean, the
small-sample jackknife) is a sum of squares of per-case terms (`figure_and_terms`); the
covariance of two generators sums the products of their terms over the cases they share (a
case one of them lacks adds nothing), so the diagonal is each figure's own variance exactly
and the matrix is positive semi-definite (a Gram matrix of the generators' term vectors).
With every case shared and clustered, it is the delete-one-case jackknife covariance of the
vector of estimates (tests/unit/test_debiased_ranks.py). Simulated simultaneous coverage:
tests/benchmarks/validity.md, model R.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .debiased_bt import rank_sets, rank_text, surely_above


def joint_cov(terms: Mapping[str, pd.Series]) -> tuple[list[str], np.ndarray]:
    """The generators (by name) and the K x K covariance of their estimates from each one's
    per-case terms (index case_id): sum over shared cases of the terms' products."""
    names = sorted(terms)
    u = pd.DataFrame({g: terms[g] for g in names}).fillna(0.0).to_numpy()
    return names, u.T @ u


def figure_rank_sets(
    figs: Mapping[str, Mapping[str, Any]],
    terms: Mapping[str, pd.Series | None],
    alpha: float = 0.05,
) -> dict[str, Any]:
    """The report's rank-sets of one judge's figure: `figs` each generator's debiased figure
    entry (stats/debiased._one_figure), `terms` its per-case terms. Generators without an
    estimate are left out (named); a generator whose interval is withheld withholds the
    rank-sets, since its variance is the one they rest on. A null says why."""
    have = {g: f for g, f in figs.items() if (f.get("ppi") or {}).get("estimate") is not None}
    out: dict[str, Any] = {}
    if len(figs) > len(have):
        out["not_ranked"] = {g: "no debiased estimate" for g in sorted(set(figs) - set(have))}
    if len(have) < 2:
        return out | {
            "rank_sets": None,
            "note": "no rank-sets: fewer than two generators have a debiased estimate",
        }
    withheld = [g for g in sorted(have) if have[g]["ppi"].get("low") is None]
    if withheld:
        why = "; ".join(f"{g}: {have[g]['ppi'].get('note') or 'no interval'}" for g in withheld)
        return out | {"rank_sets": None, "note": f"no rank-sets: {why}"}
    names, cov = joint_cov({g: t for g, t in terms.items() if g in have and t is not None})
    if names != sorted(have):  # every estimate carries its terms; a figure without is a bug
        raise ValueError("a debiased estimate without its variance terms")
    theta = np.array([float(have[g]["ppi"]["estimate"]) for g in names])
    ranks = rank_sets(names, theta, cov, alpha, dims=len(names))
    above = surely_above(theta, cov, alpha, dims=len(names))
    return out | {
        "rank_sets": {
            g: {
                "ranks": ranks[g],
                "text": rank_text(ranks[g]),
                # the generators this one is surely below: its rank's best is 1 + their number
                "below": [names[j] for j in np.flatnonzero(above[i])],
            }
            for i, g in enumerate(names)
        },
        "coverage": f"rank-sets hold every generator's true rank together with probability at "
        f"least {1 - alpha:.0%} (rank 1: the highest figure; from the debiased figures and their "
        "covariance over shared cases)",
    }


__all__ = ["figure_rank_sets", "joint_cov"]
