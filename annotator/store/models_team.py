"""Team work tables (migration 0005): assignments, per-rater display codes, rater
packages (their manifest and media blobs), merges and merge conflicts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..domain.ids import uuid7
from .models import Base, utcnow


class Assignment(Base):
    """An item dealt to a rater (K raters per item), from a recorded seed."""

    __tablename__ = "assignments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    seed: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (UniqueConstraint("rater_pk", "item_pk"),)


class PairAssignment(Base):
    __tablename__ = "pair_assignments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    pair_pk: Mapped[int] = mapped_column(ForeignKey("pairs.id"), index=True)
    seed: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (UniqueConstraint("rater_pk", "pair_pk"),)


class RaterCode(Base):
    """The display code of an item (or pair) in one rater's package: per rater, so a code seen by
    one rater means nothing in another's package or in the lead's views."""

    __tablename__ = "rater_codes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"))
    kind: Mapped[str] = mapped_column(String)  # item | pair | case
    target_pk: Mapped[int] = mapped_column(Integer)  # items.id, pairs.id or cases.id
    code: Mapped[str] = mapped_column(String)
    __table_args__ = (
        UniqueConstraint("rater_pk", "kind", "target_pk"),
        UniqueConstraint("rater_pk", "kind", "code"),
    )


class PackageManifest(Base):
    """One row in a rater package (contract 5.6); empty in a study."""

    __tablename__ = "package_manifest"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # the package's own id
    format_version: Mapped[int] = mapped_column(Integer)
    study_id: Mapped[str] = mapped_column(String(36))
    rubric_id: Mapped[str] = mapped_column(String)
    rubric_version: Mapped[str] = mapped_column(String(64))
    schema_revision: Mapped[str] = mapped_column(String)
    rater: Mapped[str] = mapped_column(String)
    counts: Mapped[str] = mapped_column(Text)  # JSON
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class MediaBlob(Base):
    """Media kept inside the database (rater packages, studies on a server), keyed by the
    SHA-256 of the bytes: a blob that does not hash to its key is tampering."""

    __tablename__ = "media_blobs"
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Merge(Base):
    __tablename__ = "merges"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    package_sha256: Mapped[str] = mapped_column(String(64), index=True)
    package_id: Mapped[str] = mapped_column(String(36))
    rater_pk: Mapped[int] = mapped_column(ForeignKey("raters.id"))
    counts: Mapped[str] = mapped_column(Text)  # JSON: rows added per table
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class MergeConflict(Base):
    """A package row whose id is known with other content (or whose slot is taken): kept aside,
    never written over what the study holds."""

    __tablename__ = "merge_conflicts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    merge_pk: Mapped[int] = mapped_column(ForeignKey("merges.id"), index=True)
    table_name: Mapped[str] = mapped_column(String)
    uuid: Mapped[str] = mapped_column(String(36))
    reason: Mapped[str] = mapped_column(Text)
    incoming: Mapped[str] = mapped_column(Text)  # JSON of the package's row
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Adjudication(Base):
    """The lead's resolved answer on an item x metric: beside the raters' judgements, never over
    them; a later adjudication supersedes an earlier one (append-only, like every answer)."""

    __tablename__ = "adjudications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36), unique=True, index=True, default=uuid7)
    item_pk: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    metric: Mapped[str] = mapped_column(String)
    value: Mapped[str] = mapped_column(Text)  # JSON, typed as a judgement's answer
    reason: Mapped[str] = mapped_column(Text)
    category: Mapped[str | None] = mapped_column(String)  # why: rubric_unclear, rater_error, ...
    by: Mapped[str] = mapped_column(String)  # the adjudicator (the lead, or a named colleague)
    supersedes: Mapped[int | None] = mapped_column(ForeignKey("adjudications.id"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (
        Index(
            "uq_adjudication_first",
            "item_pk",
            "metric",
            unique=True,
            sqlite_where=text("supersedes IS NULL"),
            postgresql_where=text("supersedes IS NULL"),
        ),
    )


class AnchorSetVersion(Base):
    """A version of an anchor set: every import or promotion makes a new one; calibrations and
    silent showings record the version they drew from."""

    __tablename__ = "anchor_set_versions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    anchor_set: Mapped[str] = mapped_column(String, index=True)
    version: Mapped[int] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    __table_args__ = (UniqueConstraint("anchor_set", "version"),)
