"""Read-only row queries the reports are built from: current answers only,
operators left out, anchors kept apart from live items. Plain tuples out; the
services turn them into the frames the statistics read."""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from .db import StudyDB
from .models import Anchor, AnchorShowing, Case, Cell, Item, Judgement, JudgeScore, Media, Rater
from .models_pairs import Pair, PairVote


@dataclass(frozen=True)
class ItemRow:
    pk: int
    item_id: str
    display_code: str
    case_id: str
    cell_pk: int
    generator: str
    slice: str | None
    is_anchor: bool


@dataclass(frozen=True)
class JudgementRow:
    item_pk: int
    rater: str
    context: str  # live | anchor | calibration
    answers: dict[str, Any]  # JSON form: tags are lists
    reason: str | None
    created_at: datetime
    session_pk: int | None
    id: int = 0  # the row's id in the answer log (what a live refresh compares)


@dataclass(frozen=True)
class JudgeScoreRow:
    item_pk: int
    judge: str
    metric: str
    value: Any  # JSON form
    reason: str | None
    version: str = "import"
    confidence: float | None = None
    run_pk: int = 0  # runs are numbered in order: the latest version has the largest


@dataclass(frozen=True)
class VoteRow:
    pair_id: str
    item_left: int
    item_right: int
    rater: str  # the judge's name for a judge vote
    is_judge: bool
    choice: str
    created_at: datetime


def decode_answers(text: Any) -> dict[str, Any] | None:
    """A stored answer object, or None when the row holds no JSON object (a row edited by hand or
    damaged): readers skip it, count it and name it, so that one bad row never stops a report,
    an export or the review queue on every later run."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


_JUDGEMENT_COLUMNS = (
    Judgement.item_pk,
    Rater.name,
    Judgement.context,
    Judgement.answers,
    Judgement.reason,
    Judgement.created_at,
    Judgement.session_pk,
    Judgement.id,
)


def _current_judgements(contexts: tuple[str, ...], columns: tuple[Any, ...] = _JUDGEMENT_COLUMNS):
    newer = aliased(Judgement)
    # columns, not ORM objects: a million answers are read for a report, and building an
    # instance per row was a third of the reading
    return (
        select(*columns)
        .join(Rater, Rater.id == Judgement.rater_pk)
        .where(Rater.is_operator.is_(False), Judgement.context.in_(contexts))
        .where(~select(newer.id).where(newer.supersedes == Judgement.id).exists())
        .order_by(Judgement.id)
    )


def _rows_of(result: Any, unreadable: list[int] | None) -> Generator[JudgementRow, None, None]:
    for item_pk, name, context, answers, reason, created_at, session, jid in result:
        decoded = decode_answers(answers)
        if decoded is None:
            if unreadable is not None:
                unreadable.append(jid)
            continue
        yield JudgementRow(item_pk, name, context, decoded, reason, created_at, session, jid)


def items(db: StudyDB) -> list[ItemRow]:
    with db.read() as s:
        return [
            ItemRow(*r)
            for r in s.execute(
                select(
                    Item.id,
                    Item.item_id,
                    Item.display_code,
                    Case.case_id,
                    Cell.id,
                    Item.generator,
                    Item.slice,
                    Item.is_anchor,
                )
                .join(Cell, Item.cell_pk == Cell.id)
                .join(Case, Cell.case_pk == Case.id)
                .order_by(Item.id)
            )
        ]


def judgements(
    db: StudyDB,
    contexts: tuple[str, ...],
    rater: str | None = None,
    unreadable: list[int] | None = None,
) -> Generator[JudgementRow, None, None]:
    """Current (not superseded) judgements of non-operators, oldest first: streamed from one
    read transaction, so a million answers are never all held as rows at once (the caller
    consumes them before its next query, and closes the stream if it stops early:
    `contextlib.closing`). A row whose answers are not a JSON object is left out and its id
    added to `unreadable`."""
    with db.read() as s:
        stmt = _current_judgements(contexts)
        if rater is not None:
            stmt = stmt.where(Rater.name == rater)
        yield from _rows_of(s.execute(stmt.execution_options(yield_per=10_000)), unreadable)


def current_judgement_ids(db: StudyDB, contexts: tuple[str, ...]) -> list[int]:
    """The ids `judgements` would stream, ascending, without their content: what a live refresh
    compares with the ids it has read. By id set, not by "ids above the last one": on a server
    ids are handed out before commit, so a lower id can commit after a higher one."""
    with db.read() as s:
        return list(s.scalars(_current_judgements(contexts, (Judgement.id,))))


def judgements_by_id(
    db: StudyDB, ids: list[int], unreadable: list[int] | None = None
) -> list[JudgementRow]:
    """The given judgements (as `judgements` yields them), ascending by id."""
    out: list[JudgementRow] = []
    with db.read() as s:
        for i in range(0, len(ids), 5000):  # under every engine's bound-parameter limit
            stmt = (
                select(*_JUDGEMENT_COLUMNS)
                .join(Rater, Rater.id == Judgement.rater_pk)
                .where(Judgement.id.in_(ids[i : i + 5000]))
            )
            out.extend(_rows_of(s.execute(stmt), unreadable))
    out.sort(key=lambda j: j.id)
    return out


def judge_scores(db: StudyDB) -> list[JudgeScoreRow]:
    with db.read() as s:
        return [
            JudgeScoreRow(
                sc.item_pk,
                sc.judge,
                sc.metric,
                json.loads(sc.value),
                sc.reason,
                sc.version,
                sc.confidence,
                sc.run_pk,
            )
            for sc in s.scalars(select(JudgeScore).order_by(JudgeScore.id))
        ]


def anchor_references(db: StudyDB) -> dict[int, dict[str, Any]]:
    """Anchor pk -> reference answer. None for a rater's role on a server: no silent drift
    anchor's reference is its to read (anchors.checks_own_drift; calibration reads its set
    through the server)."""
    from .roles import is_rater_session

    with db.read() as s:
        if is_rater_session(s):
            return {}
        return {a.item_pk: json.loads(a.reference) for a in s.scalars(select(Anchor))}


def anchor_labels(db: StudyDB) -> dict[int, str]:
    """A label per anchor for a rater's own drift check (no item_id: a rater may not read it)."""
    from .roles import is_rater_session

    with db.read() as s:
        if is_rater_session(s):  # no is_anchor and no anchor pool for a rater's role
            return {}
        return {
            pk: f"anchor-{pk}" for pk in s.scalars(select(Item.id).where(Item.is_anchor.is_(True)))
        }


