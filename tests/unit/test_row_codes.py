"""A live refresh that only added answers codes only the added rows (stats/row_codes.py), and
the coded table equals coding the whole table afresh, column for column and category for
category: through new raters, new answers of tags, a correction (coded whole again) and an
answer written as another type of a known value (coded whole again)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from factories import ANSWERS, answer_items, judgement_table

from annotator.services.frames import build_frames
from annotator.services.live_frames import read_live, refresh
from annotator.stats import reasons, row_codes
from annotator.stats.answers import human_answers, item_table
from annotator.stats.consensus import VERDICT_KEY, metric_specs
from annotator.stats.frames import Grown, StudyFrames

SETTINGS = {"min_count_for_share": 10}


def _coded(frames: StudyFrames) -> pd.DataFrame:
    return human_answers(frames, metric_specs(frames.rubric), item_table(frames))


def _same_as_coded_afresh(frames: StudyFrames, st) -> None:
    full = build_frames(st.db, st.rubric, st.name, SETTINGS)
    assert full.judgements_grown is None  # read whole: coded whole
    pd.testing.assert_frame_equal(_coded(frames), _coded(full), check_exact=True)


@pytest.fixture
def coded_rows(monkeypatch) -> list[int]:
    """How many rows each coding of a table coded."""
    sizes: list[int] = []
    whole = row_codes.row_codes

    def counted(df, *args, **kw):
        sizes.append(len(df))
        return whole(df, *args, **kw)

    monkeypatch.setattr(row_codes, "row_codes", counted)
    return sizes


@pytest.fixture
def reasons_from(monkeypatch) -> list[int]:
    """The first row each reading of reasons read from (reasons._reason_parts)."""
    starts: list[int] = []
    whole = reasons._reason_parts

    def counted(df, who, keys, rows_of, start):
        starts.append(start)
        return whole(df, who, keys, rows_of, start)

    monkeypatch.setattr(reasons, "_reason_parts", counted)
    return starts


def test_a_refresh_that_adds_answers_codes_only_them(populated, coded_rows, reasons_from):
    st = populated
    for r in ("ann", "bob", "cy"):
        st.add_rater(r)
    answer_items(st, "bob", 4)
    live = read_live(st.db, st.rubric, st.name, SETTINGS)
    _coded(live.frames)
    assert live.frames.judgements_grown is None and coded_rows == [len(live.frames.judgements)]

    # the first refresh codes its table whole (the one read whole kept no codes) and keeps them
    answer_items(st, "bob", 2, {"layout_hierarchy": 2})
    live = refresh(live, st.db, st.rubric, st.name, SETTINGS)
    assert live.how == "delta" and live.frames.judgements_grown is not None
    _same_as_coded_afresh(live.frames, st)
    assert coded_rows[-1] == len(live.frames.judgements)

    # then only the added rows: a rater who sorts first (every rater's code moves), an answer
    # of tags not seen before, a verdict that fails
    steps = [
        (
            "ann",
            2,
            {
                "failure_tags": ["missing_required_section"],
                "text_rendering": "FAIL",
                "reason": "the footer is cut off",
            },
        ),
        ("cy", 3, {"ui_affordance": 0, "reason": "buttons look disabled"}),
        ("ann", 1, None),
    ]
    for rater, n, change in steps:
        before = len(live.frames.judgements)
        answer_items(st, rater, n, change)
        live = refresh(live, st.db, st.rubric, st.name, SETTINGS)
        assert live.how == "delta" and live.n_dropped == 0
        grown = live.frames.judgements_grown
        assert grown is not None and grown.table is live.frames.judgements
        calls, read = len(coded_rows), len(reasons_from)
        _same_as_coded_afresh(live.frames, st)
        added = len(live.frames.judgements) - before
        assert coded_rows[calls] == added > 0  # the refresh's table: its added rows only
        assert reasons_from[read] == before  # and its reasons from the added rows only
        # the same frames again (the full computation after an estimate): nothing coded
        calls = len(coded_rows)
        _coded(live.frames)
        assert len(coded_rows) == calls

    # a correction drops a row: the table did not only grow, and is coded whole
    s = answer_items(st, "cy", 1)
    live = refresh(live, st.db, st.rubric, st.name, SETTINGS)
    back = s.back()
    s.submit(back, {**ANSWERS, "layout_hierarchy": 1}, 300)
    live = refresh(live, st.db, st.rubric, st.name, SETTINGS)
    assert live.n_dropped == 1 and live.frames.judgements_grown is None
    calls = len(coded_rows)
    _same_as_coded_afresh(live.frames, st)
    assert coded_rows[calls] == len(live.frames.judgements)

    # frames copied with other judgements keep the field, which then says nothing
    answer_items(st, "bob", 1)
    live = refresh(live, st.db, st.rubric, st.name, SETTINGS)
    fewer = replace(live.frames, judgements=live.frames.judgements.iloc[:-5].copy())
    assert fewer.judgements_grown is not None
    calls = len(coded_rows)
    _coded(fewer)
    assert coded_rows[calls] == len(fewer.judgements)


def _frames(rubric, rows: list[tuple[str, str, str, object]]) -> StudyFrames:
    items = pd.DataFrame({"item_id": sorted({r[0] for r in rows})})
    return StudyFrames(study="s", rubric=rubric, items=items, judgements=judgement_table(rows))


def test_an_added_answer_written_as_another_type_codes_the_table_whole(populated, coded_rows):
    """1.0 and 1 are one distinct answer, and the whole table types the first writing: an added
    row that writes a known answer otherwise cannot take the earlier rows' codes."""
    rubric = populated.rubric
    rows = [("a", "r1", "layout_hierarchy", 3), ("b", "r1", "layout_hierarchy", 2)]
    earlier = _frames(rubric, rows)
    grown_rows = [*rows, ("c", "r2", "layout_hierarchy", 3.0), ("c", "r2", "ui_affordance", 5)]
    full = _frames(rubric, grown_rows)
    items = full.items
    grown = replace(full, judgements=full.judgements.copy())
    grown.judgements_grown = Grown(earlier=earlier.judgements, table=grown.judgements)
    # the earlier table as a refresh coded it (the items already those of the grown table)
    specs = metric_specs(rubric)
    index = pd.Index(items["item_id"])
    earlier.judgements_grown = Grown(earlier=earlier.judgements, table=earlier.judgements)
    row_codes.codes_of(
        earlier.judgements, "rater", rubric, specs, index, False, earlier.judgements_grown
    )
    kept = row_codes.row_codes(earlier.judgements, "rater", specs, index, False)
    assert row_codes.grown_codes(kept, grown.judgements, "rater", specs) is None
    calls = len(coded_rows)
    got = human_answers(grown, specs, item_table(grown))
    assert coded_rows[calls : calls + 2] == [2, 4]  # the added rows, then the table whole
    pd.testing.assert_frame_equal(
        got, human_answers(full, specs, item_table(full)), check_exact=True
    )
    # written alike, the added rows alone are coded, to the same table
    alike = [*rows, ("c", "r2", "layout_hierarchy", 3), ("c", "r2", "ui_affordance", 5)]
    full = _frames(rubric, alike)
    kept = row_codes.row_codes(earlier.judgements, "rater", specs, index, False)
    merged = row_codes.grown_codes(kept, full.judgements, "rater", specs)
    whole = row_codes.row_codes(full.judgements, "rater", specs, index, False)
    assert merged is not None
    for key in whole.answers_of:
        np.testing.assert_array_equal(merged.answers_of[key][0], whole.answers_of[key][0])
        assert merged.answers_of[key][1] == whole.answers_of[key][1]
    for key in whole.spec_codes:
        np.testing.assert_array_equal(merged.spec_codes[key], whole.spec_codes[key])
    np.testing.assert_array_equal(merged.who_codes, whole.who_codes)
    assert list(merged.who_names) == list(whole.who_names)


