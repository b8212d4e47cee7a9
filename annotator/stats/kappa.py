"""Percent agreement, Fleiss' kappa, Gwet's AC1 and Cohen's kappa on the value counts of
agreement.py, each with the shared item bootstrap.

Decisions: Fleiss' kappa treats every metric as nominal (on a scale it ignores the
order of the points: a note says so in the report); Gwet's AC1 when every answer is
identical is 1.0, as Gwet's formula gives (chance agreement 0, so AC1 equals percent
agreement) and irrCAC reports, with a note and no interval (nothing varies across
resamples), while alpha and the kappas are undefined there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .agreement import IDENTICAL, NO_PAIRS, ValueCounts, standalone_plan, undefined_reason
from .bootstrap import ItemBootstrap, Pending, Replicates

AC1_IDENTICAL = (
    "every answer is identical: AC1 = percent agreement = 1 by construction (chance "
    "agreement is 0), as irrCAC reports; alpha and the kappas are undefined here"
)


# ---- Fleiss' kappa, percent agreement, Gwet's AC1 ---------------------------------


def agreement_features(vc: ValueCounts, n_categories: int) -> tuple:
    """Features for percent agreement, Fleiss' kappa and Gwet's AC1 (one block).

    Percent agreement p_a is the mean over items with >= 2 answers of the share
    of agreeing rater pairs. With pi_k the mean over items (>= 1 answer) of the
    item's share of category k, Fleiss' kappa corrects p_a with sum pi_k^2 and
    Gwet's AC1 with sum pi_k (1 - pi_k) / (Q - 1), Q the number of categories the
    metric offers. These are Gwet's (2014) definitions for unequal numbers of
    raters (R package irrCAC); with a constant number they are Fleiss' (1971).
    """
    V = len(vc.domain)
    m_t, p_u, unit2 = _shares(vc)
    n2, U = int(unit2.sum()), len(vc.units)
    # columns: 0 items with >= 2 answers, 1 sum of p_u, 2 items with >= 1, 3.. shares
    rows = [vc.units[unit2], vc.units[unit2], vc.units, vc.units[vc.t_unit]]
    cols = [np.zeros(n2, np.int64), np.ones(n2, np.int64), np.full(U, 2), 3 + vc.t_val]
    vals = [np.ones(n2), p_u[unit2], np.ones(U), vc.t_cnt / m_t]
    fin = _agreement_finalizer(V, max(int(n_categories), V, 2))
    return (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), 3 + V, fin)


def _shares(vc: ValueCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each triplet's unit's answers, each unit's share of agreeing pairs (0 under two
    answers), and which units have two answers or more."""
    m_t = vc.m[vc.t_unit]
    two = m_t >= 2
    p_u = np.bincount(
        vc.t_unit[two],
        weights=(vc.t_cnt * (vc.t_cnt - 1.0))[two] / (m_t * (m_t - 1.0))[two],
        minlength=len(vc.units),
    )
    return m_t, p_u, vc.m >= 2


def _agreement_point(vc: ValueCounts, n_categories: int) -> Replicates:
    """`plan.add(*agreement_features(vc, n_categories))`'s handle for a plan that draws no
    replicate (a live estimate): the features' sums without the features. A bincount adds each
    column's values one after another in their order; here each column is added in that same
    order (its shares of agreeing pairs by one bincount of their own, its counts whole
    numbers), so the point is the same bit for bit."""
    V = len(vc.domain)
    m_t, p_u, unit2 = _shares(vc)
    total = np.zeros((1, 3 + V))
    total[0, 0] = float(unit2.sum())
    total[0, 1] = np.bincount(
        np.zeros(int(unit2.sum()), np.int64), weights=p_u[unit2], minlength=1
    )[0]
    total[0, 2] = float(len(vc.units))
    total[0, 3:] = np.bincount(vc.t_val, weights=vc.t_cnt / m_t, minlength=V)
    fin = _agreement_finalizer(V, max(int(n_categories), V, 2))
    return Replicates(point=np.atleast_1d(np.asarray(fin(total), dtype=float)[0]))


