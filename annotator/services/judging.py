"""`annotator judge run`: score a study's items with an LLM judge, resumably."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..judge.prompt import prompt_hash
from ..judge.runner import JudgeConfig, JudgeRequest, RunSummary, run_judge

__all__ = ["JudgeConfig", "RunSummary", "judge_study", "judge_study_at"]
from ..judge.schema import judge_schema
from ..store import judge_store
from ..store.items import views_by_item_id
from .study import Study


class _StudyRequests(Sequence):
    """Requests built on demand, so only the items in flight hold their images."""

    def __init__(self, study: Study, item_ids: list[str]) -> None:
        self.study, self.item_ids = study, item_ids

    def __len__(self) -> int:
        return len(self.item_ids)

    def __getitem__(self, i: int) -> JudgeRequest:  # type: ignore[override]
        item_id = self.item_ids[i]
        view = views_by_item_id(self.study.db, [item_id])[item_id]
        read = self.study.media.read
        try:
            outputs, inputs = [read(m) for m in view.outputs], [read(m) for m in view.inputs]
            mask = read(view.mask) if view.mask else None
        except OSError as exc:
            # a media file went missing: this item fails as bad input, the run goes on
            return JudgeRequest(
                item_id=item_id,
                prompt=view.prompt,
                criteria=view.criteria,
                problem=f"an image of this item cannot be read ({exc.strerror or exc}); "
                "re-import the item's images",
            )
        # the judge is blind too: prompt, criteria and pixels only
        return JudgeRequest(
            item_id=item_id,
            prompt=view.prompt,
            criteria=view.criteria,
            output_images=outputs,
            input_images=inputs,
            mask=mask,
            text=view.text,
        )


class StudySink:
    """The runner's JudgeSink on the study database: every reply committed as it arrives."""

    def __init__(self, study: Study, run_pk: int, judge: str) -> None:
        self.study, self.run_pk, self.judge = study, run_pk, judge

    def done_item_ids(self) -> set[str]:
        return judge_store.scored_item_ids(self.study.db, self.judge)

    def record_score(self, score: Any) -> None:
        judge_store.record_score(
            self.study.db,
            self.run_pk,
            item_id=score.item_id,
            judge=score.judge,
            values=score.values,
            reason=score.reason,
            raw=score.raw,
        )

    def record_error(self, error: Any) -> None:
        judge_store.record_error(
            self.study.db,
            self.run_pk,
            item_id=error.item_id,
            kind=error.kind,
            message=error.message,
            raw=error.raw,
            attempts=error.attempts,
        )


def judge_study(study: Study, config: JudgeConfig, *, progress=None, cancel=None) -> RunSummary:
    study.require_lead("running the judge")
    judge = config.judge_name or config.model
    rubric = study.rubric
    schema = judge_schema(rubric)
    run_pk = judge_store.start_run(
        study.db,
        judge=judge,
        model=config.model,
        prompt_sha256=prompt_hash(rubric),
        schema=json.dumps(schema, sort_keys=True),
        base_url=config.base_url,
        rubric_version=rubric.version,
    )
    requests = _StudyRequests(study, judge_store.live_item_ids(study.db))
    return run_judge(
        requests, rubric, config, StudySink(study, run_pk, judge), progress=progress, cancel=cancel
    )


def judge_study_at(study_path: str, config: JudgeConfig, *, progress=None) -> RunSummary:
    study = Study.open(study_path)
    try:
        return judge_study(study, config, progress=progress)
    finally:
        study.close()
