"""The distinct integer keys by counting give what np.unique gives, values, positions, counts
and dtypes, over small and wide ranges, negative keys and none; a number's position among
sorted values is np.searchsorted's, codes 0..V-1 or any others, NaN, infinities and numbers
between or outside them included; the runs of sorted keys begin where np.unique finds each
value first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.stats.distinct import (
    distinct,
    distinct_counts,
    distinct_text,
    n_distinct,
    position_among,
    position_in,
    present_positions,
    run_starts,
)


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


@pytest.mark.parametrize("V", [1, 2, 3, 6, 11])
def test_position_in_is_np_searchsorted(V: int) -> None:
    rng = np.random.default_rng(V)
    odd = [np.nan, np.inf, -np.inf, -0.0, 1e-300, -1e-300, V - 0.5, V + 3.0]
    domains = [
        np.arange(V, dtype=float),  # codes: the quick way
        np.arange(V),
        np.arange(V) + 0.5,  # any other values: the binary search
        np.arange(V) * 2.0,
    ]
    for values in domains:
        for _ in range(200):
            x = rng.choice(
                np.r_[np.arange(-2, 2 * V + 2) * 0.5, odd], size=int(rng.integers(0, 60))
            )
            want = np.searchsorted(values, x)
            got = position_in(values, x)
            assert np.array_equal(got, want) and got.dtype == np.int64, (values, x)
    assert np.array_equal(position_in(np.arange(3.0), np.array([0, 2, 5])), [0, 2, 3])  # ints


def test_run_starts_of_sorted_keys_are_np_unique_firsts() -> None:
    rng = np.random.default_rng(5)
    for _ in range(300):
        keys = np.sort(rng.integers(-3, int(rng.integers(1, 40)), int(rng.integers(0, 60))))
        _, first = np.unique(keys, return_index=True)
        flags = run_starts(keys)
        assert flags.dtype == bool and flags.shape == keys.shape
        assert np.array_equal(np.flatnonzero(flags), first)


@pytest.mark.parametrize("span", [1, 3, 50, 10**7])
def test_n_distinct_is_nunique(span: int) -> None:
    """On the coded tables' item rows (integers) and raters (a categorical with unused
    categories and missing values), and on any other column (hashed, as nunique does)."""
    rng = np.random.default_rng(span)
    for _ in range(100):
        n = int(rng.integers(0, 200))
        keys = pd.Series(rng.integers(-3, span, n).astype(np.int64))
        names = pd.Series(
            pd.Categorical(
                rng.choice(["ada", "bo", None], n), categories=["ada", "bo", "cy", "zed"]
            )
        )
        floats = pd.Series(np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, span, n)))
        for column in (keys, names, floats, names.astype(object)):
            assert n_distinct(column) == column.nunique()


def test_distinct_text_is_the_unique_values_as_text() -> None:
    """A coded table's raters (a categorical with unused categories, missing values or none,
    no rows) and any other column: the texts of unique()'s values, a missing one's too."""
    rng = np.random.default_rng(5)
    everyone = ["ada", "bo", "cy", "dee", "eve", "fay", "gus", "nan"]  # "nan": a rater's name
    for _ in range(300):
        n = int(rng.integers(0, 60))
        # a few categories (each looked for) or many (counted at once), some unused
        k = int(rng.integers(1, len(everyone) + 1))
        pool = [*everyone[: max(1, k - 1)], None] if rng.random() < 0.5 else everyone[:k]
        names = pd.Series(pd.Categorical(rng.choice(pool, n), categories=everyone[:k]))
        # left out: none, some (a live estimate's carried competences), or every one
        for leaving_out in (set(), set(everyone[: k // 2]), {"nan", "bo"}, set(everyone)):
            for column in (names, names.astype(object)):
                want = {str(v) for v in column.unique()} - leaving_out
                assert distinct_text(column, leaving_out=leaving_out) == want


def test_n_distinct_counts_codes_without_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The coded tables' item rows and raters are counted, not hashed (the point of it)."""
    monkeypatch.setattr(pd.Series, "nunique", lambda *_a, **_k: pytest.fail("hashed"))
    assert n_distinct(pd.Series(np.array([3, 1, 3, 7], dtype=np.int64))) == 3
    assert n_distinct(pd.Series(pd.Categorical(["a", None, "a"], categories=["a", "b"]))) == 1


def test_present_positions_are_np_unique_and_np_searchsorted() -> None:
    rng = np.random.default_rng(4)
    halves = np.arange(11) / 2.0
    for candidates in (np.arange(6.0), halves, np.array([-1.0, 0.25, 3.0])):
        for n in (0, 3, 400):
            a, b = rng.choice(candidates[1:], n), rng.choice(candidates[::3], n + 1)
            values, (at_a, at_b) = present_positions(candidates, a, b)
            want = np.unique(np.concatenate([a, b]))
            assert np.array_equal(values, want)
            assert np.array_equal(at_a, np.searchsorted(want, a))
            assert np.array_equal(at_b, np.searchsorted(want, b))
    assert present_positions(np.arange(6.0), np.array([1.0, 2.5])) is None


def test_position_among_halves_is_np_searchsorted() -> None:
    rng = np.random.default_rng(6)
    odd = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-300, -0.25, 0.25, 5.2, 1e308])
    for V in (3, 5, 11):
        halves = np.arange(V) / 2.0
        for values in (halves, halves + 0.5, halves * 3):  # the quick way, then the search
            x = np.r_[rng.choice(np.arange(-2, 2 * V + 2) * 0.25, 300), odd]
            got = position_among(values, x)
            assert np.array_equal(got, np.searchsorted(values, x)) and got.dtype == np.int64
