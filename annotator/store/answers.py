"""Label work: the stored queue, silent anchor showings, and the judgement log.
(Over 500 lines on purpose: the label queue, the silent anchor showings and the append-only
judgement log are one write path.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, insert, select, text
from sqlalchemy.orm import Session as OrmSession

from ..domain import queue as q
from ..domain import time_spent
from ..domain.answers import encode
from ..domain.ids import uuid7
from ..domain.records import ServedItem
from .assignments import assigned_items, claim_next, expire_claims, on_demand
from .chains import append, by_uuid, is_current, session_answers
from .db import StudyDB
from .items import free_display_code, item_view, live_items
from .locks import lock_rater
from .models import Anchor, AnchorShowing, Item, Judgement, QueueEntry
from .people import rater_pk, rater_seed


def queue_length(s: OrmSession, rpk: int, version: str) -> int:
    """How many items a rater's queue of a rubric version holds (0 before it is built)."""
    return (
        s.scalar(
            select(func.count())
            .select_from(QueueEntry)
            .where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version)
        )
        or 0
    )


def ensure_queue(db: StudyDB, rater: str, version: str) -> int:
    """Build the rater's order once (seeded, stored); returns its length."""
    with db.write() as s:
        rpk = rater_pk(s, rater)
        lock_rater(s, rpk)
        n = queue_length(s, rpk, version)
        items = live_items(s)
        mine = assigned_items(s, rpk)
        if mine is None and on_demand(s):
            mine = []  # items are taken one at a time as the rater goes (next_item claims them)
        if mine is not None:  # the study deals items: this rater's queue holds only theirs
            keep = set(mine)
            items = [(pk, case) for pk, case in items if pk in keep]
        if n and n >= len(items):
            return n
        seed = rater_seed(s, rpk)
        queued = set(
            s.scalars(
                select(QueueEntry.item_pk).where(
                    QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version
                )
            )
        )
        # items imported after the queue was built go at its end, in their own seeded order
        new = [(pk, case) for pk, case in items if pk not in queued]
        rows = [
            dict(rater_pk=rpk, rubric_version=version, position=i, item_pk=pk, seed=seed + n)
            for i, pk in enumerate(q.live_order(new, seed + n), start=n)
        ]
        if rows:
            s.execute(insert(QueueEntry), rows)
        return n + len(new)


def _answered_live(s: OrmSession, rpk: int, version: str) -> set[int]:
    return set(
        s.scalars(
            select(Judgement.item_pk).where(
                Judgement.rater_pk == rpk,
                Judgement.rubric_version == version,
                Judgement.context == "live",
            )
        )
    )


def progress_counts(
    db: StudyDB, rater: str, version: str, *, anchor_every: int = q.ANCHOR_EVERY
) -> tuple[int, int]:
    """(done, total) counting seeded anchors like any other item, so the counter moves
    the same way whether an anchor or a live item was just answered. Counts, not row
    lists: it runs after every submit."""
    with db.read() as s:
        rpk = rater_pk(s, rater)
        n_queue = queue_length(s, rpk, version)
        live_done = (
            s.scalar(
                select(func.count())
                .select_from(Judgement)
                .where(
                    Judgement.rater_pk == rpk,
                    Judgement.item_pk.in_(
                        select(QueueEntry.item_pk).where(
                            QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version
                        )
                    ),
                    Judgement.rubric_version == version,
                    Judgement.supersedes.is_(None),
                    Judgement.context == "live",
                )
            )
            or 0
        )
        anchors_done = (
            s.scalar(
                select(func.count())
                .select_from(Judgement)
                .where(
                    Judgement.rater_pk == rpk,
                    Judgement.context == "anchor",
                    Judgement.supersedes.is_(None),
                )
            )
            or 0
        )
        shown = (
            s.scalar(
                select(func.count()).select_from(AnchorShowing).where(AnchorShowing.rater_pk == rpk)
            )
            or 0
        )
        expected = 0
        if anchor_every >= 2 and n_queue and _has_anchors(s):
            seed = rater_seed(s, rpk)
            filled = set(
                s.scalars(
                    select(AnchorShowing.before_position).where(AnchorShowing.rater_pk == rpk)
                )
            )
            slots = sorted(q.anchor_slots(seed, n_queue, anchor_every) - filled)
            # slots still ahead of the rater (their live item unanswered) will each bring one anchor
            for i in range(0, len(slots), 500):
                expected += (
                    s.scalar(
                        select(func.count())
                        .select_from(QueueEntry)
                        .where(
                            *_unanswered(rpk, version), QueueEntry.position.in_(slots[i : i + 500])
                        )
                    )
                    or 0
                )
        return live_done + anchors_done, n_queue + shown + expected


