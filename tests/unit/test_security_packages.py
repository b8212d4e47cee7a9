"""Attacks on the lead through a rater package: each test takes a
real exported package, worked in as a rater would, edits it by hand with sqlite3 as a hostile
rater would, and merges it. A refused package is refused in one line (exit 2) naming the table,
the row and the field, and the study is left exactly as it was."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
from conftest import copy_study
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from test_team import ALL, _work

from annotator.cli import main
from annotator.services.calibration import CalibrationSession
from annotator.services.labeling import LabelSession
from annotator.services.packages import export_package, merge_package
from annotator.services.study import DB_NAME, Study
from annotator.services.team import assign

TEAM = ["anaya", "benito", "caius", "deepa"]
CODE_RE = re.compile(r"^[A-Z0-9]{3}-[A-Z0-9]{3}$")  # a display code


@pytest.fixture(scope="module")
def worked(demo_study_dir, tmp_path_factory) -> tuple[Path, Path]:
    """(a lead's study, anaya's package worked in: 6 answers, a correction, 3 votes, a
    calibration she did not pass); benito has answered in the lead's study too."""
    root = tmp_path_factory.mktemp("attack")
    lead = copy_study(demo_study_dir, root / "lead")
    study = Study.open(lead)
    try:
        assign(study, TEAM, overlap=2, pair_overlap=1, seed=3)
        study.add_rater("ops-lead", operator=True)
        ben = LabelSession(study, "benito")
        # all of his queue, so that he shares answered items with anaya whatever order his
        # (randomly seeded) queue has
        while (served := ben.next()) is not None:
            ben.submit(served, ALL, 9)
        pkg = root / "anaya.annot"
        export_package(study, "anaya", pkg)
    finally:
        study.close()
    _work(pkg, 6, 3, back=True)
    p = Study.open(pkg)
    try:
        cal = CalibrationSession(p, "anaya")
        while (served := cal.next()) is not None:
            cal.submit(served, {**ALL, "instruction_following": "FAIL", "layout_hierarchy": 0}, 5)
        assert cal.finish()["qualified"] is False
    finally:
        p.close()
    return lead, pkg


@pytest.fixture
def case(worked, tmp_path) -> tuple[Path, Path]:
    """A fresh copy of the lead and of the package for one attack."""
    lead, pkg = worked
    dest = tmp_path / "anaya.annot"
    shutil.copy(pkg, dest)
    return copy_study(lead, tmp_path / "lead"), dest


def _edit(pkg: Path, *statements: str, params: tuple = ()) -> None:
    """Run `statements` on the package as its hostile rater would: first dropping the package's
    own correction triggers (a file's schema is its owner's to change)."""
    c = sqlite3.connect(pkg)
    try:
        for (name,) in c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            c.execute(f"DROP TRIGGER {name}")
        for i, sql in enumerate(statements):
            c.execute(sql, params if i == len(statements) - 1 else ())
        c.commit()
    finally:
        c.close()


def _state(lead: Path) -> tuple:
    with sqlite3.connect(lead / DB_NAME) as c:
        return tuple(
            c.execute(f"SELECT count(*), max(id) FROM {t}").fetchone()
            for t in ("judgements", "pair_votes", "sessions", "calibrations", "merges")
        )


