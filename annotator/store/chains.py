"""Supersede chains of the append-only answer logs (judgements, pair votes).

A correction is a new row whose `supersedes` names the row it replaces; the
current answer is the head of the chain (the row nothing supersedes). One
helper for every walk, instead of a loop per caller.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session as OrmSession
from sqlalchemy.orm import aliased


def is_current(model: Any) -> Any:
    """SQL clause: the row is the head of its chain (no later row supersedes it)."""
    newer = aliased(model)
    return ~exists().where(newer.supersedes == model.id)


def head(s: OrmSession, model: Any, row_id: int) -> Any:
    """The current row of the chain that `row_id` belongs to (walking forward)."""
    row = s.get(model, row_id)
    while (nxt := s.scalars(select(model).where(model.supersedes == row.id)).first()) is not None:
        row = nxt
    return row


def by_uuid(s: OrmSession, model: Any, uuid: str | None) -> int | None:
    """The id of the row minted with this UUID, if it is stored (a re-sent answer)."""
    if uuid is None:
        return None
    return s.scalar(select(model.id).where(model.uuid == uuid))
