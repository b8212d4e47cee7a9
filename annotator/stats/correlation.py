"""Pearson, Spearman and Kendall tau-b between a judge and the human mean per item.

They need no common scale, so they are the figures that still mean something
when a judge scores on its own scale (a TIFA score in [0, 1] against human
ratings 1-5). Point estimates are scipy's (pearsonr, spearmanr, kendalltau with
its default tau-b). Bootstrap replicates come from sufficient statistics:

- Pearson from five moments per item;
- Spearman and Kendall tau-b from the contingency table of distinct (judge,
  human mean) values: mid-ranks, concordant and discordant pairs and tie
  corrections all follow from a weighted table with cumulative sums, exactly as
  scipy computes them on the resampled data. When the table would exceed
  _MAX_CELLS cells, the judge values are merged into ordered bins for the
  replicates only (noted).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from .bootstrap import ItemBootstrap, Pending, rng_for

_MAX_CELLS = 200_000
CORRELATIONS = ("pearson", "spearman", "kendall_tau_b")


def pearson_from_moments(s: np.ndarray) -> np.ndarray:
    n, sx, sy, sxx, syy, sxy = (s[:, i] for i in range(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy - sx * sy / n
        vx = sxx - sx * sx / n
        vy = syy - sy * sy / n
        r = cov / np.sqrt(vx * vy)
    # replicates are float32 sums: a variance within rounding noise of zero is a degenerate
    # resample (e.g. every weight on items sharing one value), not a correlation
    tol = 1e-5
    ok = (vx > tol * np.maximum(1, sxx)) & (vy > tol * np.maximum(1, syy))
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


def _suffix(a: np.ndarray, axis: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(a, axis), axis), axis)


def rank_correlations_from_tables(t: np.ndarray) -> np.ndarray:
    """Spearman rho and Kendall tau-b of tables t (b x I x J) -> (b x 2).

    Rows and columns are the distinct x and y values in ascending order.
    """
    t = np.asarray(t, dtype=float)
    b, n_i, n_j = t.shape
    n = t.sum(axis=(1, 2))
    r, c = t.sum(axis=2), t.sum(axis=1)
    # Spearman: Pearson on mid-ranks
    rx = np.cumsum(r, axis=1) - (r - 1.0) / 2.0
    ry = np.cumsum(c, axis=1) - (c - 1.0) / 2.0
    m = (n + 1.0) / 2.0
    dx, dy = rx - m[:, None], ry - m[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = np.einsum("bij,bi,bj->b", t, dx, dy)
        vx = (r * dx * dx).sum(axis=1)
        vy = (c * dy * dy).sum(axis=1)
        rho = np.where((vx > 0) & (vy > 0), cov / np.sqrt(vx * vy), np.nan)
    # Kendall: pairs above-right are concordant, above-left discordant
    ge = _suffix(_suffix(t, 1), 2)  # sum over i' >= i, j' >= j
    conc = np.zeros_like(t)
    conc[:, :-1, :-1] = ge[:, 1:, 1:]
    below = _suffix(t, 1)  # sum over i' >= i
    le = np.cumsum(below, axis=2)  # i' >= i, j' <= j
    disc = np.zeros_like(t)
    disc[:, :-1, 1:] = le[:, 1:, :-1]
    p = (t * conc).sum(axis=(1, 2))
    q = (t * disc).sum(axis=(1, 2))
    n0 = n * (n - 1.0) / 2.0
    tx = (r * (r - 1.0) / 2.0).sum(axis=1)
    ty = (c * (c - 1.0) / 2.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.sqrt((n0 - tx) * (n0 - ty))
        tau = np.where(den > 0, (p - q) / den, np.nan)
    return np.column_stack([rho, tau])


def _codes(v: np.ndarray, max_groups: int | None = None) -> tuple[np.ndarray, int, bool]:
    uniq, inv = np.unique(v, return_inverse=True)
    if max_groups is None or len(uniq) <= max_groups:
        return inv, len(uniq), False
    pooled = np.bincount(inv)
    before = np.cumsum(pooled) - pooled
    grp = np.minimum((before / len(v) * max_groups).astype(np.int64), max_groups - 1)
    _, grp = np.unique(grp, return_inverse=True)
    return grp[inv], int(grp.max()) + 1, True


def undefined_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    if len(x) < 3:
        return "fewer than 3 items with both a judge value and a human answer"
    if np.ptp(x) == 0:
        return "the judge gives one value to every item: a correlation is undefined"
    if np.ptp(y) == 0:
        return "the human mean is the same on every item: a correlation is undefined"
    return None


def register_correlations(
    plan: ItemBootstrap, rows: np.ndarray, x: np.ndarray, y: np.ndarray
) -> dict[str, Pending]:
    """Pearson, Spearman, Kendall tau-b between x[i] and y[i] on item rows[i]."""
    rows = np.asarray(rows, dtype=np.int64)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    rows, x, y = rows[ok], x[ok], y[ok]
    n = len(rows)
    reason = undefined_reason(x, y)
    if reason:
        return {k: Pending(None, n, undefined_note=reason) for k in CORRELATIONS}
    xc, yc = x - x.mean(), y - y.mean()
    feats = np.column_stack([np.ones(n), xc, yc, xc * xc, yc * yc, xc * yc])
    p_reps = plan.add_dense(rows, feats, pearson_from_moments)
    yi, n_j, _ = _codes(y)
    xi, n_i, binned = _codes(x, max(2, _MAX_CELLS // n_j))
    k = n_i * n_j
    r_reps = plan.add(
        rows,
        xi * n_j + yi,
        np.ones(n),
        k,
        lambda s: rank_correlations_from_tables(s.reshape(len(s), n_i, n_j)),
    )
    note = f"interval from judge values merged into {n_i} ordered bins" if binned else None
    with np.errstate(all="ignore"):
        pear = stats.pearsonr(x, y).statistic
        spear = stats.spearmanr(x, y).statistic
        tau = stats.kendalltau(x, y).statistic
    return {
        "pearson": Pending(p_reps, n, estimate=pear),
        "spearman": Pending(r_reps, n, col=0, estimate=spear, note=note),
        "kendall_tau_b": Pending(r_reps, n, col=1, estimate=tau, note=note),
    }


def correlations(x: Any, y: Any, *, n_boot: int = 1000, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Pearson, Spearman and Kendall tau-b of paired values with item-bootstrap intervals."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    plan = ItemBootstrap(len(x), n_boot, seed)
    pend = register_correlations(plan, np.arange(len(x)), x, y)
    plan.run()
    return {k: p.resolve() for k, p in pend.items()}


def permutation_pearson(
    x: np.ndarray, y: np.ndarray, *, n_perm: int = 200, seed: int = 0, key: str = ""
) -> dict[str, Any]:
    """Pearson r with the judge values shuffled across items: mean and one-sided p."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if undefined_reason(x, y):
        return {"mean": None, "p_value": None, "n_perm": 0, "note": undefined_reason(x, y)}
    rng = rng_for(seed, "permutation-pearson", key)
    xs = (x - x.mean()) / x.std()
    ys = (y - y.mean()) / y.std()
    observed = float(xs @ ys / len(x))
    r = np.empty(n_perm)
    step = max(1, 4_000_000 // len(x))
    for start in range(0, n_perm, step):
        b = min(step, n_perm - start)
        perms = np.argsort(rng.random((b, len(x))), axis=1)
        r[start : start + b] = (xs[perms] @ ys) / len(x)
    return {
        "mean": float(r.mean()),
        "p_value": float((1 + (r >= observed - 1e-12).sum()) / (n_perm + 1)),
        "n_perm": int(n_perm),
    }
