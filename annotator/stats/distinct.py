"""The distinct values of integer keys (item rows, slices, raters, answer cells) by counting.

np.unique sorts; the keys of a report are mostly small whole numbers (an item's row in the item
table, a slice, a rater's index, a cell of an items x values table), whose distinct values a
table of flags over their range gives in one pass: a few times faster at a million keys. Where
the range is much larger than the keys, np.unique. Both give the same arrays.
"""

from __future__ import annotations

from collections.abc import Set

import numpy as np
import pandas as pd

# the range a table of flags may span, beyond the keys' count (a wider one costs more than a sort)
_SLACK = 4096


def _small_range(keys: np.ndarray) -> tuple[int, int] | None:
    if not len(keys):
        return None
    lo, hi = int(keys.min()), int(keys.max())
    return (lo, hi) if hi - lo <= 4 * len(keys) + _SLACK else None


def distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_inverse=True) for integer keys: the distinct keys in order, and
    each key's position among them (flat)."""
    keys = np.asarray(keys)
    span = _small_range(keys)
    if span is None:
        values, inverse = np.unique(keys, return_inverse=True)
        return values, inverse.reshape(-1)
    lo, hi = span
    at = keys - lo if lo else keys  # item rows start at 0: no shifted copy of the keys
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[at] = True
    values = (np.flatnonzero(seen) + lo).astype(keys.dtype, copy=False)
    return values, (np.cumsum(seen) - 1)[at]


def n_distinct(column: pd.Series) -> int:
    """`column.nunique()` (missing values left out) for the integer and categorical columns of
    a coded table (item rows, raters), by counting: each metric's section asked a hashing
    pass over its answers twice."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = np.asarray(column.cat.codes)
        codes = codes[codes >= 0]
        return int(np.count_nonzero(np.bincount(codes))) if len(codes) else 0
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu" and len(column):
        return len(distinct(column.to_numpy())[0])
    return int(column.nunique())


def distinct_text(column: pd.Series, leaving_out: Set[str] = frozenset()) -> set[str]:
    """`{str(v) for v in column.unique()} - leaving_out`: for a categorical column (the raters
    of a coded table: millions of rows at a million judgements) its categories with a row,
    found by counting its codes, and a missing value's text where a row has none. Where only
    a few categories are outside `leaving_out` (a live estimate's raters without a carried
    competence: the new ones), those alone are looked for, one comparison of the codes each."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return {str(v) for v in column.unique()} - leaving_out
    codes = np.asarray(column.cat.codes)
    names = [str(c) for c in column.cat.categories]
    outside = [k for k, name in enumerate(names) if name not in leaving_out]
    missing = str(np.nan)  # what unique() gives for a missing value
    if len(outside) <= _FEW_SOUGHT:
        out = {names[k] for k in outside if bool((codes == k).any())}
        if missing not in leaving_out and bool((codes < 0).any()):
            out.add(missing)
        return out
    present = codes >= 0
    seen = np.bincount(codes[present], minlength=len(names)) > 0
    out = {name for name, s in zip(names, seen, strict=True) if s}
    if not present.all():
        out.add(missing)
    return out - leaving_out


# categories sought one at a time, each a pass over the codes, before one count of them all
_FEW_SOUGHT = 4


def distinct_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_counts=True) for integer keys."""
    keys = np.asarray(keys)
    span = _small_range(keys)
    if span is None:
        return np.unique(keys, return_counts=True)
    lo, hi = span
    counts = np.bincount(keys - lo, minlength=hi - lo + 1)
    at = np.flatnonzero(counts)
    return (at + lo).astype(keys.dtype, copy=False), counts[at]


def run_starts(keys: np.ndarray) -> np.ndarray:
    """A flag per key: where a run of equal keys begins. For sorted keys, the first of each
    distinct value (np.unique's return_index, as flags), without a sort."""
    keys = np.asarray(keys)
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return new


def present_positions(
    candidates: np.ndarray, *xs: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """(np.unique(np.concatenate(xs)), each x's positions among those values) for numbers drawn
    from the sorted distinct `candidates`: which candidates occur, found by each number's
    position among them, not by a sort of every number (a metric's answers and their
    consensus: 4 ms a metric at a million judgements). None where some number is not a
    candidate."""
    found = _present(np.asarray(candidates, dtype=float), xs)
    if found is None:
        return None
    seen, ats = found
    if seen.all():  # every candidate occurs: a position among them is its rank (no gather)
        return np.asarray(candidates, dtype=float), ats
    rank = np.cumsum(seen) - 1
    return np.asarray(candidates, dtype=float)[seen], [rank[at] for at in ats]


def _present(
    candidates: np.ndarray, xs: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """Which `candidates` occur among `xs`, and each x's positions among the candidates; None
    where some number is not a candidate."""
    C = len(candidates)
    seen = np.zeros(C, dtype=bool)
    ats: list[np.ndarray] = []
    for x in xs:
        if not len(x):
            ats.append(np.zeros(0, dtype=np.int64))
            continue
        if not C:
            return None
        at = np.minimum(position_among(candidates, x), C - 1)
        if not bool((candidates[at] == x).all()):
            return None
        seen[at] = True
        ats.append(at)
    return seen, ats


def position_among(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """`position_in(values, x)`; where `values` are the halves 0, 0.5, 1, ... (a scale's
    medians), by the doubled numbers' quick way: doubling is exact and keeps the order."""
    V = len(values)
    if (
        V > 2
        and values[0] == 0
        and values[1] == 0.5
        and values[-1] == (V - 1) / 2
        and bool((np.diff(values) == 0.5).all())
    ):
        with np.errstate(over="ignore"):  # past half the largest float: inf, still last
            doubled = np.asarray(x) * 2.0
        return position_in(np.asarray(values, dtype=float) * 2.0, doubled)
    return position_in(values, x)


def position_in(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """np.searchsorted(values, x) (int64) for sorted distinct `values`. Where they are 0, 1,
    ..., V-1, as the codes of most metrics are, a number's position is the count of values
    below it, ceil(x) clipped to [0, V] (NaN: V, as it sorts last): a few times faster than a
    binary search per element, on the hundreds of thousands of answers of a metric."""
    values = np.asarray(values)
    x = np.asarray(x)
    V = len(values)
    if (
        V == 0
        or x.dtype.kind != "f"
        or values.dtype.kind not in "fiu"
        or values[0] != 0
        or values[-1] != V - 1
        or (V > 1 and not bool((np.diff(values) == 1).all()))
    ):
        return np.searchsorted(values, x).astype(np.int64)
    with np.errstate(invalid="ignore"):
        out = np.clip(np.ceil(x), 0, V)
    out[np.isnan(out)] = V
    return out.astype(np.int64)
