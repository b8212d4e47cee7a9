"""Adjudications (the lead's resolved answers) and anchor set versions (promotions included)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session as OrmSession

from ..domain.answers import encode_value
from ..domain.errors import InputError
from .chains import head
from .db import StudyDB
from .items import free_display_code, item_pks
from .models import Anchor, Item, ItemMedia
from .models_team import Adjudication, AnchorSetVersion


@dataclass(frozen=True)
class AdjudicationRow:
    id: int
    item_id: str
    metric: str
    value: Any  # JSON form
    reason: str
    category: str | None
    by: str
    supersedes: int | None
    created_at: datetime


def add(
    db: StudyDB,
    *,
    item_id: str,
    metric: str,
    value: Any,
    reason: str,
    category: str | None,
    by: str,
) -> int:
    """Append an adjudication; it supersedes the current one on the same item x metric."""
    with db.write() as s:
        pk = item_pks(s, [item_id]).get(item_id)
        if pk is None:
            raise InputError(f"no item '{item_id}' in this study", field="--item")
        first = s.scalar(
            select(Adjudication.id).where(
                Adjudication.item_pk == pk,
                Adjudication.metric == metric,
                Adjudication.supersedes.is_(None),
            )
        )
        target = head(s, Adjudication, first).id if first is not None else None
        return s.execute(
            insert(Adjudication).returning(Adjudication.id),
            [
                dict(
                    item_pk=pk,
                    metric=metric,
                    value=encode_value(value),
                    reason=reason,
                    category=category,
                    by=by,
                    supersedes=target,
                )
            ],
        ).scalar_one()


def rows(db: StudyDB, *, current_only: bool = True) -> list[AdjudicationRow]:
    from .chains import is_current

    with db.read() as s:
        stmt = select(Adjudication, Item.item_id).join(Item, Item.id == Adjudication.item_pk)
        if current_only:
            stmt = stmt.where(is_current(Adjudication))
        return [
            AdjudicationRow(
                a.id,
                iid,
                a.metric,
                json.loads(a.value),
                a.reason,
                a.category,
                a.by,
                a.supersedes,
                a.created_at,
            )
            for a, iid in s.execute(stmt.order_by(Adjudication.id))
        ]


# ---- anchor set versions ---------------------------------------------------------------------


def current_version(s: OrmSession, anchor_set: str) -> int:
    return (
        s.scalar(
            select(func.max(AnchorSetVersion.version)).where(
                AnchorSetVersion.anchor_set == anchor_set
            )
        )
        or 0
    )


def new_version(s: OrmSession, anchor_set: str, note: str) -> int:
    v = current_version(s, anchor_set) + 1
    s.add(AnchorSetVersion(anchor_set=anchor_set, version=v, note=note))
    s.flush()
    return v


def versions(db: StudyDB) -> dict[str, int]:
    """Each anchor set's current version."""
    with db.read() as s:
        return dict(
            s.execute(
                select(AnchorSetVersion.anchor_set, func.max(AnchorSetVersion.version)).group_by(
                    AnchorSetVersion.anchor_set
                )
            ).all()
        )


def promote(
    db: StudyDB,
    *,
    item_id: str,
    anchor_set: str,
    reference: dict[str, Any],
    rationale: dict[str, str],
) -> tuple[str, int]:
    """A new anchor that shows what the live item shows (its own item, so the raters' live
    answers on the original stay where they are), in a new version of the set.
    Returns (the anchor's item_id, the set's new version)."""
    with db.write() as s:
        pk = item_pks(s, [item_id]).get(item_id)
        if pk is None:
            raise InputError(f"no item '{item_id}' in this study", field="--item")
        src = s.get_one(Item, pk)
        if src.is_anchor:
            raise InputError(f"'{item_id}' is an anchor already", field="--item")
        if s.scalar(select(Anchor.item_pk).where(Anchor.promoted_from == pk)) is not None:
            raise InputError(
                f"'{item_id}' was promoted already; adjudicate it again and promote the new answer "
                "by exporting and re-importing the anchor set",
                field="--item",
            )
        version = new_version(s, anchor_set, f"promoted {item_id}")
        new_id = f"anchor:{item_id}"
        new_pk = s.execute(
            insert(Item).returning(Item.id),
            [
                dict(
                    item_id=new_id,
                    cell_pk=src.cell_pk,
                    generator=src.generator,
                    display_code=free_display_code(s),
                    slice=src.slice,
                    seed=src.seed,
                    text=src.text,
                    is_anchor=True,
                    content_sha256=src.content_sha256,
                    source=f"promoted from {item_id}",
                )
            ],
        ).scalar_one()
        media = [
            dict(
                item_pk=new_pk,
                role=m.role,
                ordinal=m.ordinal,
                media_sha256=m.media_sha256,
                source_name=m.source_name,
            )
            for m in s.scalars(select(ItemMedia).where(ItemMedia.item_pk == pk))
        ]
        if media:
            s.execute(insert(ItemMedia), media)
        s.add(
            Anchor(
                item_pk=new_pk,
                anchor_set=anchor_set,
                reference=json.dumps(reference),
                rationale=json.dumps(rationale),
                set_version=version,
                promoted_from=pk,
            )
        )
        return new_id, version
