"""The report's adjudication section as plain rows for reports/section_adjudication.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import as_dict, est_of

SIDE_TEXT = {
    "majority": "kept the raters' consensus",
    "judge": "took the judge's answer over the raters' consensus",
    "minority": "took a minority rater's answer",
    "tie_broken": "broke a tie between raters",
    "new_answer": "gave an answer nobody had given",
}


def _people(d: Any) -> list[dict[str, Any]]:
    rows = []
    for name, r in sorted(as_dict(d).items(), key=lambda kv: str(kv[0])):
        r = as_dict(r)
        rows.append(
            {
                "name": str(name),
                "accuracy": est_of(r, "accuracy"),
                "n": r.get("n_answers"),
                "n_cannot_judge": r.get("n_cannot_judge") or 0,
            }
        )
    return rows


def adjudication_view(a: Any) -> dict[str, Any] | None:
    """Rows of the adjudication section; None when nothing was adjudicated."""
    if not isinstance(a, Mapping) or not a.get("n_decisions"):
        return None
    sided = as_dict(a.get("sided_with"))
    total = sum(int(v or 0) for v in sided.values()) or 1
    feedback = [
        (
            str(f.get("label") or metric),
            int(f.get("rubric_unclear") or 0),
            int(f.get("n_decisions") or 0),
        )
        for metric, f in as_dict(a.get("rubric_feedback")).items()
        if isinstance(f, Mapping)
    ]
    return {
        "n_items": a.get("n_items"),
        "n_decisions": a.get("n_decisions"),
        "adjudicators": ", ".join(a.get("adjudicators") or []) or "—",
        "sided": [
            (SIDE_TEXT.get(k, k), int(sided.get(k) or 0), int(sided.get(k) or 0) / total)
            for k in SIDE_TEXT
            if sided.get(k)
        ],
        "raters": _people(a.get("raters")),
        "judges": _people(a.get("judges")),
        "feedback": sorted(feedback, key=lambda r: (-r[1], r[0])),
        "any_unclear": any(r[1] for r in feedback),
    }


def adjudication_section_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The section's rows from the whole report dict (its SECTIONS entry's view)."""
    return adjudication_view(report.get("adjudication"))
