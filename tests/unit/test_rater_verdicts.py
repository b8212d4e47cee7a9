"""The verdicts a live refresh keeps and brings up to date from its added rows are the verdicts
of the whole table computed afresh, array for array, through every kind of added row: new
raters (sorting first and last, so every rater's code moves), new items, answers off the scale
or missing, a rater's first determined verdict, and the rows that make it compute them all
again (a second answer to a metric of an item and rater, an answer written as another type)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import judgement_table

from annotator.ingest.rubrics import load_rubric
from annotator.stats import answers, first_rows, rater_verdicts, reasons, row_codes
from annotator.stats.answers import human_answers, item_table
from annotator.stats.consensus import VERDICT_KEY, metric_specs
from annotator.stats.frames import Grown, StudyFrames
from annotator.stats.last_table import LastTable

RUBRIC = load_rubric(Path(__file__).resolve().parents[2] / "rubrics" / "ui_mockup.toml")
GATES = ("instruction_following", "text_rendering")
SCALES = ("layout_hierarchy", "ui_affordance")
ITEMS = [f"it{i:02d}" for i in range(30)]

Row = tuple[str, str, str, object]


def _answer(rng: np.random.Generator, metric: str) -> object:
    """Mostly answers on the rubric's scale; now and then one the rules cannot read."""
    odd = rng.random()
    if odd < 0.04:
        return None  # missing
    if odd < 0.07:
        return "cannot_judge"
    if metric in GATES:
        return "PASS" if rng.random() < 0.75 else "FAIL"
    if odd < 0.09:
        return 9  # off the 0-5 scale
    return int(rng.integers(0, 6))


def _judgements(
    rng: np.random.Generator, rater: str, items: list[str], metrics: tuple[str, ...]
) -> list[Row]:
    return [(i, rater, m, _answer(rng, m)) for i in items for m in metrics]


def _verdicts(frames: StudyFrames) -> pd.DataFrame:
    got = human_answers(frames, metric_specs(frames.rubric), item_table(frames))
    return got[got["metric"] == VERDICT_KEY].reset_index(drop=True)


@pytest.fixture
def grown_calls(monkeypatch) -> list[bool]:
    """Each time kept verdicts were brought up to date: whether they could be (else all were
    computed again)."""
    calls: list[bool] = []
    whole = rater_verdicts._grown

    def counted(*args, **kw):
        out = whole(*args, **kw)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(rater_verdicts, "_grown", counted)
    return calls


def _refreshed(rows: list[Row]) -> StudyFrames:
    """A refresh's frames of `rows` (their verdicts are kept), with every item of ITEMS: the
    items table and judge scores stay these objects as the table grows, as a refresh keeps
    them."""
    start = judgement_table(rows)
    return StudyFrames(
        study="s",
        rubric=RUBRIC,
        items=pd.DataFrame({"item_id": ITEMS}),
        judgements=start,
        judgements_grown=Grown(start, start),
    )


def _grow(frames: StudyFrames, rows: list[Row]) -> StudyFrames:
    """`frames` with `rows` added after its judgements' last, as a live refresh grows them."""
    table = pd.concat([frames.judgements, judgement_table(rows)], ignore_index=True)
    return replace(frames, judgements=table, judgements_grown=Grown(frames.judgements, table))


# what the coding of answers keeps from one table to the next
KEPT = [
    (answers, "_ITEMS"),
    (answers, "_ORDER"),
    (answers, "_METRIC_ROWS"),
    (row_codes, "_KEPT"),
    (first_rows, "_KEPT"),
    (reasons, "_REASONS"),
    (rater_verdicts, "_KEPT"),
]


def _same_as_afresh(frames: StudyFrames) -> pd.DataFrame:
    """The frames' verdicts, checked against those of a copy of their table read whole by a
    process that kept nothing (and that leaves what the refreshes keep alone)."""
    got = _verdicts(frames)
    afresh = replace(frames, judgements=frames.judgements.copy(), judgements_grown=None)
    with pytest.MonkeyPatch.context() as mp:
        for module, name in KEPT:
            mp.setattr(module, name, LastTable())
        want = _verdicts(afresh)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    return got


