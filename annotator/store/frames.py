"""Build the tidy StudyFrames from the database: current answers only,
operators removed, anchors kept apart from live items."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from ..domain.rubric import Rubric
from ..stats import frames as F
from .db import StudyDB
from .models import Anchor, AnchorShowing, Case, Cell, Item, Judgement, JudgeScore, Media, Rater
from .models_pairs import Pair, PairVote


def _typed(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _current_judgements(s, contexts: tuple[str, ...]):
    newer = aliased(Judgement)
    return (
        select(Judgement, Rater.name)
        .join(Rater, Rater.id == Judgement.rater_pk)
        .where(Rater.is_operator.is_(False), Judgement.context.in_(contexts))
        .where(~select(newer.id).where(newer.supersedes == Judgement.id).exists())
        .order_by(Judgement.id)
    )


def _anchor_answers(s, rubric: Rubric, item_ids: dict[int, str], rater: str | None = None) -> pd.DataFrame:
    """Answers on anchors with their reference; seq numbers a rater's live anchor answers in order."""
    refs = {a.item_pk: json.loads(a.reference) for a in s.scalars(select(Anchor))}
    stmt = _current_judgements(s, ("anchor", "calibration"))
    if rater is not None:
        stmt = stmt.where(Rater.name == rater)
    rows = []
    seq: dict[str, int] = {}
    for j, name in s.execute(stmt):
        ref = refs.get(j.item_pk)
        if ref is None:
            continue
        ctx = "live" if j.context == "anchor" else "calibration"
        n = None
        if ctx == "live":
            n = seq.get(name, 0)
            seq[name] = n + 1
        for key, value in json.loads(j.answers).items():
            if not rubric.has(key) or rubric.metric(key).kind not in ("gate", "scale", "choice"):
                continue
            item_id = item_ids[j.item_pk]
            rows.append((name, item_id, item_id, key, value, ref.get(key), n, j.session_pk, j.created_at, ctx))
    return pd.DataFrame(rows, columns=F.ANCHOR_COLUMNS)


def rater_anchor_frames(db: StudyDB, rubric: Rubric, rater: str, study_name: str = "") -> F.StudyFrames:
    """Only one rater's anchor answers: what the drift check at an item boundary needs."""
    with db.read() as s:
        item_ids = {pk: iid for pk, iid in s.execute(select(Item.id, Item.item_id).where(Item.is_anchor.is_(True)))}
        return F.StudyFrames(study=study_name, rubric=rubric, anchor_answers=_anchor_answers(s, rubric, item_ids, rater))


def build_frames(db: StudyDB, rubric: Rubric, study_name: str, settings: dict[str, Any]) -> F.StudyFrames:
    metric_keys = {m.key for m in rubric.metrics}
    text_keys = {m.key for m in rubric.metrics if m.kind == "text"}
    with db.read() as s:
        item_rows = s.execute(
            select(Item.id, Item.item_id, Item.display_code, Case.case_id, Cell.id, Item.generator, Item.slice, Item.is_anchor)
            .join(Cell, Item.cell_pk == Cell.id).join(Case, Cell.case_pk == Case.id)
        ).all()
        by_pk = {r[0]: r for r in item_rows}
        items = pd.DataFrame(
            [(r[1], r[2], r[3], r[4], r[5], r[6]) for r in item_rows if not r[7]], columns=F.ITEM_COLUMNS
        )
        rows = []
        session_pos: dict[int, int] = {}
        for j, rater in s.execute(_current_judgements(s, ("live",))):
            it = by_pk[j.item_pk]
            if it[7]:
                continue
            pos = None
            if j.session_pk is not None:
                pos = session_pos.get(j.session_pk, 0)
                session_pos[j.session_pk] = pos + 1
            for key, value in json.loads(j.answers).items():
                if key not in metric_keys or key in text_keys:
                    continue
                rows.append((it[1], rater, key, _typed(value), j.reason, j.created_at, j.session_pk, pos))
        judgements = pd.DataFrame(rows, columns=F.JUDGEMENT_COLUMNS)

        jrows = [
            (by_pk[sc.item_pk][1], sc.judge, sc.metric, _typed(json.loads(sc.value)), sc.reason)
            for sc in s.scalars(select(JudgeScore).order_by(JudgeScore.id))
            if not by_pk[sc.item_pk][7]
        ]
        judge_scores = pd.DataFrame(jrows, columns=F.JUDGE_COLUMNS)

        anchor_answers = _anchor_answers(s, rubric, {pk: r[1] for pk, r in by_pk.items()})

        newer = aliased(PairVote)
        votes = s.execute(
            select(PairVote, Rater.name, Rater.is_operator)
            .outerjoin(Rater, Rater.id == PairVote.rater_pk)
            .where(~select(newer.id).where(newer.supersedes == PairVote.id).exists())
            .order_by(PairVote.id)
        ).all()
        pair_ids = dict(s.execute(select(Pair.id, Pair.pair_id)).all())
        human, judge = [], []
        for v, rname, is_op in votes:
            if is_op:
                continue
            left, right = by_pk[v.item_left], by_pk[v.item_right]
            row = (pair_ids[v.pair_pk], left[3], left[1], right[1],
                   left[5], right[5], v.judge if v.judge else rname, v.choice, v.created_at)
            (judge if v.judge else human).append(row)
        pair_votes = pd.DataFrame(human, columns=F.PAIR_COLUMNS)
        judge_pair_votes = pd.DataFrame(judge, columns=F.PAIR_COLUMNS)
    return F.StudyFrames(
        study=study_name, rubric=rubric, items=items, judgements=judgements, judge_scores=judge_scores,
        pair_votes=pair_votes, judge_pair_votes=judge_pair_votes, anchor_answers=anchor_answers,
        settings=dict(settings),
    )


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
