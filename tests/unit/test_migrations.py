"""Migrations carry data, run only on a study opened to work in, after a backup,
and never half-way; read-only commands and foreign files are refused untouched."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from conftest import copy_study
from sqlalchemy import text

from annotator.cli import main
from annotator.domain.errors import DamagedStudy, StudyError
from annotator.services.study import DB_NAME, Study
from annotator.store.engine import (
    current_revision,
    downgrade,
    head_revision,
    known_revisions,
    make_engine,
)

TABLES_BY_REVISION = {
    "0001": (
        "raters",
        "items",
        "judgements",
        "anchor_showings",
        "judge_scores",
        "anchors",
        "media",
    ),
    "0002": ("pair_votes", "pairs", "calibrations"),
}


def _counts(db: Path, tables: list[str]) -> dict[str, int]:
    c = sqlite3.connect(db)
    try:
        return {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        c.close()


def _at(revision: str, src: Path, dest: Path) -> Path:
    """A copy of the demo study taken down to `revision` (Alembic's downgrades)."""
    folder = copy_study(src, dest)
    engine = make_engine(folder / DB_NAME)
    downgrade(engine, revision)
    assert current_revision(engine) == revision
    engine.dispose()
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("revision", known_revisions()[:-1])
def test_every_revision_upgrades_a_filled_study_keeping_its_rows(
    revision, demo_study_dir, tmp_path
):
    tables = [t for rev, ts in TABLES_BY_REVISION.items() if rev <= revision for t in ts]
    before = _counts(demo_study_dir / DB_NAME, tables)
    assert before["judgements"] > 100 and before["anchor_showings"] > 10
    folder = _at(revision, demo_study_dir, tmp_path / "old")
    assert _counts(folder / DB_NAME, tables) == before  # the downgrade kept the rows too
    study = Study.open(folder)  # opened to work in: backed up, then migrated
    try:
        assert current_revision(study.db.engine) == head_revision()
        assert study.counts()["judgements"] == before["judgements"]
    finally:
        study.close()
    backup = folder / f"{DB_NAME}.bak-{revision}"
    assert backup.exists() and _counts(backup, tables) == before
    c = sqlite3.connect(backup)
    assert c.execute("SELECT version_num FROM alembic_version").fetchone()[0] == revision
    c.close()


def test_0003_turns_a_double_first_answer_into_a_correction(demo_study_dir, tmp_path):
    folder = _at("0002", demo_study_dir, tmp_path / "old")
    c = sqlite3.connect(folder / DB_NAME)
    sid, rater, item, version = c.execute(
        "SELECT showing_pk, rater_pk, item_pk, rubric_version FROM judgements WHERE showing_pk IS NOT NULL "
        "AND supersedes IS NULL ORDER BY id LIMIT 1"
    ).fetchone()
    first = c.execute(
        "SELECT id FROM judgements WHERE showing_pk = ? AND supersedes IS NULL", (sid,)
    ).fetchone()[0]
    c.execute(
        "INSERT INTO judgements (rater_pk, item_pk, rubric_version, context, showing_pk, answers, source, "
        "created_at) VALUES (?, ?, ?, 'anchor', ?, '{}', 'app', '2026-11-01')",
        (rater, item, version, sid),
    )
    dup = c.execute("SELECT max(id) FROM judgements").fetchone()[0]
    c.commit()
    c.close()
    study = Study.open(folder)
    try:
        with study.db.read() as s:
            rows = s.execute(
                text("SELECT id, supersedes FROM judgements WHERE showing_pk = :s ORDER BY id"),
                {"s": sid},
            ).all()
    finally:
        study.close()
    heads = [r for r in rows if r[1] is None]
    assert len(heads) == 1 and heads[0][0] == first  # one first answer ...
    assert (dup, rows[-2][0]) == rows[
        -1
    ]  # ... and the later duplicate is the current, newest correction


def test_a_failed_migration_leaves_the_study_untouched(demo_study_dir, tmp_path, capsys):
    folder = _at("0003", demo_study_dir, tmp_path / "old")
    c = sqlite3.connect(folder / DB_NAME)
    c.execute("CREATE INDEX uq_anchor_slot ON raters (name)")  # 0004 will collide with it
    c.commit()
    c.close()
    digest = _digest(folder / DB_NAME)
    assert main(["import", "ratings", str(tmp_path / "none.csv"), "--study", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "upgrading the study from schema 0003 failed" in err
        and "unchanged" in err
    )
    assert _digest(folder / DB_NAME) == digest
    assert (folder / f"{DB_NAME}.bak-0003").exists()


def test_a_read_only_command_never_migrates(demo_study_dir, tmp_path, capsys):
    folder = _at("0003", demo_study_dir, tmp_path / "old")
    digest = _digest(folder / DB_NAME)
    assert main(["status", "--study", str(folder)]) == 2
    assert "older schema (0003)" in capsys.readouterr().err
    assert _digest(folder / DB_NAME) == digest and not list(folder.glob("*.bak-*"))


def test_status_refuses_a_foreign_sqlite_file_and_writes_nothing(tmp_path, capsys):
    folder = tmp_path / "foreign"
    folder.mkdir()
    c = sqlite3.connect(folder / DB_NAME)
    c.execute("CREATE TABLE notes (x TEXT)")
    c.commit()
    c.close()
    digest = _digest(folder / DB_NAME)
    for argv in (["status", "--study", str(folder)], ["rater", "add", "x", "--study", str(folder)]):
        assert main(argv) == 2
        assert "not an annotator study" in capsys.readouterr().err
    assert _digest(folder / DB_NAME) == digest
    c = sqlite3.connect(folder / DB_NAME)
    assert [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")] == [
        "notes"
    ]


def test_a_dropped_version_table_is_refused(study, capsys):
    with study.db.write() as s:
        s.execute(text("DROP TABLE alembic_version"))
    study.close()
    with pytest.raises(DamagedStudy, match="no annotator schema version"):
        Study.open(study.folder)


def test_a_damaged_study_is_refused_not_written_into(populated, tmp_path, capsys):
    folder = populated.folder
    populated.close()
    db = folder / DB_NAME
    raw = bytearray(db.read_bytes())
    mid = len(raw) // 2
    raw[mid : mid + 4096] = bytes(range(256)) * 16
    db.write_bytes(bytes(raw))
    digest = _digest(db)
    for argv in (["status", "--study", str(folder)], ["rater", "add", "x", "--study", str(folder)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "damaged" in err and "backup" in err
    assert _digest(db) == digest
    with pytest.raises(StudyError):
        Study.open(folder)


@pytest.mark.parametrize("revision", known_revisions()[:-1])
def test_every_revision_upgrades_a_filled_study_on_postgresql(revision, demo_study_dir, pg_url):
    """The same migrations on the server: the demo study copied to PostgreSQL, taken down to
    `revision` and opened to work in again keeps every row."""
    from annotator.services.copying import copy_study
    from annotator.store.server import make_server_engine, server_url

    copy_study(demo_study_dir, pg_url)
    tables = [t for rev, ts in TABLES_BY_REVISION.items() if rev <= revision for t in ts]
    engine = make_server_engine(server_url(pg_url))
    try:
        with engine.connect() as c:
            before = {t: c.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in tables}
        downgrade(engine, revision)
        assert current_revision(engine) == revision
        with engine.connect() as c:
            assert {
                t: c.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in tables
            } == before
    finally:
        engine.dispose()
    study = Study.open(pg_url)
    try:
        assert current_revision(study.db.engine) == head_revision()
        with study.db.read() as s:
            assert {
                t: s.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in tables
            } == before
    finally:
        study.close()
