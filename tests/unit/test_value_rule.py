"""One rule for a stored value, whatever path brought it (domain/kinds.py, domain/time_spent.py):
ratings, judge scores (CSV, harness, another tool's predictions), package merge and the team
server's trigger refuse the same values with the same words, and every time spent is capped at a
day instead of refused after the rater answered."""

from __future__ import annotations

import json
import secrets
import sqlite3
import uuid as uuidlib
from pathlib import Path

import psycopg
import pytest
from factories import basic_rows, make_png, write_manifest
from sqlalchemy import text

from annotator.cli import main
from annotator.domain.answers import check_stored
from annotator.domain.errors import InputError
from annotator.domain.kinds import KINDS
from annotator.domain.rubric import parse_rubric
from annotator.domain.time_spent import MAX_TIME_MS, capped, from_seconds
from annotator.ingest.mapping import convert
from annotator.services.labeling import LabelSession
from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
DAY = 24 * 3600 * 1000
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
}


def _study(tmp_path: Path) -> Path:
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(RUBRIC)]) == 0
    src = tmp_path / "src"
    rows = write_manifest(src, basic_rows(src))
    assert main(["import", "items", str(rows), "--study", str(folder)]) == 0
    return folder


def _refused(capsys, args: list[str]) -> str:
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    return err


@pytest.mark.parametrize("value", ["99", "7", "-1", "2.5"])
def test_a_judge_score_off_the_scale_is_refused_as_a_rating_is(tmp_path, capsys, value):
    folder = _study(tmp_path)
    ratings, judge = tmp_path / "ratings.csv", tmp_path / "judge.csv"
    ratings.write_text(f"item_id,rater,metric,value\nit-0-0,ann,layout_hierarchy,{value}\n")
    judge.write_text(f"item_id,judge,metric,value\nit-0-0,gpt,layout_hierarchy,{value}\n")
    as_rating = _refused(capsys, ["import", "ratings", str(ratings), "--study", str(folder)])
    as_judge = _refused(capsys, ["import", "judge", str(judge), "--study", str(folder)])
    rule = f"{value} is outside layout_hierarchy's scale 0..5"
    assert rule in as_rating and rule in as_judge
    assert "judge_scale" in as_judge  # the way out for a judge that scores on its own scale
    with sqlite3.connect(folder / "study.sqlite") as c:
        assert c.execute("SELECT count(*) FROM judge_scores").fetchone() == (0,)


def test_a_gate_judge_answer_is_refused_with_the_raters_words(tmp_path, capsys):
    folder = _study(tmp_path)
    judge = tmp_path / "judge.csv"
    judge.write_text("item_id,judge,metric,value\nit-0-0,gpt,instruction_following,MAYBE\n")
    err = _refused(capsys, ["import", "judge", str(judge), "--study", str(folder)])
    assert "judge.csv:2" in err and "'MAYBE' is not PASS or FAIL" in err


def test_a_harness_score_off_the_scale_is_refused(tmp_path, capsys):
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(RUBRIC)]) == 0
    src = tmp_path / "h"
    make_png(src / "x.png")
    cases = write_manifest(src, [{"id": "case9", "prompt": "a login screen"}], "cases.jsonl")
    results = src / "results.json"
    results.write_text(
        json.dumps(
            [
                {
                    "test_id": "case9",
                    "model_label": "g1",
                    "artifact_paths": ["x.png"],
                    "scores": {"layout_hierarchy": 9},
                    "run_params": {"judge_model": "j1"},
                }
            ]
        )
    )
    err = _refused(
        capsys,
        ["import", "harness", str(results), "--cases", str(cases), "--study", str(folder)],
    )
    assert "9 is outside layout_hierarchy's scale 0..5" in err


def test_another_tools_prediction_off_the_scale_is_refused():
    metric = parse_rubric(RUBRIC.read_text()).metric("layout_hierarchy")
    with pytest.raises(InputError, match=r"7 is outside layout_hierarchy's scale 0\.\.5"):
        convert(metric, ["7"], {}, "tasks.json task 1", judge=True)
    assert convert(metric, ["4"], {}, "tasks.json task 1", judge=True) == 4


SCALED = """id = "own_scale"
title = "A judge on its own scale"
[[metrics]]
key = "faithful"
kind = "scale"
label = "Faithful"
min = 1
max = 5
judge_scale = "own"
"""