@pytest.mark.parametrize("n_raters", [3, 126, 127, 300])
def test_the_answers_codes_name_every_rater_past_a_byte(populated, n_raters):
    """The rater codes are gathered in the type the categorical keeps (8 bits up to 126
    raters, 16 bits after): every row still names its own rater and metric, the verdict's
    rows too."""
    rubric = populated.rubric
    rows = [
        (f"it{i % 7}", f"r{k:03d}", metric, value)
        for k in range(n_raters)
        for i in range(2)
        for metric, value in (
            ("instruction_following", "PASS"),
            ("text_rendering", "FAIL" if k % 3 else "PASS"),
            ("layout_hierarchy", k % 6),
            ("ui_affordance", 3),
            ("failure_tags", ("broken_layout",) if k % 2 else ()),
        )
    ]
    frames = _frames(rubric, rows)
    got = _coded(frames)
    want_type = np.int8 if n_raters < 127 else np.int16
    assert got["rater"].cat.codes.dtype == want_type
    assert got["metric"].cat.codes.dtype == np.int8
    names = got["rater"].astype(str)
    assert set(names) == {f"r{k:03d}" for k in range(n_raters)}
    scale = got[got["metric"] == "layout_hierarchy"]
    assert (scale["code"].to_numpy() == [int(r[1:]) % 6 for r in scale["rater"].astype(str)]).all()
    by_metric = got.groupby("metric", observed=True)["rater"].nunique()
    assert (by_metric == n_raters).all(), by_metric
    assert VERDICT_KEY in by_metric.index


def test_the_verdicts_come_by_item_id_then_rater_whatever_the_items_order(populated):
    """The verdicts' rows are ordered by item id, then rater: the same rows, in that order,
    from an items table in id order and from one in any other order."""
    rng = np.random.default_rng(3)
    rows = [
        (f"it{i:02d}", f"r{k}", metric, value)
        for i in rng.permutation(12)
        for k in rng.permutation(4)
        for metric, value in (
            ("instruction_following", "PASS" if rng.random() < 0.8 else "FAIL"),
            ("text_rendering", "PASS" if rng.random() < 0.7 else "FAIL"),
            ("layout_hierarchy", int(rng.integers(0, 6))),
            ("ui_affordance", int(rng.integers(0, 6))),
            ("failure_tags", ()),
        )
    ]
    frames = _frames(populated.rubric, rows)
    specs = metric_specs(frames.rubric)

    def verdicts(items: pd.DataFrame) -> list[tuple[str, str, float]]:
        got = human_answers(frames, specs, items)
        got = got[got["metric"] == VERDICT_KEY]
        return list(
            zip(got["item_id"].astype(str), got["rater"].astype(str), got["code"], strict=True)
        )

    in_order = item_table(frames)
    assert in_order["item_id"].is_monotonic_increasing
    shuffled = in_order.iloc[rng.permutation(len(in_order))].reset_index(drop=True)
    shuffled = shuffled.assign(idx=np.arange(len(shuffled)))
    want = verdicts(in_order)
    assert [(i, r) for i, r, _ in want] == sorted((i, r) for i, r, _ in want)
    assert len(want) == 12 * 4 and {c for *_, c in want} <= {0.0, 1.0}
    got = verdicts(shuffled)
    assert [(i, r) for i, r, _ in got] == [(i, r) for i, r, _ in want]
    assert np.array_equal([c for *_, c in got], [c for *_, c in want], equal_nan=True)
