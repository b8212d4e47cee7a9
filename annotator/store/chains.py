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
    """The current row of the chain that `row_id` belongs to: one recursive query forward (a
    query per step made a long chain cost a round trip per correction). UNION, not UNION ALL, so
    that even a chain someone edited into a circle ends; a circle has no head: its start is kept."""
    chain = select(model.id).where(model.id == row_id).cte("chain", recursive=True)
    newer = aliased(model)
    chain = chain.union(select(newer.id).where(newer.supersedes == chain.c.id))
    row = s.scalars(
        select(model).where(model.id.in_(select(chain.c.id)), is_current(model))
    ).first()
    return row if row is not None else s.get(model, row_id)


def by_uuid(s: OrmSession, model: Any, uuid: str | None) -> int | None:
    """The id of the row minted with this UUID, if it is stored (a re-sent answer)."""
    if uuid is None:
        return None
    return s.scalar(select(model.id).where(model.uuid == uuid))