def test_a_metric_that_declares_the_judges_own_scale_takes_its_numbers(tmp_path, capsys):
    rubric = tmp_path / "own.toml"
    rubric.write_text(SCALED)
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(rubric)]) == 0
    src = tmp_path / "src"
    man = write_manifest(src, basic_rows(src, n_cases=1, gens=("a",)))
    assert main(["import", "items", str(man), "--study", str(folder)]) == 0
    judge, ratings = tmp_path / "judge.csv", tmp_path / "ratings.csv"
    judge.write_text("item_id,judge,metric,value\nit-0-0,vqa,faithful,0.73\n")
    assert main(["import", "judge", str(judge), "--study", str(folder)]) == 0
    ratings.write_text("item_id,rater,metric,value\nit-0-0,ann,faithful,0.73\n")
    err = _refused(capsys, ["import", "ratings", str(ratings), "--study", str(folder)])
    assert "0.73 is outside faithful's scale 1..5" in err  # raters stay on the points
    judge.write_text("item_id,judge,metric,value\nit-0-0,vqa2,faithful,nan\n")
    assert "finite" in _refused(capsys, ["import", "judge", str(judge), "--study", str(folder)])


def test_judge_scale_is_part_of_the_version_only_when_declared():
    plain = parse_rubric(SCALED.replace('judge_scale = "own"\n', ""))
    declared = parse_rubric(SCALED)
    assert "judge_scale" not in json.dumps(plain.canonical())
    assert declared.canonical()["metrics"][0]["judge_scale"] == "own"
    assert plain.version != declared.version
    with pytest.raises(InputError, match='judge_scale must be "points", "interval" or "own"'):
        parse_rubric(SCALED.replace('"own"', '"ratio"'))


# -- time spent -----------------------------------------------------------------------------------


def test_time_spent_is_capped_at_a_day_never_refused():
    assert capped(None) is None and capped(0) == 0 and capped(1234) == 1234
    assert capped(3 * MAX_TIME_MS) == MAX_TIME_MS
    with pytest.raises(InputError):
        capped(-1)
    assert from_seconds(1e300, "f", "lead_time") == MAX_TIME_MS
    assert from_seconds(float("inf"), "f", "lead_time") == MAX_TIME_MS
    assert from_seconds(2.5, "f", "lead_time") == 2500
    with pytest.raises(InputError, match="lead_time"):
        from_seconds(float("nan"), "f", "lead_time")


def test_an_item_left_open_over_a_weekend_is_stored_at_the_cap(tmp_path):
    folder = _study(tmp_path)
    study = Study.open(folder)
    try:
        study.add_rater("ann")
        session = LabelSession(study, "ann")
        weekend = 3 * 24 * 3600 * 1000
        session.submit(session.next(), ALL, weekend)
        with study.db.read() as s:
            assert s.execute(text("SELECT time_ms FROM judgements")).scalar() == MAX_TIME_MS
    finally:
        study.close()


# -- the team server's trigger applies each kind's own rule ----------------------------------------

EVERY_KIND = """id = "every_kind"
title = "Every kind"
[[metrics]]
key = "m_gate"
kind = "gate"
label = "Gate"
[[metrics]]
key = "m_scale"
kind = "scale"
label = "Scale"
min = 0
max = 4
[[metrics]]
key = "m_stepped"
kind = "scale"
label = "Scale between whole numbers"
min = 0
max = 1
step = 0.1
[[metrics]]
key = "m_likert"
kind = "likert"
label = "Likert"
points = ["Poor", "Fair", "Good"]
[[metrics]]
key = "m_choice"
kind = "choice"
label = "Choice"
options = ["red", "green"]
[[metrics]]
key = "m_tags"
kind = "tags"
label = "Tags"
options = ["blurry", "cropped", "garbled"]
[[metrics]]
key = "m_text"
kind = "text"
label = "Text"
required = false
"""

# values as stored (JSON), each kind's good and bad ones; the verdict comes from check_stored
STORED = {
    "m_gate": ["PASS", "FAIL", "cannot_judge", "pass", "MAYBE", 1, None, True],
    "m_scale": [0, 4, "cannot_judge", 5, -1, 2.5, 4.0, "4", True, None],
    "m_stepped": [0, 1, 0.5, 0.3, 0.7, "cannot_judge", 1.0, 0.0, 0.30000000000000004, 0.25]
    + [1.1, -0.1, "0.5", True, None],
    "m_likert": [1, 3, "cannot_judge", 0, 4, 2.0, "Good"],
    "m_choice": ["red", "green", "cannot_judge", "blue", 1, ["red"]],
    "m_tags": [
        [],
        ["blurry"],
        ["blurry", "cropped"],
        "cannot_judge",
        ["cropped", "blurry"],
        ["blurry", "blurry"],
        ["banana"],
        [1],
        "blurry",
    ],
    "m_text": ["fine", "", None, 5, ["x"]],
}


