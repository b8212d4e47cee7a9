"""`first_rows` keeps the rows drop_duplicates keeps, through missing values, arrow strings and
a sparse table, and answers a second reader of the same table from what it kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.stats import first_rows as fr


def _table(n: int, items: int, raters: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    item = [f"it{i}" for i in rng.integers(0, items, n)]
    rater = [f"r{r}" for r in rng.integers(0, raters, n)]
    df = pd.DataFrame({"item_id": item, "rater": rater, "value": rng.integers(0, 5, n)})
    df.loc[rng.random(n) < 0.02, "rater"] = None  # a missing value is a value of its own
    df.loc[rng.random(n) < 0.02, "item_id"] = None
    return df.astype({"item_id": "str", "rater": "str"}) if seed % 2 else df


@pytest.mark.parametrize(("items", "raters", "seed"), [(50, 7, 0), (50, 7, 1), (40_000, 300, 2)])
def test_first_rows_are_the_rows_drop_duplicates_keeps(items, raters, seed):
    df = _table(5_000, items, raters, seed)
    want = df.drop_duplicates(["item_id", "rater"]).index.to_numpy()
    got = fr.first_rows(df)
    np.testing.assert_array_equal(got, want)
    assert len(want) < len(df)  # some pairs repeat: the test tells first rows from all rows
    # either order of the columns: the same rows
    np.testing.assert_array_equal(fr.first_rows(df, ("rater", "item_id")), want)


def test_a_second_reader_of_the_same_table_takes_the_kept_rows(monkeypatch):
    df = _table(2_000, 30, 5, 3)
    first = fr.first_rows(df)
    monkeypatch.setattr(fr, "_first_rows", lambda *_a: pytest.fail("computed again"))
    assert fr.first_rows(df, ("rater", "item_id")) is first
    other = df.copy()  # another table, equal or not, is its own
    monkeypatch.undo()
    np.testing.assert_array_equal(fr.first_rows(other), first)
    assert fr.first_rows(pd.DataFrame({"item_id": [], "rater": []})).size == 0


@pytest.mark.parametrize(("items", "raters", "seed"), [(50, 7, 0), (50, 7, 1), (40_000, 300, 2)])
def test_the_distinct_values_are_counted_from_what_the_first_rows_kept(items, raters, seed):
    """`n_kept_values` is nunique's count of a column (a missing value left out), for the
    table whose first rows were found last; None for any other table, and where nothing was
    kept (a sparse table: its first rows come from a sort)."""
    df = _table(5_000, items, raters, seed)
    fr.first_rows(df)
    if items * raters > 8 * len(df) + (1 << 20):
        assert fr.n_kept_values(df, "rater") is None
        return
    assert df["rater"].isna().any() or seed % 2  # a missing rater, or "None" as text
    assert fr.n_kept_values(df, "rater") == df["rater"].nunique()
    assert fr.n_kept_values(df, "item_id") == df["item_id"].nunique()
    assert fr.n_kept_values(df.copy(), "rater") is None  # an equal table is another table


@pytest.mark.parametrize("seed", [0, 1])
def test_the_items_in_order_of_first_appearance_are_those_of_the_first_rows(seed):
    """What `answers.item_table` reads: every item's first row is the first row of one of its
    (item, rater) judgements, so the distinct items of the first rows come in the same order
    as those of every row, missing ids included."""
    df = _table(5_000, 400, 9, seed)
    got = df["item_id"].iloc[fr.first_rows(df)].unique()
    want = df["item_id"].unique()
    assert list(pd.Series(got).fillna("<none>")) == list(pd.Series(want).fillna("<none>"))


@pytest.mark.parametrize(("items", "raters", "seed"), [(50, 7, 0), (50, 7, 1), (400, 9, 3)])
def test_a_grown_table_s_first_rows_from_the_added_rows_only(items, raters, seed, monkeypatch):
    """A live refresh's table grown from the last one (frames.Grown): its first rows from the
    earlier table's and the added rows (new items and raters among them, pairs the earlier rows
    hold, pairs repeated among the added), step after step; equal to drop_duplicates'. Added
    rows with a missing value are read whole, as is a table not grown from the last one."""
    from annotator.stats.frames import Grown

    rng = np.random.default_rng(seed)
    df = _table(3_000, items, raters, seed).dropna().reset_index(drop=True)
    table = df.iloc[:1_000].reset_index(drop=True)
    fr.first_rows(table)
    made_whole: list[int] = []
    whole = fr._first_rows
    monkeypatch.setattr(fr, "_first_rows", lambda d, c: made_whole.append(len(d)) or whole(d, c))
    for step in range(8):
        add = df.sample(int(rng.integers(1, 60)), random_state=step)
        if step == 3:
            add = pd.concat(
                [
                    add,
                    pd.DataFrame(
                        {"item_id": ["brand-new"] * 2, "rater": ["r0", "new"], "value": 1}
                    ),
                ]
            )
        grown = pd.concat([table, add], ignore_index=True).astype(table.dtypes.to_dict())
        got = fr.first_rows(grown, grown=Grown(earlier=table, table=grown))
        want = grown.drop_duplicates(["item_id", "rater"]).index.to_numpy()
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
        # the distinct raters and items the dashboard counts, from what was kept
        assert fr.n_kept_values(grown, "rater") == grown["rater"].nunique()
        assert fr.n_kept_values(grown, "item_id") == grown["item_id"].nunique()
        table = grown
    assert made_whole == []
    with_missing = pd.concat(
        [table, pd.DataFrame({"item_id": ["it1"], "rater": [None]})], ignore_index=True
    )
    got = fr.first_rows(with_missing, grown=Grown(earlier=table, table=with_missing))
    np.testing.assert_array_equal(got, with_missing.drop_duplicates(["item_id", "rater"]).index)
    assert made_whole == [len(with_missing)]
    other = table.copy()
    again = pd.concat([other, table.iloc[:5]], ignore_index=True)
    fr.first_rows(again, grown=Grown(earlier=other, table=again))  # not the last table
    assert made_whole[-1] == len(again)
