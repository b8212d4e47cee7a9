"""Metrics with the same (item, rater) rows share their item count, rater count and matrix
layout: each one's figures are what it gives alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.stats.row_shape import RowShape, RowShapes
from annotator.stats.wide import wide_matrix


def _rows(seed: int, twice: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 2000
    names = ["r3", "r1", "r8", "r0"]
    h = pd.DataFrame(
        {
            "idx": rng.integers(0, 300, n).astype(np.int64),
            "rater": pd.Categorical(rng.choice(names, n), categories=sorted([*names, "unused"])),
        }
    )
    if not twice:  # each rater answers an item once
        h = h.drop_duplicates(["idx", "rater"], keep="last").reset_index(drop=True)
    return h


def _metric(rows: pd.DataFrame, seed: int, cannot_judge: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    code = rng.integers(0, 6, len(rows)).astype(float)
    code[rng.random(len(rows)) < cannot_judge] = np.nan
    return rows.assign(code=code)


def _same_wide(got, want) -> None:
    assert got.names == want.names
    assert np.array_equal(got.items, want.items)
    assert np.array_equal(got.rows, want.rows, equal_nan=True)


@pytest.mark.parametrize("twice", [False, True])
def test_metrics_with_the_same_rows_share_one_shape_and_keep_their_own_figures(twice) -> None:
    rows = _rows(3, twice)
    shapes = RowShapes()
    first = shapes.of(_metric(rows, 0))
    for seed in range(1, 5):  # other codes, the same rows (a copy of them, not the same arrays)
        h = _metric(rows.copy(), seed)
        shape = shapes.of(h)
        assert shape is first
        answered = ~np.isnan(h["code"].to_numpy())
        _same_wide(shape.wide(h, answered), wide_matrix(h, answered))
        assert shape.n_items == h["idx"].nunique() and shape.n_raters == h["rater"].nunique()
        assert np.array_equal(shape.items_of[0], np.unique(h["idx"]))
    # cannot-judge answers leave other rows in the matrix: made for them
    h = _metric(rows, 9, cannot_judge=0.2)
    answered = ~np.isnan(h["code"].to_numpy())
    _same_wide(shapes.of(h).wide(h, answered), wide_matrix(h, answered))


def test_other_rows_make_another_shape() -> None:
    rows = _rows(4, False)
    shapes = RowShapes()
    first = shapes.of(_metric(rows, 0))
    moved = rows.copy()
    moved.loc[7, "idx"] = (moved.loc[7, "idx"] + 1) % 300
    other_rater = rows.copy()
    other_rater["rater"] = other_rater["rater"].cat.rename_categories(
        {"r0": "r0b"}
    )  # the same codes, other names
    for h in (moved, other_rater, rows.iloc[:-1], rows.assign(rater=rows["rater"].astype(str))):
        h = _metric(h, 1)
        shape = shapes.of(h)
        assert shape is not first
        answered = ~np.isnan(h["code"].to_numpy())
        _same_wide(shape.wide(h, answered), wide_matrix(h, answered))
        assert shape.n_raters == h["rater"].nunique()
        first = shapes.of(_metric(rows, 0))


def test_a_missing_rater_takes_pandas_pivot_every_time() -> None:
    rows = _rows(5, False)
    rater = rows["rater"].astype(object).to_numpy().copy()
    rater[:3] = None
    rows = rows.assign(rater=pd.Categorical(rater))
    shapes = RowShapes()
    for seed in (0, 1):
        h = _metric(rows, seed)
        shape = shapes.of(h)
        answered = np.ones(len(h), dtype=bool)
        _same_wide(shape.wide(h, answered), wide_matrix(h, answered))
        assert isinstance(shape, RowShape) and shape.n_raters == h["rater"].nunique()
