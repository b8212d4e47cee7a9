"""The live dashboard's frames: a refresh reads only what changed, and the
frames it makes equal a full read of the same study, table for table and dtype for dtype, on
both engines, through new answers, corrections, answers without a session, judge scores and an
import that adds items."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
from factories import ANSWERS, answer_items, basic_rows, write_manifest

from annotator.services.frames import build_frames
from annotator.services.live_frames import LiveFrames, read_live, refresh
from annotator.services.study import Study
from annotator.stats.frames import TABLES
from annotator.store import rows as R

REPO = Path(__file__).resolve().parents[2]


def _settings(st: Study) -> dict:
    return {"min_count_for_share": 10}


def _same_as_full(live: LiveFrames, st: Study) -> None:
    full = build_frames(st.db, st.rubric, st.name, _settings(st))
    for t in TABLES:
        pd.testing.assert_frame_equal(
            getattr(live.frames, t).reset_index(drop=True),
            getattr(full, t).reset_index(drop=True),
            check_exact=True,
            obj=t,
        )
    assert live.frames.unreadable == full.unreadable
    if live.by_session is not None:  # the sessions' answers, kept across refreshes: answered's
        found: dict[int, set[int]] = {}
        for i, sess in live.answered.items():
            if sess is not None:
                found.setdefault(sess, set()).add(i)
        assert {s: set(ids) for s, ids in live.by_session.items() if ids} == found
        assert all(len(set(ids)) == len(ids) for ids in live.by_session.values())


def _refresh(live: LiveFrames, st: Study) -> LiveFrames:
    return refresh(live, st.db, st.rubric, st.name, _settings(st))


def test_a_refresh_equals_a_full_read(tmp_path, any_populated):
    st = any_populated
    for r in ("ann", "bob", "cy"):
        st.add_rater(r)
    answer_items(st, "ann", 4)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    _same_as_full(live, st)
    assert _refresh(live, st) is live  # nothing changed: nothing read

    # new answers from two raters: a delta, not a full read
    answer_items(st, "bob", 3, {"layout_hierarchy": 2})
    answer_items(
        st, "cy", 2, {"text_rendering": "FAIL", "failure_tags": ["missing_required_section"]}
    )
    live = _refresh(live, st)
    assert live.how == "delta" and live.n_new == 5 and live.n_dropped == 0
    _same_as_full(live, st)

    # a correction supersedes an answer in the middle of a session: it leaves, the correction
    # comes last, and every later answer of that session moves up one place
    s = answer_items(st, "ann", 2)
    live = _refresh(live, st)
    back = s.back()
    back = s.back()
    s.submit(back, {**ANSWERS, "layout_hierarchy": 1}, 300)
    live = _refresh(live, st)
    assert live.how == "delta" and live.n_dropped == 1
    _same_as_full(live, st)
    positions = live.frames.judgements.query("rater == 'ann'")["position"]
    assert positions.dtype.kind == "i"

    # answers without a session (an import): a gap in the positions, the column turns float
    src = tmp_path / "ratings.csv"
    src.write_text(
        "item_id,rater,metric,value,partial\n"
        + "".join(f"it-2-{g},dee,layout_hierarchy,{g + 2},yes\n" for g in range(3))
    )
    st.import_ratings(src)
    live = _refresh(live, st)
    assert live.how == "delta"
    _same_as_full(live, st)

    # judge scores: their tables re-read, the answers untouched
    judge = tmp_path / "judge.csv"
    judge.write_text("item_id,judge,metric,value\nit-0-0,gpt,layout_hierarchy,3\n")
    st.import_judge(judge)
    before = live.frames.judgements
    live = _refresh(live, st)
    assert live.frames.judgements is before
    _same_as_full(live, st)

    # new items: everything read again
    more = tmp_path / "more"
    more.mkdir()
    st.import_items(write_manifest(more, basic_rows(more, n_cases=4)))
    live = _refresh(live, st)
    assert live.how == "full"
    _same_as_full(live, st)


def test_a_damaged_answer_is_counted_by_a_refresh_as_by_a_full_read(populated):
    st = populated
    st.add_rater("ann")
    answer_items(st, "ann", 2)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    answer_items(st, "ann", 2)
    with sqlite3.connect(Path(st.folder) / "study.sqlite") as c:
        c.execute(
            "UPDATE judgements SET answers = '{not json' WHERE id = (SELECT max(id) FROM judgements)"
        )
    live = _refresh(live, st)
    assert len(live.frames.unreadable) == 1
    _same_as_full(live, st)


def test_the_delta_reads_only_the_new_answers(populated, monkeypatch):
    st = populated
    for r in ("ann", "bob"):
        st.add_rater(r)
    answer_items(st, "ann", 6)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    answer_items(st, "bob", 2)
    read: list[int] = []
    real = R.judgements_by_id

    def spy(db, ids, unreadable=None):
        read.extend(ids)
        return real(db, ids, unreadable)

    streamed: list[tuple[str, ...]] = []
    real_stream = R.judgements

    def spy_stream(db, contexts, *args, **kwargs):
        streamed.append(contexts)
        return real_stream(db, contexts, *args, **kwargs)

    compared: list[int] = []
    real_ids = R.current_judgement_ids

    def spy_ids(db, contexts):
        compared.append(1)
        return real_ids(db, contexts)

    monkeypatch.setattr(R, "judgements_by_id", spy)
    monkeypatch.setattr(R, "judgements", spy_stream)
    monkeypatch.setattr(R, "current_judgement_ids", spy_ids)
    live = _refresh(live, st)
    assert len(read) == 2 and live.n_new == 2
    # neither the answers read before nor their ids were read again, nor the anchors' answers
    # (no anchor or calibration answer came): only the rows after the log's tail
    assert streamed == [] and compared == []
    _same_as_full(live, st)


def test_an_answer_committed_below_the_tail_is_not_missed(tmp_path, pg_url):
    """On a server ids are handed out before commit: an answer can commit after one with a higher
    id. The refresh after it must still read it (the log's count up to its tail moved)."""
    from sqlalchemy import text

    st = Study.create(pg_url, REPO / "rubrics" / "ui_mockup.toml")
    try:
        src = tmp_path / "src"
        src.mkdir()
        st.import_items(write_manifest(src, basic_rows(src)))
        for r in ("ann", "bob"):
            st.add_rater(r)
        answer_items(st, "ann", 2)
        live = read_live(st.db, st.rubric, st.name, _settings(st))

        def jump(to: str) -> None:
            with st.db.engine.begin() as c:
                c.execute(text(f"SELECT setval('judgements_id_seq', {to})"))

        with st.db.engine.connect() as c:
            top = c.execute(text("SELECT max(id) FROM judgements")).scalar_one()
        jump(f"{top} + 10")  # bob's answer takes an id ten above: the one before it is late
        answer_items(st, "bob", 1)
        live = _refresh(live, st)
        assert live.how == "delta" and live.n_new == 1
        jump(str(top))  # ann's next answer commits with an id below bob's
        answer_items(st, "ann", 1)
        live = _refresh(live, st)
        assert live.n_new == 1
        _same_as_full(live, st)
        answer_items(st, "bob", 1)  # and the tail goes on from there
        live = _refresh(live, st)
        assert live.n_new == 1
        _same_as_full(live, st)
    finally:
        st.close()


def test_a_copy_put_back_is_read_again(tmp_path, populated):
    """A study file replaced by an earlier copy of itself, then answered again past where the
    last refresh stopped: the rows at the old ids are other answers, and the refresh reads them."""
    st = populated
    folder = Path(st.folder)

    def kept_rubric(live: LiveFrames, st: Study) -> LiveFrames:
        # the app keeps its rubric while the file is replaced under it (a study opened again
        # reads a new one, and a new rubric rebuilds everything)
        return refresh(live, st.db, live.frames.rubric, st.name, _settings(st))

    for r in ("ann", "bob"):
        st.add_rater(r)
    answer_items(st, "ann", 2)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    st.close()
    saved = tmp_path / "copy.sqlite"
    with sqlite3.connect(folder / "study.sqlite") as c, sqlite3.connect(saved) as out:
        c.backup(out)
    st = Study.open(folder)
    answer_items(st, "bob", 3)
    live = kept_rubric(live, st)
    assert live.how == "delta" and live.n_new == 3
    st.close()
    with sqlite3.connect(saved) as c, sqlite3.connect(folder / "study.sqlite") as out:
        c.backup(out)  # the copy put back: bob's three answers are gone
    st = Study.open(folder)
    try:
        answer_items(st, "ann", 3, {"layout_hierarchy": 1})  # the same ids, other answers
        live = kept_rubric(live, st)
        assert live.how == "full"  # the ids it had read are other answers now
        _same_as_full(live, st)
    finally:
        st.close()


def test_an_operators_answers_never_count_in_a_refresh(populated):
    """An operator's answers are stored and never counted: a refresh leaves them out whether
    the operators changed since the last read (every id compared) or not (the rows after the
    log's tail, each with its rater's flag)."""
    st = populated
    st.add_rater("ann")
    answer_items(st, "ann", 2)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    st.add_rater("ops", operator=True)
    answer_items(st, "ops", 2)
    answer_items(st, "ann", 1)
    live = _refresh(live, st)
    assert live.how == "delta" and live.n_new == 1
    _same_as_full(live, st)
    answer_items(st, "ops", 1)
    answer_items(st, "ann", 1)
    live = _refresh(live, st)
    assert live.how == "delta" and live.n_new == 1
    _same_as_full(live, st)
