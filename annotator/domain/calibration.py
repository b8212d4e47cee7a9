"""Calibration: feedback against an anchor's reference and the qualify verdict.

Defaults (configurable per study): gates exact on >= 90% of anchors, scales
within one point on >= 80%, choices exact on >= 90%.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .rubric import Metric, Rubric
from .settings import DEFAULT_SETTINGS

DEFAULT_RULES: dict[str, float] = dict(DEFAULT_SETTINGS["qualification"])


def matches(metric: Metric, answer: Any, reference: Any) -> bool | None:
    """Does an answer meet the reference? None when it cannot be scored (the anchor rule
    of domain/kinds.py: "cannot judge" against a reference is not met)."""
    m = metric.spec.anchor_match(metric, answer, reference)
    return None if m is None else m.met


@dataclass(frozen=True)
class MetricFeedback:
    key: str
    label: str
    answer: Any
    reference: Any
    rationale: str
    match: bool | None


def feedback(
    rubric: Rubric, answers: dict[str, Any], reference: dict[str, Any], rationale: dict[str, str]
) -> list[MetricFeedback]:
    out = []
    for m in rubric.metrics:
        if not m.judgeable or m.key not in reference:
            continue
        out.append(
            MetricFeedback(
                m.key,
                m.label,
                answers.get(m.key),
                reference[m.key],
                rationale.get(m.key, ""),
                matches(m, answers.get(m.key), reference[m.key]),
            )
        )
    return out


def qualify(
    rubric: Rubric, results: list[list[MetricFeedback]], rules: dict[str, float] | None = None
) -> dict[str, Any]:
    """Per-metric share of anchors met against its threshold, and the overall verdict."""
    rules = {**DEFAULT_RULES, **(rules or {})}
    per: dict[str, Any] = {}
    for m in rubric.metrics:
        if not (m.judgeable and m.accepts_cannot_judge):  # tags are feedback only
            continue
        scored = [f.match for fb in results for f in fb if f.key == m.key and f.match is not None]
        threshold = rules[m.spec.qualification_rule]
        share = sum(scored) / len(scored) if scored else None
        per[m.key] = {
            "n": len(scored),
            "met": sum(scored),
            "share": share,
            "threshold": threshold,
            "rule": m.spec.match_rule,
            "passed": share is not None and share >= threshold,
        }
    qualified = bool(per) and all(v["passed"] for v in per.values())
    return {
        "metrics": per,
        "qualified": qualified,
        "verdict": "qualified" if qualified else "not yet",
    }