def test_every_kind_gives_the_server_a_check():
    for name, spec in KINDS.items():
        cond, message = spec.server_check()
        assert cond.strip() and "%" in message, name
    assert {f"m_{k}" for k in KINDS} <= set(STORED), "a kind without values here"


def _python_takes(rubric, key: str, value) -> bool:
    try:
        check_stored(rubric, {key: value})
    except InputError:
        return False
    return True


def _insert(conn: psycopg.Connection, rpk: int, item: int, version: str, answers: str, ms: int):
    conn.execute(
        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, context, answers, "
        "source, created_at, time_ms) VALUES (%s, %s, %s, %s, 'live', %s, 'app', now(), %s)",
        (str(uuidlib.uuid4()), rpk, item, version, answers, ms),
    )


def test_the_server_refuses_exactly_what_the_app_refuses(pg_server, tmp_path):
    """Every kind's good and bad stored values, inserted by a rater's own login role: the
    trigger's verdict equals check_stored's, and a time of three days is stored at the cap."""
    from annotator.services.team import assign
    from annotator.store import roles

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    rubric_file = tmp_path / "every.toml"
    rubric_file.write_text(EVERY_KIND)
    rater = f"val_{secrets.token_hex(3)}"
    lead = Study.create(url, str(rubric_file))
    try:
        src = tmp_path / "src"
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=1, gens=("a",))))
        assign(lead, [rater], overlap=1, pair_overlap=1, seed=1)
        roles.apply_roles(lead.db, database, [rater])
        with lead.db.read() as s:
            rpk = s.execute(text("SELECT id FROM raters WHERE name = :n"), {"n": rater}).scalar()
            item = s.execute(
                text("SELECT item_pk FROM assignments WHERE rater_pk = :r"), {"r": rpk}
            ).scalar()
        login = roles.logins_of(lead.db)[rater]
        as_rater = url.replace("postgresql+psycopg://", "postgresql://").replace(
            "postgres@", f"{login}@", 1
        )
        version = lead.rubric.version
        disagree = []
        with psycopg.connect(as_rater, autocommit=True) as conn:
            for key, values in STORED.items():
                for value in values:
                    python = _python_takes(lead.rubric, key, value)
                    server = True
                    try:
                        with conn.transaction():
                            _insert(conn, rpk, item, version, json.dumps({key: value}), 3 * DAY)
                            kept = conn.execute(
                                "SELECT time_ms FROM judgements ORDER BY id DESC LIMIT 1"
                            ).fetchone()
                            assert kept == (MAX_TIME_MS,)  # stored at the cap, not refused
                            raise psycopg.Rollback
                    except psycopg.errors.CheckViolation:
                        server = False
                    if python != server:
                        disagree.append((key, value, "app" if python else "server"))
            with pytest.raises(psycopg.errors.CheckViolation, match="negative"):
                _insert(conn, rpk, item, version, "{}", -5)
        assert disagree == [], f"taken by one side only: {disagree}"
    finally:
        roles.drop_roles(lead.db, database)
        lead.close()
        with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def test_a_package_from_an_app_that_sent_its_time_uncapped_merges_capped(tmp_path):
    from annotator.services.packages import export_package, merge_package
    from annotator.services.team import assign

    folder = _study(tmp_path)
    lead = Study.open(folder)
    try:
        assign(lead, ["ann"], overlap=1, pair_overlap=1, seed=2)
        pkg = tmp_path / "ann.annot"
        export_package(lead, "ann", pkg)
        work = Study.open(pkg)
        try:
            session = LabelSession(work, "ann")
            session.submit(session.next(), ALL, 1000)
        finally:
            work.close()
        with sqlite3.connect(pkg) as c:  # as an older app stored it: the time on screen, uncapped
            for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
                c.execute(f'DROP TRIGGER "{name}"')
            c.execute("UPDATE judgements SET time_ms = ?", (5 * DAY,))
        merge_package(lead, pkg)
        with lead.db.read() as s:
            assert s.execute(text("SELECT time_ms FROM judgements")).scalars().all() == [
                MAX_TIME_MS
            ]
    finally:
        lead.close()
