"""A live estimate's sliced figures from per-slice sums (`bootstrap.sliced_point`) are
`ItemBootstrap.add_sliced`'s, bit for bit, where the features are whole numbers: the raters'
agreement with the consensus and their fatigue shares take that way when nothing is resampled."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.stats.bootstrap import ItemBootstrap, ratio, sliced_point
from annotator.stats.fatigue import _shares


@pytest.mark.parametrize(("k", "finalize"), [(2, ratio), (12, _shares)])
def test_per_slice_sums_give_add_sliced_s_point_estimates(k, finalize):
    rng = np.random.default_rng(7)
    n_items, n_slices, n = 500, 9, 20_000
    rows = rng.integers(0, n_items, n)
    cols = rng.integers(0, k, n)
    vals = rng.integers(0, 3, n).astype(float)  # counts and agreements: whole numbers, some 0
    slice_of = rng.integers(0, n_slices, n)
    slice_of[slice_of == 4] = 5  # a slice without a feature: undefined, as add_sliced has it
    cols[slice_of == 7] = 1  # a slice with no answer counted: its shares are not finite
    plan = ItemBootstrap(n_items, 0)  # point estimates only, as a live estimate's plan
    whole = plan.add_sliced(rows, cols, vals, k, finalize, slice_of, n_slices)
    sums = np.bincount(slice_of * k + cols, weights=vals, minlength=n_slices * k)
    present = np.bincount(slice_of, minlength=n_slices) > 0
    summed = sliced_point(sums.reshape(n_slices, k), present, finalize)
    assert np.array_equal(summed.where, whole.where)
    assert summed.point.tobytes() == whole.point.tobytes()  # NaN where add_sliced has it
    assert not np.isfinite(summed.point).all() and (summed.where == -1).any()


def test_no_slice_present_is_an_empty_handle():
    summed = sliced_point(np.zeros((3, 2)), np.zeros(3, dtype=bool), ratio)
    whole = ItemBootstrap(10, 0).add_sliced(
        np.zeros(0, int), np.zeros(0, int), np.zeros(0), 2, ratio, np.zeros(0, int), 3
    )
    assert np.array_equal(summed.where, whole.where) and len(summed.point) == 0
