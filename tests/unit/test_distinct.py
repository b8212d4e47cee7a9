"""The distinct integer keys by counting give what np.unique gives, values, positions, counts
and dtypes, over small and wide ranges, negative keys and none."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.stats.distinct import distinct, distinct_counts


@pytest.mark.parametrize("span", [1, 3, 50, 10**7])
def test_distinct_is_np_unique(span: int) -> None:
    rng = np.random.default_rng(span)
    for _ in range(300):
        n = int(rng.integers(0, 300))
        lo = int(rng.integers(-5, 5))
        keys = rng.integers(lo, lo + span, n).astype(np.int64)
        values, inverse = np.unique(keys, return_inverse=True)
        got_values, got_inverse = distinct(keys)
        assert np.array_equal(got_values, values) and got_values.dtype == values.dtype
        assert np.array_equal(got_inverse, inverse.reshape(-1)) and got_inverse.shape == (n,)
        values, counts = np.unique(keys, return_counts=True)
        got_values, got_counts = distinct_counts(keys)
        assert np.array_equal(got_values, values) and got_values.dtype == values.dtype
        assert np.array_equal(got_counts, counts) and got_counts.dtype == counts.dtype
