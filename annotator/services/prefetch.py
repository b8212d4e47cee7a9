"""What the label view should decode ahead of time (UI adapter over the store)."""

from __future__ import annotations

from ..domain.records import ItemView
from ..store.upcoming import upcoming_views
from .labeling import LabelSession


def upcoming(session: LabelSession, n: int, *, skip: tuple[int, ...] = ()) -> list[ItemView]:
    """The next `n` items (anchors included) the session serves once those in `skip` are answered."""
    return upcoming_views(
        session.study.db,
        session.rater,
        session.rubric.version,
        n,
        skip=skip,
        session_pk=session.session_pk,
        anchor_every=session.anchor_every,
    )
