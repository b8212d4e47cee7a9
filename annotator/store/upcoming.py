"""Peek at what a rater's label session will serve next (read only), so the UI
can decode those images before they are served: the pending anchor showing,
the next unanswered live items, and the anchors their seeded slots will bring
(predicted with the same domain functions `next_item` uses, so an anchor's
pictures are ready as fast as a live item's: timing must not give it away)."""

from __future__ import annotations

from sqlalchemy import exists, select

from ..domain import queue as q
from ..domain.records import ItemView
from .answers import _answered_live
from .db import StudyDB
from .items import item_view
from .models import Anchor, AnchorShowing, Judgement, QueueEntry
from .people import rater_pk, rater_seed


def upcoming_views(
    db: StudyDB,
    rater: str,
    version: str,
    n: int,
    *,
    skip: tuple[int, ...] = (),
    session_pk: int | None = None,
    anchor_every: int = 0,
) -> list[ItemView]:
    """Up to `n` items the session serves after those in `skip` (e.g. the one on screen)."""
    if n <= 0:
        return []
    with db.read() as s:
        rpk = rater_pk(s, rater)
        out: list[ItemView] = []
        pending = s.scalars(
            select(AnchorShowing.item_pk)
            .where(
                AnchorShowing.rater_pk == rpk,
                ~exists().where(Judgement.showing_pk == AnchorShowing.id),
            )
            .order_by(AnchorShowing.id)
        ).all()
        for pk in pending:
            if pk not in skip:
                out.append(item_view(s, pk))
        answered = _answered_live(s, rpk, version) | set(skip)
        entries = s.execute(
            select(QueueEntry.position, QueueEntry.item_pk)
            .where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version)
            .order_by(QueueEntry.position)
        ).all()
        from .roles import is_rater_session

        # a rater's role reads no anchor pool: the server picks its silent anchor at the slot
        # (store/roles.py), so its image is decoded when shown, not ahead
        predict = session_pk is not None and anchor_every >= 2 and not is_rater_session(s)
        if predict:
            seed = rater_seed(s, rpk)
            anchors = list(s.scalars(select(Anchor.item_pk).order_by(Anchor.item_pk)))
            shown = s.execute(
                select(
                    AnchorShowing.item_pk, AnchorShowing.session_pk, AnchorShowing.before_position
                ).where(AnchorShowing.rater_pk == rpk)
            ).all()
            filled = {bp for _, _, bp in shown}
            this_session = {i for i, sp, _ in shown if sp == session_pk}
            counts: dict[int, int] = {}
            for i, _, _ in shown:
                counts[i] = counts.get(i, 0) + 1
        for position, pk in entries:
            if len(out) >= n:
                break
            if pk in answered:
                continue
            if predict and anchors and position not in filled:
                slot = q.anchor_slot(seed, position, anchor_every)
                choice = (
                    q.choose_anchor(anchors, this_session, counts, slot)
                    if slot is not None
                    else None
                )
                if choice is not None:
                    out.append(item_view(s, choice))
                    this_session.add(choice)
                    counts[choice] = counts.get(choice, 0) + 1
            out.append(item_view(s, pk))
        return out[:n]