def _unanswered(rpk: int, version: str):
    """Queue entries of this rater with no live answer yet (the answered test uses the partial
    unique index of first answers: every answered item has exactly one)."""
    answered = select(Judgement.id).where(
        Judgement.rater_pk == rpk,
        Judgement.item_pk == QueueEntry.item_pk,
        Judgement.rubric_version == version,
        Judgement.supersedes.is_(None),
        Judgement.context == "live",
    )
    return (QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version, ~answered.exists())


def next_item(
    db: StudyDB,
    rater: str,
    version: str,
    session_pk: int,
    *,
    anchor_every: int = q.ANCHOR_EVERY,
    start: int = 0,
) -> ServedItem | None:
    """The next unit of work: a pending anchor, a due anchor, or the first unanswered item.

    `start`: a queue position below which every item is known to be answered (answers are
    never removed, so the first unanswered position only moves forward): a session passes
    the last one it was served, so serving stays O(1) however far the rater has come.
    """
    with db.write() as s:
        rpk = rater_pk(s, rater)
        lock_rater(s, rpk)
        pending = s.scalars(
            select(AnchorShowing)
            .where(
                AnchorShowing.rater_pk == rpk,
                ~exists().where(Judgement.showing_pk == AnchorShowing.id),
            )
            .order_by(AnchorShowing.id)
        ).first()
        if pending is not None:
            return ServedItem(
                pending.item_pk,
                item_view(s, pending.item_pk, pending.display_code),
                pending.before_position,
                "anchor",
                pending.id,
            )
        first = s.execute(
            select(QueueEntry.position, QueueEntry.item_pk)
            .where(*_unanswered(rpk, version), QueueEntry.position >= start)
            .order_by(QueueEntry.position)
            .limit(1)
        ).first()
        nxt = (int(first[0]), int(first[1])) if first is not None else None
        if nxt is None:
            nxt = _claim_on_demand(s, rpk, version)
        if nxt is None:
            return None
        position, item_pk = nxt
        showing = _maybe_seed_anchor(s, rpk, session_pk, position, anchor_every)
        if showing is not None:
            return ServedItem(
                showing.item_pk,
                item_view(s, showing.item_pk, showing.display_code),
                position,
                "anchor",
                showing.id,
            )
        return ServedItem(item_pk, item_view(s, item_pk), position, "live")


def _claim_on_demand(s: OrmSession, rpk: int, version: str) -> tuple[int, int] | None:
    """When the study deals on demand: take one more item and append it to the rater's queue."""
    k = on_demand(s)
    if not k:
        return None
    from .roles import is_rater_session

    if not is_rater_session(s):  # a rater's role may not free claims: annotator_claim's part
        expire_claims(s)  # claims left unanswered go back to the pool first
    seed = rater_seed(s, rpk)
    item_pk = claim_next(s, rpk, seed, k)
    if item_pk is None:
        return None
    # after the last position, not the count: a freed claim leaves a gap in the queue
    last = s.scalar(
        select(func.max(QueueEntry.position)).where(
            QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version
        )
    )
    position = 0 if last is None else last + 1
    s.execute(
        insert(QueueEntry),
        [dict(rater_pk=rpk, rubric_version=version, position=position, item_pk=item_pk, seed=seed)],
    )
    return position, item_pk


def _has_anchors(s: OrmSession) -> bool:
    """Whether the study has anchors to seed (a rater's role asks the server: it reads no
    anchors table and no anchor pool)."""
    from .roles import is_rater_session

    if is_rater_session(s):
        return bool(s.scalar(text("SELECT public.annotator_has_anchors()")))
    return s.scalar(select(Anchor.item_pk).limit(1)) is not None


