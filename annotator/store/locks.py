"""Serialising what must not interleave, on both engines.

SQLite takes the whole database's write lock at BEGIN IMMEDIATE, so a write
transaction's check-then-insert is already atomic. PostgreSQL runs writers side
by side: a rater's own work (queue, next item, submit) takes that rater's row
lock, and imports take one advisory lock, so the same code is correct on both.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session as OrmSession

from .models import Rater

_IMPORT_LOCK = 0x616E6E6F  # "anno": one key for every import of a study (one database per study)


def lock_rater(s: OrmSession, rater_pk: int) -> None:
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(Rater.id).where(Rater.id == rater_pk).with_for_update())


def lock_imports(s: OrmSession) -> None:
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(func.pg_advisory_xact_lock(_IMPORT_LOCK)))
