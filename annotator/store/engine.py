"""The study database: one SQLite file, opened with durable pragmas and
migrated to the app's schema (or refused when it is newer than the app)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event

from ..domain.errors import InputError

_MIGRATIONS = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 10_000


def _set_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    # WAL keeps readers off the writer's back; FULL makes a commit survive power loss.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.close()


def make_engine(db_path: Path) -> Engine:
    engine = create_engine(
        f"sqlite:///{db_path}",
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )
    event.listen(engine, "connect", _set_pragmas)
    return engine


def alembic_config(engine: Engine | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    if engine is not None:
        cfg.set_main_option("sqlalchemy.url", str(engine.url))
    return cfg


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def open_database(db_path: Path, *, create: bool = False) -> Engine:
    """Open (and migrate) a study database; refuse one from a newer app."""
    if not create and not db_path.exists():
        raise InputError("no study database here; create one with `annotator new`", source=str(db_path))
    engine = make_engine(db_path)
    script = ScriptDirectory.from_config(alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    current = current_revision(engine)
    if current is not None and current not in known:
        engine.dispose()
        raise InputError(
            f"this study was written by a newer annotator (schema {current}); "
            "upgrade annotator to open it",
            source=str(db_path),
        )
    if current != script.get_current_head():
        upgrade(engine)
    return engine
