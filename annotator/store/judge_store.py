"""LLM judge runs: scores and errors, recorded with the model, prompt hash and raw reply."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from .db import StudyDB
from .items import item_pks
from .models import Item, JudgeError, JudgeRun, JudgeScore


def start_run(
    db: StudyDB,
    *,
    judge: str,
    model: str,
    prompt_sha256: str,
    schema: str,
    base_url: str | None,
    rubric_version: str,
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
        )
        s.add(run)
        s.flush()
        return run.id


def scored_item_ids(db: StudyDB, judge: str) -> set[str]:
    with db.read() as s:
        return set(
            s.scalars(
                select(Item.item_id)
                .join(JudgeScore, JudgeScore.item_pk == Item.id)
                .where(JudgeScore.judge == judge)
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
) -> None:
    """All metrics of one reply in one transaction: an item is scored whole or not at all."""
    with db.write() as s:
        pk = item_pks(s, [item_id])[item_id]
        for metric, value in values.items():
            v = list(value) if isinstance(value, tuple) else value
            s.add(
                JudgeScore(
                    run_pk=run_pk,
                    judge=judge,
                    item_pk=pk,
                    metric=metric,
                    value=json.dumps(v),
                    reason=reason,
                    raw=raw,
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