def _agreement_finalizer(V: int, Q: int) -> Any:
    """Percent agreement, Fleiss' kappa and Gwet's AC1 from the sums of agreement_features'
    3 + V columns (a row per replicate); `Q`: the categories the metric offers."""

    def fin(s: np.ndarray) -> np.ndarray:
        n_two, sum_p, n_one, pi_sum = s[:, 0], s[:, 1], s[:, 2], s[:, 3 : 3 + V]
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = np.where(n_two > 0, sum_p / n_two, np.nan)
            pi = pi_sum / n_one[:, None]
            pe = (pi * pi).sum(axis=1)
            fleiss = np.where(1.0 - pe > 1e-12, (pa - pe) / (1.0 - pe), np.nan)
            pe_g = (pi * (1.0 - pi)).sum(axis=1) / (Q - 1.0)
            # every answer in one category: chance agreement is 0 and AC1 = pa (= 1), as irrCAC
            ac1 = np.where(pe_g > 1e-12, (pa - pe_g) / (1.0 - pe_g), pa)
        return np.column_stack([pa, fleiss, ac1])

    return fin


def register_agreement(
    plan: ItemBootstrap, vc: ValueCounts, n_categories: int
) -> dict[str, Pending]:
    """percent_agreement, fleiss_kappa and gwet_ac1 as Pending figures."""
    n = vc.n_pairable
    if n == 0:
        return {
            k: Pending(None, 0, undefined_note=NO_PAIRS)
            for k in ("percent_agreement", "fleiss_kappa", "gwet_ac1")
        }
    if plan.n_boot:
        reps = plan.add(*agreement_features(vc, n_categories))
    else:  # a live estimate: the point alone, without every item's features
        reps = _agreement_point(vc, n_categories)
    reason = undefined_reason(vc)
    out = {"percent_agreement": Pending(reps, n, col=0)}
    out["fleiss_kappa"] = (
        Pending(None, n, undefined_note=reason) if reason else Pending(reps, n, col=1)
    )
    out["gwet_ac1"] = (
        Pending(reps, n, col=2, note=AC1_IDENTICAL)
        if reason == IDENTICAL
        else Pending(None, n, undefined_note=reason)
        if reason
        else Pending(reps, n, col=2)
    )
    return out


def fleiss_kappa(counts: Any) -> float | None:
    """Fleiss' kappa of an items x categories count table (point estimate)."""
    counts = np.asarray(counts, dtype=float)
    u, v = np.nonzero(counts)
    units, t_unit = np.unique(u, return_inverse=True)
    cnt = counts[u, v]
    vc = ValueCounts(
        units,
        np.arange(counts.shape[1], dtype=float),
        t_unit,
        v,
        cnt,
        np.bincount(t_unit, weights=cnt),
    )
    if undefined_reason(vc):
        return None
    r, c, w, k, fin = agreement_features(vc, counts.shape[1])
    val = fin(np.bincount(c, weights=w, minlength=k)[None, :])[0, 1]
    return float(val) if np.isfinite(val) else None


