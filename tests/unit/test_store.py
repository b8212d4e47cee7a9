"""The study database: migrations, pragmas, schema = models, append-only log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from factories import ANSWERS, basic_rows, write_manifest
from sqlalchemy import text

from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.store import answers
from annotator.store.engine import (
    current_revision,
    head_revision,
    make_engine,
    open_database,
    upgrade,
)
from annotator.store.models import Base, Judgement
from annotator.store.models_pairs import PairVote


def test_create_at_head_and_schema_matches_models(any_study):
    engine = any_study.db.engine
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == [], f"models and migrations disagree on {engine.dialect.name}: {diff}"


def test_pragmas_wal_full_fk_busy(tmp_path):
    engine = open_database(tmp_path / "s.sqlite", create=True)
    with engine.connect() as c:
        assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert c.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
        assert c.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert c.execute(text("PRAGMA busy_timeout")).scalar() >= 5000


def test_upgrade_from_first_revision_keeps_data(tmp_path):
    db = tmp_path / "old.sqlite"
    engine = make_engine(db)
    upgrade(engine, "0001")
    assert current_revision(engine) == "0001"
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO raters (name, is_operator, seed, created_at) VALUES ('old', 0, 1, '2026-01-01')"
            )
        )
        assert "pair_votes" not in {
            r[0] for r in c.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))
        }
    engine.dispose()
    engine = open_database(db)  # migrates on open
    assert current_revision(engine) == head_revision()
    with engine.connect() as c:
        assert c.execute(text("SELECT name FROM raters")).scalar() == "old"
        assert c.execute(text("SELECT count(*) FROM pair_votes")).scalar() == 0


def test_correction_supersedes_and_keeps_history(any_populated):
    any_populated.add_rater("ann")
    s = LabelSession(any_populated, "ann")
    first = s.next()
    j1 = s.submit(first, ANSWERS, 1200)
    s.submit(s.next(), ANSWERS, 900)
    back = s.back()
    assert back.item_pk != first.item_pk  # the newest answer first
    back = s.back()
    assert back.item_pk == first.item_pk and back.previous["layout_hierarchy"] == 4
    j3 = s.submit(back, {**ANSWERS, "layout_hierarchy": 2}, 500)
    chain = answers.history_of(any_populated.db, "ann", first.item_pk)
    assert [c["id"] for c in chain] == [j1, j3]
    assert chain[1]["supersedes"] == j1 and chain[0]["answers"]["layout_hierarchy"] == 4
    assert (
        answers.current_judgement(
            any_populated.db, "ann", first.item_pk, any_populated.rubric.version
        )[1]["layout_hierarchy"]
        == 2
    )


def test_same_rater_in_two_windows_keeps_the_second_answer_as_a_correction(any_populated):
    """Two windows show the same item; both submit: nothing is lost, the later answer is current."""
    any_populated.add_rater("ann")
    w1, w2 = LabelSession(any_populated, "ann"), LabelSession(any_populated, "ann")
    item = w1.next()
    while item.context != "live":
        w1.submit(item, ANSWERS, 1)
        item = w1.next()
    assert w2.next().item_pk == item.item_pk
    first = w1.submit(item, ANSWERS, 10)
    assert not w1.last_replaced_other
    second = w2.submit(item, {**ANSWERS, "layout_hierarchy": 1}, 10)
    assert w2.last_replaced_other
    chain = answers.history_of(any_populated.db, "ann", item.item_pk)
    assert [c["id"] for c in chain] == [first, second] and chain[1]["supersedes"] == first
    # a second correction of the same judgement (both windows went back to it) chains on the head
    back = w1.back()
    third = w1.submit(back, ANSWERS, 10)
    assert (
        answers.history_of(any_populated.db, "ann", item.item_pk)[-1]["supersedes"] == second
        and third > second
    )
    # even bypassing the service, SQLite refuses a second original answer
    with any_populated.db.write() as s, pytest.raises(Exception, match="(?i)unique"):
        j = s.get(Judgement, first)
        s.add(
            Judgement(
                rater_pk=j.rater_pk,
                item_pk=j.item_pk,
                rubric_version=j.rubric_version,
                context="live",
                answers="{}",
            )
        )
        s.flush()


def test_one_vote_per_rater_per_pair_is_a_database_rule(any_populated):
    from annotator.services.pairing import PairSession

    any_populated.add_rater("ann")
    ps = PairSession(any_populated, "ann")
    pair = ps.next()
    first = ps.vote(pair, "left", None, 100)
    # the same rater voting again from a second window: kept as the newer vote
    second = PairSession(any_populated, "ann").vote(pair, "right", None, 100)
    with any_populated.db.read() as s:
        assert s.get(PairVote, second).supersedes == first
    # even bypassing the service, SQLite refuses a second original vote
    with any_populated.db.write() as s, pytest.raises(Exception, match="(?i)unique"):
        v = s.get(PairVote, 1)
        s.add(
            PairVote(
                pair_pk=v.pair_pk,
                rater_pk=v.rater_pk,
                item_left=v.item_right,
                item_right=v.item_left,
                choice="left",
            )
        )
        s.flush()


def test_media_is_content_addressed_and_stripped(tmp_path, study):
    from factories import make_png
    from PIL import Image

    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=1)
    make_png(
        src / "out" / "secret-gen-a.png",
        colour=(9, 9, 9),
        text_chunk="model=secret-gen-a path=/home/x",
    )
    exif_img = Image.new("RGB", (30, 20), (1, 2, 3))
    exif = Image.Exif()
    exif[0x010F] = "SecretCam"  # Make
    exif_img.save(src / "out" / "exif.jpg", exif=exif)
    rows[0]["images"] = ["out/secret-gen-a.png"]
    rows[1]["images"] = ["out/exif.jpg"]
    study.import_items(write_manifest(src, rows))
    files = [p for p in (study.folder / "media").rglob("*.png")]
    assert len(files) == 3
    import hashlib

    for p in files:
        assert p.stem == hashlib.sha256(p.read_bytes()).hexdigest()
        with Image.open(p) as im:
            assert not im.info.get("parameters") and "exif" not in im.info
            assert not im.getexif()
        assert b"secret" not in p.read_bytes().lower() and b"SecretCam" not in p.read_bytes()
    with sqlite3.connect(study.folder / "study.sqlite") as c:
        originals = {r[0] for r in c.execute("select original_sha256 from media")}
    assert hashlib.sha256((src / "out" / "exif.jpg").read_bytes()).hexdigest() in originals


def test_harness_import_makes_items_and_judge_scores(tmp_path, study):
    import json

    from factories import make_png

    h = tmp_path / "harness"
    make_png(h / "runs" / "a.png")
    make_png(h / "runs" / "b.png", colour=(0, 90, 0))
    make_png(h / "cases_in" / "ref.png", colour=(0, 0, 90))
    make_png(h / "cases_in" / "mask.png", colour=(255, 255, 255))
    cases = h / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "t1",
                "task_type": "edit",
                "prompt": "Make it blue",
                "criteria": ["blue", "same layout"],
                "image_inputs": {
                    "image_paths": ["cases_in/ref.png"],
                    "mask_path": "cases_in/mask.png",
                },
            }
        )
        + "\n"
    )
    results = h / "results.json"
    results.write_text(
        json.dumps(
            [
                {
                    "test_id": "t1",
                    "model_label": "m-one",
                    "task_type": "edit",
                    "artifact_paths": ["runs/a.png"],
                    "scores": {"instruction_following": True, "layout_hierarchy": 4},
                    "reasons": {"layout_hierarchy": "tidy"},
                    "run_params": {"judge_model": "gpt-judge"},
                },
                {
                    "test_id": "t1",
                    "model_label": "m-two",
                    "task_type": "edit",
                    "artifact_paths": ["runs/b.png"],
                    "scores": {"instruction_following": "FAIL"},
                    "reasons": {},
                    "run_params": {},
                },
            ]
        )
    )
    n, m = study.import_harness(results, cases)
    assert (n, m) == (2, 3)
    from annotator.services.reporting import study_frames

    f = study_frames(study)
    assert set(f.judge_scores["judge"]) == {"gpt-judge", "harness-judge"}
    row = f.judge_scores[(f.judge_scores.metric == "layout_hierarchy")].iloc[0]
    assert row.value == 4 and row.reason == "tidy"
    with study.db.read() as s:
        from annotator.store.items import item_pks, item_view

        view = item_view(s, item_pks(s, ["t1:m-one"])["t1:m-one"])
    assert len(view.inputs) == 1 and view.mask and "- blue" in view.criteria


def test_reopen_study_and_rubric_version_roundtrip(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    st = Study.create(tmp_path / "x", repo / "rubrics" / "logo_edit.toml")
    version = st.rubric.version
    st.close()
    again = Study.open(tmp_path / "x")
    assert again.rubric.version == version and again.rubric.id == "logo_edit"
    again.close()


def test_an_anchor_showing_takes_one_first_answer(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    study = Study.create(tmp_path / "st", repo / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    study.import_items(
        write_manifest(src, basic_rows(src, n_cases=6, gens=("a", "b", "c", "d", "e")))
    )
    study.import_anchors(repo / "anchors" / "ui_mockup" / "anchors.jsonl")
    study.add_rater("ann")
    s = LabelSession(study, "ann")
    while (item := s.next()).context != "anchor":
        s.submit(item, ANSWERS, 5)
    first = s.submit(item, ANSWERS, 5)
    again = s.submit(
        item, ANSWERS, 5
    )  # a double submission is kept as its correction, never a second first answer
    with study.db.read() as tx:
        assert tx.get(Judgement, again).supersedes == first
        assert (
            tx.query(Judgement)
            .filter(Judgement.showing_pk == item.showing_pk, Judgement.supersedes.is_(None))
            .count()
            == 1
        )
    study.close()


def test_the_chain_slot_is_the_one_the_database_triggers_hold():
    """`chains.SLOT` (every Python write path) and migration 0008's triggers (a rater role's or a
    package's SQL) name the same columns: a change to one without the other fails here."""
    import importlib

    from annotator.store.chains import SLOT

    m = importlib.import_module(
        "annotator.store.migrations.versions.0008_corrections_keep_their_slot"
    )
    assert {t: set(c) for t, c in SLOT.items()} == {
        t: {c.strip() for c in cols.split(",")} - {"supersedes"} for t, cols in m._COLUMNS.items()
    }


