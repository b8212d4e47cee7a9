"""The first row of each distinct (item, rater) judgement of a table of answers: what
`df.drop_duplicates(["item_id", "rater"])` keeps, as row positions.

Three readers ask it of the same million-row table at every dashboard refresh: the dashboard's
tiles (answers counted once per judgement), the raters' section (items per rater) and the
fatigue figures (each judgement's place in its session). Hashing pairs of a million strings
took 0.06-0.1 s each; here the two columns are factorized once and the pairs found in a table
of every (item, rater) code, and the last table's answer is kept for the next reader (by
identity: the frames are never changed in place).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .last_table import LastTable

_KEPT = LastTable()  # the last table's first rows


def first_rows(df: pd.DataFrame, columns: tuple[str, str] = ("item_id", "rater")) -> np.ndarray:
    """Positions, ascending, of the rows `df.drop_duplicates(list(columns))` keeps (a missing
    value is a value of its own, as there)."""
    key = tuple(sorted(columns))  # the same rows whatever the columns' order
    last = _KEPT.get(None)
    if last is not None and last[0] is df and last[1] == key:
        return last[2]
    rows = _first_rows(df, key)
    _KEPT.put(None, df, key, rows)
    return rows


def _first_rows(df: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    n = len(df)
    if not n:
        return np.zeros(0, dtype=np.int64)
    a, a_names = pd.factorize(df[columns[0]], use_na_sentinel=False)
    b, b_names = pd.factorize(df[columns[1]], use_na_sentinel=False)
    size = len(a_names) * len(b_names)
    pair = a.astype(np.int64) * len(b_names) + b
    if size > 8 * n + (1 << 20):  # sparse: a sort finds the first of each pair instead
        _, first = np.unique(pair, return_index=True)
        return np.sort(first)
    first = np.full(size, n, dtype=np.int64)
    np.minimum.at(first, pair, np.arange(n, dtype=np.int64))
    kept = np.zeros(n, dtype=bool)
    kept[first[first < n]] = True
    return np.flatnonzero(kept)
