"""Database faults as one line that says what to do.

SQLite and the drivers report a full disk, a held lock, a read-only file or a
damaged file as an OperationalError / DatabaseError with a message; the user
must never see that message raw. `translate` maps it to the typed study
errors of domain/errors.py, or returns None when it is not a fault of the
study (a bug, which should surface as such).
"""

from __future__ import annotations

import errno
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


def translate(exc: BaseException, where: str) -> StudyError | None:
    """The one-line study error for a driver/OS fault, or None if it is not one."""
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        if exc.errno == errno.ENOSPC:
            return DiskFull(
                "the disk is full; free some space and try again (nothing was written)",
                source=where,
            )
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return StudyReadOnly(
                "the study cannot be written (read-only file or folder); "
                "check its permissions or copy it somewhere writable",
                source=where,
            )
        return None
    msg = str(getattr(exc, "orig", None) or exc).lower()
    if not isinstance(exc, (DBAPIError, sqlite3.Error)):
        return None
    if any(m in msg for m in _BUSY):
        return StudyBusy(
            "the study is busy (another program holds its write lock); nothing was written, "
            "try again in a moment",
            source=where,
        )
    if any(m in msg for m in _FULL):
        return DiskFull(
            "the disk is full; free some space and try again (nothing was written)", source=where
        )
    if any(m in msg for m in _READ_ONLY):
        return StudyReadOnly(
            "the study cannot be written (read-only file or folder); "
            "check its permissions or copy it somewhere writable",
            source=where,
        )
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
