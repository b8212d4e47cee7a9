"""The study database: opened with durable pragmas, checked, and migrated only
when it is opened to work in (after a backup), or refused with one line.

Open modes:
- "read": never writes. A study at an older schema is refused (open it once
  in a command that works in it), a damaged one too.
- "write": `PRAGMA quick_check` first (a damaged study is refused, never
  written into); an older schema is copied to `study.sqlite.bak-<revision>`
  with SQLite's backup API, then migrated in one transaction (a failed
  migration rolls back whole: the original stays as it was).
- create: a new file, migrated to the head revision.

Write transactions begin with `BEGIN IMMEDIATE` (SQLAlchemy's pysqlite
recipe): pysqlite otherwise runs a session's SELECTs outside any transaction
until its first write, so check-then-insert would not be atomic between
processes.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.pool import NullPool

from ..base.atomic import atomic_path
from ..domain.errors import DamagedStudy, InputError, NewerStudy, StudyError, StudyReadOnly
from .faults import migration_faults, study_faults

_MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_HEADER = b"SQLite format 3\x00"


def busy_timeout_ms() -> int:
    """How long a write waits for another process's lock (env ANNOTATOR_BUSY_TIMEOUT_MS for tests)."""
    raw = os.environ.get("ANNOTATOR_BUSY_TIMEOUT_MS", "")
    return int(raw) if raw.isdigit() else 10_000


def _on_connect(dbapi_conn, _record) -> None:
    # Our own BEGIN (below) instead of pysqlite's implicit one.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    # WAL keeps readers off the writer's back; FULL makes a commit survive power loss.
    # (A study is switched to WAL when it is created; setting it again is a no-op.)
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
    cur.close()


def _ro_connect(db_path: Path) -> sqlite3.Connection:
    """A connection that cannot write; in a folder nobody may write to (no -shm possible),
    SQLite's immutable mode."""
    base = db_path.resolve().as_uri()
    try:
        conn = sqlite3.connect(base + "?mode=ro", uri=True, timeout=busy_timeout_ms() / 1000)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
        return conn
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) and "readonly" not in str(exc):
            raise
        return sqlite3.connect(base + "?mode=ro&immutable=1", uri=True)


def _raw_schema(db_path: Path) -> tuple[set[str], str | None]:
    """(tables, alembic revision) read without writing a byte, before any engine touches the file."""
    where = str(db_path)
    with study_faults(where):
        conn = _ro_connect(db_path)
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            rev = None
            if "alembic_version" in tables:
                row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
                rev = row[0] if row else None
            return tables, rev
        finally:
            conn.close()


def _on_begin(conn) -> None:
    mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(db_path: Path) -> Engine:
    # URL.create: a path with '%', '#' or '?' is taken as it is, never parsed as a URL
    engine = create_engine(
        URL.create("sqlite", database=str(db_path)),
        connect_args={"check_same_thread": False, "timeout": busy_timeout_ms() / 1000},
    )
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def make_read_only_engine(db_path: Path) -> Engine:
    """For reading a study whose folder or file cannot be written (a read-only share, an
    archived copy): SQLite's read-only, immutable mode, which needs no -wal/-shm files."""
    uri = db_path.resolve().as_uri() + "?mode=ro&immutable=1"

    def connect():
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.isolation_level = None
        return conn

    engine = create_engine("sqlite://", creator=connect, poolclass=NullPool)
    event.listen(engine, "begin", _on_begin)
    return engine


def writer(engine: Engine) -> Engine:
    """The same engine (and pool) whose transactions take the write lock at BEGIN."""
    return (
        engine.execution_options(sqlite_begin="IMMEDIATE")
        if engine.dialect.name == "sqlite"
        else engine
    )


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations under {_MIGRATIONS}: the installation is broken")
    return head


