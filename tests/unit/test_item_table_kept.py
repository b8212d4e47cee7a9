"""The item table kept across a live refresh (answers.item_table): the last table, the very
object, where the refresh only added answers on the study's items; made afresh, and equal to
the table made from nothing, wherever an added answer names another item or a table it was
made from changed. The figures' slicings by case and generator follow the table
(reconcile.Context)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from annotator.services.reporting import study_frames
from annotator.services.study import Study
from annotator.stats.answers import _item_table, item_table
from annotator.stats.bootstrap import ItemBootstrap
from annotator.stats.frames import Grown
from annotator.stats.reconcile import Context


@pytest.fixture(scope="module")
def demo_frames(demo_study_dir):
    st = Study.open(demo_study_dir)
    try:
        return study_frames(st)
    finally:
        st.close()


@pytest.fixture
def refreshed(demo_frames):
    """The demo's frames, then the same after a refresh that only added answers (as
    live_frames makes them: the earlier table's rows, then a new rater's on five items)."""
    j = demo_frames.judgements
    added = j[j["item_id"].isin(j["item_id"].unique()[:5])].assign(rater="zed")
    table = pd.concat([j, added], ignore_index=True)
    return demo_frames, replace(
        demo_frames, judgements=table, judgements_grown=Grown(earlier=j, table=table)
    )


def test_a_refresh_on_the_studys_items_keeps_the_table(refreshed):
    before, after = refreshed
    table = item_table(before)
    assert item_table(before) is table
    kept = item_table(after)
    assert kept is table
    pd.testing.assert_frame_equal(kept, _item_table(after), check_exact=True)


def test_an_answer_on_another_item_makes_the_table_again(refreshed):
    before, after = refreshed
    table = item_table(before)
    ghost = after.judgements.iloc[-1:].assign(item_id="not-an-item")
    grown = pd.concat([before.judgements, ghost], ignore_index=True)
    frames = replace(before, judgements=grown, judgements_grown=Grown(before.judgements, grown))
    made = item_table(frames)
    assert made is not table and made["item_id"].iloc[-1] == "not-an-item"
    pd.testing.assert_frame_equal(made, _item_table(frames), check_exact=True)


@pytest.mark.parametrize("changed", ["items", "judge_scores", "not grown"])
def test_another_table_makes_it_again(refreshed, changed):
    before, after = refreshed
    table = item_table(before)
    if changed == "not grown":
        frames = replace(after, judgements_grown=None)
    else:
        frames = replace(after, **{changed: getattr(after, changed).copy()})
    made = item_table(frames)
    assert made is not table
    pd.testing.assert_frame_equal(made, _item_table(frames), check_exact=True)


def test_the_slicings_follow_the_table(refreshed):
    before, _ = refreshed
    items = item_table(before)
    plan = ItemBootstrap.for_items(items, 0, 0)
    first = Context(plan, items).slicings
    assert Context(plan, items).slicings is first
    other = items.copy()
    again = Context(plan, other).slicings
    assert again is not first
    assert again.keys() == first.keys()
    for k, (of, names) in first.items():
        assert again[k][0].tolist() == of.tolist() and again[k][1] == names
