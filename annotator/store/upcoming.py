"""Peek at a rater's next queued items (read only), so the UI can decode their
images before they are served. Anchor showings are not predicted: they are rare
and their images are decoded on demand."""

from __future__ import annotations

from sqlalchemy import select

from ..domain.records import ItemView
from .answers import _answered_live
from .db import StudyDB
from .items import item_view
from .models import QueueEntry
from .people import rater_pk


def upcoming_views(db: StudyDB, rater: str, version: str, n: int, *, skip: tuple[int, ...] = ()) -> list[ItemView]:
    """The next `n` unanswered live items in queue order, leaving out `skip` (e.g. the one on screen)."""
    if n <= 0:
        return []
    with db.read() as s:
        rpk = rater_pk(s, rater)
        answered = _answered_live(s, rpk, version) | set(skip)
        pks = s.scalars(
            select(QueueEntry.item_pk).where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == version)
            .order_by(QueueEntry.position)
        )
        out: list[ItemView] = []
        for pk in pks:
            if pk in answered:
                continue
            out.append(item_view(s, pk))
            if len(out) >= n:
                break
        return out