def pair_votes(db: StudyDB) -> list[VoteRow]:
    """Current votes of non-operator raters and of judges, oldest first."""
    with db.read() as s:
        newer = aliased(PairVote)
        votes = s.execute(
            select(PairVote, Rater.name, Rater.is_operator)
            .outerjoin(Rater, Rater.id == PairVote.rater_pk)
            .where(~select(newer.id).where(newer.supersedes == PairVote.id).exists())
            .order_by(PairVote.id)
        ).all()
        pair_ids = dict(s.execute(select(Pair.id, Pair.pair_id)).all())
        return [
            VoteRow(
                pair_ids[v.pair_pk],
                v.item_left,
                v.item_right,
                v.judge if v.judge else rname,
                bool(v.judge),
                v.choice,
                v.created_at,
            )
            for v, rname, is_op in votes
            if not is_op
        ]


def study_counts(db: StudyDB) -> dict[str, int]:
    with db.read() as s:

        def n(stmt):
            return s.scalar(stmt) or 0

        return {
            "items": n(select(func.count()).select_from(Item).where(Item.is_anchor.is_(False))),
            "anchors": n(select(func.count()).select_from(Anchor)),
            "cases": n(select(func.count()).select_from(Case)),
            "cells": n(select(func.count()).select_from(Cell)),
            "media": n(select(func.count()).select_from(Media)),
            "raters": n(select(func.count()).select_from(Rater)),
            "judgements": n(select(func.count()).select_from(Judgement)),
            "judge_scores": n(select(func.count()).select_from(JudgeScore)),
            "pair_votes": n(select(func.count()).select_from(PairVote)),
            "anchor_showings": n(select(func.count()).select_from(AnchorShowing)),
        }


@dataclass(frozen=True)
class AnswerTimes:
    """One rater's current answers (labels and pair votes) by their stored exposure time."""

    rater: str
    answers: int
    timed: int  # those that carry a time (an import may not)
    below: int  # timed below the study's minimum exposure
    at_cap: int  # timed at the one-day cap: on screen for a day or more


def answer_times(db: StudyDB, below_ms: int, cap_ms: int) -> list[AnswerTimes]:
    """Per non-operator rater, alphabetical: current answers and pair votes counted by time."""
    counts: dict[str, list[int]] = {}
    with db.read() as s:
        model: Any
        for model in (Judgement, PairVote):
            newer = aliased(model)
            t = model.time_ms
            stmt = (
                select(
                    Rater.name,
                    func.count(),
                    func.count(t),
                    func.count().filter(t < below_ms),
                    func.count().filter(t >= cap_ms),
                )
                .join(Rater, Rater.id == model.rater_pk)
                .where(Rater.is_operator.is_(False))
                .where(~select(newer.id).where(newer.supersedes == model.id).exists())
                .group_by(Rater.name)
            )
            for name, *figs in s.execute(stmt):
                acc = counts.setdefault(name, [0, 0, 0, 0])
                for i, v in enumerate(figs):
                    acc[i] += int(v or 0)
    return [AnswerTimes(name, *counts[name]) for name in sorted(counts)]
