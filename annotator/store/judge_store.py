"""LLM judge runs: scores and errors, recorded with the model, prompt hash and raw reply."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ..domain.answers import encode_value
from .db import StudyDB
from .imports import ensure_pair
from .items import item_pks
from .models import IMPORTED, Item, JudgeError, JudgeRun, JudgeScore
from .models_pairs import Pair, PairVote


def start_run(
    db: StudyDB,
    *,
    judge: str,
    model: str,
    prompt_sha256: str,
    schema: str,
    base_url: str | None,
    rubric_version: str,
    version: str,
    settings: dict[str, Any] | None = None,
) -> int:
    with db.write() as s:
        run = JudgeRun(
            judge=judge,
            model=model,
            kind="llm",
            prompt_sha256=prompt_sha256,
            schema=schema,
            base_url=base_url,
            rubric_version=rubric_version,
            version=version,
            settings=None if settings is None else json.dumps(settings, sort_keys=True),
        )
        s.add(run)
        s.flush()
        return run.id


def scored_item_ids(db: StudyDB, judge: str, version: str) -> set[str]:
    """Items this version of the judge has scored (another version's scores do not count)."""
    with db.read() as s:
        return set(
            s.scalars(
                select(Item.item_id)
                .join(JudgeScore, JudgeScore.item_pk == Item.id)
                .where(JudgeScore.judge == judge, JudgeScore.version == version)
            )
        )


def record_score(
    db: StudyDB,
    run_pk: int,
    *,
    item_id: str,
    judge: str,
    values: dict[str, Any],
    reason: str,
    raw: str,
    version: str,
    confidences: dict[str, float] | None = None,
) -> None:
    """All metrics of one reply in one transaction: an item is scored whole or not at all."""
    record_scores(db, run_pk, judge, version, [(item_id, values, reason, raw, confidences or {})])


def record_scores(
    db: StudyDB,
    run_pk: int,
    judge: str,
    version: str,
    scores: list[tuple[str, dict[str, Any], str, str, dict[str, float]]],
) -> None:
    """(item_id, values, reason, raw, confidences) of several items in one transaction."""
    with db.write() as s:
        pks = item_pks(s, [sc[0] for sc in scores])
        for item_id, values, reason, raw, confidences in scores:
            for metric, value in values.items():
                s.add(
                    JudgeScore(
                        run_pk=run_pk,
                        judge=judge,
                        item_pk=pks[item_id],
                        metric=metric,
                        value=encode_value(value),
                        reason=reason,
                        raw=raw,
                        version=version,
                        confidence=confidences.get(metric),
                    )
                )


def record_error(
    db: StudyDB,
    run_pk: int,
    *,
    item_id: str,
    kind: str,
    message: str,
    raw: str | None,
    attempts: int,
) -> None:
    with db.write() as s:
        pk = item_pks(s, [item_id])[item_id]
        s.add(
            JudgeError(
                run_pk=run_pk, item_pk=pk, kind=kind, message=message, raw=raw, attempts=attempts
            )
        )


def errors(db: StudyDB, judge: str | None = None) -> list[dict[str, Any]]:
    with db.read() as s:
        stmt = (
            select(JudgeError, JudgeRun.judge, Item.item_id)
            .join(JudgeRun, JudgeRun.id == JudgeError.run_pk)
            .join(Item, Item.id == JudgeError.item_pk)
            .order_by(JudgeError.id)
        )
        if judge:
            stmt = stmt.where(JudgeRun.judge == judge)
        return [
            {
                "item_id": iid,
                "judge": j,
                "kind": e.kind,
                "message": e.message,
                "raw": e.raw,
                "attempts": e.attempts,
            }
            for e, j, iid in s.execute(stmt)
        ]


def live_item_ids(db: StudyDB) -> list[str]:
    with db.read() as s:
        return list(
            s.scalars(select(Item.item_id).where(Item.is_anchor.is_(False)).order_by(Item.id))
        )


# ---- pairs ---------------------------------------------------------------------------


def pairs_to_judge(db: StudyDB) -> list[tuple[str, str, str]]:
    """(pair_id, item a, item b) of every pair of live items, by pair id."""
    with db.read() as s:
        a, b = aliased(Item), aliased(Item)
        return [
            (str(pid), str(ia), str(ib))
            for pid, ia, ib in s.execute(
                select(Pair.pair_id, a.item_id, b.item_id)
                .join(a, a.id == Pair.item_a)
                .join(b, b.id == Pair.item_b)
                .where(a.is_anchor.is_(False), b.is_anchor.is_(False))
                .order_by(Pair.id)
            )
        ]


def pair_run_versions(db: StudyDB, judge: str) -> set[str]:
    """The versions of this judge's runs on pairs (`judge run --pairs`)."""
    with db.read() as s:
        return {
            version
            for version, settings in s.execute(
                select(JudgeRun.version, JudgeRun.settings).where(JudgeRun.judge == judge)
            )
            if settings and json.loads(settings).get("task") == "pairs"
        }


def latest_pair_run_version(db: StudyDB, judge: str) -> str:
    """The version of this judge's latest run on pairs; IMPORTED when its pair votes came from a
    file (an import starts no run)."""
    with db.read() as s:
        for version, settings in s.execute(
            select(JudgeRun.version, JudgeRun.settings)
            .where(JudgeRun.judge == judge)
            .order_by(JudgeRun.id.desc())
        ):
            if settings and json.loads(settings).get("task") == "pairs":
                return str(version)
    return IMPORTED


def voted_pair_keys(db: StudyDB, judge: str) -> set[str]:
    """ "pair_id|left item id" of every order this judge has a current vote on."""
    with db.read() as s:
        left = aliased(Item)
        return {
            f"{pid}|{iid}"
            for pid, iid in s.execute(
                select(Pair.pair_id, left.item_id)
                .join(PairVote, PairVote.pair_pk == Pair.id)
                .join(left, left.id == PairVote.item_left)
                .where(PairVote.judge == judge, PairVote.supersedes.is_(None))
            )
        }


def record_pair_vote(
    db: StudyDB,
    *,
    judge: str,
    pair_id: str,
    item_left: str,
    item_right: str,
    choice: str,
    reason: str | None,
) -> None:
    record_pair_votes(db, judge, [(pair_id, item_left, item_right, choice, reason)])


def record_pair_votes(
    db: StudyDB, judge: str, votes: list[tuple[str, str, str, str, str | None]]
) -> None:
    """(pair_id, left item, right item, choice, reason) votes of a judge, in one transaction."""
    with db.write() as s:
        pks = item_pks(s, [v[1] for v in votes] + [v[2] for v in votes])
        for pair_id, left, right, choice, reason in votes:
            pair = ensure_pair(s, pair_id, pks[left], pks[right])
            s.add(
                PairVote(
                    pair_pk=pair.id,
                    judge=judge,
                    item_left=pks[left],
                    item_right=pks[right],
                    choice=choice,
                    reason=reason,
                    source="judge",
                )
            )
