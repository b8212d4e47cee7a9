"""What the label view should decode ahead of time (UI adapter over the store)."""

from __future__ import annotations

from ..domain.records import ItemView
from ..store.upcoming import upcoming_views
from .labeling import LabelSession


def upcoming(session: LabelSession, n: int, *, skip: tuple[int, ...] = ()) -> list[ItemView]:
    """The next `n` live items the session will serve after those in `skip` are answered."""
    return upcoming_views(session.study.db, session.rater, session.rubric.version, n, skip=skip)
