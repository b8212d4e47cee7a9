"""Pairwise and calibration tables (second migration)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow, uuid_column


class Pair(Base):
    """An unordered pair of items of one cell; item_a < item_b by primary key."""

    __tablename__ = "pairs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pair_id: Mapped[str] = mapped_column(String, unique=True)
    item_a: Mapped[int] = mapped_column(ForeignKey("items.id"))
    item_b: Mapped[int] = mapped_column(ForeignKey("items.id"))
    __table_args__ = (Index("uq_pair_items", "item_a", "item_b", unique=True),)


class PairQueueEntry(Base):
    """A rater's pair order and the side each item is dealt, from a recorded seed."""

    __tablename__ = "pair_queue"
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    pair_pk: Mapped[int] = mapped_column(ForeignKey("pairs.id"))
    left_item: Mapped[int] = mapped_column(ForeignKey("items.id"))
    seed: Mapped[int] = mapped_column(Integer)


class PairVote(Base):
    __tablename__ = "pair_votes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = uuid_column()
    pair_pk: Mapped[int] = mapped_column(ForeignKey("pairs.id"), index=True)
    rater_pk: Mapped[int | None] = mapped_column(ForeignKey("raters.id"))
    judge: Mapped[str | None] = mapped_column(String)  # set instead of rater for judge votes
    item_left: Mapped[int] = mapped_column(ForeignKey("items.id"))  # the side shown
    item_right: Mapped[int] = mapped_column(ForeignKey("items.id"))
    choice: Mapped[str] = mapped_column(String)  # left | right | both | neither
    side_seed: Mapped[int | None] = mapped_column(Integer)
    session_pk: Mapped[int | None] = mapped_column(ForeignKey("sessions.id"))
    queue_position: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(Text)
    time_ms: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String, default="app")
    supersedes: Mapped[int | None] = mapped_column(ForeignKey("pair_votes.id"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (
        # one vote per rater per unordered pair; a correction supersedes it
        Index(
            "uq_pair_vote_rater",
            "rater_pk",
            "pair_pk",
            unique=True,
            sqlite_where=text("supersedes IS NULL AND rater_pk IS NOT NULL"),
            postgresql_where=text("supersedes IS NULL AND rater_pk IS NOT NULL"),
        ),
        # a judge votes on a pair once per order shown (A|B and B|A: its position bias)
        Index(
            "uq_pair_vote_judge",
            "judge",
            "pair_pk",
            "item_left",
            unique=True,
            sqlite_where=text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=text("supersedes IS NULL AND judge IS NOT NULL"),
        ),
    )


class Calibration(Base):
    __tablename__ = "calibrations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = uuid_column()
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    session_pk: Mapped[int] = mapped_column(ForeignKey("sessions.id"))
    anchor_set: Mapped[str] = mapped_column(String)
    anchor_set_version: Mapped[int | None] = mapped_column(Integer)  # which version of the set
    rubric_version: Mapped[str] = mapped_column(String(64))
    result: Mapped[str] = mapped_column(Text)  # JSON per-metric results
    qualified: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
