"""Anchor references and calibration records."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from .db import StudyDB
from .models import Anchor
from .models_pairs import Calibration
from .people import rater_pk


def anchors(db: StudyDB, anchor_set: str | None = None) -> list[tuple[int, str, dict, dict]]:
    """(item pk, set name, reference, rationale), in item order."""
    with db.read() as s:
        stmt = select(Anchor).order_by(Anchor.item_pk)
        if anchor_set:
            stmt = stmt.where(Anchor.anchor_set == anchor_set)
        return [
            (a.item_pk, a.anchor_set, json.loads(a.reference), json.loads(a.rationale))
            for a in s.scalars(stmt)
        ]


def add_calibration(
    db: StudyDB,
    *,
    rater: str,
    session_pk: int,
    anchor_set: str,
    version: str,
    result: dict[str, Any],
    qualified: bool,
) -> int:
    from .adjudication import current_version

    with db.write() as s:
        row = Calibration(
            rater_pk=rater_pk(s, rater),
            session_pk=session_pk,
            anchor_set=anchor_set,
            anchor_set_version=current_version(s, anchor_set) or None,
            rubric_version=version,
            result=json.dumps(result),
            qualified=qualified,
        )
        s.add(row)
        s.flush()
        return row.id


def calibrations(db: StudyDB, rater: str | None = None) -> list[dict[str, Any]]:
    from .models import Rater

    with db.read() as s:
        stmt = (
            select(Calibration, Rater.name)
            .join(Rater, Rater.id == Calibration.rater_pk)
            .order_by(Calibration.id)
        )
        if rater:
            stmt = stmt.where(Rater.name == rater)
        return [
            {
                "id": c.id,
                "rater": name,
                "anchor_set": c.anchor_set,
                "anchor_set_version": c.anchor_set_version,
                "created_at": c.created_at.isoformat(timespec="seconds"),
                "qualified": c.qualified,
                "result": json.loads(c.result),
            }
            for c, name in s.execute(stmt)
        ]