def agreement_summary(
    counts: ValueCounts, n_categories: int, *, n_boot: int = 1000, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Percent agreement, Fleiss' kappa and Gwet's AC1 with bootstrap intervals."""
    plan, local = standalone_plan(counts, n_boot, seed)
    pend = register_agreement(plan, local, n_categories)
    plan.run()
    return {k: p.resolve() for k, p in pend.items()}


# ---- Cohen's kappa --------------------------------------------------------------------

KAPPA_WEIGHTS = ("unweighted", "linear", "quadratic")


def kappa_from_tables(tables: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Cohen's kappa (unweighted, linear, quadratic) of tables (b x K x K) -> (b x 3).

    Disagreement weights are 1 - I, |x_i - x_j| and (x_i - x_j)^2 on the
    category values, so ordered categories keep their spacing.
    """
    t = np.asarray(tables, dtype=float)
    K = t.shape[1]
    x = np.asarray(values, dtype=float)
    n = t.sum(axis=(1, 2))
    rows, cols = t.sum(axis=2), t.sum(axis=1)
    out = np.empty((len(t), 3))
    for j, w in enumerate(
        (1.0 - np.eye(K), np.abs(x[:, None] - x[None, :]), (x[:, None] - x[None, :]) ** 2)
    ):
        obs = np.einsum("bij,ij->b", t, w)
        with np.errstate(divide="ignore", invalid="ignore"):
            exp = np.einsum("bi,bj,ij->b", rows, cols, w) / n
            out[:, j] = np.where(exp > 1e-12 * np.maximum(1.0, n), 1.0 - obs / exp, np.nan)
    return out


def cohen_kappa_table(table: Any, weights: str = "unweighted", values: Any = None) -> float | None:
    """Cohen's kappa of one K x K table; `values` are the category values (default 0..K-1)."""
    t = np.asarray(table, dtype=float)
    x = np.arange(t.shape[0], dtype=float) if values is None else np.asarray(values, float)
    k = kappa_from_tables(t[None], x)[0, KAPPA_WEIGHTS.index(weights)]
    return float(k) if np.isfinite(k) else None


def register_cohen(
    plan: ItemBootstrap, rows: np.ndarray, a: np.ndarray, b: np.ndarray, values: np.ndarray
) -> dict[str, Pending]:
    """Cohen's kappas between paired answers a[i], b[i] (indices into `values`) on item rows[i]."""
    K = len(values)
    n = len(rows)
    if n == 0:
        return {
            w: Pending(None, 0, undefined_note="no item answered by both") for w in KAPPA_WEIGHTS
        }
    reps = plan.add(
        np.asarray(rows),
        np.asarray(a) * K + np.asarray(b),
        np.ones(n),
        K * K,
        lambda s: kappa_from_tables(s.reshape(len(s), K, K), values),
    )
    note = IDENTICAL if len(np.unique(np.concatenate([a, b]))) < 2 else None
    return {w: Pending(reps, n, col=j, undefined_note=note) for j, w in enumerate(KAPPA_WEIGHTS)}


def cohen_kappa(
    a: Any, b: Any, *, categories: Any = None, n_boot: int = 1000, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Cohen's kappa (unweighted, linear, quadratic) of two raters' paired answers.

    Missing answers (None/NaN) drop the pair. `categories` fixes the category
    order (and values, when numeric); by default the sorted distinct answers.
    """
    a_arr, b_arr = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    keep = np.array(
        [not _missing(x) and not _missing(y) for x, y in zip(a_arr, b_arr, strict=True)], dtype=bool
    )
    a_arr, b_arr = a_arr[keep], b_arr[keep]
    cats = list(categories) if categories is not None else sorted(set(a_arr) | set(b_arr))
    index = {c: i for i, c in enumerate(cats)}
    try:
        values = np.asarray(cats, dtype=float)
    except (TypeError, ValueError):
        values = np.arange(len(cats), dtype=float)
    ai = np.array([index[x] for x in a_arr], dtype=np.int64)
    bi = np.array([index[x] for x in b_arr], dtype=np.int64)
    plan = ItemBootstrap(len(ai), n_boot, seed)
    pend = register_cohen(plan, np.arange(len(ai)), ai, bi, values)
    plan.run()
    return {k: p.resolve() for k, p in pend.items()}


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


__all__ = [
    "AC1_IDENTICAL",
    "KAPPA_WEIGHTS",
    "agreement_features",
    "agreement_summary",
    "cohen_kappa",
    "cohen_kappa_table",
    "fleiss_kappa",
    "kappa_from_tables",
    "register_agreement",
    "register_cohen",
]
