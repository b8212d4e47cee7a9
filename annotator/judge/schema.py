"""Rubric -> the strict JSON schema a judge must answer in, and the check of a reply.

The schema is the subset OpenAI's structured outputs accept in strict mode: one
object, every property required, `additionalProperties: false`, enums for gates,
choices and tags, integer bounds for scales. Each metric's property, the check of its
value in a reply and the line of the instructions about it are its kind's
(`KindSpec.reply_schema`, `reply_value`, `reply_how` in domain/kinds.py); this module
assembles them. The reply is checked against what the schema says, because a server may
ignore `response_format` (many local servers do) and a reply is never trusted to follow it.

The schema has two texts on purpose: `schema_json` (compact, stored with each score and hashed
into the prompt hash) and `version_schema_text` (what a run stores and its version hashes,
frozen by the runs already stored); a test binds the two to the same schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..domain.errors import InputError
from ..domain.kinds import BadReply, json_type_name
from ..domain.rubric import FAIL, PASS, Metric, Rubric

VERDICT_FIELD = "verdict"
REASON_FIELD = "reason"
CONFIDENCE_FIELD = "confidence"  # only in the schema of a judge asked for its confidence
# A judged metric must not shadow the fields a reply carries; a text
# metric called "reason" is fine: the judge's reason is its answer.
_RESERVED = (VERDICT_FIELD, REASON_FIELD, CONFIDENCE_FIELD)
_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n(.*?)\n?```$", re.DOTALL)


class ReplyError(ValueError):
    """A judge reply that cannot be a score; `kind` is malformed_json or schema_violation."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class JudgeReply:
    """A reply that passed validation, with values typed as `domain.rubric.parse_value`."""

    values: dict[str, Any]
    verdict: str
    reason: str
    confidences: dict[str, float] = field(default_factory=dict)  # only with a confidence field


def schema_metrics(rubric: Rubric) -> tuple[Metric, ...]:
    """The metrics a judge answers: every gate, scale, choice and tags metric."""
    metrics = rubric.judged_metrics
    for m in metrics:
        if m.key in _RESERVED:
            raise InputError(
                f"metric '{m.key}' clashes with the judge's own '{m.key}' field; rename the metric",
                source=rubric.source or rubric.id,
                field=m.key,
            )
    return metrics


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _describe(m: Metric) -> str:
    parts = [_sentence(m.label)]
    if m.help:
        parts.append(_sentence(m.help))
    if m.levels:
        levels = " | ".join(f"{k} = {v}" for k, v in sorted(m.levels.items(), reverse=True))
        parts.append(f"Levels: {levels}")
    return " ".join(parts)


def _metric_schema(m: Metric) -> dict[str, Any]:
    """The metric's property: its kind's part of the schema (KindSpec.reply_schema)."""
    return m.spec.reply_schema(m, _describe(m))


def judge_schema(rubric: Rubric, confidence: bool = False) -> dict[str, Any]:
    """The strict JSON schema of one judge reply under `rubric`.

    `reason` comes first: the model writes properties in schema order, so it
    states its evidence before committing to scores rather than justifying them
    afterwards. With `confidence`, a last `confidence` object asks for the
    probability (0 to 1) that each answer is right: stated after the answers,
    about them.
    """
    props: dict[str, Any] = {
        REASON_FIELD: {
            "type": "string",
            "description": "The decisive evidence for the answers, in one to three sentences",
        }
    }
    for m in schema_metrics(rubric):
        props[m.key] = _metric_schema(m)
    props[VERDICT_FIELD] = {
        "type": "string",
        "enum": [PASS, FAIL],
        "description": "Overall verdict under the rubric's verdict rules",
    }
    if confidence:
        keys = [m.key for m in schema_metrics(rubric)]
        props[CONFIDENCE_FIELD] = {
            **strict_object(
                {
                    k: {
                        "type": "number",
                        "description": f"Probability from 0 to 1 that your answer to {k} is right",
                    }
                    for k in keys
                }
            ),
            "description": "How sure you are of each answer, as a probability from 0 to 1",
        }
    return strict_object(props)


