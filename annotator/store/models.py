"""ORM models. Answers are an append-only log: a correction is a new row that
`supersedes` the old one; nothing a rater submitted is ever updated or deleted."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ..domain.ids import uuid7

IMPORTED = "import"  # the version of judge scores imported from a file


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)  # JSON


class Rater(Base):
    __tablename__ = "raters"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String, unique=True)
    is_operator: Mapped[bool] = mapped_column(Boolean, default=False)
    expertise: Mapped[str | None] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(Integer)  # queue RNG seed, recorded
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class RubricVersion(Base):
    __tablename__ = "rubric_versions"
    version: Mapped[str] = mapped_column(String(64), primary_key=True)
    rubric_id: Mapped[str] = mapped_column(String)
    canonical: Mapped[str] = mapped_column(Text)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Case(Base):
    __tablename__ = "cases"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[str] = mapped_column(String, unique=True)
    task_type: Mapped[str | None] = mapped_column(String)


class Cell(Base):
    __tablename__ = "cells"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_pk: Mapped[int] = mapped_column(ForeignKey("cases.id"))
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    prompt: Mapped[str] = mapped_column(Text)
    criteria: Mapped[str | None] = mapped_column(Text)
    __table_args__ = (UniqueConstraint("case_pk", "prompt_sha256", "criteria"),)


class Media(Base):
    __tablename__ = "media"
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)  # of the stripped PNG
    original_sha256: Mapped[str] = mapped_column(String(64), index=True)
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    n_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Item(Base):
    __tablename__ = "items"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[str] = mapped_column(String, unique=True)
    cell_pk: Mapped[int] = mapped_column(ForeignKey("cells.id"), index=True)
    generator: Mapped[str] = mapped_column(String, index=True)
    display_code: Mapped[str] = mapped_column(String, unique=True)
    slice: Mapped[str | None] = mapped_column(String)
    seed: Mapped[int | None] = mapped_column(Integer)
    text: Mapped[str | None] = mapped_column(Text)
    is_anchor: Mapped[bool] = mapped_column(Boolean, default=False)
    content_sha256: Mapped[str] = mapped_column(String(64))  # identity of what was imported
    source: Mapped[str | None] = mapped_column(Text)  # provenance (manifest path); never shown
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ItemMedia(Base):
    __tablename__ = "item_media"
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), primary_key=True)
    role: Mapped[str] = mapped_column(String, primary_key=True)  # output | input | mask
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    media_sha256: Mapped[str] = mapped_column(ForeignKey("media.sha256"))
    source_name: Mapped[str | None] = mapped_column(Text)  # provenance; never shown


def uuid_column() -> Mapped[str | None]:
    """The row's global id (UUIDv7), minted where the row is made: merge identifies rows by it.
    Nullable in the schema only because SQLite cannot add a NOT NULL column in place; every
    row gets one (migration 0005 filled the old ones)."""
    return mapped_column(String(36), unique=True, index=True, default=uuid7)


class Session(Base):
    __tablename__ = "sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = uuid_column()
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    mode: Mapped[str] = mapped_column(String)  # label | pair | calibration | import
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class QueueEntry(Base):
    """A rater's stored order of live items: position -> item, from `seed`."""

    __tablename__ = "queue"
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), primary_key=True)
    rubric_version: Mapped[str] = mapped_column(
        ForeignKey("rubric_versions.version"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"))
    seed: Mapped[int] = mapped_column(Integer)


class AnchorShowing(Base):
    """An anchor seeded silently into live work: where, when, and from which seed."""

    __tablename__ = "anchor_showings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = uuid_column()
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    session_pk: Mapped[int] = mapped_column(ForeignKey("sessions.id"))
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"))
    # live queue position it precedes; negative for a duplicate a race made before 0004 (kept for its answers)
    before_position: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    display_code: Mapped[str] = mapped_column(String, unique=True)  # its own code each showing
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    anchor_set_version: Mapped[int | None] = mapped_column(Integer)  # of the set it was drawn from
    __table_args__ = (
        # one anchor per rater and slot, even when two windows reach the slot at once
        Index(
            "uq_anchor_slot",
            "rater_pk",
            "before_position",
            unique=True,
            sqlite_where=text("before_position >= 0"),
            postgresql_where=text("before_position >= 0"),
        ),
    )


class Judgement(Base):
    __tablename__ = "judgements"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = uuid_column()
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    rubric_version: Mapped[str] = mapped_column(ForeignKey("rubric_versions.version"))
    session_pk: Mapped[int | None] = mapped_column(ForeignKey("sessions.id"))
    context: Mapped[str] = mapped_column(String, default="live")  # live | anchor | calibration
    showing_pk: Mapped[int | None] = mapped_column(ForeignKey("anchor_showings.id"))
    queue_position: Mapped[int | None] = mapped_column(Integer)
    answers: Mapped[str] = mapped_column(Text)  # JSON {metric: value}
    reason: Mapped[str | None] = mapped_column(Text)
    time_ms: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String, default="app")  # app | import
    supersedes: Mapped[int | None] = mapped_column(ForeignKey("judgements.id"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (
        Index(
            "uq_judgement_live",
            "rater_pk",
            "item_pk",
            "rubric_version",
            unique=True,
            sqlite_where=text("supersedes IS NULL AND context = 'live'"),
            postgresql_where=text("supersedes IS NULL AND context = 'live'"),
        ),
        # a seeded anchor showing and a calibration anchor take one first answer each, too
        Index(
            "uq_judgement_showing",
            "showing_pk",
            unique=True,
            sqlite_where=text("supersedes IS NULL AND showing_pk IS NOT NULL"),
            postgresql_where=text("supersedes IS NULL AND showing_pk IS NOT NULL"),
        ),
        # "is this anchor showing answered yet?" on every next item
        Index("ix_judgements_showing_pk", "showing_pk"),
        Index(
            "uq_judgement_calibration",
            "session_pk",
            "item_pk",
            unique=True,
            sqlite_where=text("supersedes IS NULL AND context = 'calibration'"),
            postgresql_where=text("supersedes IS NULL AND context = 'calibration'"),
        ),
    )


class JudgeRun(Base):
    __tablename__ = "judge_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge: Mapped[str] = mapped_column(String, index=True)
    model: Mapped[str | None] = mapped_column(String)
    kind: Mapped[str] = mapped_column(String)  # import | llm
    prompt_sha256: Mapped[str | None] = mapped_column(String(64))
    schema: Mapped[str | None] = mapped_column(Text)
    base_url: Mapped[str | None] = mapped_column(Text)
    rubric_version: Mapped[str | None] = mapped_column(String(64))
    source: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # what makes two runs of one judge comparable: a hash of model, prompt hash, schema and
    # settings (judge/versions.py); IMPORTED for scores brought in from a file
    version: Mapped[str] = mapped_column(String(64), default=IMPORTED, server_default=IMPORTED)
    settings: Mapped[str | None] = mapped_column(Text)  # JSON of the run's settings


class JudgeScore(Base):
    __tablename__ = "judge_scores"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("judge_runs.id"), index=True)
    judge: Mapped[str] = mapped_column(String)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    metric: Mapped[str] = mapped_column(String)
    value: Mapped[str] = mapped_column(Text)  # JSON
    reason: Mapped[str | None] = mapped_column(Text)
    raw: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # the run's version, copied here so that one version scores an item's metric once
    version: Mapped[str] = mapped_column(String(64), default=IMPORTED, server_default=IMPORTED)
    # the judge's probability that this answer is right (logprobs or its stated confidence)
    confidence: Mapped[float | None] = mapped_column(Float)
    __table_args__ = (
        UniqueConstraint("judge", "version", "item_pk", "metric", name="uq_judge_score_version"),
    )


class JudgeError(Base):
    __tablename__ = "judge_errors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("judge_runs.id"), index=True)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"))
    kind: Mapped[str] = mapped_column(String)
    message: Mapped[str] = mapped_column(Text)
    raw: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Anchor(Base):
    __tablename__ = "anchors"
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), primary_key=True)
    anchor_set: Mapped[str] = mapped_column(String, index=True)
    reference: Mapped[str] = mapped_column(Text)  # JSON {metric: value}
    rationale: Mapped[str] = mapped_column(Text)  # JSON {metric: text}
    set_version: Mapped[int] = mapped_column(
        Integer, default=1, server_default="1"
    )  # the version it joined in
    promoted_from: Mapped[int | None] = mapped_column(
        ForeignKey("items.id")
    )  # the live item it copies
