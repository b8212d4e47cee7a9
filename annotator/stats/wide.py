"""The items x raters matrix of one metric's codes, laid out for the pair kappas.

A rater's codes are one row of `rows` (raters x items), contiguous: the pair kappas read the
raters one at a time, which a pandas frame (items x raters) gave them only by a copy of each
column, and the matrix is made once per metric and refresh (a million judgements: twelve
metrics of 200,000 answers)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from .distinct import distinct


class Wide(NamedTuple):
    """`items`: the item indexes (sorted), one per column of `rows`; `names`: the raters as
    text in pivot's column order, one per row of `rows`; `rows`: each rater's code per item
    (NaN: no answer)."""

    items: np.ndarray
    names: list[str]
    rows: np.ndarray

    def column(self, name: str) -> np.ndarray:
        return self.rows[self.names.index(name)]


class WideLayout(NamedTuple):
    """Where each kept row of a metric's answers goes in its Wide: `items` (sorted) and `names`
    (in column order) as Wide's, `keep` the rows kept (None: every row; else the last answer
    of a rater who answered an item twice), `cell` each kept row's place in `rows` (flat)."""

    items: np.ndarray
    names: list[str]
    keep: np.ndarray | None
    cell: np.ndarray

    def fill(self, code: np.ndarray) -> Wide:
        """The matrix of the rows' codes (`code`: one per row the layout was made from)."""
        R, N = len(self.names), len(self.items)
        rows = np.full(R * N, np.nan)
        rows[self.cell] = code if self.keep is None else code[self.keep]  # each cell once
        return Wide(self.items, self.names, rows.reshape(R, N))


def wide_matrix(
    h: pd.DataFrame,
    answered: np.ndarray,
    items_of: tuple[np.ndarray, np.ndarray] | None = None,
) -> Wide:
    """The matrix of the answered rows of `h` (idx, rater, code), the last answer where a
    rater answered an item twice: valid.drop_duplicates(["idx", "rater"], keep="last")
    .pivot(index="idx", columns="rater", values="code") with str column names, filled in
    numpy (the pivot was half of the humans' section). `items_of`: `distinct` of every row's
    idx, read where every row is answered."""
    every = bool(answered.all())  # no cannot-judge: the columns as they are, not copies
    idx = h["idx"].to_numpy() if every else h["idx"].to_numpy()[answered]
    code = h["code"].to_numpy(dtype=float) if every else h["code"].to_numpy(dtype=float)[answered]
    rater = h["rater"].array if every else h["rater"].array[answered]
    layout = wide_layout(idx, rater, items_of if every else None)
    return _pivoted(h, answered) if layout is None else layout.fill(code)


def wide_layout(
    idx: np.ndarray,
    rater: pd.api.extensions.ExtensionArray | np.ndarray,
    items_of: tuple[np.ndarray, np.ndarray] | None = None,
) -> WideLayout | None:
    """The layout of rows of answers (item `idx`, `rater`) in wide_matrix's matrix; None where
    numpy cannot place them (item indexes that are not integers, a missing rater).
    `items_of`: `distinct(idx)` where it is known."""
    if isinstance(rater, pd.Categorical):
        # the categories' codes stand for the names: distinct raters by counting, not hashing
        cat = rater.codes.astype(np.int64)
        present = np.bincount(cat + 1, minlength=len(rater.categories) + 1)[1:] > 0
        if present.all() and (not len(cat) or cat.min() >= 0):
            r_of = cat  # every category answered, no rater missing: the codes as they are
        else:
            renum = np.cumsum(present) - 1
            r_of = np.where(cat >= 0, renum[np.maximum(cat, 0)], -1)
        raters = rater.categories[present]
    else:
        r_of, raters = pd.factorize(rater)
    if not len(idx) or idx.dtype.kind not in "iu" or (r_of < 0).any():
        return None
    items, row = items_of if items_of is not None else distinct(idx)
    R, N = len(raters), len(items)
    r_of = r_of.astype(np.int64, copy=False)
    cell = row.astype(np.int64) * R + r_of
    keep = None
    if np.bincount(cell, minlength=N * R).max() > 1:  # a rater answered twice
        last = np.full(N * R, -1, dtype=np.int64)
        np.maximum.at(last, cell, np.arange(len(cell)))
        keep = last[cell] == np.arange(len(cell))
        row, r_of = row[keep], r_of[keep]
    # the columns' order (the report lists a judge's kappas with the humans in it): a
    # categorical's raters as they first appear among the kept answers, as pivot orders them
    # where a category goes unused (it keeps the categories' order when every one is used),
    # other raters sorted
    if isinstance(rater, pd.Categorical):
        first = np.full(R, len(r_of), dtype=np.int64)
        np.minimum.at(first, r_of, np.arange(len(r_of)))
        order = np.argsort(first, kind="stable")
    else:
        order = np.asarray(raters.argsort(kind="stable"))
    place = np.empty(R, dtype=np.int64)
    place[order] = np.arange(R)
    names = [str(raters[i]) for i in order]
    return WideLayout(np.asarray(items), names, keep, place[r_of] * N + row)


def _pivoted(h: pd.DataFrame, answered: np.ndarray) -> Wide:
    """pandas' pivot, for rows numpy cannot place (item indexes that are not integers, a
    missing rater)."""
    wide = (
        h[answered]
        .drop_duplicates(["idx", "rater"], keep="last")
        .pivot(index="idx", columns="rater", values="code")
    )
    return Wide(
        wide.index.to_numpy(),
        [str(c) for c in wide.columns],
        np.ascontiguousarray(wide.to_numpy(dtype=float).T),
    )
