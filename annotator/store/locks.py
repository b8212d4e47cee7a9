"""Serialising what must not interleave, on both engines.

SQLite takes the whole database's write lock at BEGIN IMMEDIATE, so a write
transaction's check-then-insert is already atomic. PostgreSQL runs writers side
by side: a rater's own work (queue, next item, submit) takes a lock keyed by the
rater, and imports take one study-wide lock, so the same code is correct on both.
Both are transaction-scoped advisory locks: a row lock (FOR UPDATE) would need
UPDATE rights, which a least-privilege rater role (store/roles.py) does not have.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session as OrmSession

_IMPORT_LOCK = 0x616E6E6F  # "anno": one key for every import of a study (one database per study)
_RATER_LOCK = 0x72617472  # "ratr": the namespace of per-rater locks


def lock_rater(s: OrmSession, rater_pk: int) -> None:
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(func.pg_advisory_xact_lock(_RATER_LOCK, rater_pk)))


def lock_imports(s: OrmSession) -> None:
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(func.pg_advisory_xact_lock(_IMPORT_LOCK)))