def _set_version_of(s: OrmSession, anchor_pk: int) -> int | None:
    from .adjudication import current_version

    name = s.scalar(select(Anchor.anchor_set).where(Anchor.item_pk == anchor_pk))
    return current_version(s, name) if name is not None else None


def _maybe_seed_anchor(
    s: OrmSession, rpk: int, session_pk: int, position: int, every: int
) -> AnchorShowing | None:
    seed = rater_seed(s, rpk)
    slot = q.anchor_slot(seed, position, every)
    if slot is None:
        return None
    if s.scalar(
        select(AnchorShowing.id).where(
            AnchorShowing.rater_pk == rpk, AnchorShowing.before_position == position
        )
    ):
        return None  # this slot was already filled (in an earlier session)
    from .roles import is_rater_session

    if is_rater_session(s):
        # the server chooses and records the anchor (store/roles.py annotator_seed_anchor): a
        # rater's role lists no anchor pool, so it cannot pick the silent anchors out beforehand
        sid = s.scalar(
            text(
                "SELECT public.annotator_seed_anchor(:session, :position, :slot, :code, :uuid, "
                ":every)"
            ),
            {
                "session": session_pk,
                "position": position,
                "slot": slot,
                "code": free_display_code(s),
                "uuid": uuid7(),
                "every": every,
            },
        )
        return s.get(AnchorShowing, sid) if sid is not None else None
    anchors = list(s.scalars(select(Anchor.item_pk).order_by(Anchor.item_pk)))
    if not anchors:
        return None
    shown = s.execute(
        select(AnchorShowing.item_pk, AnchorShowing.session_pk).where(AnchorShowing.rater_pk == rpk)
    ).all()
    this_session = {i for i, sp in shown if sp == session_pk}
    counts: dict[int, int] = {}
    for i, _ in shown:
        counts[i] = counts.get(i, 0) + 1
    choice = q.choose_anchor(anchors, this_session, counts, slot)
    if choice is None:
        return None
    row = AnchorShowing(
        rater_pk=rpk,
        session_pk=session_pk,
        item_pk=choice,
        before_position=position,
        seed=slot,
        display_code=free_display_code(s),
        anchor_set_version=_set_version_of(s, choice),
    )
    s.add(row)
    s.flush()
    return row


def _first_answer(
    s: OrmSession,
    rpk: int,
    item_pk: int,
    version: str,
    context: str,
    showing_pk: int | None,
    session_pk: int | None,
) -> int | None:
    """The id of the first answer already given in this slot (the rules of the unique indexes)."""
    stmt = select(Judgement.id).where(Judgement.supersedes.is_(None))
    if showing_pk is not None:
        stmt = stmt.where(Judgement.showing_pk == showing_pk)
    elif context == "calibration":
        stmt = stmt.where(
            Judgement.session_pk == session_pk,
            Judgement.item_pk == item_pk,
            Judgement.context == "calibration",
        )
    elif context == "live":
        stmt = stmt.where(
            Judgement.rater_pk == rpk,
            Judgement.item_pk == item_pk,
            Judgement.rubric_version == version,
            Judgement.context == "live",
        )
    else:
        return None
    return s.scalar(stmt.limit(1))


@dataclass(frozen=True)
class Submitted:
    id: int
    replaced_other: (
        bool  # the rater had answered this slot elsewhere (another window): kept as its correction
    )


