"""Migrating a study on a live server: wait for the raters' short transactions, never deadlock.

A migration alters tables one after another; a rater's transaction that holds one table and then
touches another the migration already altered closes a cycle, and PostgreSQL aborts one of them
(a migration that landed on the third try after 33 s). Here the migration first takes
every table of the study at once, each lock waited for at most `LOCK_WAIT_MS` (under the
server's deadlock_timeout of 1 s, so a cycle ends by our timeout, never by aborting a rater), then
gives every lock back and tries again after a pause, until the raters' transactions between two
tries let it through. Everything still runs in ONE transaction: all of it lands, or none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import weakref
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from sqlalchemy import Engine, inspect
from sqlalchemy.exc import OperationalError

from ..domain.errors import StudyError
from .engine import alembic_config

BACKUP_ENV = "ANNOTATOR_PG_BACKUP_DIR"  # where the dump before a migration goes; "off": none

LOCK_WAIT_MS = 300
ATTEMPTS = 40  # about 25 s of raters' traffic before the lead is told the study is busy
_RETRY = ("55P03", "40P01")  # lock_not_available, deadlock_detected
_MIGRATED: weakref.WeakSet[Engine] = weakref.WeakSet()


def was_migrated(engine: Engine) -> bool:
    """Whether opening this engine's study migrated it (its rater roles are then granted again:
    a migration's new columns and tables have no grants yet)."""
    return engine in _MIGRATED


def _pgcode(exc: BaseException) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def upgrade_live(engine: Engine, revision: str = "head") -> int:
    """Every pending migration in one transaction, once every table could be locked; the tries it
    took. Raises the last lock error when the raters never left a gap."""
    cfg = alembic_config()
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with engine.connect() as conn, conn.begin():
                tables = inspect(conn).get_table_names()
                if tables:
                    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_WAIT_MS}ms'")
                    names = ", ".join('"' + t.replace('"', '""') + '"' for t in sorted(tables))
                    conn.exec_driver_sql(f"LOCK TABLE {names} IN ACCESS EXCLUSIVE MODE")
                    conn.exec_driver_sql("SET LOCAL lock_timeout = 0")  # all held: none waits
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
            if tables:
                _MIGRATED.add(engine)
            return attempt
        except OperationalError as exc:
            if _pgcode(exc) not in _RETRY or attempt == ATTEMPTS:
                raise
            time.sleep(min(0.05 * attempt, 1.0))
    raise AssertionError("unreachable")


def backup_before_migration(
    libpq_url: str, password: str | None, database: str, revision: str | None, where: str
) -> Path | None:
    """A `pg_dump` (custom format) of the study before a migration changes it, as a study file
    gets its `.bak-<revision>` copy: in $ANNOTATOR_PG_BACKUP_DIR, else the user's data folder
    (annotator/backups). None when the variable is "off". A dump that cannot be made stops the
    migration, with the study unchanged and one line saying what to do."""
    folder = os.environ.get(BACKUP_ENV, "").strip()
    if folder.lower() == "off":
        return None
    if not folder:
        from platformdirs import user_data_dir

        folder = str(Path(user_data_dir("annotator", appauthor=False)) / "backups")
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise StudyError(
            "this study needs a migration, and annotator backs a server study up first with "
            f"pg_dump, which is not installed: install the PostgreSQL client, or dump the study "
            f"yourself and set {BACKUP_ENV}=off; the study is unchanged",
            source=where,
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(folder) / f"{database}.bak-{revision or 'none'}-{stamp}.dump"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [pg_dump, "--format=custom", "--file", str(out), "--dbname", libpq_url],
            capture_output=True,
            text=True,
            timeout=3600,
            # a password goes by the environment, never on a command line others can list
            env={**os.environ, **({"PGPASSWORD": password} if password else {})},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StudyError(
            f"the backup before the migration failed ({exc}); the study is unchanged",
            source=where,
        ) from None
    if done.returncode != 0:
        out.unlink(missing_ok=True)
        first = (done.stderr.strip().splitlines() or ["?"])[-1][:160]
        raise StudyError(
            f"the backup before the migration failed (pg_dump: {first}); the study is "
            f"unchanged (dump it yourself and set {BACKUP_ENV}=off to migrate without one)",
            source=where,
        )
    return out
