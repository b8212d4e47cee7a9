"""Database faults as one line that says what to do.

SQLite and the drivers report a full disk, a held lock, a read-only file or a
damaged file as an OperationalError / DatabaseError with a message; the user
must never see that message raw. `translate` maps it to the typed study
errors of domain/errors.py, or returns None when it is not a fault of the
study (a bug, which should surface as such).
"""

from __future__ import annotations

import errno
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError, OperationalError

from ..domain.errors import DamagedStudy, DiskFull, StudyBusy, StudyError, StudyReadOnly

_BUSY = (
    "database is locked",
    "database table is locked",
    "lock timeout",
    "could not obtain lock",
    "deadlock detected",
    "canceling statement due to lock timeout",
)
_FULL = ("database or disk is full", "no space left", "disk full", "could not extend file")
_READ_ONLY = (
    "attempt to write a readonly database",
    "readonly database",
    "read-only",
    "permission denied",
    "unable to open database file",
)
_DAMAGED = (
    "database disk image is malformed",
    "file is not a database",
    "file is encrypted",
    "malformed database schema",
)
_LOST = (
    "server closed the connection",
    "connection refused",
    "terminating connection",
    "is not currently accepting connections",
    "connection failed:",
    "connection is closed",
    "could not connect",
    "consuming input failed",
    "connection timed out",
    "the connection is lost",
    "ssl syscall error",
    "no connection to the server",
)


class ConnectionLost(StudyError):
    """The connection to a study server dropped; nothing of the failed write was kept."""


class ClockWrong(StudyError):
    """The server refused an answer's time: the rater's computer clock is far off (domain/clock.py)."""


class ServerRefused(StudyError):
    """The server answered but will not let this login in (no such database, no such role, no
    right to connect, a wrong password): retrying changes nothing, the URL or the role must."""


_FULL_SERVER = (
    "remaining connection slots are reserved",
    "too many clients already",
    "too many connections for role",
    "sorry, too many clients",
)
_NO_DATABASE = re.compile(r'database "([^"]{0,80})" does not exist')
_NOT_GRANTED = re.compile(
    r"permission denied for (table|column|sequence|function|schema|view|relation) ([^\s]{1,80})"
)
_NO_ROLE = re.compile(r'role "([^"]{0,80})" does not exist')


def _refused(msg: str, where: str) -> StudyError | None:
    """The server's own refusals at connect time, each as its own line (not as a lost
    connection: these need a fix of the URL or the role; a full server passes by itself)."""
    low = msg.lower()
    if m := _NO_DATABASE.search(msg):
        return ServerRefused(
            f'the server has no database "{m.group(1)}"; check the database name at the end of '
            "the URL (`psql -l` lists them)",
            source=where,
        )
    if m := _NO_ROLE.search(msg):
        return ServerRefused(
            f'the server knows no login "{m.group(1)}"; check the user name in the URL (the lead\'s '
            "`annotator roles` prints each rater's login role)",
            source=where,
        )
    if "password authentication failed" in low or "no password supplied" in low:
        return ServerRefused(
            "the server refused the password; set it in ~/.pgpass or PGPASSWORD (never in the URL)",
            source=where,
        )
    if "permission denied for database" in low or "not permitted to log in" in low:
        return ServerRefused(
            "this login may not connect to this study's database; ask the lead to run "
            "`annotator roles` for you",
            source=where,
        )
    if any(m in low for m in _FULL_SERVER):
        return ConnectionLost(
            "the study server has no free connection (its max_connections is reached); nothing "
            "of this write was kept, it is retried in a moment (the DBA can raise max_connections "
            "or put PgBouncer in front)",
            source=where,
        )
    if "canceling statement due to statement timeout" in low:
        return ConnectionLost(
            "the study server did not answer in time; nothing of this write was kept, it is "
            "retried when the server answers again",
            source=where,
        )
    return None


# The operating system (an OSError) and the database driver (its message) each report a full
# disk and a read-only study their own way; the rater reads one line for each either way.
def _disk_full(where: str) -> DiskFull:
    return DiskFull(
        "the disk is full; free some space and try again (nothing was written)", source=where
    )


def _read_only(where: str) -> StudyReadOnly:
    return StudyReadOnly(
        "the study cannot be written (read-only file or folder); "
        "check its permissions or copy it somewhere writable",
        source=where,
    )


def translate(exc: BaseException, where: str) -> StudyError | None:
    """The one-line study error for a driver/OS fault, or None if it is not one."""
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        if exc.errno == errno.ENOSPC:
            return _disk_full(where)
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return _read_only(where)
        return None
    msg = str(getattr(exc, "orig", None) or exc).lower()
    if not isinstance(exc, (DBAPIError, sqlite3.Error)):
        return None
    raw = str(getattr(exc, "orig", None) or exc)  # names as the server spelled them
    if isinstance(exc, OperationalError) and (refused := _refused(raw, where)) is not None:
        return refused
    if m := _NOT_GRANTED.search(raw):  # a server's privileges, not a read-only file
        return ServerRefused(
            f"this login may not do that on the study server (no right to {m.group(1)} "
            f'"{m.group(2)}"): it is the lead\'s work, or, after an upgrade of the study, the lead '
            "runs `annotator roles` again",
            source=where,
        )
    if any(m in msg for m in _BUSY):
        return StudyBusy(
            "the study is busy (another program holds its write lock); nothing was written, "
            "try again in a moment",
            source=where,
        )
    if any(m in msg for m in _FULL):
        return _disk_full(where)
    if any(m in msg for m in _READ_ONLY):
        return _read_only(where)
    if any(m in msg for m in _DAMAGED):
        return DamagedStudy(
            "the study file is damaged; restore it from its backup "
            "(study.sqlite.bak-* beside it) or your own copy",
            source=where,
        )
    if "disk i/o error" in msg:
        return StudyError(
            "the study file could not be read or written (disk I/O error); check the disk "
            "and its free space, then try again (nothing was written)",
            source=where,
        )
    if "created_at is not a time of this study" in msg:  # the server's clock rule (store/roles.py)
        return ClockWrong(
            "this computer's date and time are wrong (more than a day off the study server's); "
            "set them right, then save again: the answer is kept until then",
            source=where,
        )
    if isinstance(exc, OperationalError) and any(m in msg for m in _LOST):
        return ConnectionLost(
            "the connection to the study server was lost; nothing of this write was kept, "
            "it is retried when the server is back",
            source=where,
        )
    return None


@contextmanager
def study_faults(where: str) -> Iterator[None]:
    """Re-raise driver and OS faults as one-line study errors."""
    try:
        yield
    except StudyError:
        raise
    except (DBAPIError, sqlite3.Error, OSError) as exc:
        err = translate(exc, where)
        if err is None:
            raise
        raise err from exc


@contextmanager
def migration_faults(where: str, schema: str | None = None) -> Iterator[None]:
    """A schema upgrade's faults as one line: a study fault as `study_faults` says it, anything
    else (a migration bug: its transaction rolled back, the study is as it was) as a StudyError
    saying the upgrade failed and the study is unchanged. `schema`: the one upgraded from."""
    try:
        with study_faults(where):
            yield
    except StudyError:
        raise
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0][:120]
        upgraded = f"the study from schema {schema}" if schema else "the study"
        raise StudyError(
            f"upgrading {upgraded} failed ({type(exc).__name__}: {first}); the study is unchanged",
            source=where,
        ) from exc