def submit(
    db: StudyDB,
    *,
    rater: str,
    item_pk: int,
    version: str,
    session_pk: int | None,
    answers: dict[str, Any],
    reason: str | None,
    time_ms: int | None,
    context: str = "live",
    showing_pk: int | None = None,
    queue_position: int | None = None,
    supersedes: int | None = None,
    source: str = "app",
    created_at: datetime | None = None,
    uuid: str | None = None,
) -> Submitted:
    """Append one judgement in its own committed transaction.

    Nothing a rater submits is lost: when this slot already has an answer the
    caller did not know of (the same rater in a second window, or a second
    correction of one answer), the new answer supersedes the current head of
    that chain: it is the rater's newer judgement. The check and the insert run
    under the write lock (BEGIN IMMEDIATE), so two processes cannot both pass it.

    `uuid`: the answer's id, minted by the caller before the first attempt: re-sending the
    same answer after a lost connection (committed or not, the caller cannot know) stores it
    once.
    """
    with db.write() as s:
        rpk = rater_pk(s, rater)
        lock_rater(s, rpk)
        if (known := by_uuid(s, Judgement, uuid)) is not None:  # a re-send after a lost connection
            return Submitted(known, False)
        target = supersedes
        first = None
        if target is None:
            target = first = _first_answer(
                s, rpk, item_pk, version, context, showing_pk, session_pk
            )
        row = Judgement(
            rater_pk=rpk,
            item_pk=item_pk,
            rubric_version=version,
            session_pk=session_pk,
            context=context,
            showing_pk=showing_pk,
            queue_position=queue_position,
            answers=encode(answers),
            reason=reason,
            time_ms=time_spent.capped(time_ms),
            source=source,
        )
        if uuid is not None:
            row.uuid = uuid
        if created_at is not None:
            row.created_at = created_at
        moved_on = append(s, row, target)
        s.flush()
        return Submitted(row.id, first is not None or moved_on)


def current_judgement(
    db: StudyDB,
    rater: str,
    item_pk: int,
    version: str,
    *,
    context: str = "live",
    showing_pk: int | None = None,
) -> tuple[int, dict, str | None] | None:
    with db.read() as s:
        stmt = select(Judgement).where(
            Judgement.rater_pk == rater_pk(s, rater),
            Judgement.item_pk == item_pk,
            Judgement.rubric_version == version,
            Judgement.context == context,
            is_current(Judgement),
        )
        if showing_pk is not None:
            stmt = stmt.where(Judgement.showing_pk == showing_pk)
        row = s.scalars(stmt.order_by(Judgement.id.desc())).first()
        return None if row is None else (row.id, json.loads(row.answers), row.reason)


def session_history(db: StudyDB, session_pk: int) -> list[ServedItem]:
    """Items answered in a session, oldest first, with their current answers (for going back)."""
    with db.read() as s:
        out = []
        for j, latest in session_answers(s, Judgement, session_pk):
            shown = s.get(AnchorShowing, j.showing_pk) if j.showing_pk else None
            code = shown.display_code if shown is not None else None
            out.append(
                ServedItem(
                    j.item_pk,
                    item_view(s, j.item_pk, code),
                    j.queue_position,
                    j.context,
                    j.showing_pk,
                    json.loads(latest.answers),
                    latest.reason,
                    latest.id,
                )
            )
        return out


def history_of(db: StudyDB, rater: str, item_pk: int) -> list[dict]:
    """The whole append-only chain of a rater's live answers on an item."""
    with db.read() as s:
        rows = s.scalars(
            select(Judgement)
            .where(Judgement.rater_pk == rater_pk(s, rater), Judgement.item_pk == item_pk)
            .order_by(Judgement.id)
        ).all()
        return [
            {
                "id": r.id,
                "answers": json.loads(r.answers),
                "supersedes": r.supersedes,
                "context": r.context,
                "session": r.session_pk,
                "queue_position": r.queue_position,
                "time_ms": r.time_ms,
            }
            for r in rows
        ]


def queue_codes(db: StudyDB, rater: str, version: str) -> list[str]:
    """The display codes of a rater's queue, in order."""
    with db.read() as s:
        rpk = rater_pk(s, rater)
        return list(
            s.scalars(
                select(Item.display_code)
                .join(QueueEntry, QueueEntry.item_pk == Item.id)
                .where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version)
                .order_by(QueueEntry.position)
            )
        )


def queue_positions(db: StudyDB, rater: str, version: str) -> dict[int, int]:
    """Item key -> its position in the rater's queue (live items only)."""
    with db.read() as s:
        rpk = rater_pk(s, rater)
        return {
            int(pk): int(pos)
            for pos, pk in s.execute(
                select(QueueEntry.position, QueueEntry.item_pk).where(
                    QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version
                )
            )
        }
