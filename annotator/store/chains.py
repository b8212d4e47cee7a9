"""Supersede chains of the append-only answer logs (judgements, pair votes).

A correction is a new row whose `supersedes` names the row it replaces; the
current answer is the head of the chain (the row nothing supersedes). One
helper for every walk, and one `append` for every write path (the app's submit
and vote, imports of ratings and of other tools' relabels), instead of a loop
and a slot check per caller.

A chain keeps its slot: a correction supersedes only a row with the same
`SLOT` columns. Migration 0008's triggers hold the same rule in the database
(a rater role and a hand-edited package write SQL directly); a test binds the
two lists.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session as OrmSession
from sqlalchemy.orm import aliased

# the columns a correction shares with the row it supersedes, per answer log
SLOT: dict[str, tuple[str, ...]] = {
    "judgements": ("rater_pk", "item_pk", "rubric_version", "context"),
    "pair_votes": ("pair_pk", "rater_pk", "judge"),
}
_SLOT_RULE = {
    "judgements": "a correction must supersede the same rater's answer on the same item, "
    "rubric version and context",
    "pair_votes": "a correction must supersede the same rater's vote on the same pair",
}


def slot_of(row: Any) -> tuple[Any, ...]:
    return tuple(getattr(row, c) for c in SLOT[row.__tablename__])


def append(s: OrmSession, row: Any, supersedes: Any = None) -> bool:
    """Add `row` to its answer log, as a first answer or as the correction of `supersedes`.

    `supersedes` is a stored row's id (walked forward to the head of its chain: a correction of
    an answer that was itself corrected meanwhile supersedes the newer one), or a
    row the caller already knows to be the head (an import's own earlier row, maybe unflushed).
    Raises ValueError when the head is of another slot. Returns whether the row superseded a
    newer head than the one named."""
    if supersedes is None:
        s.add(row)
        return False
    current = supersedes
    if isinstance(supersedes, int):
        current = head(s, type(row), supersedes)
    if current is None or slot_of(current) != slot_of(row):
        raise ValueError(_SLOT_RULE[row.__tablename__])
    if current.id is None:  # added earlier in this transaction: its id is needed now
        s.flush()
    row.supersedes = current.id
    s.add(row)
    return isinstance(supersedes, int) and current.id != supersedes


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


def session_answers(s: OrmSession, model: Any, session_pk: int) -> list[tuple[Any, Any]]:
    """The answers first given in a session, oldest first, each with its chain's current head
    (what going back in the session shows): pairs of (first row, current row)."""
    firsts = s.scalars(
        select(model)
        .where(model.session_pk == session_pk, model.supersedes.is_(None))
        .order_by(model.id)
    ).all()
    return [(first, head(s, model, first.id)) for first in firsts]


def by_uuid(s: OrmSession, model: Any, uuid: str | None) -> int | None:
    """The id of the row minted with this UUID, if it is stored (a re-sent answer)."""
    if uuid is None:
        return None
    return s.scalar(select(model.id).where(model.uuid == uuid))
