"""The leave-one-out consensus: each answer against the consensus of the other raters of its
item (the majority for a nominal metric, a tie giving none; the median for a scale), and whether
the answer agrees with it (equal to the majority, or for a scale within half a point of the
median). The raters' section (raters.py) compares every answer with it; the consensus of each
(item, own value) cell is found once and read by the answers in it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from .consensus import MetricSpec
from .distinct import position_in, present_positions
from .package_alpha import count_columns


def leave_one_out(h: pd.DataFrame, spec: MetricSpec) -> pd.DataFrame:
    """Answers (idx, rater, code) with `loo` (others' consensus, NaN if none) and `agree`."""
    a = h[h["code"].notna()][["idx", "rater", "code"]].reset_index(drop=True)
    if not len(a):
        return a.assign(loo=np.nan, agree=np.nan)
    out = left_out(a["idx"].to_numpy(np.int64), a["code"].to_numpy(float), spec)
    return a.assign(loo=out.val, agree=out.agree)


class LeftOut(NamedTuple):
    """Each answer's others' consensus (`val`, NaN if none) and whether it agrees (`agree`, NaN
    if none); for a nominal metric whose answers are all values of its domain, also where each
    answer and its consensus lie among the answers' distinct values `dom` (`own`, `at`; `at`
    has no meaning where the consensus is NaN)."""

    val: np.ndarray
    agree: np.ndarray
    dom: np.ndarray | None = None
    own: np.ndarray | None = None
    at: np.ndarray | None = None

    def positions(
        self, has: np.ndarray | None
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
        """present_positions(domain, code[has], val[has]) from the positions found (`has`: the
        answers with a consensus, None for all of them); None where none were found."""
        if self.dom is None or self.own is None or self.at is None:
            return None
        if has is None:
            return self.dom, (self.own, self.at)
        own, at = self.own[has], self.at[has]
        V = len(self.dom)
        seen = (np.bincount(own, minlength=V) > 0) | (np.bincount(at, minlength=V) > 0)
        if seen.all():
            return self.dom, (own, at)
        rank = np.cumsum(seen) - 1  # a value only dropped answers took: the others move down
        return self.dom[seen], (rank[own], rank[at])


def left_out(idx: np.ndarray, code: np.ndarray, spec: MetricSpec) -> LeftOut:
    """The leave-one-out consensus of answers given as arrays (item idx and code of each
    answer, no NaN code, at least one answer), with the positions it found on the way."""
    found = present_positions(spec.domain(), code) if spec.nominal else None
    if found is not None:
        dom, (own,) = found
    else:
        dom = np.unique(code) if spec.nominal else spec.domain()
        own = position_in(dom, code)
    V = len(dom)
    # item x value counts, one row per item index: a bincount instead of a sort of the items
    # (np.unique) and an np.add.at; item indexes too sparse for a row each are renumbered
    if idx.min() >= 0 and idx.max() < 2 * len(idx) + 1024:
        row = idx
    else:
        row = np.unique(idx, return_inverse=True)[1].reshape(-1)
    n_rows = int(row.max()) + 1
    counts = np.bincount(row * V + own, minlength=n_rows * V).reshape(n_rows, V).astype(float)
    if n_rows * V <= len(code):
        # the others' counts depend on the item and the answer's own value only: the consensus
        # is found once per (item, value) cell and read by each answer (ten raters: a fifth of
        # the rows for a yes/no metric)
        cell = row * V + own
        val, at = _consensus_of_columns(*cell_columns(counts), dom, spec.nominal)
        val, at = val[cell], (at[cell] if at is not None else None)
    else:
        loo = counts[row]
        loo[np.arange(len(code)), own] -= 1.0
        val, at = _consensus_at(loo, dom, spec.nominal)
    if spec.nominal:
        agree = (code == val).astype(float)
    else:
        agree = (np.abs(code - val) <= 0.5).astype(float)
    agree[np.isnan(val)] = np.nan
    if found is None:
        return LeftOut(val, agree)
    return LeftOut(val, agree, dom, own, at)


def cell_columns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The others' counts of every (item, own value) cell, as `count_columns` gives them for
    `(counts[:, None, :] - np.eye(V)).reshape(-1, V)`: its columns (V x items * V) and each
    cell's total, made as columns at once: the consensus reads the counts value by value, and
    rows transposed into columns cost a copy of every cell (most of the step on a 0-5 scale).
    Whole numbers: the same sums."""
    n_rows, V = counts.shape
    cols = np.repeat(counts.T, V, axis=1)  # each item's counts once per own value
    for k in range(V):
        cols[k, k::V] -= 1.0  # the answer's own value, left out
    m = cols[0].copy()
    for c in cols[1:]:
        m += c
    return cols, m


def consensus_values(spec: MetricSpec) -> np.ndarray:
    """Every value an answer or a leave-one-out consensus of `spec` can take, sorted: its
    domain, and for a median the midpoints of two values as `_consensus` computes them."""
    dom = spec.domain()
    if spec.nominal:
        return dom
    return np.unique(np.add.outer(dom, dom) / 2.0)


def _consensus_at(
    loo: np.ndarray, dom: np.ndarray, nominal: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The consensus of each row of others' counts over `dom` (NaN if none): the majority for
    a nominal metric (a tie gives none), else the median.

    Value by value over the counts' columns (a few), not reductions along rows of a few
    counts each, which numpy walks a row at a time: a tenth of the time on a yes/no metric's
    hundred thousand rows. The counts are whole numbers, so every sum is the same in any order.
    With it, for a nominal metric, the majority's position in `dom` (no meaning where the
    consensus is NaN); None for a median.
    """
    if not len(dom):
        return np.full(len(loo), np.nan), None
    return _consensus_of_columns(*count_columns(loo), dom, nominal)


def _consensus_of_columns(
    cols: np.ndarray, m: np.ndarray, dom: np.ndarray, nominal: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """`_consensus_at` of counts given as their columns (values x rows) and each row's total."""
    V = len(dom)
    if not V:
        return np.full(len(m), np.nan), None
    if nominal:
        top = cols[0].copy()
        for c in cols[1:]:
            np.maximum(top, c, out=top)
        n_top = np.zeros(len(top), dtype=np.int64)
        first = np.full(len(top), V - 1, dtype=np.int64)  # the first column at the top
        for k in range(V - 1, -1, -1):
            at_top = cols[k] == top
            n_top += at_top
            first[at_top] = k
        val = dom[first].astype(float)
        val[(m == 0) | (n_top > 1)] = np.nan
        return val, first
    k_lo = np.floor((m - 1) / 2.0)
    k_hi = np.floor(m / 2.0)
    # the median's two ranks: the values whose running count has not passed them
    n_lo = np.zeros(len(m), dtype=np.int64)
    n_hi = np.zeros(len(m), dtype=np.int64)
    cum = np.zeros(len(m))
    for c in cols:
        cum += c
        n_lo += cum <= k_lo
        n_hi += cum <= k_hi
    lo = dom[np.minimum(n_lo, V - 1)]
    hi = dom[np.minimum(n_hi, V - 1)]
    return np.where(m > 0, (lo + hi) / 2.0, np.nan), None


__all__ = ["LeftOut", "cell_columns", "consensus_values", "leave_one_out", "left_out"]
