"""A rater's answers to one item: completeness and normalisation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import InputError
from .kinds import CANNOT_JUDGE
from .rubric import Rubric, validate_answer
from .text import MAX_TEXT


def encode(answers: Mapping[str, Any]) -> str:
    """The one stored form of an answer object (every write path: app, import, merge): JSON with
    sorted keys, a tag set as a list. Equal answers are equal text, which is how an unchanged
    re-import is recognised."""
    return json.dumps({k: _plain(v) for k, v in answers.items()}, sort_keys=True)


def encode_value(value: Any) -> str:
    """The stored form of one metric's value (a judge score, an adjudication), as in `encode`."""
    return json.dumps(_plain(value))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


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
            _check_size(m.key, out[m.key])
    return out


def _check_size(key: str, value: Any, field: str | None = None) -> None:
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise InputError(
            f"the answer to '{key}' is {len(value)} characters long; at most {MAX_TEXT}",
            field=field or key,
        )


def check_stored(rubric: Rubric, answers: Any) -> dict[str, Any]:
    """An answer object as stored (decoded JSON) that came from outside the app (a package):
    every key a metric of the rubric, every value in the form the app stores for it (on the
    scale, among the options, PASS/FAIL, within the text cap). Completeness is not asked: an
    imported rating may leave metrics out. Raises InputError naming the metric."""
    if not isinstance(answers, dict):
        raise InputError("is not a JSON object of metric: value", field="answers")
    for key, raw in answers.items():
        if not rubric.has(key):
            raise InputError(f"unknown metric '{str(key)[:40]}'", field="answers")
        m = rubric.metric(key)
        _check_size(key, raw, f"answers.{key}")
        if m.spec.multi and raw == CANNOT_JUDGE:
            continue  # an imported "cannot judge" of tags (kinds.TagsKind)
        try:
            value = validate_answer(m, m.spec.from_json(raw))
        except InputError as exc:
            raise InputError(exc.message, field=f"answers.{key}") from None
        except (TypeError, ValueError):
            value = None
        if value is None and raw is None:
            continue
        if json.dumps(m.spec.to_json(value)) != json.dumps(raw):  # 4.0 is not the scale's 4
            shown = repr(raw) if len(repr(raw)) <= 40 else repr(raw)[:40] + "..."
            raise InputError(
                f"{shown} is not an answer the app stores for {m.kind} '{key}'",
                field=f"answers.{key}",
            )
    return answers


def reason_of(rubric: Rubric, answers: dict[str, Any]) -> str | None:
    for m in rubric.metrics:
        if not m.judgeable and (answers.get(m.key) or "").strip():
            return answers[m.key].strip()
    return None
