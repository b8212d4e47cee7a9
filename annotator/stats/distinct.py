"""The distinct values of integer keys (item rows, slices, raters, answer cells) by counting.

np.unique sorts; the keys of a report are mostly small whole numbers (an item's row in the item
table, a slice, a rater's index, a cell of an items x values table), whose distinct values a
table of flags over their range gives in one pass: a few times faster at a million keys. Where
the range is much larger than the keys, np.unique. Both give the same arrays.
"""

from __future__ import annotations

import numpy as np

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
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[keys - lo] = True
    values = (np.flatnonzero(seen) + lo).astype(keys.dtype, copy=False)
    return values, (np.cumsum(seen) - 1)[keys - lo]


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
