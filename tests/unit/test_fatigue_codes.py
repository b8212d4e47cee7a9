"""The fatigue figures of a live refresh read each judgement's item and rater from the codes the
answers were coded with (row_codes.codes_kept) instead of looking 200,000 ids up again: the
same positions, and the same raters' section, as the lookup gives."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from annotator.services.reporting import study_frames
from annotator.services.study import Study
from annotator.stats.answers import human_answers, item_table
from annotator.stats.bootstrap import ItemBootstrap, jsonable, resolve
from annotator.stats.consensus import metric_specs
from annotator.stats.fatigue import _item_and_rater, _positions
from annotator.stats.frames import Grown
from annotator.stats.raters import rater_section
from annotator.stats.row_codes import codes_kept


@pytest.fixture(scope="module")
def grown(demo_study_dir):
    """The demo's frames after a refresh that only added answers: a new rater's on five items,
    in a session of their own."""
    st = Study.open(demo_study_dir)
    try:
        frames = study_frames(st)
    finally:
        st.close()
    j = frames.judgements
    added = j[j["item_id"].isin(j["item_id"].unique()[:5])].assign(
        rater="zed", session_id=int(j["session_id"].max()) + 1
    )
    table = pd.concat([j, added], ignore_index=True)
    return replace(frames, judgements=table, judgements_grown=Grown(earlier=j, table=table))


def _raters(frames):
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    plan = ItemBootstrap.for_items(items, 0, 0)
    out = rater_section(plan, frames, items, specs, human, 10)
    plan.run()
    return items, json.dumps(jsonable(resolve(out)), sort_keys=True)


def test_the_kept_codes_give_the_looked_up_positions(grown):
    items, _ = _raters(grown)  # codes the answers: their codes are kept for the table
    j = grown.judgements
    assert codes_kept(j, "rater") is not None
    pos = _positions(grown)
    raters = sorted(set(j["rater"].dropna().astype(str)))
    kept = _item_and_rater(j, pos, items, raters)
    looked_up = _item_and_rater(j.copy(), pos, items, raters)  # a table nobody coded
    assert codes_kept(j.copy(), "rater") is None
    for a, b in zip(kept, looked_up, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert (kept[0] >= 0).all() and (kept[1] >= 0).all()


def test_the_raters_section_is_the_one_made_by_looking_up(grown):
    _, with_codes = _raters(grown)
    afresh = replace(grown, judgements=grown.judgements.copy(), judgements_grown=None)
    _, looked_up = _raters(afresh)
    assert with_codes == looked_up
    assert '"zed"' in with_codes and "fatigue" in with_codes


def test_the_raters_names_and_counts_from_the_codes_are_the_names(grown):
    """Each rater's judgements counted from the kept codes are those counted from the names,
    a rater added by the refresh among them."""
    from annotator.stats.first_rows import first_rows
    from annotator.stats.raters import _judgement_raters

    earlier = grown.judgements
    odd = earlier.iloc[:12].assign(rater="yan", session_id=int(earlier["session_id"].max()) + 2)
    table = pd.concat([earlier, odd], ignore_index=True)
    frames = replace(grown, judgements=table, judgements_grown=Grown(earlier=earlier, table=table))
    _raters(frames)  # codes the answers: kept for the table
    assert codes_kept(table, "rater") is not None
    firsts = first_rows(table)
    kept = _judgement_raters(table, firsts)
    looked_up = _judgement_raters(table.copy(), firsts)
    assert kept == looked_up
    assert "yan" in kept[0] and kept[1]["yan"] == odd["item_id"].nunique() > 0


def test_the_counts_by_batches_of_metrics_are_one_count_s(grown, monkeypatch):
    """The fatigue figures count several metrics' answers at once (fatigue._BATCH answers at
    most): counted a metric at a time, or two, the raters' section is the same, bit for bit."""
    from annotator.stats import fatigue

    _, at_once = _raters(grown)
    sizes = []
    batches = fatigue._batches
    monkeypatch.setattr(
        fatigue, "_batches", lambda p, n: sizes.append(len(b := batches(p, n))) or b
    )
    for most in (1, 700):  # every metric alone (each more than the batch), then some together
        monkeypatch.setattr(fatigue, "_BATCH", most)
        _, by_batches = _raters(grown)
        assert by_batches == at_once
    assert sizes[0] > sizes[1] > 1


def test_batches_keep_the_metrics_order_within_their_size():
    from annotator.stats.fatigue import _batches

    pooled = [(np.zeros(n), np.zeros(n), np.zeros(n)) for n in (3, 4, 2, 9, 1)]
    got = [[len(p[0]) for p in batch] for batch in _batches(pooled, 6)]
    assert got == [[3], [4, 2], [9], [1]]
    assert [[len(p[0]) for p in b] for b in _batches(pooled, 100)] == [[3, 4, 2, 9, 1]]
    assert _batches([], 5) == []
