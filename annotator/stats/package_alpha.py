"""Krippendorff's alpha as the `krippendorff` package computes it, bit for bit, in less time.

The package builds a units x values x values array of every unit's coincidences, divides it by
each unit's pairable answers less one and sums it over the units; at twenty thousand items it
was the largest single part of a live refresh (58 alphas a refresh: every metric's, and every
generator's). numpy sums such an array over its first axis one unit after another, cell by
cell, so the same sums come from each cell's column of contributions added up in unit order
(a running sum's last value), without the array. The steps after it (random coincidences,
distances, the ratio) are the package's own functions on that matrix.

The package's private steps are read where this version of it has them; otherwise, and for
input it refuses, `krippendorff.alpha` itself runs. tests/unit/test_package_alpha.py holds
the two equal bit for bit on random counts of every shape the report meets.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import krippendorff
import numpy as np

try:  # the package's own steps after the coincidences
    from krippendorff.krippendorff import _distance_metric, _distances, _random_coincidences
except ImportError:  # another layout of the package: it runs whole
    _STEPS = False
else:
    _STEPS = True

Level = Literal["nominal", "ordinal", "interval", "ratio"]


def count_columns(value_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts' columns (values x rows) and each row's total: added value by value, not along
    rows of two to six counts (which numpy walks a row at a time); whole numbers, so the same
    sums in any order."""
    cols = np.ascontiguousarray(value_counts.T)
    m = cols[0].copy()
    for c in cols[1:]:
        m += c
    return cols, m


def coincidences(cols: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The package's coincidence matrix of value counts given as their columns (values x
    units, float) and each unit's answers `m`, summed as it sums it: per cell, the units'
    contributions added in unit order."""
    den = np.maximum(m, 2) - 1
    V = len(cols)
    o = np.empty((V, V))
    for c in range(V):
        for k in range(c, V):
            t = cols[c] * cols[k]  # a product is the same either way round: o is symmetric
            if c == k:
                t -= cols[c]
            t /= den
            o[c, k] = o[k, c] = np.cumsum(t)[-1]
    return o


def package_alpha(value_counts: np.ndarray, value_domain: np.ndarray, level: str) -> float:
    """`krippendorff.alpha(value_counts=..., value_domain=..., level_of_measurement=level)`
    for float counts, the same number to the last bit."""
    counts = np.asarray(value_counts)
    domain = np.asarray(value_domain)
    whole = (
        _STEPS
        and counts.dtype == np.float64
        and counts.ndim == 2
        and counts.shape[1] == len(domain) > 1
        and bool((np.round(counts) == counts).all())  # counts: their sums are exact
    )
    cols, m = count_columns(counts) if whole else (None, None)
    if cols is None or m is None or bool((m <= 1).all()):  # the package's checks and messages
        return float(
            krippendorff.alpha(
                value_counts=counts,
                value_domain=domain,
                level_of_measurement=cast(Level, level),
            )
        )
    dtype = np.dtype(np.float64)
    o = coincidences(cols, m)
    n_v = o.sum(axis=0)
    e: Any = _random_coincidences(n_v, dtype=dtype)
    d: Any = _distances(domain, _distance_metric(cast(Level, level)), n_v, dtype=dtype)
    return float(1 - (o * d).sum() / (e * d).sum())


__all__ = ["coincidences", "count_columns", "package_alpha"]
