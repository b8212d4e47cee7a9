"""The findings section, for the dashboard, the HTML report and the CSV tables: the systematic
findings (patterns across items) as a list, each judge's finding rate beside a held-out human's,
then every finding as a card (the item's picture, its case, generator and id, each human's answer
with the reason beside it, the pooled answer and the judge's), in the report's order, laid out
from the rows of reports/view_metrics.findings_view. The findings and the systematic findings
are `findings.csv` and `systematic_findings.csv` of the contract (csv_report.py): a card or a
list writes no CSV; the rates table is `findings_baseline.csv`.
Tested in tests/unit/test_report_sections.py, tests/unit/test_reports_render.py and
tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sections import Answer, Block, Bullets, ItemCard, Note, Section, Table
from .view_findings import thumb_for

KEY = "findings"
TITLE = "Findings"
LEAD = (
    "Every item where a judge and the humans (or the humans among themselves) disagreed, in the "
    "order the report lists them."
)
BASELINE_HEADERS = (
    "metric",
    "judge",
    "findings",
    "judge's rate",
    "a held-out human's rate",
    "comparisons",
)
BASELINE_NOTE = (
    "Each human in turn is left out and compared with the clear consensus of the others; the "
    'judge is compared with the same remaining humans. "above": the judge\'s rate is higher by '
    "a one-sided test (items as clusters, p < 0.05), not by any margin; those rows' findings are "
    "listed first."
)


def _subtitle(n: int) -> str:
    return f"{LEAD} {n} finding{'' if n == 1 else 's'}."


def _systematic_blocks(rows: list[Mapping[str, Any]]) -> list[Block]:
    if not rows:
        return []
    items = tuple(
        str(s["title"])
        + (" — " + " · ".join(f"{k}: {val}" for k, val in s["rows"]) if s.get("rows") else "")
        for s in rows
    )
    return [Note("Systematic findings: patterns across items", "heading"), Bullets(items)]


def _baseline_blocks(rows: list[Mapping[str, Any]]) -> list[Block]:
    if not rows:
        return []
    table = Table(
        "findingsBaselineTable",
        BASELINE_HEADERS,
        tuple(
            (
                b["metric"],
                # "above" in words: the row's tint and mark say it to the eye
                f"{b['judge']} (above)" if b["excess"] else b["judge"],
                b["n_findings"],
                b["judge_rate"],
                b["human_rate"],
                b["n_comparisons"],
            )
            for b in rows
        ),
        frozenset(i for i, b in enumerate(rows) if b["excess"]),
        frozenset({2, 3, 4, 5}),
    )
    return [
        Note("Findings beside a held-out human: the same rule, the same items", "heading"),
        table,
        Note(BASELINE_NOTE, "aside"),
    ]


def _where(f: Mapping[str, Any]) -> str:
    """The finding's case, generator and item id (its title is the item's display code)."""
    parts = []
    if f.get("case_id"):
        parts.append(f"case {f['case_id']}")
    if f.get("generator"):
        parts.append(f"generator {f['generator']}")
    if f.get("item_id") and f["item_id"] != f["title"]:
        parts.append(f"item `{f['item_id']}`")
    return " · ".join(parts)


def _answers(f: Mapping[str, Any]) -> tuple[Answer, ...]:
    """Each human's answer with their reason, then the humans' pooled answer, then the judge's."""
    out = [Answer(a["who"] or "rater", a["answer"], a["reason"]) for a in f.get("answers") or []]
    if f.get("humans") is not None:
        out.append(Answer("humans", str(f["humans"]), role="pooled"))
    value = f.get("judge_value")
    if value is not None or f.get("judge_reason"):
        out.append(
            Answer(
                str(f.get("judge_name") or "judge"),
                str(value) if value not in (None, "—") else "no score",
                str(f.get("judge_reason") or ""),
                "judge",
            )
        )
    return tuple(out)


def finding_card(f: Mapping[str, Any], thumbs: Mapping[str, str]) -> ItemCard:
    """One finding's card; `thumbs`: the items' pictures as data: URIs, by item id or code."""
    where = _where(f)
    return ItemCard(
        title=str(f["title"]) + (f" · {f['metric']}" if f.get("metric") else ""),
        image=thumb_for(f, thumbs),
        image_alt=f"item {f['title']}",
        meta=(where,) if where else (),
        answers=_answers(f),
        flag=str(f.get("kind") or ""),
        foot=((" · ".join(f"{k}: {val}" for k, val in f["other"]),) if f.get("other") else ()),
    )


def _none_text(v: Mapping[str, Any]) -> str:
    if not v.get("judged"):
        return "No findings: there are no judge scores yet."
    text = "No findings: on no item does a judge contradict a clear human consensus."
    if v.get("off_scale"):
        text += (
            " Judges that answer on their own scale cannot contradict one; they are compared "
            "through the correlations above."
        )
    return text


def findings_section(view: Mapping[str, Any]) -> Section:
    """The section from the view's `findings` rows; the pictures are the view's `thumbnails`
    (data: URIs by item id or display code; the HTML report has them, the app and the CSV not)."""
    v = view.get(KEY)
    if not v:
        return Section(KEY, TITLE, _subtitle(0), (Note(_none_text({})),))
    rows = v.get("rows") or []
    thumbs = view.get("thumbnails") or {}
    blocks: list[Block] = _systematic_blocks(v.get("systematic") or [])
    blocks += _baseline_blocks(v.get("baseline") or [])
    blocks += [finding_card(f, thumbs) for f in rows]
    if not rows:
        blocks.append(Note(_none_text(v)))
    return Section(KEY, TITLE, _subtitle(len(rows)), tuple(blocks))


__all__ = ["findings_section", "finding_card"]