@pytest.mark.parametrize("seed", range(4))
def test_the_kept_verdicts_grow_to_the_whole_tables(seed, grown_calls):
    rng = np.random.default_rng(seed)
    every = GATES + SCALES + ("failure_tags",)
    rows = [r for k in range(4) for r in _judgements(rng, f"r{k}", ITEMS[:20], every)]
    frames = _refreshed(rows)
    _same_as_afresh(frames)
    assert grown_calls == []
    steps: list[tuple[list[Row], bool]] = [
        # a rater sorting first (every code moves), on items nobody answered yet
        (_judgements(rng, "a0", ITEMS[20:24], every), True),
        # a rater sorting last who answers only the gates (no verdict yet), then the scales
        (_judgements(rng, "z9", ITEMS[:5], GATES), True),
        (_judgements(rng, "z9", ITEMS[:5], SCALES), True),
        # one metric for two raters already there, on items they had not answered
        (_judgements(rng, "r1", ITEMS[20:26], ("layout_hierarchy",)), True),
        # rows the rules do not read: the raters renumbered all the same
        (_judgements(rng, "b5", ITEMS[:3], ("failure_tags",)), True),
        # distinct answers no row had: typed from the added rows ("4" is 4 on the scale,
        # 7 is off it)
        (
            [
                (ITEMS[29], "d3", m, v)
                for m, v in zip(every, ["PASS", "PASS", "4", "5", ()], strict=True)
            ]
            + [
                (ITEMS[28], "d3", m, v)
                for m, v in zip(every, ["PASS", "PASS", "4", 7, ()], strict=True)
            ],
            True,
        ),
        # an answer to a metric the pair had answered: the last one counts, all again
        ([(ITEMS[0], "r0", "text_rendering", "FAIL")], False),
        # and two added answers to one metric of one pair
        ([(ITEMS[27], "r2", "ui_affordance", 1), (ITEMS[27], "r2", "ui_affordance", 4)], False),
        # a known answer written as another type: the rows coded whole, the verdicts too
        ([(ITEMS[28], "r3", "layout_hierarchy", 3.0)], None),
        # and kept again from there
        (_judgements(rng, "c7", ITEMS[25:30], every), True),
    ]
    for rows, kept in steps:
        calls = len(grown_calls)
        frames = _grow(frames, rows)
        got = _same_as_afresh(frames)
        if kept is None:
            assert len(grown_calls) == calls  # nothing to grow from
        else:
            assert grown_calls[calls:] == [kept]
        # the same frames again (the full computation after an estimate): the same verdicts
        calls = len(grown_calls)
        pd.testing.assert_frame_equal(_verdicts(frames), got, check_exact=True)
        assert len(grown_calls) == calls
    assert set(got["code"].dropna()) == {0.0, 1.0} and got["code"].isna().any()
    assert "z9" in set(got["rater"].astype(str))
    d3 = got[got["rater"] == "d3"].set_index(got["item_id"][got["rater"] == "d3"].astype(str))
    assert d3.loc[ITEMS[29], "code"] == 1.0 and np.isnan(d3.loc[ITEMS[28], "code"])


def test_the_kept_verdicts_never_change_under_a_later_refresh(grown_calls):
    """What a refresh hands out is its own: the next refresh grows new arrays."""
    rng = np.random.default_rng(7)
    rows = _judgements(rng, "r0", ITEMS[:10], GATES + SCALES)
    frames = _refreshed(rows)
    first = _verdicts(frames)
    held = first.copy(deep=True)
    later = _grow(frames, _judgements(rng, "a1", ITEMS[:10], GATES + SCALES))
    _same_as_afresh(later)
    assert grown_calls == [True]
    pd.testing.assert_frame_equal(first, held, check_exact=True)


def test_a_table_read_whole_keeps_no_verdicts():
    rows = _judgements(np.random.default_rng(1), "r0", ITEMS[:10], GATES + SCALES)
    frames = StudyFrames(
        study="s",
        rubric=RUBRIC,
        items=pd.DataFrame({"item_id": ITEMS}),
        judgements=judgement_table(rows),
    )
    _verdicts(frames)
    assert rater_verdicts._KEPT.get("rater") is None or (
        rater_verdicts._KEPT.get("rater")[0] is not frames.judgements
    )
