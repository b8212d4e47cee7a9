"""The live dashboard's frames kept on disk: read back exactly as they were
kept (every table, dtype and value type), brought up to date from there by reading only what
changed, equal then to a full read of the study; ignored, never trusted, when they were kept by
other code, from another database file, or damaged."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from factories import ANSWERS, answer_items
from test_live_frames import _refresh, _same_as_full, _settings

from annotator.services import dashboard_live as DL
from annotator.services import frames_cache as FC
from annotator.services.live_frames import LiveFrames, read_live
from annotator.services.study import DB_NAME, Study
from annotator.stats.frames import TABLES


def _keep(live: LiveFrames, st: Study) -> LiveFrames:
    folder = Path(st.folder)
    return FC.keep(folder, folder / DB_NAME, live)


def _load(st: Study) -> LiveFrames | None:
    folder = Path(st.folder)
    return FC.load(folder, folder / DB_NAME, st.db, st.rubric, st.name)


def _same(a: LiveFrames, b: LiveFrames) -> None:
    for t in TABLES:
        x, y = getattr(a.frames, t), getattr(b.frames, t)
        pd.testing.assert_frame_equal(x, y, check_exact=True, obj=t)
        for c in x.columns:
            if x[c].dtype == object:  # 1, True and 1.0 are equal to pandas, not to a figure
                assert [type(v) for v in x[c]] == [type(v) for v in y[c]], (t, c)
    assert a.row_answer.tolist() == b.row_answer.tolist()
    assert a.answered == b.answered
    assert (a.marks, a.skipped) == (b.marks, b.skipped)
    assert (a.unreadable_live, a.unreadable_anchor) == (b.unreadable_live, b.unreadable_anchor)
    assert a.frames.unreadable == b.frames.unreadable
    assert a.frames.settings == b.frames.settings


def _story(st: Study, tmp_path: Path) -> None:
    """Answers of every kind the frames hold: tags (tuples), a scale, a choice, a correction,
    answers without a session (an import), a judge's scores, an adjudication-free study."""
    for r in ("ann", "bob", "cy"):
        st.add_rater(r)
    answer_items(st, "ann", 4)
    answer_items(
        st, "bob", 3, {"layout_hierarchy": 2, "failure_tags": ["missing_required_section"]}
    )
    s = answer_items(st, "cy", 2, {"text_rendering": "FAIL"})
    back = s.back()
    s.submit(back, {**ANSWERS, "layout_hierarchy": 1}, 300)
    src = tmp_path / "ratings.csv"
    src.write_text(
        "item_id,rater,metric,value,partial\n"
        + "".join(f"it-2-{g},dee,layout_hierarchy,{g + 2},yes\n" for g in range(3))
    )
    st.import_ratings(src)
    judge = tmp_path / "judge.csv"
    judge.write_text("item_id,judge,metric,value\nit-0-0,gpt,layout_hierarchy,3\n")
    st.import_judge(judge)


def test_kept_frames_read_back_as_they_were(populated, tmp_path):
    st = populated
    _story(st, tmp_path)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    kept = _keep(live, st)
    assert kept.unkept == 0 and live.unkept > 0
    back = _load(st)
    assert back is not None and back.how == "kept"
    _same(live, back)
    assert _refresh(back, st) is back  # nothing changed since: nothing read


def test_kept_frames_brought_up_to_date_equal_a_full_read(populated, tmp_path):
    st = populated
    _story(st, tmp_path)
    s = answer_items(st, "ann", 2)
    _keep(read_live(st.db, st.rubric, st.name, _settings(st)), st)
    # after the app closed: new answers, a correction of a kept answer, a damaged answer
    answer_items(st, "bob", 2, {"ui_affordance": 1})
    s.back()
    s.submit(s.back(), {**ANSWERS, "layout_hierarchy": 0}, 200)
    answer_items(st, "cy", 1)
    with sqlite3.connect(Path(st.folder) / DB_NAME) as c:
        c.execute(
            "UPDATE judgements SET answers = '{not json' WHERE id = (SELECT max(id) FROM judgements)"
        )
    back = _load(st)
    assert back is not None
    live = _refresh(back, st)
    assert live.how == "delta" and live.n_new >= 4 and live.n_dropped >= 1
    _same_as_full(live, st)
    assert len(live.frames.unreadable) == 1


def test_an_import_of_items_after_keeping_reads_the_study_whole(populated, tmp_path):
    from factories import basic_rows, write_manifest

    st = populated
    _story(st, tmp_path)
    _keep(read_live(st.db, st.rubric, st.name, _settings(st)), st)
    more = tmp_path / "more"
    more.mkdir()
    st.import_items(write_manifest(more, basic_rows(more, n_cases=4)))
    back = _load(st)
    assert back is not None
    live = _refresh(back, st)
    assert live.how == "full"
    _same_as_full(live, st)


def _description(st: Study) -> Path:
    return Path(st.folder) / ".cache" / FC.FOLDER / "frames.json"


