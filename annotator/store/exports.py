"""Read queries the exports are built from: whole item content (for the lead's exports:
generators and all), current live answers of non-operators with their lead time and
session, and every pair with its votes. Plain records out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from .chains import is_current
from .db import StudyDB
from .models import Case, Cell, Item, ItemMedia, Judgement, Rater, Session
from .models_pairs import Pair, PairVote
from .rows import VoteRow, decode_answers


@dataclass(frozen=True)
class ItemRecord:
    pk: int
    item_id: str
    case_id: str
    prompt: str
    criteria: str | None
    generator: str
    slice: str | None
    seed: int | None
    text: str | None
    task_type: str | None
    is_anchor: bool
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    mask: str | None


@dataclass(frozen=True)
class JudgementRecord:
    item_pk: int
    rater: str
    answers: dict[str, Any]  # JSON form: tags are lists
    reason: str | None
    created_at: datetime
    time_ms: int | None
    session: str | None  # an imported session's name, else the session's UUID


@dataclass(frozen=True)
class VoteRecord(VoteRow):
    time_ms: int | None


def item_records(db: StudyDB) -> list[ItemRecord]:
    with db.read() as s:
        media: dict[int, dict[str, list[str]]] = {}
        for pk, role, sha in s.execute(
            select(ItemMedia.item_pk, ItemMedia.role, ItemMedia.media_sha256).order_by(
                ItemMedia.item_pk, ItemMedia.role, ItemMedia.ordinal
            )
        ):
            media.setdefault(pk, {}).setdefault(role, []).append(sha)
        rows = s.execute(
            select(
                Item.id,
                Item.item_id,
                Case.case_id,
                Cell.prompt,
                Cell.criteria,
                Item.generator,
                Item.slice,
                Item.seed,
                Item.text,
                Case.task_type,
                Item.is_anchor,
            )
            .join(Cell, Item.cell_pk == Cell.id)
            .join(Case, Cell.case_pk == Case.id)
            .order_by(Item.id)
        ).all()
    out = []
    for r in rows:
        m = media.get(r[0], {})
        out.append(
            ItemRecord(
                *r,
                tuple(m.get("output", ())),
                tuple(m.get("input", ())),
                m["mask"][0] if m.get("mask") else None,
            )
        )
    return out


def _session_names(s) -> dict[int, str]:
    return {
        pk: mode.removeprefix("import:") if mode.startswith("import:") else uuid
        for pk, mode, uuid in s.execute(select(Session.id, Session.mode, Session.uuid))
    }


def judgement_records(
    db: StudyDB, version: str, unreadable: list[int] | None = None
) -> list[JudgementRecord]:
    """Current (not superseded) live answers of non-operators under this rubric version, oldest first."""
    with db.read() as s:
        names = _session_names(s)
        rows = s.execute(
            select(Judgement, Rater.name)
            .join(Rater, Rater.id == Judgement.rater_pk)
            .where(
                Rater.is_operator.is_(False),
                Judgement.context == "live",
                Judgement.rubric_version == version,
                is_current(Judgement),
            )
            .order_by(Judgement.id)
        ).all()
        out = []
        for j, name in rows:
            answers = decode_answers(j.answers)
            if answers is None:  # a damaged row is left out (and counted), never a crash
                if unreadable is not None:
                    unreadable.append(j.id)
                continue
            out.append(
                JudgementRecord(
                    j.item_pk,
                    name,
                    answers,
                    j.reason,
                    j.created_at,
                    j.time_ms,
                    names.get(j.session_pk) if j.session_pk else None,
                )
            )
        return out


def vote_records(db: StudyDB) -> list[VoteRecord]:
    """Current pair votes of non-operators and of judges, oldest first."""
    with db.read() as s:
        pair_ids = dict(s.execute(select(Pair.id, Pair.pair_id)).all())
        rows = s.execute(
            select(PairVote, Rater.name, Rater.is_operator)
            .outerjoin(Rater, Rater.id == PairVote.rater_pk)
            .where(is_current(PairVote))
            .order_by(PairVote.id)
        ).all()
        return [
            VoteRecord(
                pair_ids[v.pair_pk],
                v.item_left,
                v.item_right,
                v.judge or name,
                bool(v.judge),
                v.choice,
                v.created_at,
                v.time_ms,
            )
            for v, name, is_op in rows
            if not is_op
        ]


def pair_records(db: StudyDB) -> list[tuple[str, int, int]]:
    """(pair_id, item_a, item_b) of every pair the study holds, voted on or not."""
    with db.read() as s:
        return [
            (str(pid), int(a), int(b))
            for pid, a, b in s.execute(
                select(Pair.pair_id, Pair.item_a, Pair.item_b).order_by(Pair.id)
            )
        ]
