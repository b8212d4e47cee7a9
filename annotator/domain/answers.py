"""A rater's answers to one item: completeness and normalisation."""

from __future__ import annotations

from typing import Any

from .errors import InputError
from .rubric import Rubric, validate_answer


def missing_metrics(rubric: Rubric, answers: dict[str, Any]) -> list[str]:
    """Required metrics still unanswered (tags may be empty, text is optional unless required)."""
    return [
        m.key
        for m in rubric.metrics
        if m.required and not m.spec.is_answered(m, answers.get(m.key))
    ]


def normalise(rubric: Rubric, answers: dict[str, Any]) -> dict[str, Any]:
    """Validated, JSON-ready answers; raises InputError naming the metric at fault."""
    unknown = sorted(set(answers) - {m.key for m in rubric.metrics})
    if unknown:
        raise InputError(f"unknown metric '{unknown[0]}'", field=unknown[0])
    missing = missing_metrics(rubric, answers)
    if missing:
        raise InputError(f"metric '{missing[0]}' has no answer", field=missing[0])
    out: dict[str, Any] = {}
    for m in rubric.metrics:
        v = answers.get(m.key)
        if m.spec.multi or v is not None:
            out[m.key] = m.spec.to_json(validate_answer(m, v))
    return out


def reason_of(rubric: Rubric, answers: dict[str, Any]) -> str | None:
    for m in rubric.metrics:
        if not m.judgeable and (answers.get(m.key) or "").strip():
            return answers[m.key].strip()
    return None
