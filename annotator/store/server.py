"""Studies on a PostgreSQL server (psycopg 3): the same schema, migrations and code as files.

The password never passes through annotator: a URL without one lets libpq take it
from PGPASSWORD or ~/.pgpass (its own rules), and every URL shown or stored is
rendered with the password hidden. Locks wait as long as a SQLite study's busy
timeout (`lock_timeout`), then fail as "busy" in one line; a dropped connection
is detected at checkout (pre-ping) and fails a write as "connection lost".
"""

from __future__ import annotations

import os

from alembic.runtime.migration import MigrationContext
from sqlalchemy import URL, Engine, create_engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..base.location import is_server_url, without_password
from ..domain.errors import InputError
from .engine import busy_timeout_ms, decide
from .faults import migration_faults, study_faults
from .server_migrate import backup_before_migration, upgrade_live


def is_server(location: object) -> bool:
    return is_server_url(location)


def server_url(text: str) -> URL:
    """The URL with the psycopg 3 driver; one line when it does not parse."""
    try:
        url = make_url(
            text.replace("postgres://", "postgresql://", 1)
            if text.startswith("postgres://")
            else text
        )
    except ArgumentError:
        raise InputError(
            "not a database URL; write postgresql://user@host[:port]/database", field="--study"
        ) from None
    if url.get_backend_name() != "postgresql":
        raise InputError(
            f"only PostgreSQL servers are supported, not '{url.get_backend_name()}'",
            field="--study",
        )
    if not url.database:
        raise InputError(
            "the URL names no database: postgresql://user@host/DATABASE", field="--study"
        )
    return url.set(drivername="postgresql+psycopg")


def shown(url: URL | str) -> str:
    """The URL as it may be printed, logged or remembered: never with its password."""
    u = server_url(url) if isinstance(url, str) else url
    return without_password(u.set(drivername="postgresql").render_as_string(hide_password=False))


# a transaction left idle this long ends (its locks, a rater's open claim, go back to the others)
IDLE_IN_TRANSACTION_MS = 600_000
POOL_ENV = "ANNOTATOR_PG_POOL"  # connections one app keeps to the server (default 1; docs/team.md)
POOL_PEAK = 2  # more, opened only while one job nests a read in a write (a copy), closed after


def pool_size() -> int:
    """One connection kept per app by default: a rater's app runs one database job at a time, so
    100 raters hold about 100 connections, not up to 1,500; a lead's app that reports
    while it writes may keep 2 or 3."""
    raw = os.environ.get(POOL_ENV, "").strip() or "1"
    if not raw.isdigit() or not 1 <= int(raw) <= 50:
        raise InputError(
            f"{POOL_ENV}={raw!r}: the connections one app keeps, a whole number from 1 to 50",
            field=POOL_ENV,
        )
    return int(raw)


def make_server_engine(url: URL) -> Engine:
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=pool_size(),
        max_overflow=POOL_PEAK,  # closed as soon as returned: an idle app holds pool_size()
        pool_timeout=60,  # beyond that, a thread of the app waits for a connection
        connect_args={
            "connect_timeout": 10,
            # a silent network (packets dropped, no reset) ends a wait, then the write counts as
            # lost and is retried: keepalive probes find a peer gone ~30 s into a wait for an
            # answer, and data left unacknowledged fails after tcp_user_timeout (60 s: a busy
            # server's full receive window counts too, so not shorter than a long import needs)
            "keepalives": 1,
            "keepalives_idle": 15,
            "keepalives_interval": 5,
            "keepalives_count": 3,
            "tcp_user_timeout": 60_000,
            "application_name": "annotator",
            "options": f"-c lock_timeout={busy_timeout_ms()} "
            f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}",
        },
    )


def open_server(location: str, *, create: bool = False, mode: str = "write") -> Engine:
    """Open a study that lives on a server (migrated in one transaction when opened to work in)."""
    url = server_url(location)
    where = shown(url)
    engine = make_server_engine(url)
    try:
        with study_faults(where), engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            current = (
                MigrationContext.configure(conn).get_current_revision()
                if "alembic_version" in tables
                else None
            )
        plan = decide(tables, current, where, mode, create)
        if plan is not None:
            if tables:  # a study with data: dumped before the migration changes it
                backup_before_migration(
                    url.set(drivername="postgresql", password=None).render_as_string(
                        hide_password=False
                    ),
                    url.password,
                    url.database or "study",
                    current,
                    where,
                )
            with migration_faults(where):
                upgrade_live(engine)  # one transaction (all or none), never deadlocking raters
    except BaseException:
        engine.dispose()
        raise
    return engine
