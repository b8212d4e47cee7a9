"""Pair queue and pair votes cast in the app."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session as OrmSession

from ..domain import pairs as design
from ..domain import time_spent
from ..domain.records import ItemView
from .answers import Submitted
from .assignments import assigned_pairs
from .chains import append, by_uuid, session_answers
from .db import StudyDB
from .imports import ensure_pair
from .items import item_view
from .locks import lock_imports, lock_rater
from .models import Item, Rater
from .models_pairs import Pair, PairQueueEntry, PairVote
from .people import rater_pk, rater_seed


def has_pairs(db: StudyDB) -> bool:
    """Whether the study does pairwise work at all (pairs were designed or dealt)."""
    with db.read() as s:
        return s.scalar(select(Pair.id).limit(1)) is not None


def ensure_pairs(db: StudyDB) -> int:
    with db.write() as s:
        from .roles import is_rater_session

        if is_rater_session(s):  # designing pairs reads generators: the lead's work
            return s.scalar(select(func.count()).select_from(Pair)) or 0
        lock_imports(s)  # pairs are designed from the items: not while an import adds some
        rows = s.execute(
            select(Item.id, Item.cell_pk, Item.generator).where(Item.is_anchor.is_(False))
        ).all()
        for a, b in design.design_pairs(rows):
            ensure_pair(s, None, a, b)
        return s.scalar(select(func.count()).select_from(Pair)) or 0


def pair_rows(db: StudyDB) -> list[tuple[int, str, int, int]]:
    """Every pair as (pair pk, pair_id, item_a pk, item_b pk), by key (the pair sample's frame)."""
    with db.read() as s:
        return [
            (int(pk), str(pid), int(a), int(b))
            for pk, pid, a, b in s.execute(
                select(Pair.id, Pair.pair_id, Pair.item_a, Pair.item_b).order_by(Pair.id)
            )
        ]


def pair_queue_length(s: OrmSession, rpk: int) -> int:
    """How many pairs a rater's pair queue holds (0 before it is built)."""
    return (
        s.scalar(
            select(func.count()).select_from(PairQueueEntry).where(PairQueueEntry.rater_pk == rpk)
        )
        or 0
    )


def ensure_pair_queue(db: StudyDB, rater: str, raters_per_pair: int) -> int:
    """The rater's pair queue: their assigned pairs when the study deals pairs (new ones appended
    in their own seeded order), else once the pairs that still need raters."""
    with db.write() as s:
        rpk = rater_pk(s, rater)
        lock_rater(s, rpk)
        n = pair_queue_length(s, rpk)
        # the columns a rater's role may read (pair_id is the lead's)
        pairs = [
            (pk, a, b)
            for pk, a, b in s.execute(select(Pair.id, Pair.item_a, Pair.item_b).order_by(Pair.id))
        ]
        mine = assigned_pairs(s, rpk)
        if mine is not None:
            queued = set(
                s.scalars(select(PairQueueEntry.pair_pk).where(PairQueueEntry.rater_pk == rpk))
            )
            keep = set(mine) - queued
            todo = [p for p in pairs if p[0] in keep]
        elif n:
            return n
        else:
            dealt = dict(
                s.execute(
                    select(PairQueueEntry.pair_pk, func.count())
                    .join(Rater, Rater.id == PairQueueEntry.rater_pk)
                    .where(Rater.is_operator.is_(False))
                    .group_by(PairQueueEntry.pair_pk)
                ).all()
            )
            todo = [p for p in pairs if dealt.get(p[0], 0) < raters_per_pair] or pairs
        seed = rater_seed(s, rpk) + n
        for pos, (pair_pk, left, _right) in enumerate(design.deal(todo, seed), start=n):
            s.add(
                PairQueueEntry(
                    rater_pk=rpk, position=pos, pair_pk=pair_pk, left_item=left, seed=seed
                )
            )
        return n + len(todo)


def _current_vote_pairs(s, rpk: int) -> set[int]:
    return set(s.scalars(select(PairVote.pair_pk).where(PairVote.rater_pk == rpk)))


def next_pair(
    db: StudyDB, rater: str, *, after: int = -1
) -> tuple[int, int, int, int, int, ItemView, ItemView] | None:
    """(position, pair pk, left pk, right pk, seed, left view, right view) of the first unvoted
    pair after queue position `after` (read only: peeking ahead for prefetch uses it too)."""
    with db.read() as s:
        rpk = rater_pk(s, rater)
        voted = _current_vote_pairs(s, rpk)
        stmt = select(PairQueueEntry).where(
            PairQueueEntry.rater_pk == rpk, PairQueueEntry.position > after
        )
        for e in s.scalars(stmt.order_by(PairQueueEntry.position)):
            if e.pair_pk in voted:
                continue
            item_a, item_b = s.execute(  # not s.get: pair_id is not a rater's to read
                select(Pair.item_a, Pair.item_b).where(Pair.id == e.pair_pk)
            ).one()
            right = item_b if e.left_item == item_a else item_a
            return (
                e.position,
                e.pair_pk,
                e.left_item,
                right,
                e.seed,
                item_view(s, e.left_item),
                item_view(s, right),
            )
    return None


def pair_progress(db: StudyDB, rater: str) -> tuple[int, int]:
    with db.read() as s:
        rpk = rater_pk(s, rater)
        total = pair_queue_length(s, rpk)
        return len(_current_vote_pairs(s, rpk)), total


def cast_vote(
    db: StudyDB,
    *,
    rater: str,
    pair_pk: int,
    left: int,
    right: int,
    choice: str,
    seed: int | None,
    session_pk: int | None,
    position: int | None,
    reason: str | None,
    time_ms: int | None,
    supersedes: int | None = None,
    uuid: str | None = None,
) -> Submitted:
    """Append one vote in its own transaction; a vote on a pair the rater already voted on
    elsewhere (another window) supersedes the current one, as in `answers.submit`."""
    if choice not in design.CHOICES:
        raise ValueError(f"choice must be one of {design.CHOICES}")
    with db.write() as s:
        rpk = rater_pk(s, rater)
        lock_rater(s, rpk)
        if (known := by_uuid(s, PairVote, uuid)) is not None:  # a re-send after a lost connection
            return Submitted(known, False)
        target = first = None
        if supersedes is None:
            target = first = s.scalar(
                select(PairVote.id)
                .where(
                    PairVote.rater_pk == rpk,
                    PairVote.pair_pk == pair_pk,
                    PairVote.supersedes.is_(None),
                )
                .limit(1)
            )
        v = PairVote(
            pair_pk=pair_pk,
            rater_pk=rpk,
            item_left=left,
            item_right=right,
            choice=choice,
            side_seed=seed,
            session_pk=session_pk,
            queue_position=position,
            reason=reason,
            time_ms=time_spent.capped(time_ms),
        )
        if uuid is not None:
            v.uuid = uuid
        moved_on = append(s, v, supersedes if supersedes is not None else target)
        s.flush()
        return Submitted(v.id, first is not None or moved_on)


def votes_in_session(db: StudyDB, session_pk: int) -> list[dict]:
    with db.read() as s:
        out = []
        for v, latest in session_answers(s, PairVote, session_pk):
            out.append(
                {
                    "vote": latest.id,
                    "pair_pk": v.pair_pk,
                    "left": v.item_left,
                    "right": v.item_right,
                    "choice": latest.choice,
                    "reason": latest.reason,
                    "position": v.queue_position,
                    "seed": v.side_seed,
                    "left_view": item_view(s, v.item_left),
                    "right_view": item_view(s, v.item_right),
                }
            )
        return out