@pytest.mark.parametrize(
    "damage",
    [
        "code_version",
        "copied",
        "value_codes",
        "truncated_table",
        "missing_table",
        "description",
        "dtype",
        "nested",
    ],
)
def test_frames_that_cannot_be_trusted_are_not_used(populated, tmp_path, monkeypatch, damage):
    st = populated
    _story(st, tmp_path)
    _keep(read_live(st.db, st.rubric, st.name, _settings(st)), st)
    desc = _description(st)
    d = json.loads(desc.read_text())
    tables = sorted(desc.parent.glob(f"{d['token']}-*.parquet"))
    assert len(tables) == len(TABLES) + 1  # and the answered ids
    if damage == "code_version":  # an upgrade that may change what the frames hold
        monkeypatch.setattr(FC, "code_version", lambda: "another")
    elif damage == "copied":  # a copy (or a restored backup): ids may name other answers
        copy = tmp_path / "copy"
        shutil.copytree(st.folder, copy)
        other = Study.open(copy)
        try:
            assert FC.load(copy, copy / DB_NAME, other.db, other.rubric, other.name) is None
        finally:
            other.close()
        return
    elif damage == "value_codes":
        d["tables"]["judgements"]["objects"]["value"] = []
        desc.write_text(json.dumps(d))
    elif damage == "truncated_table":
        f = desc.parent / f"{d['token']}-judgements.parquet"
        f.write_bytes(f.read_bytes()[:100])
    elif damage == "missing_table":
        (desc.parent / f"{d['token']}-answered.parquet").unlink()
    elif damage == "description":
        desc.write_text("{half")
    elif damage == "nested":  # a hand-edited value nested past the recursion limit
        d["tables"]["judgements"]["objects"]["value"][0] = "DEEP"
        deep = '["t", [' * 5000 + '["s", "x"]' + "]]" * 5000
        desc.write_text(json.dumps(d).replace('"DEEP"', deep))
    elif damage == "dtype":
        d["tables"]["judgements"]["dtypes"][1] = "float64"  # rater
        desc.write_text(json.dumps(d))
    assert _load(st) is None


def test_a_backup_copied_over_the_study_file_is_not_taken_for_the_kept_frames(populated, tmp_path):
    """`cp backup study.sqlite` keeps the file's identity; the answers given after it take the
    ids the kept frames give to the answers the backup lacks."""
    st = populated
    _story(st, tmp_path)
    db_file = Path(st.folder) / DB_NAME
    backup = tmp_path / "backup.sqlite"
    with sqlite3.connect(db_file) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    answer_items(st, "ann", 3)
    _keep(read_live(st.db, st.rubric, st.name, _settings(st)), st)
    folder = Path(st.folder)
    st.close()
    inode = db_file.stat().st_ino
    with sqlite3.connect(db_file) as c:  # everything in the file, the log empty
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(db_file, "r+b") as f:  # as `cp` does: the same file, other bytes
        f.write(backup.read_bytes())
        f.truncate()
    assert db_file.stat().st_ino == inode
    st = Study.open(folder)
    try:
        answer_items(st, "bob", 3, {"layout_hierarchy": 0})
        assert _load(st) is None
    finally:
        st.close()


def test_a_read_only_study_folder_keeps_nothing_and_loses_nothing(populated, tmp_path):
    st = populated
    _story(st, tmp_path)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    cache = Path(st.folder) / ".cache"
    cache.mkdir(exist_ok=True)
    (cache / FC.FOLDER).write_text("a file where the folder would be")
    assert _keep(live, st) is live
    assert _load(st) is None


def test_a_second_keeping_replaces_the_first_files(populated, tmp_path):
    st = populated
    _story(st, tmp_path)
    live = read_live(st.db, st.rubric, st.name, _settings(st))
    _keep(live, st)
    answer_items(st, "ann", 2)
    _keep(_refresh(live, st), st)
    folder = _description(st).parent
    tokens = {f.name.split("-", 1)[0] for f in folder.glob("*.parquet")}
    assert tokens == {json.loads(_description(st).read_text())["token"]}


def test_the_dashboard_starts_from_the_kept_frames(populated, tmp_path, monkeypatch):
    """The first live estimate after the app starts reads the kept frames and the new answers
    only, not the study whole; they are kept again once enough answers came."""
    st = populated
    _story(st, tmp_path)
    monkeypatch.setattr(FC, "KEEP_AFTER_NEW", 1)
    at = datetime.now(UTC)
    first = DL.read_live_inputs(st, None, {}, at, n_boot=10, seed=0)
    assert first.frames.how == "full" and first.frames.unkept > 0  # read whole, not yet kept
    assert _load(st) is None
    kept = DL.keep_frames(st, first.frames)
    assert kept.unkept == 0 and DL.keep_frames(st, kept) is kept  # nothing new: not kept again
    answer_items(st, "bob", 2)
    monkeypatch.setattr(FC, "KEEP_AFTER_NEW", 10**6)
    again = DL.read_live_inputs(st, None, {}, at, n_boot=10, seed=0)  # as after a restart
    assert again.frames.how == "delta" and again.frames.n_new == 2
    assert again.frames.unkept == 2 and DL.keep_frames(st, again.frames) is again.frames
    _same_as_full(again.frames, st)


def test_answer_values_come_back_with_their_types():
    """What a column of answer values may hold comes back as it was, type for type: a full read
    gives 1, True and 1.0 as three answers, and a figure may tell them apart."""
    values = [
        1,
        True,
        1.0,
        0.0,
        -0.0,
        float("nan"),
        "1.0",
        None,
        ("a", "b"),
        ["a", "b"],
        (),
        {"x": [1, 2.5, None]},
        "",
    ] * 3
    codes, table = FC._objects_out(pd.Series(values, dtype=object))
    assert len(table) == 13  # each distinct (type, value) kept once
    back = FC._objects_in(codes, json.loads(json.dumps(table)), len(values))
    for got, want in zip(back, values, strict=True):
        assert type(got) is type(want)
        if isinstance(want, float):
            assert repr(got) == repr(want)  # nan stays nan, -0.0 stays -0.0
        else:
            assert got == want
