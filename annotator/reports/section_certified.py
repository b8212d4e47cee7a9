"""The certified section, for the dashboard, the HTML report and the CSV tables: which judge
verdicts stand without a human, the split of the items (accepted by which judge at which
threshold / escalated / already rated), laid out from the rows of reports/view_certified.py.
The per-judge, cascade and conformal tables are formatted text whose numbers `certified.csv`
has (view_certified.certified_table), so only the split is written as a CSV of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sections import Block, Note, Section, Table

KEY = "certified"
TITLE = "Certified judging: which judge verdicts may stand without a human"
SUBTITLE = (
    "Per judge and metric, the confidence above which its verdicts stand without a human, with "
    "a guarantee (Trust or Escalate), and on pair votes the same by the judge's consistency "
    "across the two orders; every other item and pair goes to raters: `annotator assign "
    "--escalated` deals them, `annotator export labels` writes each final label and where it "
    "comes from."
)
SPLIT_HEADERS = (
    "metric",
    "accepted (judge@version at threshold: items)",
    "escalated",
    "already rated",
    "items",
)
JUDGE_HEADERS = (
    "judge",
    "metric",
    "threshold",
    "calibration items",
    "above the threshold",
    "upper bound",
    "coverage",
    "escalated",
    "disagreement",
    "minimum escalation",
)
CASCADE_HEADERS = (
    "judge",
    "metric",
    "delta",
    "threshold",
    "calibration items left",
    "above the threshold",
    "upper bound",
    "accepted",
)
CONFORMAL_HEADERS = (
    "judge",
    "metric",
    "lowest confidence selected",
    "calibration items",
    "coverage",
    "escalated",
)


def _intro(c: Mapping[str, Any]) -> list[Block]:
    """The guarantee, the calibration set and the split in words, before the tables."""
    blocks: list[Block] = [
        Note(
            "Trust or Escalate (Jung, Brahman & Choi, ICLR 2025): per judge and metric, a "
            f"confidence threshold found on the calibration set ({c.get('calibration')}) so that "
            f"the guarantee holds: {c.get('guarantee')}. Every other item goes to raters. "
            f"Calibration set: {c.get('calibration_note')}."
        )
    ]
    if c.get("decides") == "conformal_alignment":
        blocks.append(
            Note(
                "The split follows conformal alignment (setting certified_mode): "
                f"{c.get('fdr_guarantee')}."
            )
        )
    if c.get("item_split"):
        blocks.append(
            Note(
                f"Split: {c.get('item_split')}. Deal the escalated ones: `annotator assign "
                "--escalated`; the final label of every item with its source: `annotator export "
                "labels`."
            )
        )
    if c.get("pair_split"):
        blocks.append(
            Note(
                f"Pairs: {c.get('pair_split')}. A judge's pair vote counts as sure when its two "
                "orders agree; escalated pairs are dealt with `annotator assign --escalated "
                "--pair-overlap K`."
            )
        )
    for line in c.get("not_calibrated") or []:
        blocks.append(Note(f"Not calibrated: {line}"))
    return blocks


def _judge_blocks(c: Mapping[str, Any]) -> list[Block]:
    judges = c.get("judges") or []
    if not judges:
        return []
    blocks: list[Block] = [
        Note(f"Each judge alone (alpha {c.get('alpha')}, delta {c.get('delta')})", "heading"),
        Note(
            "Thresholds are tried from the highest confidence down, each with at least 30 "
            "calibration items above it; at each, the exact (Clopper-Pearson) upper bound of the "
            "disagreement rate at level 1 − delta; accepted while the bound is at most alpha, "
            "stopping at the first that is not. No threshold passing means the judge abstains on "
            "every item (its row is flagged). Minimum escalation: with a disagreement rate above "
            "alpha, this share of items must go to raters whatever the method.",
            "aside",
        ),
        Table(
            "certifiedJudgesTable",
            JUDGE_HEADERS,
            tuple(
                (
                    r["judge"],
                    r["metric"],
                    r["threshold"],
                    r["calibration"],
                    r["above"],
                    r["bound"],
                    r["coverage"],
                    r["escalated"],
                    r["disagreement"],
                    r["min_escalation"],
                )
                for r in judges
            ),
            frozenset(i for i, r in enumerate(judges) if not r["accepted"]),
            frozenset({2, 3, 5, 7, 8, 9}),
            csv="",  # certified.csv: mode "pac", part "judge"
        ),
    ]
    for r in judges:
        if r["note"]:  # why a judge abstains, and the feasibility bound
            blocks.append(Note(f"{r['judge']} on {r['metric']}: {r['note']}.", "aside"))
    return blocks


def _cascade_blocks(c: Mapping[str, Any]) -> list[Block]:
    cascade = c.get("cascade") or []
    if not cascade:
        return []
    order = []
    if c.get("order"):
        order.append(" → ".join(c["order"]) + " → raters")
    if c.get("pair_order"):
        order.append("pairs: " + " → ".join(c["pair_order"]) + " → raters")
    return [
        Note("Cascade" + (f": {'; '.join(order)}" if order else ""), "heading"),
        Note(
            "Each judge is calibrated only on the calibration items the judges before it left, "
            "at delta divided evenly among the judges, so the whole cascade keeps the guarantee.",
            "aside",
        ),
        Table(
            "certifiedCascadeTable",
            CASCADE_HEADERS,
            tuple(
                (
                    r["judge"],
                    r["metric"],
                    r["delta"],
                    r["threshold"],
                    r["calibration"],
                    r["above"],
                    r["bound"],
                    r["accepted"],
                )
                for r in cascade
            ),
            numeric=frozenset({2, 3, 4, 6, 7}),
            csv="",  # certified.csv: mode "pac", part "cascade stage N"
        ),
    ]


def _conformal_blocks(c: Mapping[str, Any]) -> list[Block]:
    fdr = c.get("fdr") or []
    if not fdr:
        return []
    return [
        Note(f"Conformal alignment (a second guarantee, q {c.get('q')})", "heading"),
        Note(
            "Gui, Jin & Candès (NeurIPS 2024): conformal p-values from the calibration set and "
            "the Benjamini-Hochberg procedure choose the items a judge decides, so that "
            f"{c.get('fdr_guarantee')}. Reported apart from the guarantee above, never mixed "
            "with it.",
            "aside",
        ),
        Table(
            "conformalTable",
            CONFORMAL_HEADERS,
            tuple(
                (
                    r["judge"],
                    r["metric"],
                    r["threshold"],
                    r["calibration"],
                    r["coverage"],
                    r["escalated"],
                )
                for r in fdr
            ),
            numeric=frozenset({2, 3, 5}),
            csv="",  # certified.csv: mode "conformal_alignment"
        ),
    ]


def certified_section(view: Mapping[str, Any]) -> Section:
    c = view.get("certified")
    if not c:
        return Section(KEY, TITLE, SUBTITLE, (Note("No judge scores yet."),))
    blocks = _intro(c)
    split = c.get("split") or []
    if split:
        blocks += [
            Note("Split per metric", "heading"),
            Note(
                "Items accepted by a judge at its threshold, escalated to raters, already rated.",
                "aside",
            ),
            Table(
                "certifiedSplitTable",
                SPLIT_HEADERS,
                tuple(
                    (r["metric"], r["accepted"], r["escalated"], r["already_rated"], r["n_items"])
                    for r in split
                ),
                numeric=frozenset({2, 3, 4}),
            ),
        ]
    blocks += _judge_blocks(c) + _cascade_blocks(c) + _conformal_blocks(c)
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))
