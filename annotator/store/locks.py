"""Serialising what must not interleave, on both engines.

SQLite takes the whole database's write lock at BEGIN IMMEDIATE, so a write
transaction's check-then-insert is already atomic. PostgreSQL runs writers side
by side: a rater's own work (queue, next item, submit) takes a lock keyed by the
rater, and imports take one study-wide lock, so the same code is correct on both.

Both are locks a rater's login role cannot take on its own (an advisory lock can be
taken by anyone who knows its key: a rater could hold the study's import lock, or
another rater's, for ever): the import lock is a table lock that needs UPDATE rights
on `alembic_version` (the lead's; only a migration writes that table, so the lock stops
nothing but other imports and a migration), and the per-rater lock is a row lock on the rater's row
in `raters`, taken by the lead directly and by a rater only through
`annotator_lock_me()` (store/roles.py), which locks that rater's own row. Both are
held until the transaction ends.
"""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.orm import Session as OrmSession

from .models import Rater


def lock_rater(s: OrmSession, rpk: int) -> None:
    if s.get_bind().dialect.name != "postgresql":
        return
    from .roles import is_rater_session

    if is_rater_session(s):
        s.execute(text("SELECT public.annotator_lock_me()"))
    else:
        # NO KEY UPDATE: does not wait for the foreign-key checks of answers inserted meanwhile
        s.execute(select(Rater.id).where(Rater.id == rpk).with_for_update(key_share=True))


def lock_imports(s: OrmSession) -> None:
    if s.get_bind().dialect.name == "postgresql":
        # SHARE ROW EXCLUSIVE conflicts with itself (two imports wait for each other) but not with
        # the raters' reads (ACCESS SHARE); taking it needs UPDATE rights on the table
        s.execute(text("LOCK TABLE public.alembic_version IN SHARE ROW EXCLUSIVE MODE"))
