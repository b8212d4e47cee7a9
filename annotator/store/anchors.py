"""Anchor references and calibration records."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session as OrmSession

from .db import StudyDB
from .models import Anchor, utcnow
from .models_pairs import Calibration
from .people import rater_pk


def anchors(db: StudyDB, anchor_set: str | None = None) -> list[tuple[int, str, dict, dict]]:
    """(item pk, set name, reference, rationale), in item order. A rater's role reads them only
    through the server, once it has started a calibration session."""
    from .roles import is_rater_session

    with db.read() as s:
        if is_rater_session(s):
            return [
                (pk, name, json.loads(ref), json.loads(why))
                for pk, name, ref, why in s.execute(
                    text(
                        "SELECT item_pk, anchor_set, reference, rationale "
                        "FROM public.annotator_calibration_anchors()"
                    )
                ).all()
                if not anchor_set or name == anchor_set
            ]
        stmt = select(Anchor).order_by(Anchor.item_pk)
        if anchor_set:
            stmt = stmt.where(Anchor.anchor_set == anchor_set)
        return [
            (a.item_pk, a.anchor_set, json.loads(a.reference), json.loads(a.rationale))
            for a in s.scalars(stmt)
        ]


def has_anchors(db: StudyDB) -> bool:
    """Whether the study has anchors (without reading them)."""
    from .roles import is_rater_session

    with db.read() as s:
        if is_rater_session(s):
            return bool(s.scalar(text("SELECT public.annotator_has_anchors()")))
        return s.scalar(select(Anchor.item_pk).limit(1)) is not None


def checks_own_drift(db: StudyDB) -> bool:
    """Whether this connection may check its rater's drift itself: False for a rater's role on
    a server, which reads no reference of a silent drift anchor (it could correct its answer to
    it); the lead's dashboard and report check that rater's drift, as after a package's merge."""
    from .roles import is_rater_session

    with db.read() as s:
        return not is_rater_session(s)


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
    from .roles import is_rater_session

    with db.write() as s:
        values = dict(
            rater_pk=rater_pk(s, rater),
            session_pk=session_pk,
            anchor_set=anchor_set,
            anchor_set_version=current_version(s, anchor_set) or None,
            rubric_version=version,
            result=json.dumps(result),
            created_at=utcnow(),
        )
        if is_rater_session(s):
            # a rater's role may not write the verdict (the server stores false; the lead's code
            # computes it from the answers: services/calibration.verify_calibrations)
            return int(
                s.execute(
                    insert(Calibration).values(**values).returning(Calibration.id)
                ).scalar_one()
            )
        row = Calibration(**values, qualified=qualified)
        s.add(row)
        s.flush()
        return row.id


def calibration_answers(db: StudyDB, session_pk: int) -> dict[int, dict[str, Any]]:
    """item pk -> the current answer given in one calibration session."""
    with db.read() as s:
        return calibration_answers_in(s, session_pk)


def calibration_answers_in(s: OrmSession, session_pk: int) -> dict[int, dict[str, Any]]:
    """`calibration_answers` inside the caller's transaction (a merge reads the answers it is
    adding), in the order they were given."""
    from .chains import is_current
    from .models import Judgement

    return {
        pk: json.loads(raw)
        for pk, raw in s.execute(
            select(Judgement.item_pk, Judgement.answers)
            .where(
                Judgement.session_pk == session_pk,
                Judgement.context == "calibration",
                is_current(Judgement),
            )
            .order_by(Judgement.id)
        ).all()
    }


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
                "session_pk": c.session_pk,
                "anchor_set": c.anchor_set,
                "anchor_set_version": c.anchor_set_version,
                "created_at": c.created_at.isoformat(timespec="seconds"),
                "qualified": c.qualified,
                "result": json.loads(c.result),
            }
            for c, name in s.execute(stmt)
        ]
