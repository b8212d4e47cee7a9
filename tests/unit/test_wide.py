"""The items x raters matrix against pandas' pivot of the same answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.stats.distinct import distinct
from annotator.stats.wide import wide_matrix


def _pivot(h: pd.DataFrame, answered: np.ndarray) -> pd.DataFrame:
    wide = (
        h[answered]
        .drop_duplicates(["idx", "rater"], keep="last")
        .pivot(index="idx", columns="rater", values="code")
    )
    wide.columns = [str(c) for c in wide.columns]
    return wide


def _answers(seed: int, categorical: bool, unused: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3000
    names = [f"r{k}" for k in (7, 2, 9, 4, 0)]
    rater = rng.choice(names, n)
    h = pd.DataFrame(
        {
            "idx": rng.integers(0, 400, n).astype(np.int64),
            # categories in another order than the raters first appear, one never used
            "rater": pd.Categorical(rater, categories=sorted([*names] + ["unused"] * unused))
            if categorical
            else rater.astype(object),
            "code": rng.integers(0, 6, n).astype(float),
        }
    )
    h.loc[rng.random(n) < 0.1, "code"] = np.nan
    return h


@pytest.mark.parametrize(("categorical", "unused"), [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_matrix_is_pandas_pivot_of_the_last_answers(seed, categorical, unused) -> None:
    """Twice-answered items keep the last answer; a categorical's columns come in the order the
    raters first appear among the kept answers (pandas' order where a category is unused; it
    sorts them when every category is used), other raters' sorted; with a category nobody
    answered and without."""
    h = _answers(seed, categorical, unused)
    answered = ~np.isnan(h["code"].to_numpy())
    kept = h[answered].drop_duplicates(["idx", "rater"], keep="last")
    assert len(kept) < answered.sum()  # the keep-last path is taken
    want = _pivot(h, answered)
    got = wide_matrix(h, answered)
    if categorical:
        assert got.names == [str(r) for r in pd.unique(kept["rater"].astype(str))]
    else:
        assert got.names == sorted(want.columns)
    assert sorted(got.names) == sorted(want.columns)
    want = want[got.names]
    assert np.array_equal(got.items, want.index.to_numpy())
    assert np.array_equal(got.rows, want.to_numpy().T, equal_nan=True)
    assert got.rows.flags.c_contiguous  # a rater's codes: one contiguous row
    for name in got.names:
        assert np.array_equal(got.column(name), want[name].to_numpy(), equal_nan=True)


@pytest.mark.parametrize("unused", [True, False])
def test_every_row_answered_reads_the_items_given(unused) -> None:
    h = _answers(4, True, unused)
    h = h[h["code"].notna()].drop_duplicates(["idx", "rater"], keep="last")
    answered = np.ones(len(h), dtype=bool)
    got = wide_matrix(h, answered, distinct(h["idx"].to_numpy()))
    want = _pivot(h, answered)[got.names]
    assert np.array_equal(got.rows, want.to_numpy().T, equal_nan=True)


def test_a_missing_rater_takes_pandas_pivot() -> None:
    h = _answers(5, True)
    rater = h["rater"].astype(object).to_numpy().copy()
    rater[:3] = None
    h = h.assign(rater=pd.Categorical(rater))
    answered = ~np.isnan(h["code"].to_numpy())
    got = wide_matrix(h, answered)
    want = _pivot(h, answered)
    assert got.names == list(want.columns)
    assert np.array_equal(got.rows, want.to_numpy().T, equal_nan=True)
