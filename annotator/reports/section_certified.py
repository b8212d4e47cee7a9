"""The certified section, for the dashboard and the HTML report: which judge verdicts stand without a human, the split of
the items (accepted by which judge at which threshold / escalated / already rated), laid out
from the same rows as the HTML report (reports/view_certified.py via html_report.build_view)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sections import Block, Note, Section, Table

KEY = "certified"
TITLE = "Certified judging"
SUBTITLE = (
    "Per judge and metric, the confidence above which its verdicts stand without a human, with "
    "a guarantee (Trust or Escalate), and on pair votes the same by the judge's consistency "
    "across the two orders; every other item and pair goes to raters: `annotator assign "
    "--escalated` deals them, `annotator export labels` writes each final label and where it "
    "comes from."
)


def certified_section(view: Mapping[str, Any]) -> Section:
    c = view.get("certified")
    if not c:
        return Section(KEY, TITLE, SUBTITLE, (Note("No judge scores yet."),))
    blocks: list[Block] = [Note(f"Guarantee: {c.get('guarantee')}.")]
    if c.get("decides") == "conformal_alignment":
        blocks.append(Note(f"The split follows conformal alignment: {c.get('fdr_guarantee')}."))
    blocks.append(Note(f"Calibration set: {c.get('calibration')}; {c.get('calibration_note')}."))
    if c.get("item_split"):
        blocks.append(Note(f"Split: {c.get('item_split')}."))
    if c.get("pair_split"):
        blocks.append(Note(f"Pairs: {c.get('pair_split')}."))
    for line in c.get("not_calibrated") or []:
        blocks.append(Note(f"Not calibrated: {line}"))
    split = c.get("split") or []
    if split:
        blocks.append(
            Table(
                "certifiedSplitTable",
                (
                    "metric",
                    "accepted (judge@version at threshold: items)",
                    "escalated",
                    "already rated",
                    "items",
                ),
                tuple(
                    (r["metric"], r["accepted"], r["escalated"], r["already_rated"], r["n_items"])
                    for r in split
                ),
            )
        )
    judges = c.get("judges") or []
    if judges:
        blocks.append(
            Table(
                "certifiedJudgesTable",
                (
                    "judge",
                    "metric",
                    "threshold",
                    "calibration items",
                    "above the threshold",
                    "upper bound",
                    "coverage",
                    "minimum escalation",
                ),
                tuple(
                    (
                        r["judge"],
                        r["metric"],
                        r["threshold"],
                        r["calibration"],
                        r["above"],
                        r["bound"],
                        r["coverage"],
                        r["min_escalation"],
                    )
                    for r in judges
                ),
                frozenset(i for i, r in enumerate(judges) if not r["accepted"]),
            )
        )
        for r in judges:
            if r["note"]:  # why a judge abstains, and the feasibility bound
                blocks.append(Note(f"{r['judge']} on {r['metric']}: {r['note']}."))
    fdr = c.get("fdr") or []
    if fdr:
        blocks.append(Note(f"Conformal alignment (a second guarantee): {c.get('fdr_guarantee')}."))
        blocks.append(
            Table(
                "conformalTable",
                (
                    "judge",
                    "metric",
                    "lowest confidence selected",
                    "calibration items",
                    "coverage",
                    "escalated",
                ),
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
            )
        )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))
