"""The report sections laid out from the one Section model (reports/sections.py): each is a view
of the report dict (plain rows) and a builder of its Section from that view. Every output reads
this list: the HTML report renders each Section through templates/_section.html.j2 (in
`build_view`), `report --csv` writes each of its Tables as one CSV (csv_report.report_tables),
and the dashboard shows them (services/dashboard.py), so a section listed here appears in all
three and they cannot drift apart.
Tested in tests/unit/test_report_sections.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .section_adjudication import adjudication_section
from .section_agreement import agreement_section
from .section_certified import certified_section
from .section_debiased import debiased_section
from .section_findings import findings_section
from .section_generators import generators_section
from .section_humans_judges import humans_judges_section
from .section_judges import judges_section
from .section_pairwise import pairwise_section
from .section_raters import raters_section
from .section_summary import summary_section
from .sections import Chart, Section
from .view_adjudication import adjudication_section_view
from .view_agreement import agreement_charts, judged_metrics_view, metrics_view
from .view_certified import certified_view
from .view_debiased import debiased_view
from .view_findings import findings_view
from .view_judges import judge_charts, judges_view
from .view_raters import rater_charts, raters_section_view
from .view_study import generators_section_view, pairwise_charts, pairwise_section_view
from .view_summary import summary_view


@dataclass(frozen=True)
class SectionSpec:
    # the view's key, the Section's and the HTML anchor
    key: str
    # the link in the HTML report's contents
    toc: str
    # the report's top-level keys the section shows (the HTML report's "other figures" skips
    # them)
    reads: tuple[str, ...]
    # the report dict -> the section's rows, or None when the report has none of its figures
    view: Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
    # the whole view (its `key` entry may be None) -> the Section
    build: Callable[[Mapping[str, Any]], Section]
    # the report dict -> the section's charts as PNGs by name, put in its view as "charts";
    # apart from `view` because drawing takes seconds and `report --csv` shows no chart
    draw: Callable[[Mapping[str, Any]], Mapping[str, bytes]] | None = None
    # the HTML report sets it at its head, in a card before the contents and the tiles, rather
    # than among the sections (the summary: what a reader reads first)
    top: bool = False


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("summary", "Summary", ("summary",), summary_view, summary_section, top=True),
    SectionSpec(
        "agreement",
        "Agreement",
        ("metrics", "verdict"),
        metrics_view,
        agreement_section,
        agreement_charts,
    ),
    SectionSpec(
        "judges", "Humans vs judges", ("metrics",), judged_metrics_view, humans_judges_section
    ),
    SectionSpec(
        "findings",
        "Findings",
        ("findings", "systematic_findings", "item_findings_baseline"),
        findings_view,
        findings_section,
    ),
    SectionSpec(
        "adjudication",
        "Adjudication",
        ("adjudication",),
        adjudication_section_view,
        adjudication_section,
    ),
    SectionSpec(
        "generators", "Generators", ("generators",), generators_section_view, generators_section
    ),
    SectionSpec(
        "judge_versions",
        "Judge versions",
        ("judge_versions", "judge_calibration"),
        judges_view,
        judges_section,
        judge_charts,
    ),
    SectionSpec("debiased", "Debiased", ("debiased",), debiased_view, debiased_section),
    SectionSpec(
        "certified",
        "Certified",
        ("certified", "conformal_alignment"),
        certified_view,
        certified_section,
    ),
    SectionSpec(
        "raters",
        "Raters",
        ("raters", "answer_times"),
        raters_section_view,
        raters_section,
        rater_charts,
    ),
    SectionSpec(
        "pairwise",
        "Pairwise",
        ("pairwise",),
        pairwise_section_view,
        pairwise_section,
        pairwise_charts,
    ),
)


def section_views(
    report: Mapping[str, Any],
    *,
    with_charts: bool = False,
    charts_from: Mapping[str, Any] | None = None,
) -> dict[str, Mapping[str, Any] | None]:
    """Each section's rows, by its key (what `build_view` holds beside its own rows), with its
    charts drawn when `with_charts`: from `charts_from` when given (a live estimate's view
    shows the last full computation's charts, `charts_as_of`), else from `report`."""
    global _CHARTS_FROM
    drawn: dict[str, Any] = {}
    kept_from, kept = _CHARTS_FROM
    if charts_from is not None and kept_from is charts_from:
        drawn = dict(kept)
    out: dict[str, Mapping[str, Any] | None] = {}
    for s in SECTIONS:
        rows = s.view(report)
        if rows and with_charts and s.draw is not None:
            if charts_from is None:
                charts = s.draw(report)
            else:
                if s.key not in drawn:
                    drawn[s.key] = s.draw(charts_from)
                charts = drawn[s.key]
            rows = {**rows, "charts": charts}
        out[s.key] = rows
    if charts_from is not None:
        _CHARTS_FROM = (charts_from, drawn)
    return out


# the charts a live estimate's view showed last, and the full report they were drawn from (held:
# a report is never changed once made, so the same object draws the same charts). Every refresh
# draws from the same full report until the next one: found by the object, not by keying each
# chart's data as text (the agreement chart's: 16 ms a refresh at a million judgements).
_CHARTS_FROM: tuple[Mapping[str, Any] | None, dict[str, Any]] = (None, {})


def mark_charts_as_of(section: Section, as_of: str) -> Section:
    """`section` with each of its charts marked as the last full computation's (`as_of`, when it
    was computed): a live estimate's tables are current, its charts are not drawn again (the
    agreement chart is a quarter of a second of matplotlib, about a quarter of a live refresh
    at 100,000 judgements; a hundred answers more on thousands move its points little, and
    the mark says from when they are)."""
    mark = f"Chart as of {as_of}, the last full computation; the tables show the current figures."
    blocks = tuple(
        replace(b, caption=f"{b.caption} {mark}".strip()) if isinstance(b, Chart) else b
        for b in section.blocks
    )
    return replace(section, blocks=blocks)


def report_sections(view: Mapping[str, Any]) -> list[Section]:
    """The Sections the report has figures for, in report order (the dashboard builds every
    one, saying when there is nothing yet)."""
    return [s.build(view) for s in SECTIONS if view.get(s.key)]


__all__ = ["SECTIONS", "SectionSpec", "mark_charts_as_of", "report_sections", "section_views"]