def _refused(capsys, lead: Path, pkg: Path, *needles: str) -> str:
    before = _state(lead)
    capsys.readouterr()
    assert main(["package", "merge", str(pkg), "--study", str(lead)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    for n in needles:
        assert n in err, err
    assert _state(lead) == before  # nothing written
    return err


def _merged(capsys, lead: Path, pkg: Path) -> None:
    assert main(["package", "merge", str(pkg), "--study", str(lead)]) == 0, capsys.readouterr().err


def _lead_rows(lead: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(lead / DB_NAME) as c:
        return c.execute(sql, params).fetchall()


# ---- 2: a correction supersedes only the same rater's answer on the same item --------------------


def test_a_package_correcting_another_raters_answer_is_refused(case, capsys):
    """A copy of benito's answer (his UUID) and a correction of it, hidden in anaya's package."""
    lead, pkg = case
    shared = _lead_rows(
        lead,
        "SELECT j.uuid, j.item_pk, j.answers, j.reason, j.rubric_version FROM judgements j "
        "JOIN raters r ON r.id = j.rater_pk WHERE r.name = 'benito' AND j.context = 'live' AND "
        "j.item_pk IN (SELECT a.item_pk FROM assignments a JOIN raters q ON q.id = a.rater_pk "
        "WHERE q.name = 'anaya') ORDER BY j.id LIMIT 1",
    )
    assert shared, "benito and anaya share an item"
    uid, study_item, answers, reason, version = shared[0]
    code = _lead_rows(
        lead,
        "SELECT rc.code FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk WHERE r.name = "
        "'anaya' AND rc.kind = 'item' AND rc.target_pk = ?",
        (study_item,),
    )[0][0]
    with sqlite3.connect(pkg) as c:  # the package numbers its items itself: found by the code
        item = c.execute("SELECT id FROM items WHERE item_id = ?", (code,)).fetchone()[0]
    _edit(pkg, "DELETE FROM judgements WHERE item_pk = ?", params=(item,))
    c = sqlite3.connect(pkg)
    c.execute(
        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, session_pk, context, "
        "answers, reason, source, created_at) VALUES (?, 1, ?, ?, 1, 'live', ?, ?, 'app', "
        "'2026-12-01 10:00:00')",
        (uid, item, version, answers, reason),
    )
    c.execute(
        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, session_pk, context, "
        "answers, reason, source, supersedes, created_at) VALUES (?, 1, ?, ?, 1, 'live', ?, ?, "
        "'app', ?, '2026-12-01 10:01:00')",
        (
            str(uuid.uuid4()),
            item,
            version,
            answers.replace('"layout_hierarchy": 4', '"layout_hierarchy": 0'),
            reason,
            c.execute("SELECT max(id) FROM judgements").fetchone()[0],
        ),
    )
    c.commit()
    c.close()
    _refused(capsys, lead, pkg, "judgements row", "another rater")
    # benito's answer is still the current one
    assert _lead_rows(
        lead,
        "SELECT count(*) FROM judgements WHERE supersedes = (SELECT id FROM judgements "
        "WHERE uuid = ?)",
        (uid,),
    ) == [(0,)]


def test_a_correction_pointing_at_another_item_is_refused(case, capsys):
    """The package's correction (row 7 corrects row 6) moved onto another item."""
    lead, pkg = case
    with sqlite3.connect(pkg) as c:
        row, target = c.execute(
            "SELECT id, supersedes FROM judgements WHERE supersedes IS NOT NULL"
        ).fetchone()
        other = c.execute(
            "SELECT item_pk FROM judgements WHERE context = 'live' AND item_pk <> (SELECT item_pk "
            "FROM judgements WHERE id = ?) LIMIT 1",
            (target,),
        ).fetchone()[0]
    _edit(pkg, "UPDATE judgements SET item_pk = ? WHERE id = ?", params=(other, row))
    _refused(capsys, lead, pkg, f"judgements row {row}", "supersedes", "same item")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_study(request, demo_study_dir, tmp_path):
    """The demo study in a folder, or copied to a scratch database on the PostgreSQL server."""
    if request.param == "sqlite":
        study = Study.open(copy_study(demo_study_dir, tmp_path / "s"))
    else:
        from annotator.services.copying import copy_study as to_server

        url = request.getfixturevalue("pg_url")
        to_server(demo_study_dir, url)  # every row re-inserted: the demo's chains pass the triggers
        study = Study.open(url)
    yield study
    study.close()


def test_a_direct_insert_superseding_another_raters_row_is_refused_by_the_trigger(engine_study):
    """SQL written straight into the database (a rater role on the server writes SQL): a
    correction of another rater's answer, of another item, or of another rater's pair vote,
    and an UPDATE that moves a correction, are refused by the schema itself."""
    with engine_study.db.read() as s:
        a, b = s.execute(
            text(
                "SELECT j.id, j.rater_pk, j.item_pk, j.rubric_version FROM judgements j WHERE "
                "j.context = 'live' AND NOT EXISTS (SELECT 1 FROM judgements k WHERE "
                "k.supersedes = j.id) ORDER BY j.id LIMIT 2"
            )
        ).all()
        v = s.execute(
            text(
                "SELECT v.id, v.rater_pk, v.pair_pk, v.item_left, v.item_right FROM pair_votes v "
                "WHERE v.rater_pk IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pair_votes w WHERE "
                "w.supersedes = v.id) ORDER BY v.id LIMIT 1"
            )
        ).one()
        other = s.scalar(text("SELECT id FROM raters WHERE id <> :r LIMIT 1"), {"r": a[1]})
    insert = (
        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, context, answers, "
        "source, supersedes, created_at) VALUES (:u, :r, :i, :v, 'live', '{}', 'app', :s, "
        "'2026-12-01 10:00:00')"
    )
    attacks = [
        (insert, dict(r=other, i=a[2], v=a[3], s=a[0])),  # another rater's answer
        (insert, dict(r=a[1], i=b[2] if b[2] != a[2] else -1, v=a[3], s=a[0])),  # another item
        (
            "INSERT INTO pair_votes (uuid, pair_pk, rater_pk, item_left, item_right, choice, "
            "source, supersedes, created_at) VALUES (:u, :p, :r, :l, :x, 'left', 'app', :s, "
            "'2026-12-01 10:00:00')",
            dict(p=v[2], r=other if other != v[1] else a[1], l=v[3], x=v[4], s=v[0]),
        ),
    ]
    for sql, params in attacks:
        with pytest.raises(IntegrityError, match="a correction must supersede"):
            with engine_study.db.write() as s:
                s.execute(text(sql), {"u": str(uuid.uuid4()), **params})
    # the owner's own correction of the same slot passes, and cannot be moved afterwards
    with engine_study.db.write() as s:
        s.execute(text(insert), dict(u=str(uuid.uuid4()), r=a[1], i=a[2], v=a[3], s=a[0]))
    with pytest.raises(IntegrityError, match="a correction must supersede"):
        with engine_study.db.write() as s:
            s.execute(
                text("UPDATE judgements SET rater_pk = :o WHERE supersedes = :s"),
                {"o": other, "s": a[0]},
            )
    with pytest.raises(IntegrityError, match="a correction must supersede"):
        with engine_study.db.write() as s:  # nor its target moved from under it
            s.execute(
                text("UPDATE judgements SET item_pk = :i WHERE id = :s"), {"i": b[2], "s": a[0]}
            )


# ---- 3: merge validates content -----------------------------------------------------------------

_GATE = '"instruction_following": "PASS"'
BAD_ROWS = {
    "gate_maybe": (
        f"UPDATE judgements SET answers = replace(answers, '{_GATE}', "
        '\'"instruction_following": "MAYBE"\') WHERE id = 3',
        ("judgements row 3", "answers.instruction_following", "MAYBE"),
    ),
    "scale_99": (
        "UPDATE judgements SET answers = replace(answers, '\"layout_hierarchy\": 4', "
        "'\"layout_hierarchy\": 99') WHERE id = 3",
        ("judgements row 3", "answers.layout_hierarchy"),
    ),
    "unknown_tag": (
        "UPDATE judgements SET answers = replace(answers, '\"failure_tags\": []', "
        '\'"failure_tags": ["banana"]\') WHERE id = 3',
        ("judgements row 3", "answers.failure_tags", "banana"),
    ),
    "unknown_metric": (
        "UPDATE judgements SET answers = '{\"secret_metric\": 1}' WHERE id = 3",
        ("judgements row 3", "unknown metric"),
    ),
    "json_that_does_not_parse": (
        "UPDATE judgements SET answers = '{not json' WHERE id = 3",
        ("judgements row 3", "'answers'", "not valid JSON"),
    ),
    "unknown_context": (
        "UPDATE judgements SET context = 'bogus' WHERE id = 3",
        ("judgements row 3", "'context'"),
    ),
    "created_at_not_a_time": (
        "UPDATE judgements SET created_at = 'not a time' WHERE id = 3",
        ("judgements row 3", "'created_at'", "not a time"),
    ),
    "session_started_at_not_a_time": (
        "UPDATE sessions SET started_at = 'yesterday' WHERE id = 1",
        ("sessions row 1", "'started_at'"),
    ),
    "time_ms_as_text": (
        "UPDATE judgements SET time_ms = 'soon' WHERE id = 3",
        ("judgements row 3", "'time_ms'"),
    ),
    "another_rubric_version": (
        "UPDATE judgements SET rubric_version = 'f00d' WHERE id = 3",
        ("judgements row 3", "'rubric_version'"),
    ),
    "choice_banana": (
        "UPDATE pair_votes SET choice = 'banana' WHERE id = 1",
        ("pair_votes row 1", "'choice'"),
    ),
    "vote_sides_not_the_pairs_items": (
        "UPDATE pair_votes SET item_right = item_left WHERE id = 1",
        ("pair_votes row 1", "pair's items"),
    ),
}


@pytest.mark.parametrize("attack", sorted(BAD_ROWS))
def test_a_row_the_app_would_not_store_refuses_the_whole_package(case, capsys, attack):
    """Gate MAYBE, scale 99, tag/choice banana, broken JSON, a made-up context, metric or
    rubric version, times that do not parse, text in a number, a vote on other sides."""
    lead, pkg = case
    sql, needles = BAD_ROWS[attack]
    _edit(pkg, sql)
    _refused(capsys, lead, pkg, *needles)


def test_an_oversized_reason_refuses_the_whole_package(case, capsys):
    """A reason (and the text answer it comes from) longer than the app's text cap (1 MiB)."""
    lead, pkg = case
    big = "x" * ((1 << 20) + 1)
    _edit(pkg, "UPDATE judgements SET reason = ? WHERE id = 3", params=(big,))
    _refused(capsys, lead, pkg, "judgements row 3", "'reason'")


def test_one_unparsable_stored_answer_leaves_report_export_and_review_working(case, capsys):
    """An answer whose JSON does not parse, stored in the study: report, export and review go
    on without it and the report names it."""
    lead, _ = case
    bad = _lead_rows(lead, "SELECT min(id) FROM judgements WHERE context = 'live'")[0][0]
    with sqlite3.connect(lead / DB_NAME) as c:
        c.execute("UPDATE judgements SET answers = '{not json' WHERE id = ?", (bad,))
    out = lead.parent / "r.json"
    for argv in (
        ["report", "--json", str(out), "--boot", "20"],
        ["export", "judgements", "--out", str(lead.parent / "j.csv")],
        ["review"],
    ):
        assert main([*argv, "--study", str(lead)]) == 0, capsys.readouterr().err
    warnings = json.loads(out.read_text())["warnings"]
    assert len(warnings) == 1 and f"judgements id {bad}" in warnings[0]
    assert "1 stored answer(s) left out" in capsys.readouterr().err


# ---- 4: sessions, calibrations and qualifications are the rater's own ----------------------------


def _only_calibration(pkg: Path, rater: str) -> None:
    """What a relabelling rater keeps: no answers on items (they carry per-rater codes), one
    forged passing calibration."""
    _edit(
        pkg,
        "DELETE FROM judgements",
        "DELETE FROM pair_votes",
        "DELETE FROM anchor_showings",
        "UPDATE calibrations SET qualified = 1, result = '{\"qualified\": true}'",
        f"UPDATE raters SET name = '{rater}'",
        f"UPDATE package_manifest SET rater = '{rater}'",
    )


@pytest.mark.parametrize("as_whom", ["benito", "ops-lead"])
def test_a_package_relabelled_as_another_rater_or_an_operator_is_refused(case, capsys, as_whom):
    """anaya's package renamed to benito (or to the lead's operator account) with a forged
    qualified calibration: the lead exported it for anaya, so it is refused."""
    lead, pkg = case
    _only_calibration(pkg, as_whom)
    _refused(capsys, lead, pkg, "exported for 'anaya'", as_whom)
    assert _lead_rows(
        lead,
        "SELECT count(*) FROM calibrations c JOIN raters r ON r.id = c.rater_pk WHERE r.name = ?",
        (as_whom,),
    ) == [(0,)]


def test_a_package_the_lead_never_exported_is_refused(case, capsys):
    """A package whose id the lead has no record of (a forged or copied manifest)."""
    lead, pkg = case
    _edit(pkg, f"UPDATE package_manifest SET id = '{uuid.uuid4()}'")
    _refused(capsys, lead, pkg, "no record of exporting this package")


def test_a_forged_qualified_calibration_is_recomputed_by_the_lead(case, capsys):
    """qualified = 1 written over a calibration anaya failed: the lead's code recomputes it from
    her calibration answers, and she is not qualified."""
    lead, pkg = case
    _edit(pkg, "UPDATE calibrations SET qualified = 1, result = '{\"qualified\": true}'")
    _merged(capsys, lead, pkg)
    rows = _lead_rows(
        lead,
        "SELECT c.qualified, c.result FROM calibrations c JOIN raters r ON r.id = c.rater_pk "
        "WHERE r.name = 'anaya'",
    )
    assert len(rows) == 1
    qualified, result = rows[0]
    assert not qualified and json.loads(result)["qualified"] is False
    # calibrated on the anchors the package did not deal her silently
    silent = _lead_rows(
        lead,
        "SELECT count(*) FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk "
        "WHERE r.name = 'anaya' AND rc.kind = 'silent'",
    )[0][0]
    assert silent >= 1 and json.loads(result)["n_anchors"] == 14 - silent


# ---- 8: a package cannot hang the lead -----------------------------------------------------------


@pytest.mark.parametrize(
    "sql,what",
    [
        ("CREATE VIEW peek AS SELECT * FROM judgements", "a view"),
        (
            "CREATE TRIGGER tattle AFTER INSERT ON raters BEGIN SELECT 1; END",
            "a trigger annotator does not make",
        ),
        ("CREATE VIRTUAL TABLE notes USING rtree(id, x0, x1)", "a virtual table"),
    ],
)
def test_a_package_defining_views_triggers_or_virtual_tables_is_refused(case, capsys, sql, what):
    """Objects of the file's own (a view a merge would read as a table; a recursive one never
    ends) refuse the package before any of it is read."""
    lead, pkg = case
    _edit(pkg, sql)
    _refused(capsys, lead, pkg, what, "sqlite_master")


def _chain(pkg: Path, n: int) -> None:
    """n corrections of one of the package's answers, each correcting the one before."""
    _edit(pkg, "SELECT 1")
    with sqlite3.connect(pkg) as c:
        cols = (
            "rater_pk, item_pk, rubric_version, session_pk, context, answers, reason, source, "
            "created_at"
        )
        head = c.execute(
            "SELECT max(id) FROM judgements WHERE context = 'live' AND id NOT IN (SELECT "
            "supersedes FROM judgements WHERE supersedes IS NOT NULL)"
        ).fetchone()[0]
        for _ in range(n):
            c.execute(
                f"INSERT INTO judgements (uuid, supersedes, {cols}) SELECT ?, id, {cols} FROM "
                "judgements WHERE id = ?",
                (str(uuid.uuid4()), head),
            )
            head = c.execute("SELECT max(id) FROM judgements").fetchone()[0]


def test_a_3000_long_correction_chain_is_the_raters_and_merges_whole(case, capsys):
    """3000 corrections of one answer (Ctrl+Z and Enter, as often as the rater likes): the app sets
    no limit, so neither does merge: every row lands, in a chain whose head is the last
    correction, and nothing is called altered. Merge inserts a chain a level at a time (the
    benchmark in docs/team.md: 3,000 corrections in about 4 s)."""
    lead, pkg = case
    before = _lead_rows(lead, "SELECT count(*) FROM judgements")[0][0]
    with sqlite3.connect(pkg) as c:
        theirs = c.execute("SELECT count(*) FROM judgements").fetchone()[0]
    _chain(pkg, 3000)
    _merged(capsys, lead, pkg)
    assert _lead_rows(lead, "SELECT count(*) FROM judgements")[0][0] == before + theirs + 3000
    assert _lead_rows(lead, "SELECT count(*) FROM merge_conflicts") == [(0,)]
    # one chain: every correction supersedes the one before it, in the lead's study too
    depth = _lead_rows(
        lead,
        "WITH RECURSIVE c(id, d) AS (SELECT id, 0 FROM judgements WHERE supersedes IS NULL "
        "UNION ALL SELECT j.id, c.d + 1 FROM judgements j JOIN c ON j.supersedes = c.id) "
        "SELECT max(d) FROM c",
    )[0][0]
    assert depth >= 3000


# ---- 5 (package side): no study-wide numbers ------------------------------------------------------


def test_a_package_holds_no_study_wide_item_numbers_or_answer_counts(worked):
    """Item numbers in the study's order tell the generator by position within a case and let two
    raters join their files; answer ids count everyone's answers: a package numbers its own."""
    lead, pkg = worked
    with sqlite3.connect(pkg) as c:
        local = dict(c.execute("SELECT item_id, id FROM items").fetchall())
        counts = {
            t: c.execute(f"SELECT count(*), coalesce(max(id), 0) FROM {t}").fetchone()
            for t in ("cases", "cells", "items", "pairs", "sessions", "judgements", "pair_votes")
        }
    study_pk = dict(
        _lead_rows(
            lead,
            "SELECT rc.code, rc.target_pk FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk "
            "WHERE r.name = 'anaya' AND rc.kind IN ('item', 'silent')",
        )
    )
    by_study_order = [local[code] for code in sorted(local, key=study_pk.__getitem__)]
    assert by_study_order != sorted(by_study_order), "the package's items keep the study's order"
    assert all(n == top for n, top in counts.values()), counts  # numbered 1..n, no gaps


# ---- 5 (package side): silent anchors look like live items; nothing not dealt ---------------------


def _fresh(lead: Path, tmp_path: Path, who: str = "anaya") -> tuple[Path, Path]:
    """A copy of the lead and a fresh package of `who` exported from it."""
    lead = copy_study(lead, tmp_path / "lead")
    out = tmp_path / f"{who}.annot"
    study = Study.open(lead)
    try:
        export_package(study, who, out)
    finally:
        study.close()
    return lead, out


def _silent_codes(lead: Path, who: str = "anaya") -> dict[str, int]:
    return dict(
        _lead_rows(
            lead,
            "SELECT rc.code, rc.target_pk FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk "
            "WHERE r.name = ? AND rc.kind = 'silent'",
            (who,),
        )
    )


def test_silent_anchors_are_rows_like_live_items_in_every_table(worked, tmp_path):
    """Today a package flags its anchors (`is_anchor`) and holds every anchor's reference, so a
    rater picks out 14 of 14. Now a silent anchor's row equals a live item's in every column's
    kind (flag, nulls, code format, timestamp), it sits in the queue among live items (positions
    0..n-1, no gap), and no table names it: no reference, no showing, no marker."""
    lead, pkg = _fresh(worked[0], tmp_path)
    silent = _silent_codes(lead)
    assert silent, "the package deals silent anchors"
    with sqlite3.connect(pkg) as c:
        c.row_factory = sqlite3.Row
        items = {r["item_id"]: dict(r) for r in c.execute("SELECT * FROM items")}
        queue = [r[0] for r in c.execute("SELECT item_pk FROM queue ORDER BY position")]
        positions = [r[0] for r in c.execute("SELECT position FROM queue ORDER BY position")]
        flagged = {r[0] for r in c.execute("SELECT id FROM items WHERE is_anchor = 1")}
        referenced = {r[0] for r in c.execute("SELECT item_pk FROM anchors")}
        showings = c.execute("SELECT count(*) FROM anchor_showings").fetchone()[0]
        every = c.execute("SELECT value FROM settings WHERE key = 'anchor_every'").fetchone()
        # every table and column that can point at an item
        pointers = [
            (t, col)
            for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            for col in (r[1] for r in c.execute(f"PRAGMA table_info({t})"))
            if t != "items" and (col.startswith("item") or col in ("left_item", "promoted_from"))
        ]
        where = {
            pk: {
                (t, col)
                for t, col in pointers
                if c.execute(f"SELECT 1 FROM {t} WHERE {col} = ? LIMIT 1", (pk,)).fetchone()
            }
            for pk in (r["id"] for r in items.values())
        }
    sil = [items[code] for code in silent]
    live = [r for code, r in items.items() if code not in silent and r["id"] in set(queue)]
    assert len(sil) == len(silent) and live
    for col in sil[0]:
        if col in ("id", "item_id", "display_code", "content_sha256", "text", "cell_pk"):
            continue
        assert {repr(r[col]) for r in sil} <= {repr(r[col]) for r in live}, col
    for r in sil:
        assert r["id"] in queue and r["id"] not in flagged | referenced
        assert CODE_RE.match(r["item_id"]) and r["item_id"] == r["display_code"]
        assert where[r["id"]] <= where[live[0]["id"]] | {("queue", "item_pk")}
    assert positions == list(range(len(positions)))
    assert showings == 0 and json.loads(every[0]) == 0  # the package seeds nothing itself
    assert not referenced & set(queue)  # calibration items are not dealt as live work


def test_no_reference_or_rationale_of_a_silent_anchor_in_the_package_bytes(worked, tmp_path):
    """The bytes of the file hold no reference answer and no rationale of the anchors it deals
    silently (it would name them), and no anchor row or showing of them."""
    lead, pkg = _fresh(worked[0], tmp_path)
    silent = set(_silent_codes(lead).values())
    refs = _lead_rows(lead, "SELECT item_pk, reference, rationale FROM anchors")
    # texts that other anchors share (a calibration item's rationale may repeat a sentence) say
    # nothing of which item is silent: only what is the silent anchors' own is looked for
    others = {ref for pk, ref, _ in refs if pk not in silent}
    other_texts = {t for pk, _, why in refs if pk not in silent for t in json.loads(why).values()}
    data = pkg.read_bytes()
    leaks, looked = [], 0
    for pk, ref, why in refs:
        if pk not in silent:
            continue
        own = [t for t in json.loads(why).values() if len(t) >= 12 and t not in other_texts]
        looked += len(own) + 1
        leaks += [t for t in own if t.encode() in data]
        leaks += [why] if why.encode() in data else []
        if ref not in others and ref.encode() in data:
            leaks.append(ref)
    # each silent anchor's whole rationale is always looked for; its own sentences and reference
    # where no other anchor shares them (which anchors are silent is random, and some share all)
    assert silent and looked >= len(silent), "the package deals no silent anchor to look for"
    assert leaks == [], leaks[:3]


def test_a_package_holds_only_items_and_media_dealt_to_its_rater(worked, tmp_path):
    """Every item in the file is one dealt to the rater (its queue, live or silent) or one of the
    calibration set, every image one of theirs: no other rater's item or picture."""
    lead, pkg = _fresh(worked[0], tmp_path)
    codes = dict(
        _lead_rows(
            lead,
            "SELECT rc.code, rc.target_pk FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk "
            "WHERE r.name = 'anaya' AND rc.kind IN ('item', 'silent')",
        )
    )
    dealt = {
        r[0]
        for r in _lead_rows(
            lead,
            "SELECT a.item_pk FROM assignments a JOIN raters r ON r.id = a.rater_pk "
            "WHERE r.name = 'anaya' UNION SELECT item_pk FROM anchors",
        )
    }
    study_media = {
        r[0]
        for r in _lead_rows(
            lead,
            f"SELECT media_sha256 FROM item_media WHERE item_pk IN ({','.join(map(str, dealt))})",
        )
    }
    with sqlite3.connect(pkg) as c:
        in_file = [r[0] for r in c.execute("SELECT item_id FROM items")]
        # images are named per package (point 5, below): which study image each is, by its bytes
        blobs = {
            hashlib.sha256(r[0]).hexdigest() for r in c.execute("SELECT data FROM media_blobs")
        }
    assert all(code in codes for code in in_file)
    assert {codes[code] for code in in_file} <= dealt
    assert blobs and blobs <= study_media
    n_all = _lead_rows(lead, "SELECT count(*) FROM items")[0][0]
    assert len(in_file) < n_all


def test_two_raters_packages_cannot_be_joined_by_image_name(worked, tmp_path):
    """Attack: two raters dealt overlapping items put their packages side by side and join them
    on the image names (the study's hashes until now: the same key in both files, and one the
    study and the generator's files share). Each package names its images its own way: no name
    in common, none the study's, while the images themselves are shared."""
    lead, pkg_a = _fresh(worked[0], tmp_path / "a", "anaya")
    study = Study.open(lead)
    try:
        pkg_b = tmp_path / "benito.annot"
        export_package(study, "benito", pkg_b)
    finally:
        study.close()
    names, shared = [], []
    for pkg in (pkg_a, pkg_b):
        with sqlite3.connect(pkg) as c:
            media = {r[0] for r in c.execute("SELECT sha256 FROM media")}
            used = {r[0] for r in c.execute("SELECT media_sha256 FROM item_media")}
            originals = {r[0] for r in c.execute("SELECT original_sha256 FROM media")}
            blobs = {
                hashlib.sha256(data).hexdigest(): key
                for key, data in c.execute("SELECT sha256, data FROM media_blobs")
            }
        assert used == media == set(blobs.values()) and originals <= media
        names.append(media)
        shared.append(set(blobs))
    study_keys = {
        r[0]
        for r in _lead_rows(
            lead, "SELECT sha256 FROM media UNION SELECT original_sha256 FROM media"
        )
    }
    assert shared[0] & shared[1], "the raters share no image: the attack had nothing to join"
    assert not names[0] & names[1], "two packages joined by image name"
    assert not (names[0] | names[1]) & study_keys, "an image named by a study-wide key"
    # the lead still merges a package with its images checked against their names
    p = Study.open(pkg_a)
    try:
        ls = LabelSession(p, "anaya")
        ls.submit(ls.next(), ALL, 5)
    finally:
        p.close()
    study = Study.open(lead)
    try:
        assert merge_package(study, pkg_a).added["judgements"] == 1
    finally:
        study.close()


def test_an_image_swapped_under_its_package_name_is_refused(case, capsys):
    """A package's image names are checked against the bytes, as the study's hashes were: bytes
    replaced under a name refuse the package."""
    lead, pkg = case
    with sqlite3.connect(pkg) as c:
        key = c.execute("SELECT sha256 FROM media_blobs LIMIT 1").fetchone()[0]
    _edit(pkg, "UPDATE media_blobs SET data = x'89504e47' WHERE sha256 = ?", params=(key,))
    _refused(capsys, lead, pkg, "does not match its hash")


def _answer_all(study: Study, rater: str) -> list[tuple[str, str]]:
    """Answer everything `rater` is served, in order, each answer from its step number."""
    ls = LabelSession(study, rater)
    done = []
    i = 0
    while (it := ls.next()) is not None:
        ls.submit(it, {**ALL, "layout_hierarchy": i % 5, "ui_affordance": (i * 3) % 5}, 7)
        done.append((it.context, it.item_pk))
        i += 1
    return done


def _drift(lead: Path, rater: str) -> dict:
    from annotator.services.frames import rater_anchor_frames
    from annotator.stats.drift import rater_drift_summary

    study = Study.open(lead, mode="read")
    try:
        frames = rater_anchor_frames(study.db, study.rubric, rater)
        counts = _lead_rows(
            lead,
            "SELECT j.item_pk, j.answers FROM judgements j JOIN raters r ON r.id = j.rater_pk "
            "WHERE r.name = ? AND j.context = 'anchor' ORDER BY j.id",
            (rater,),
        )
        return {"summary": rater_drift_summary(frames).get(rater), "anchors": counts}
    finally:
        study.close()


def test_drift_after_a_package_round_trip_equals_the_same_answers_in_the_study(
    demo_study_dir, tmp_path, capsys
):
    """A package deals its silent anchors where the lead's study would have seeded them; merge
    maps their answers back to anchor answers, so the lead's drift figures are those of the same
    answers given in the study directly."""
    base = copy_study(demo_study_dir, tmp_path / "base")
    study = Study.open(base)
    try:
        assign(study, TEAM, overlap=2, pair_overlap=1, seed=3)
    finally:
        study.close()
    direct = copy_study(base, tmp_path / "direct")
    viapkg = copy_study(base, tmp_path / "viapkg")
    study = Study.open(direct)
    try:
        served_direct = _answer_all(study, "anaya")
    finally:
        study.close()
    pkg = tmp_path / "anaya.annot"
    study = Study.open(viapkg)
    try:
        export_package(study, "anaya", pkg)
    finally:
        study.close()
    p = Study.open(pkg)
    try:
        served_pkg = _answer_all(p, "anaya")
    finally:
        p.close()
    assert all(c == "live" for c, _ in served_pkg)  # in the package, every item is an item
    assert len(served_pkg) == len(served_direct)
    assert sum(c == "anchor" for c, _ in served_direct) >= 1
    _merged(capsys, viapkg, pkg)
    a, b = _drift(direct, "anaya"), _drift(viapkg, "anaya")
    assert b["anchors"] == a["anchors"] and a["anchors"]
    assert json.dumps(b["summary"], sort_keys=True, default=str) == json.dumps(
        a["summary"], sort_keys=True, default=str
    )


def test_a_live_answer_on_a_calibration_item_is_refused_and_silent_answers_merge_once(
    worked, tmp_path, capsys
):
    """The package's calibration items are anchors the rater knows: a live answer hand-written
    on one would enter the study as a live answer on an anchor, and is refused. Answers on the
    silent anchors come back as anchor answers, once however often the file is merged."""
    lead, pkg = _fresh(worked[0], tmp_path)
    p = Study.open(pkg)
    try:
        _answer_all(p, "anaya")
    finally:
        p.close()
    bad_pkg = tmp_path / "bad.annot"
    shutil.copy(pkg, bad_pkg)
    _edit(
        bad_pkg,
        "UPDATE judgements SET item_pk = (SELECT min(id) FROM items WHERE is_anchor = 1) "
        "WHERE id = (SELECT min(id) FROM judgements WHERE context = 'live')",
    )
    _refused(capsys, lead, bad_pkg, "judgements row", "item_pk", "a live answer on an anchor")
    n_silent = len(_silent_codes(lead))
    _merged(capsys, lead, pkg)
    _merged(capsys, lead, pkg)
    sql = (
        "SELECT count(*), count(DISTINCT j.showing_pk) FROM judgements j JOIN raters r "
        "ON r.id = j.rater_pk WHERE r.name = 'anaya' AND j.context = 'anchor' AND "
        "j.item_pk IN (SELECT item_pk FROM anchors)"
    )
    assert _lead_rows(lead, sql) == [(n_silent, n_silent)]
    assert _lead_rows(lead, "SELECT count(*) FROM merge_conflicts") == [(0,)]


def test_a_package_row_dated_2099_is_refused_naming_the_clock(case, capsys):
    """One rule for an answer's time, the team server's: from 2000 to a day after now. A row of
    2099 (an edited file, or a rater's clock set years ahead) is refused in one line that says
    it is the time, not that the answer is bad."""
    lead, pkg = case
    _edit(pkg, "UPDATE judgements SET created_at = '2099-01-01 10:00:00.000000' WHERE id = 1")
    err = _refused(capsys, lead, pkg, "judgements row 1", "more than a day after now")
    assert "clock" in err
    _edit(pkg, "UPDATE judgements SET created_at = '1999-12-31 23:00:00.000000' WHERE id = 1")
    _refused(capsys, lead, pkg, "judgements row 1", "before 2000")


def test_a_refusal_among_several_packages_names_its_file(case, capsys, tmp_path):
    """`package merge good.annot P12.annot`: the line about the package with two raters names
    that file (it named none)."""
    lead, pkg = case
    two = tmp_path / "P12.annot"
    shutil.copy(pkg, two)
    _edit(
        two,
        "INSERT INTO raters (name, is_operator, seed, created_at) VALUES "
        "('someone', 0, 1, '2026-01-01 00:00:00.000000')",
    )
    capsys.readouterr()
    assert main(["package", "merge", str(pkg), str(two), "--study", str(lead)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(two) in err and "holds 2" in err, err