def strict_object(props: dict[str, Any]) -> dict[str, Any]:
    """A JSON object of exactly these properties, each required (strict structured outputs)."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def exact_fields(data: dict[str, Any], expected: list[str], where: str = "") -> None:
    """ReplyError unless `data` has exactly the `expected` fields: it names the first missing one
    (in their order), else the first unexpected one (alphabetically); `where` the object."""
    missing = [k for k in expected if k not in data]
    if missing:
        what = f"{where}: missing '{missing[0]}'" if where else f"missing field '{missing[0]}'"
        raise ReplyError("schema_violation", what)
    extra = sorted(set(data) - set(expected))
    if extra:
        what = f"{where}: unexpected '{extra[0]}'" if where else f"unexpected field '{extra[0]}'"
        raise ReplyError("schema_violation", what)


def schema_name(rubric: Rubric) -> str:
    """The `name` of the response format: [a-zA-Z0-9_-], at most 64 characters."""
    return f"{rubric.id}_judgement"[:64]


def canonical_json(schema: dict[str, Any]) -> str:
    """The canonical text of a schema (items' or pairs'): stored with each answer and hashed into
    the prompt hash."""
    return json.dumps(schema, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def schema_json(rubric: Rubric, confidence: bool = False) -> str:
    """Canonical text of the schema, stored with every score and hashed into prompt_hash."""
    return canonical_json(judge_schema(rubric, confidence))


def version_schema_text(rubric: Rubric, confidence: bool = False) -> str:
    """The schema as a run stores it and its version hashes it (judge/versions.py): a second
    text of the same schema that must stay, since the versions of runs already stored (and
    migration 0007, which versions runs from before versions existed) were hashed from exactly
    this text; another would make every stored run a new version. A test binds it to schema_json
    and to the runs it stored (test_judge_versions.py)."""
    return json.dumps(judge_schema(rubric, confidence), sort_keys=True)


def _check_metric(m: Metric, v: Any) -> Any:
    """The reply's value of one metric, checked by its kind (KindSpec.reply_value)."""
    try:
        return m.spec.reply_value(m, v)
    except BadReply as exc:
        raise ReplyError("schema_violation", f"field '{m.key}': {exc}") from None


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in `text`; tolerates only surrounding whitespace and one ``` fence.

    The fence is tolerated because servers that ignore `response_format` wrap
    JSON in markdown; anything else (prose around it, two objects) is malformed.
    """
    s = text.strip()
    fenced = _FENCE.match(s)
    if fenced:
        s = fenced.group(1).strip()
    if not s:
        raise ReplyError("malformed_json", "the reply is empty")
    try:
        data = json.loads(s)
    except json.JSONDecodeError as exc:
        raise ReplyError("malformed_json", f"not valid JSON ({exc})") from None
    except RecursionError:
        raise ReplyError("malformed_json", "JSON nested too deep to read") from None
    if not isinstance(data, dict):
        raise ReplyError("malformed_json", f"expected a JSON object, got {json_type_name(data)}")
    return data


def _confidences(metrics: tuple[Metric, ...], data: Any) -> dict[str, float]:
    where = f"field '{CONFIDENCE_FIELD}'"
    if not isinstance(data, dict):
        raise ReplyError(
            "schema_violation", f"{where}: expected an object, got {json_type_name(data)}"
        )
    keys = [m.key for m in metrics]
    exact_fields(data, keys, where)
    out = {}
    for k in keys:
        v = data[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            shown = json.dumps(v, ensure_ascii=False)
            raise ReplyError("schema_violation", f"{where}: '{k}' is {shown}, not a number 0..1")
        out[k] = float(v)
    return out


def validate_reply(rubric: Rubric, text: str, confidence: bool = False) -> JudgeReply:
    """Check a reply against `judge_schema(rubric, confidence)`; raises ReplyError naming the
    field at fault."""
    data = parse_json_reply(text)
    metrics = schema_metrics(rubric)
    expected = [REASON_FIELD, *(m.key for m in metrics), VERDICT_FIELD]
    if confidence:
        expected.append(CONFIDENCE_FIELD)
    exact_fields(data, expected)
    values = {m.key: _check_metric(m, data[m.key]) for m in metrics}
    verdict = data[VERDICT_FIELD]
    if verdict not in (PASS, FAIL):
        shown = json.dumps(verdict, ensure_ascii=False)
        raise ReplyError("schema_violation", f"field 'verdict': {shown} is not PASS or FAIL")
    reason = data[REASON_FIELD]
    if not isinstance(reason, str):
        raise ReplyError(
            "schema_violation", f"field 'reason': expected a string, got {json_type_name(reason)}"
        )
    confidences = _confidences(metrics, data[CONFIDENCE_FIELD]) if confidence else {}
    return JudgeReply(values=values, verdict=verdict, reason=reason, confidences=confidences)
