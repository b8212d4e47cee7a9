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


def _answers(seed: int, categorical: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3000
    names = [f"r{k}" for k in (7, 2, 9, 4, 0)]
    rater = rng.choice(names, n)
    h = pd.DataFrame(
        {
            "idx": rng.integers(0, 400, n).astype(np.int64),
            # categories in another order than the raters first appear, one never used
            "rater": pd.Categorical(rater, categories=sorted([*names, "unused"]))
            if categorical
            else rater.astype(object),
            "code": rng.integers(0, 6, n).astype(float),
        }
    )
    h.loc[rng.random(n) < 0.1, "code"] = np.nan
    return h


@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_matrix_is_pandas_pivot_of_the_last_answers(seed, categorical) -> None:
    """Twice-answered items keep the last answer; a categorical's columns come in the order the
    raters first appear among the kept answers, other raters' sorted."""
    h = _answers(seed, categorical)
    answered = ~np.isnan(h["code"].to_numpy())
    assert h[answered].duplicated(["idx", "rater"]).any()  # the keep-last path is taken
    want = _pivot(h, answered)
    got = wide_matrix(h, answered)
    assert got.names == list(want.columns)
    assert np.array_equal(got.items, want.index.to_numpy())
    assert np.array_equal(got.rows, want.to_numpy().T, equal_nan=True)
    assert got.rows.flags.c_contiguous  # a rater's codes: one contiguous row
    for name in got.names:
        assert np.array_equal(got.column(name), want[name].to_numpy(), equal_nan=True)


def test_every_row_answered_reads_the_items_given() -> None:
    h = _answers(4, True)
    h = h[h["code"].notna()].drop_duplicates(["idx", "rater"], keep="last")
    answered = np.ones(len(h), dtype=bool)
    got = wide_matrix(h, answered, distinct(h["idx"].to_numpy()))
    assert np.array_equal(got.rows, _pivot(h, answered).to_numpy().T, equal_nan=True)


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
