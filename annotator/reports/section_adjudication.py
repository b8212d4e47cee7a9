"""The adjudication section, for the dashboard, the HTML report and the CSV tables: how many
decisions the lead resolved, with whom the lead sided, where the rubric's wording was blamed,
and each rater's and judge's accuracy against the adjudicated answers, laid out from the rows of
reports/view_adjudication.py. No CSV of the contract holds these, so each table is one CSV
(`adjudication_sided.csv`, `adjudication_feedback.csv`, `adjudication_accuracy.csv`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import fmt_num, fmt_share
from .section_judges import est_text
from .sections import Block, Note, Section, Table

KEY = "adjudication"
TITLE = "Adjudication"
SUBTITLE = (
    "The lead's resolved answers on disputed items. Adjudications are a reference, never one "
    "more rater: the agreement figures use the raters' own answers only."
)


def _plural(n: Any, word: str) -> str:
    return f"{fmt_num(n)} {word}{'' if n == 1 else 's'}"


def _accuracy_rows(a: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (
            r["name"],
            role,
            est_text(r["accuracy"], with_n=False),
            fmt_num(r["n"]),
            fmt_num(r["n_cannot_judge"]),
        )
        for role, people in (("rater", a.get("raters")), ("judge", a.get("judges")))
        for r in people or []
    )


def adjudication_section(view: Mapping[str, Any]) -> Section:
    a = view.get(KEY)
    if not a:
        return Section(KEY, TITLE, SUBTITLE, (Note("Nothing adjudicated yet."),))
    feedback = a.get("feedback") or []
    blocks: list[Block] = [
        Note(
            f"The lead resolved {_plural(a.get('n_decisions'), 'decision')} on "
            f"{_plural(a.get('n_items'), 'item')} (by {a.get('adjudicators')})."
        ),
        Note("With whom the lead sided", "heading"),
        Note("Per report metric (a tags metric once per tag).", "aside"),
        Table(
            "adjudicationSidedTable",
            ("the lead", "decisions", "share"),
            tuple((text, fmt_num(n), fmt_share(share)) for text, n, share in a.get("sided") or []),
            numeric=frozenset({1, 2}),
        ),
        Note("Rubric feedback", "heading"),
        Note(
            "Decisions the lead put down to the rubric's text being unclear, per metric.",
            "aside",
        ),
        Table(
            "adjudicationFeedbackTable",
            ("metric", "rubric unclear", "decisions", "to do"),
            tuple(
                (m, fmt_num(unclear), fmt_num(n), "revise the text" if unclear else "—")
                for m, unclear, n in feedback
            ),
            frozenset(i for i, (_m, unclear, _n) in enumerate(feedback) if unclear),
            frozenset({1, 2}),
        ),
    ]
    if not a.get("any_unclear"):
        blocks.append(Note("No decision was put down to the rubric's wording.", "aside"))
    blocks += [
        Note("Accuracy against the adjudicated answers", "heading"),
        Note(
            "The share of answers equal to the lead's, with its 95% item-bootstrap interval. "
            "Adjudicated items were chosen because they were disputed, so they are not a sample "
            "of the study: compare raters with each other here, not with a target.",
            "aside",
        ),
        Table(
            "adjudicationAccuracyTable",
            ("who", "rater or judge", "accuracy", "answers", "cannot judge"),
            _accuracy_rows(a),
            numeric=frozenset({2, 3, 4}),
        ),
    ]
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["adjudication_section"]