def test_a_correction_of_another_raters_answer_is_refused_before_the_database(any_populated):
    """The app's write path names the rule in Python (ValueError), not only by the trigger."""
    any_populated.add_rater("ann")
    any_populated.add_rater("bob")
    item = LabelSession(any_populated, "ann").next()
    theirs = LabelSession(any_populated, "ann").submit(item, ANSWERS, 5)
    with pytest.raises(ValueError, match="same rater's answer on the same item"):
        answers.submit(
            any_populated.db,
            rater="bob",
            item_pk=item.item_pk,
            version=any_populated.rubric.version,
            session_pk=None,
            answers=ANSWERS,
            reason=None,
            time_ms=1,
            supersedes=theirs,
        )
    assert [c["id"] for c in answers.history_of(any_populated.db, "bob", item.item_pk)] == []


def test_the_app_and_an_import_store_one_answer_as_the_same_text(any_populated, tmp_path):
    """One encoding: an answer given in the app and the same answer imported from a table are
    equal text (tags as a list, keys sorted), so an unchanged re-import is recognised as such."""
    from annotator.domain.answers import encode, normalise

    any_populated.add_rater("ann")
    s = LabelSession(any_populated, "ann")
    item = s.next()
    while item.context != "live":
        s.submit(item, ANSWERS, 1)
        item = s.next()
    tagged = {**ANSWERS, "failure_tags": ["wrong_screen_type", "broken_layout"]}
    jid = s.submit(item, tagged, 5)
    with any_populated.db.read() as db:
        stored = db.get(Judgement, jid).answers
    as_tuple = {
        **normalise(any_populated.rubric, tagged),
        "failure_tags": ("broken_layout", "wrong_screen_type"),
    }
    assert stored == encode(as_tuple) == encode(normalise(any_populated.rubric, tagged))
