"""The debiased section, for the dashboard and the HTML report: the report's debiased figures, items and
pairs, laid out from the same rows as the HTML report (reports/view_debiased.py via
html_report.build_view), so the app and the report cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sections import Block, Note, Section, Table

KEY = "debiased"
TITLE = "Debiased generator figures"
SUBTITLE = (
    "The judge's figures over every item (and pair), corrected by its error on a random human "
    "sample (PPI++): the debiased estimate beside humans only and judge only, the judge's error "
    "with its sign, what the judge is worth in human labels (its correlation with the humans, "
    'and "humans only" where it added nothing), and how many more labels an interval of the '
    "planned width needs."
)
HEADERS = (
    "judge",
    "generator",
    "figure",
    "debiased [95% CI]",
    "humans only",
    "judge only",
    "judge − humans",
    "worth (human labels)",
    "more labels (plan)",
    "what the judge is worth",
)


def _rows(judges: Any) -> tuple[tuple[tuple[str, ...], ...], frozenset[int]]:
    """Table rows from the view's judges ({name, rows}); flagged: a judge error that excludes 0
    (the signed interval lies on one side)."""
    rows, flagged = [], set()
    for j in judges or []:
        for r in j.get("rows") or []:
            err = str(r.get("error") or "—")
            rows.append(
                (
                    str(j.get("name")),
                    str(r.get("generator")),
                    str(r.get("figure")),
                    str(r.get("debiased")),
                    str(r.get("humans")),
                    str(r.get("judge")),
                    err,
                    str(r.get("labels")),
                    str(r.get("plan") or "—"),
                    str(r.get("value") or "—"),
                )
            )
            if _clear(err):
                flagged.add(len(rows) - 1)
    return tuple(rows), frozenset(flagged)


def _clear(err: str) -> bool:
    """Whether a signed interval "+0.12 [+0.05, +0.19]" excludes 0."""
    try:
        lo, hi = (float(x) for x in err.split("[", 1)[1].rstrip("]").split(","))
    except (IndexError, ValueError):
        return False
    return lo > 0 or hi < 0


STRENGTH_HEADERS = ("judge", "generator", "strength", "rank", "humans only", "rank (humans)")


def _strength_blocks(judges: Any) -> list[Block]:
    """Each judge's Bradley-Terry strengths with their rank-sets, as the report's table."""
    rows: list[tuple[str, ...]] = []
    notes: list[Block] = []
    for j in judges or []:
        s = j.get("strengths")
        if not s:
            continue
        if s.get("note"):
            notes.append(Note(f"Strengths ({j['name']}): {s['note']}"))
            continue
        for r in s["rows"]:
            rows.append(
                (
                    j["name"],
                    r["generator"],
                    r["strength"],
                    r["ranks"],
                    r["humans"],
                    r["humans_ranks"],
                )
            )
    if rows:
        notes.insert(
            0,
            Note(
                "Generator strengths (Bradley-Terry on the judge's votes corrected by the pair "
                "sample; log-odds against the first generator) and rank-sets that hold every "
                "generator's true rank together with probability at least 95%."
            ),
        )
        notes.append(Table("debiasedStrengthTable", STRENGTH_HEADERS, tuple(rows), frozenset()))
    return notes


def debiased_section(view: Mapping[str, Any]) -> Section:
    """The section: the items' table (with the summary's sentences), then the pairs' one."""
    d = view.get("debiased")
    if not d:
        return Section(KEY, TITLE, SUBTITLE, (Note("No judge scores yet."),))
    blocks: list[Block] = []
    if not d.get("recorded"):
        blocks.append(Note(str(d.get("note") or "")))
    else:
        blocks.append(Note(f"Sample: {d.get('sample')}. {d.get('used')}."))
        for line in d.get("lines") or []:
            blocks.append(Note(str(line)))
        rows, flagged = _rows(d.get("judges"))
        if rows:
            blocks.append(Table("debiasedTable", HEADERS, rows, flagged))
    p = d.get("pairs")
    if p:
        if not p.get("recorded"):
            blocks.append(Note(f"Win rates: {p.get('note')}"))
        else:
            blocks.append(
                Note(
                    f"Win rates (the first-named generator's; a tie counts one half), pairs "
                    f"sample: {p.get('sample')}."
                )
            )
            rows, flagged = _rows(p.get("judges"))
            if rows:
                headers = ("judge", "generator pair", *HEADERS[2:])
                blocks.append(Table("debiasedPairsTable", headers, rows, flagged))
            blocks += _strength_blocks(p.get("judges"))
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))