def known_revisions() -> list[str]:
    """Oldest first."""
    return [
        r.revision
        for r in reversed(list(ScriptDirectory.from_config(alembic_config()).walk_revisions()))
    ]


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _migrate_in_one_transaction(engine: Engine, step) -> None:
    """Run Alembic in ONE transaction: all of it lands, or none.

    On SQLite, foreign keys are switched off for the migration (SQLite rebuilds a table to
    change it, and a table others point at cannot be dropped while they are on) and every
    reference is checked before the commit instead: a migration that breaks one rolls back.
    """
    cfg = alembic_config()
    sqlite = engine.dialect.name == "sqlite"
    with writer(engine).connect() as conn:
        driver: Any = conn.connection.driver_connection
        if sqlite:  # must precede BEGIN: SQLite ignores this pragma inside a transaction
            driver.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                cfg.attributes["connection"] = conn
                step(cfg)
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(
                            f"the migration would break {len(broken)} references "
                            f"(first in table {broken[0][0]})"
                        )
        finally:
            if sqlite:
                driver.execute("PRAGMA foreign_keys=ON")


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Every pending migration in ONE transaction: all of them land, or none."""
    _migrate_in_one_transaction(engine, lambda cfg: command.upgrade(cfg, revision))


def downgrade(engine: Engine, revision: str) -> None:
    _migrate_in_one_transaction(engine, lambda cfg: command.downgrade(cfg, revision))


def _check_file(db_path: Path, create: bool) -> None:
    where = str(db_path)
    if db_path.is_dir():
        raise DamagedStudy(
            f"{db_path.name} is a folder, not a study file; move it away or open the right folder",
            source=where,
        )
    if not db_path.exists():
        if not create:
            raise InputError(
                "no study database here; create one with `annotator new`", source=where
            )
        return
    with study_faults(where), open(db_path, "rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    if head == b"" and create:
        return
    if head != SQLITE_HEADER:
        raise DamagedStudy(
            "not a study database (its SQLite header is missing or damaged); restore it from "
            "its backup (study.sqlite.bak-* beside it) or your own copy",
            source=where,
        )


def quick_check_file(db_path: Path) -> None:
    """SQLite's page-level consistency check, read-only; refuses a damaged study with one line."""
    where = str(db_path)
    with study_faults(where):
        conn = _ro_connect(db_path)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    if rows != ["ok"]:
        raise DamagedStudy(
            f"the study file is damaged ({rows[0][:80]}); restore it from its backup "
            "(study.sqlite.bak-* beside it) or your own copy",
            source=where,
        )


def backup_copy(db_path: Path, revision: str) -> Path:
    """A consistent copy of the study (SQLite's online backup), named for its old revision."""
    dest = db_path.with_name(f"{db_path.name}.bak-{revision}")
    with study_faults(str(dest)), atomic_path(dest) as tmp:
        src = sqlite3.connect(str(db_path))
        try:
            dst = sqlite3.connect(str(tmp))
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
    return dest


def _plan(db_path: Path, where: str, mode: str, create: bool) -> str | None:
    """What opening must do: None (ready), "create" (migrate a new file) or the old revision to
    migrate from (after a backup). Refuses what must not be opened, before anything is written."""
    fresh = not db_path.exists() or db_path.stat().st_size == 0
    tables, current = (set(), None) if fresh else _raw_schema(db_path)
    return decide(tables, current, where, mode, create)


def decide(
    tables: set[str], current: str | None, where: str, mode: str, create: bool
) -> str | None:
    """The plan for a database holding `tables` at revision `current` (any engine)."""
    head = head_revision()
    if current == head:
        return None
    if current is None:
        if tables - {"alembic_version"}:
            raise DamagedStudy(
                "this database holds tables but no annotator schema version: it is not an annotator "
                "study, or its version table was lost; restore the study from its backup",
                source=where,
            )
        if not create:
            raise DamagedStudy(
                "this database is empty: it is not an annotator study; create one with "
                "`annotator new`",
                source=where,
            )
        return "create"
    if current not in known_revisions():
        raise NewerStudy(
            f"this study was written by a newer annotator (schema {current}); "
            "upgrade annotator to open it",
            source=where,
        )
    if mode == "read":
        raise StudyError(
            f"this study uses an older schema ({current}); open it once with a command that works "
            "in it (e.g. `annotator gui` or an import) to upgrade it: a backup is kept",
            source=where,
        )
    return current


def _migrate(engine: Engine, db_path: Path, where: str, current: str) -> None:
    backup_copy(db_path, current)
    with migration_faults(where, current):
        upgrade(engine)


def open_database(db_path: Path, *, create: bool = False, mode: str = "write") -> Engine:
    """Open a study database (see the module docstring for the modes)."""
    where = str(db_path)
    _check_file(db_path, create)
    if db_path.exists() and db_path.stat().st_size > 0:
        quick_check_file(db_path)
    plan = _plan(db_path, where, mode, create)
    engine = make_engine(db_path)
    try:
        try:
            with study_faults(where), engine.connect():
                pass  # the pragmas run here: a read-only folder or a full disk shows now, in one line
        except StudyReadOnly:
            if mode != "read" or plan is not None:
                raise
            engine.dispose()
            engine = make_read_only_engine(db_path)
            with study_faults(where), engine.connect():
                pass
        if plan == "create":
            with study_faults(where):
                upgrade(engine)
        elif plan is not None:
            _migrate(engine, db_path, where, plan)
    except BaseException:
        engine.dispose()
        raise
    return engine
