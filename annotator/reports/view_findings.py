"""View rows of the findings section (reports/section_findings.py): each finding with every
human's answer beside their reason, whichever shape the report gives them in; the systematic
findings; each judge's finding rate beside a held-out human's. Keys a finding has that the rows
do not know are passed on as "other" label/value pairs, so nothing the report model adds is
silently dropped.
Tested in tests/unit/test_report_sections.py and tests/unit/test_reports_render.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import as_dict, fmt_any, fmt_num, fmt_share, kv_rows
from .view_summary import metric_labels

# a finding's named fields, in the order findings.csv (contract) puts them first; the rest of a
# finding is shown as "other" in the report and follows them in the CSV
FINDING_FIELDS = (
    "item_id",
    "display_code",
    "case_id",
    "generator",
    "metric",
    "kind",
    "judge_name",
    "humans",
    "judge",
    "human_answers",
    "human_reasons",
    "judge_value",
    "judge_reason",
)


def _answers(f: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each human's answer beside their reason, whichever shape the finding uses."""
    answers, reasons = f.get("human_answers"), f.get("human_reasons")
    rows: list[dict[str, str]] = []
    if isinstance(answers, Mapping):
        reasons_map = as_dict(reasons)
        for rater, a in answers.items():
            rows.append(
                {
                    "who": str(rater),
                    "answer": fmt_any(a),
                    "reason": str(reasons_map.get(rater) or ""),
                }
            )
        for rater, r in reasons_map.items():
            if rater not in answers and r:
                rows.append({"who": str(rater), "answer": "", "reason": str(r)})
        return rows
    if isinstance(answers, (list, tuple)):
        rlist = list(reasons) if isinstance(reasons, (list, tuple)) else []
        for i, a in enumerate(answers):
            if isinstance(a, Mapping):
                who = a.get("rater") or a.get("who") or ""
                rows.append(
                    {
                        "who": str(who),
                        "answer": fmt_any(a.get("value", a.get("answer"))),
                        "reason": str(
                            a.get("reason") or (rlist[i] if i < len(rlist) else "") or ""
                        ),
                    }
                )
            else:
                rows.append(
                    {
                        "who": "",
                        "answer": fmt_any(a),
                        "reason": str(rlist[i] or "") if i < len(rlist) else "",
                    }
                )
        return rows
    if isinstance(reasons, Mapping):
        return [{"who": str(k), "answer": "", "reason": str(v or "")} for k, v in reasons.items()]
    if isinstance(reasons, (list, tuple)):
        return [{"who": "", "answer": "", "reason": str(r or "")} for r in reasons if r]
    return rows


def thumb_for(f: Mapping[str, Any], thumbs: Mapping[str, str]) -> str | None:
    """A finding's picture among `thumbs` (by item id, else by display code)."""
    for key in (f.get("item_id"), f.get("display_code")):
        if key is not None and str(key) in thumbs:
            return thumbs[str(key)]
    return None


def finding_view(f: Any, labels: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """One finding's rows (its picture is looked up by `thumb_for` where there are pictures);
    its metric by the label the reader knows it by (`labels`: key -> label)."""
    if not isinstance(f, Mapping):
        return {"title": str(f), "other": []} if f is not None else None
    judge_value = f.get("judge_value", f.get("judge"))
    return {
        "title": str(f.get("display_code") or f.get("item_id") or "item"),
        "item_id": f.get("item_id"),
        "display_code": f.get("display_code"),
        "case_id": f.get("case_id"),
        "generator": f.get("generator"),
        "metric": _label(f.get("metric"), labels),
        "kind": str(f["kind"]).replace("_", " ") if f.get("kind") else None,
        "humans": fmt_any(f.get("humans")) if "humans" in f else None,
        "answers": _answers(f),
        "judge_name": f.get("judge_name"),
        "judge_value": fmt_any(judge_value) if judge_value is not None or "judge" in f else None,
        "judge_reason": f.get("judge_reason"),
        "other": kv_rows(f, skip=FINDING_FIELDS),
    }


def _rate_text(rate: Any, ci: Any) -> str:
    """A rate as a share, with its interval where it has one: '12% [8%, 17%]'."""
    ci = as_dict(ci)
    text = fmt_share(rate)
    if ci.get("low") is not None:
        text += f" [{fmt_share(ci.get('low'))}, {fmt_share(ci.get('high'))}]"
    return text


def _label(key: Any, labels: Mapping[str, str] | None) -> Any:
    return (labels or {}).get(str(key), key) if key is not None else None


def baseline_view(b: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One row of `item_findings_baseline`: a judge's finding rate beside a held-out human's."""
    return {
        "metric": str(_label(b.get("metric"), labels) or ""),
        "judge": str(b.get("judge_name") or ""),
        "n_findings": fmt_num(b.get("n_findings")),
        "judge_rate": _rate_text(b.get("judge_rate"), b.get("judge_rate_ci")),
        "human_rate": _rate_text(b.get("held_out_human_rate"), b.get("held_out_human_rate_ci")),
        "n_comparisons": fmt_num(b.get("n_comparisons")),
        "excess": bool(b.get("excess")),
    }


def findings_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The findings section's rows: every finding in the report's order, the systematic ones and
    the judges' finding rates beside a held-out human's; whether any judge scored (what "no
    findings" means); None for a report without the `findings` key."""
    if "findings" not in report:
        return None
    judges = [
        as_dict(as_dict(m).get("judges"))
        for m in (*as_dict(report.get("metrics")).values(), report.get("verdict"))
    ]
    labels = metric_labels(report)
    return {
        "rows": [v for v in (finding_view(f, labels) for f in report.get("findings") or []) if v],
        "systematic": [systematic_view(f) for f in report.get("systematic_findings") or []],
        "baseline": [
            baseline_view(b, labels)
            for b in report.get("item_findings_baseline") or []
            if isinstance(b, Mapping)
        ],
        "judged": any(judges),
        # a judge on its own scale cannot contradict a consensus (no finding says so)
        "off_scale": any(
            isinstance(j, Mapping) and j.get("same_scale") is False
            for js in judges
            for j in js.values()
        ),
    }


def systematic_view(f: Any) -> dict[str, Any]:
    if not isinstance(f, Mapping):
        return {"title": str(f), "rows": []}
    title = f.get("summary") or f.get("description")
    skip: tuple[str, ...] = ("summary", "description")
    if not title and f.get("kind") and f.get("metric"):
        who = f.get("judge_name") or f.get("judge") or "the judge"
        kind = str(f["kind"])
        phrase = {
            "judge_tags_more_often": "tags more often than the humans",
            "judge_tags_less_often": "tags less often than the humans",
        }.get(kind)
        title = (
            f"{who} {phrase} on {f['metric']}"
            if phrase
            else f"{who} is {kind.replace('_', ' ')} on {f['metric']}"
        )
        skip += ("kind", "metric", "judge_name", "judge")
    return {"title": str(title or f.get("kind") or "finding"), "rows": kv_rows(f, skip=skip)}
