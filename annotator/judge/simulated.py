"""Simulated annotators: a confidence for a judge that gives none (Jung, Brahman & Choi, "Trust or
Escalate", ICLR 2025, section 3.1).

Each item is asked N times, once per simulated annotator; annotator j sees K worked examples
before the item: items a human rater answered, with that rater's answers (so the annotators
differ as the raters do). The stored answer is the majority of the N answers, per metric; its
confidence is the share of the annotators that gave it. The authors average the annotators'
token probabilities where the API gives them; the share of votes is the same recipe with each
annotator's answer as its probability, and needs nothing but the answers. An item that is one of
an annotator's examples is asked without that example (its own human answer never reaches the
judge's answer on it), and an annotator whose call fails is left out; fewer than a majority of
answers is an error, retried by the next run as any other.

Cost: N calls per item (the examples' images and text ride along in every call).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import openai

from ..base.task import TaskState
from ..domain.rubric import Rubric
from .prompt import Part, system_prompt, task_hash, user_parts
from .records import (
    FewShot,
    JudgeConfig,
    JudgeError,
    JudgeRequest,
    JudgeScore,
    JudgeSink,
    RunSummary,
    _Answer,
    _Cancelled,
    _Task,
)
from .runner import answer_or_error, drive, item_task

EXAMPLES_TEXT = (
    "Before the output to judge you see worked examples: other outputs judged under this rubric "
    "and how one expert rater answered them. Answer the output to judge as that rater would, by "
    "the rubric."
)


def examples_hash(panels: list[list[FewShot]]) -> str:
    """What the examples add to the judge's version: which items, answered how, in which order."""
    text = json.dumps(
        [[[ex.request.item_id, _answers_json(ex.answers)] for ex in panel] for panel in panels],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _answers_json(answers: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in answers.items()}


def annotator_parts(examples: list[FewShot], request: JudgeRequest) -> list[Part]:
    """One simulated annotator's message: its examples (never the item itself), then the item."""
    parts: list[Part] = []
    shown = [ex for ex in examples if ex.request.item_id != request.item_id]
    for n, ex in enumerate(shown, 1):
        parts.append(("text", f"Worked example {n} of {len(shown)}:"))
        parts.extend(user_parts(ex.request))
        answer = json.dumps(_answers_json(ex.answers), ensure_ascii=False, sort_keys=True)
        parts.append(("text", f"The expert rater's answers to example {n}: {answer}"))
    parts.append(("text", "Now the output to judge:"))
    parts.extend(user_parts(request))
    return parts


def simulated_item_task(
    rubric: Rubric, config: JudgeConfig, state: TaskState | None = None
) -> _Task:
    """The item task with the examples' instruction added to the system prompt (its own hash)."""
    base = item_task(rubric, config, state)
    system = system_prompt(rubric, False) + "\n\n" + EXAMPLES_TEXT
    return dataclasses.replace(base, system=system, prompt_hash=task_hash(system, base.schema_text))


def majority(values: list[Any]) -> tuple[Any, float]:
    """The most common value (a tie goes to the one the earliest annotator gave) and its share."""
    counts = Counter(values)
    value, n = counts.most_common(1)[0]  # most_common keeps first-seen order among equal counts
    return value, n / len(values)


def judge_panel(
    client: openai.OpenAI, task: _Task, request: JudgeRequest, panels: list[list[FewShot]]
) -> JudgeScore | JudgeError | _Cancelled:
    """Ask every simulated annotator about one item and combine their answers."""
    cfg = task.config
    answers: list[_Answer] = []
    failed: list[JudgeError] = []
    attempts = 0
    for shots in panels:
        got = answer_or_error(
            client,
            task,
            request.item_id,
            request.problem,
            functools.partial(annotator_parts, shots, request),
        )
        attempts += got.attempts
        if isinstance(got, _Cancelled):
            return _Cancelled(attempts)
        if isinstance(got, JudgeError):
            failed.append(got)
        else:
            answers.append(got)
    need = len(panels) // 2 + 1
    if len(answers) < need:
        first = failed[0]
        return JudgeError(
            request.item_id,
            cfg.name,
            cfg.model,
            first.kind,
            f"{len(answers)} of {len(panels)} simulated annotators answered ({need} needed): "
            f"{first.message}",
            first.raw,
            attempts,
        )
    values: dict[str, Any] = {}
    confidences: dict[str, float] = {}
    for key in task.keys:
        values[key], confidences[key] = majority([a.reply.values.get(key) for a in answers])
    verdict, _ = majority([a.reply.verdict for a in answers])
    # the reason of the first annotator whose answers are the majority's, else the first's
    agreeing = [a for a in answers if all(a.reply.values.get(k) == values[k] for k in task.keys)]
    reason = (agreeing or answers)[0].reply.reason
    return JudgeScore(
        item_id=request.item_id,
        judge=cfg.name,
        model=cfg.model,
        values=values,
        verdict=verdict,
        reason=reason,
        raw=json.dumps([a.raw for a in answers], ensure_ascii=False),
        prompt_hash=task.prompt_hash,
        schema=task.schema_text,
        latency_ms=round(sum(a.latency_ms for a in answers), 3),
        attempts=attempts,
        rule_verdict=task.rules.evaluate(values),
        confidences=confidences,
    )


def run_simulated(
    requests: Iterable[JudgeRequest],
    rubric: Rubric,
    config: JudgeConfig,
    sink: JudgeSink,
    panels: list[list[FewShot]],
    *,
    task: TaskState | None = None,
) -> RunSummary:
    """`run_judge` with simulated annotators: every request the sink has no score for is asked
    once per panel (the runner's retries, concurrency and resumption as for one call)."""
    if len(panels) != config.simulated_annotators:
        raise ValueError("one panel of examples per simulated annotator")
    return drive(
        requests,
        simulated_item_task(rubric, config, task),
        lambda client, t, req: judge_panel(client, t, req, panels),
        key=lambda r: r.item_id,
        done=set(sink.done_item_ids()),
        record_score=sink.record_score,
        record_error=sink.record_error,
    )


__all__ = [
    "EXAMPLES_TEXT",
    "annotator_parts",
    "examples_hash",
    "judge_panel",
    "majority",
    "run_simulated",
    "simulated_item_task",
]
