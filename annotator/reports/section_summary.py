"""The summary, the report's first section, for the dashboard, the HTML report (at its head, in a
card, before the contents) and the CSV tables: can each judge be trusted (one sentence per
judge), what is known, what data would decide the rest (with the command that deals it), each
judge's verdict metric by metric, the generators best first, the release gate, the raters who
need attention and the glossary, laid out from the rows of reports/view_summary.summary_view.
Its tables repeat figures other sections and the contract's CSVs hold, or are words (verdicts,
a glossary): none is written as a CSV of its own.
Tested in tests/unit/test_report_sections.py, tests/unit/test_next_steps.py,
tests/unit/test_summary_debiased.py and tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import Est
from .sections import Block, Bullets, Note, Section, Table

KEY = "summary"
TITLE = "Summary"
SUBTITLE = (
    "What the figures say for sure, then what data would decide the rest, with the command that "
    "deals it."
)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _next_steps(s: Mapping[str, Any]) -> list[Block]:
    if not s.get("has_next_steps"):
        return []  # a report of an earlier version has neither list
    blocks: list[Block] = [Note("What is known", "heading")]
    if s.get("known"):
        blocks.append(Bullets(tuple(s["known"]), small=True))
    else:
        blocks.append(Note("Nothing yet for sure: every figure below is undecided on these data."))
    if s.get("to_decide"):
        blocks.append(Note("What would decide the rest", "heading"))
        # the command as a `code` span: the report sets it as code, the app shows it as typed
        items = tuple(f"{t}: `{cmd}`" if cmd else t for t, cmd in s["to_decide"])
        blocks.append(Bullets(items, small=True))
    return blocks


def _judge_blocks(s: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    for i, j in enumerate(s.get("judges") or []):
        blocks.append(Note(f"The judge {j['name']}, metric by metric", "heading"))
        counts = " · ".join(f"{n} metric{'' if n == 1 else 's'} {w}" for w, n in j["counts"])
        if counts:
            blocks.append(Note(f"{counts}.", "aside"))
        rows = j.get("rows") or []
        blocks.append(
            Table(
                f"summaryJudge{i}Table",
                ("metric", "verdict", "the figure behind it"),
                tuple((r["label"], r["words"], str(r["why"])) for r in rows),
                # a verdict against the judge (biased, not trustworthy) is marked
                frozenset(k for k, r in enumerate(rows) if r["tone"] == "warn"),
                csv="",  # words over the agreement figures, which agreement.csv holds
            )
        )
    if not s.get("judges"):
        blocks.append(
            Note("No judge scores on the rubric's metrics: nothing to say about replacing a rater.")
        )
    return blocks


def _figure(e: Est, rank: Any, rank_set: str = "") -> str:
    """A generator's figure with its interval and its rank: '0.62 [0.55, 0.70] #1 (1-2)'."""
    text = str(e) if e.present else "—"
    if rank:
        text += f" #{rank}" + (f" ({rank_set})" if rank_set else "")
    return text


def _ranking_note(s: Mapping[str, Any]) -> str:
    """How the generators were ranked, and where two rankings disagree."""
    has_rubric, has_pairwise = s.get("has_rubric"), s.get("has_pairwise")
    by_note = s.get("ranked_by_note") or ""
    if not (has_rubric or has_pairwise or s.get("has_debiased")):
        text = "Not ranked yet: no per-case rubric results and no pairwise votes."
    elif not (has_rubric and has_pairwise):
        if by_note:
            text = "No pairwise votes." if has_rubric else "No per-case rubric results."
        else:
            text = "Ranked by " + (
                "the per-case rubric results only (no pairwise votes)"
                if has_rubric
                else "the pairwise votes only (no per-case rubric results)"
            )
            text += "."
    elif s.get("disagree"):
        text = (
            f"The two rankings disagree on {', '.join(s['disagree'])}: read the intervals before "
            "ordering them."
        )
    else:
        text = (
            "The per-case rubric results and the pairwise votes rank the generators the same way."
        )
    if by_note:
        text += f" {_cap(by_note)}."
    if s.get("ranks_note"):
        text += f" {_cap(s['ranks_note'])}."
    if s.get("generators_note"):
        text += f" {_cap(s['generators_note'])}"
    return text


def _generator_blocks(s: Mapping[str, Any]) -> list[Block]:
    gens = s.get("generators") or []
    if not gens:
        return []
    figure = s.get("rubric_figure") or "—"
    headers = ["generator"]
    if s.get("has_debiased"):
        headers.append(f"debiased: {figure} (rank)")
    if s.get("has_rubric"):
        headers.append(f"rubric: {figure} (rank)")
    if s.get("has_pairwise"):
        headers.append("pairwise: Bradley-Terry strength (rank)")
    if s.get("gate_set"):
        headers.append("release gate")
    rows = []
    for g in gens:
        row = [str(g["name"])]
        if s.get("has_debiased"):
            row.append(_figure(g["debiased"], g["debiased_rank"], g["debiased_rank_set"]))
        if s.get("has_rubric"):
            row.append(_figure(g["rubric"], g["rubric_rank"]))
        if s.get("has_pairwise"):
            row.append(_figure(g["pairwise"], g["pairwise_rank"]))
        if s.get("gate_set"):
            row.append(g["gate"] or "—")
        rows.append(tuple(row))
    numeric = frozenset(
        range(1, 1 + sum(bool(s.get(k)) for k in ("has_debiased", "has_rubric", "has_pairwise")))
    )
    return [
        Note("Generators, best first", "heading"),
        Table(
            "summaryGeneratorsTable",
            tuple(headers),
            tuple(rows),
            # a generator the release gate stops is what a release decision reads first
            frozenset(i for i, g in enumerate(gens) if g["gate"] == "does not pass"),
            numeric,
            csv="",  # the figures of the generators, debiased and pairwise tables
        ),
        Note(_ranking_note(s)),
    ]


def _rater_blocks(s: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = [Note("Raters who need attention", "heading")]
    raters = s.get("raters") or []
    if raters:
        blocks.append(Bullets(tuple(f"{n}: {'; '.join(why)}" for n, why in raters), small=True))
    else:
        blocks.append(
            Note("None: no drift flagged and no competence clearly below the other raters'.")
        )
    return blocks


def summary_section(view: Mapping[str, Any]) -> Section:
    """The section from the view's `summary` rows (None: a report without a summary)."""
    s = view.get(KEY)
    if not s:
        return Section(KEY, TITLE, SUBTITLE, (Note("No summary yet."),))
    blocks: list[Block] = []
    texts = tuple(j["text"] for j in s.get("judges") or [] if j.get("text"))
    if s.get("judges"):
        blocks.append(Note("Can I trust the judge?", "heading"))
        if texts:
            blocks.append(Bullets(texts))
    blocks += _next_steps(s)
    blocks += _judge_blocks(s)
    blocks += _generator_blocks(s)
    blocks.append(Note(f"Release gate: {s.get('gate_note') or ''}"))
    blocks += _rater_blocks(s)
    glossary = s.get("glossary") or []
    if glossary:
        blocks.append(
            Table(
                "summaryGlossaryTable",
                ("term", "meaning"),
                tuple((str(k), str(val)) for k, val in glossary),
                csv="",  # words, not figures
                fold=f"Glossary: the words above in one line each ({len(glossary)} terms)",
            )
        )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["summary_section"]
