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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .frames import Grown
from .last_table import LastTable

_KEPT = LastTable()  # the last table's first rows, and what finds the first rows of a grown one


@dataclass(frozen=True)
class _Seen:
    """The distinct values of the two columns (codes: places here) and which pairs of codes a
    row holds, for the first rows of a table grown from this one."""

    a: pd.Index
    b: pd.Index
    pairs: np.ndarray  # bool, len(a) x len(b)


def first_rows(
    df: pd.DataFrame, columns: tuple[str, str] = ("item_id", "rater"), grown: Grown | None = None
) -> np.ndarray:
    """Positions, ascending, of the rows `df.drop_duplicates(list(columns))` keeps (a missing
    value is a value of its own, as there). `grown` (frames.judgements_grown): where `df` is a
    live refresh's table grown from the last table asked for, only the added rows are read."""
    key = tuple(sorted(columns))  # the same rows whatever the columns' order
    last = _KEPT.get(None)
    if last is not None and last[1][0] == key:
        table, (_, seen), rows = last
        if table is df:
            return rows
        if grown is not None and grown.table is df and grown.earlier is table and seen is not None:
            made = _grown_rows(df, key, rows, seen, len(table))
            if made is not None:
                _KEPT.put(None, df, (key, made[1]), made[0])
                return made[0]
    rows, seen = _first_rows(df, key)
    _KEPT.put(None, df, (key, seen), rows)
    return rows


def n_kept_values(df: pd.DataFrame, column: str) -> int | None:
    """`df[column].nunique()` for one of the two columns whose first rows were last found for
    `df` (every distinct value has a first row): from the distinct values kept with them, not
    by hashing the column's values again (the dashboard's count of raters at each refresh);
    None when none are kept for `df`."""
    last = _KEPT.get(None)
    if last is None or last[0] is not df or last[1][1] is None or column not in last[1][0]:
        return None
    seen: _Seen = last[1][1]
    values = seen.a if column == last[1][0][0] else seen.b
    return int(values.notna().sum())


def _first_rows(df: pd.DataFrame, columns: tuple[str, ...]) -> tuple[np.ndarray, _Seen | None]:
    n = len(df)
    if not n:
        return np.zeros(0, dtype=np.int64), None
    a, a_names = pd.factorize(df[columns[0]], use_na_sentinel=False)
    b, b_names = pd.factorize(df[columns[1]], use_na_sentinel=False)
    size = len(a_names) * len(b_names)
    pair = a.astype(np.int64) * len(b_names) + b
    if size > 8 * n + (1 << 20):  # sparse: a sort finds the first of each pair instead
        _, first = np.unique(pair, return_index=True)
        return np.sort(first), None
    first = np.full(size, n, dtype=np.int64)
    np.minimum.at(first, pair, np.arange(n, dtype=np.int64))
    kept = np.zeros(n, dtype=bool)
    kept[first[first < n]] = True
    seen = (first < n).reshape(len(a_names), len(b_names))
    return np.flatnonzero(kept), _Seen(pd.Index(a_names), pd.Index(b_names), seen)


def _grown_rows(
    df: pd.DataFrame, columns: tuple[str, ...], rows: np.ndarray, seen: _Seen, n0: int
) -> tuple[np.ndarray, _Seen] | None:
    """The first rows of `df`, whose first n0 rows are the table of `rows` and `seen`: those
    rows, then each added row whose pair no row before it holds. None (read it all) where an
    added value is missing (the lookup of a missing value is not the factorizing's)."""
    added = df.iloc[n0:]
    a_vals, b_vals = added[columns[0]], added[columns[1]]
    if a_vals.isna().any() or b_vals.isna().any():
        return None
    a_index, a = _extended(seen.a, a_vals)
    b_index, b = _extended(seen.b, b_vals)
    pairs = np.zeros((len(a_index), len(b_index)), dtype=bool)
    pairs[: len(seen.a), : len(seen.b)] = seen.pairs
    if pairs.size > 8 * len(df) + (1 << 20):
        return None
    pair = a * len(b_index) + b
    _, first = np.unique(pair, return_index=True)  # each pair's first added row
    new = np.sort(first[~pairs.reshape(-1)[pair[first]]])
    pairs.reshape(-1)[pair] = True
    return np.concatenate([rows, n0 + new]), _Seen(a_index, b_index, pairs)


def _extended(index: pd.Index, values: pd.Series) -> tuple[pd.Index, np.ndarray]:
    """`index` with the values it lacks appended (in order of first appearance, as factorizing
    the whole column places them), and each value's place in it."""
    at = index.get_indexer(values)
    if (at < 0).any():
        index = index.append(pd.Index(pd.unique(values[at < 0])))
        at = index.get_indexer(values)
    return index, at.astype(np.int64)
