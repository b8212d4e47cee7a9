"""The dashboard's own sections, laid out from the report's view rows (reports/html_report.py
`build_view`): agreement and by generator. The sections of reports/report_sections.py
(summary, findings, adjudication, generators, judge versions and calibration, debiased,
certified, raters, pairwise) are built in reports/section_*.py, where the HTML report renders
them too; services/dashboard.py puts them in order.
Tested in tests/gui/test_dashboard_view.py and tests/unit/test_next_steps.py.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ..domain.figures import MISSING, as_dict
from ..domain.rubric import Rubric
from ..reports.sections import Block, Chart, Note, Section, Table


def metric_label(rubric: Rubric, key: str) -> str:
    """A report key as the lead reads it: the rubric's label, the report's rule (key_label)."""
    return rubric.key_label(key)


def _png(chart: Any) -> bytes | None:
    uri = getattr(chart, "uri", None)
    if not uri or "," not in uri:
        return None
    return base64.b64decode(uri.split(",", 1)[1])


def _est(e: Any, *, with_n: bool = True) -> str:
    """An Est of the report view -> 'text [low, high]  n=..'."""
    if e is None or not getattr(e, "present", False):
        return MISSING
    s = str(e)
    if with_n and getattr(e, "n", None) is not None and e.defined:
        s += f"  n={e.n}"
    return s


def _or_dash(v: Any) -> str:
    return MISSING if v is None else str(v)


def agreement_section(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    rows: list[tuple[str, ...]] = []
    for m in view.get("metrics") or []:
        counts = " · ".join(_or_dash(m.get(k)) for k in ("n_items", "n_raters", "n_judgements"))
        base = (
            metric_label(rubric, m["key"]),
            f"{m['kind']} / {m['level']}",
            counts,
            _est(m["human_alpha"]),
        )
        if not m["judges"]:
            rows.append((*base, "—", "—", "—", "—"))
        for i, j in enumerate(m["judges"]):
            perm = (
                f"{j['perm_mean']} (p {j['perm_p']})"
                if j.get("perm_mean")
                else ("undefined: " + j["perm_note"] if j.get("perm_note") else "—")
            )
            rows.append(
                (
                    *(base if i == 0 else ("", "", "", "")),
                    j["name"],
                    _est(j["alpha_vs_consensus"]),
                    perm,
                    _est(j["exact_agreement"], with_n=False),
                )
            )
    blocks: list[Block] = [
        Table(
            "agreementTable",
            (
                "metric",
                "kind / level",
                "items · raters · answers",
                "human alpha [95% CI]",
                "judge",
                "judge alpha vs consensus [95% CI]",
                "shuffled baseline",
                "exact agreement",
            ),
            tuple(rows),
        )
    ]
    png = _png(as_dict(view.get("charts")).get("agreement"))
    if png:
        blocks.append(
            Chart("agreementChart", png, "Krippendorff's alpha per metric with 95% intervals")
        )
    return Section(
        "agreement",
        "Agreement per metric",
        "Krippendorff's alpha among humans with its bootstrap 95% interval, and each judge against the "
        "human consensus beside the alpha it gets when its scores are shuffled across items.",
        tuple(blocks),
    )


def by_generator_section(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    """The report's per-generator agreement (`metrics.<m>.by_generator`), one table."""
    rows: list[tuple[str, ...]] = []
    for m in view.get("metrics") or []:
        for g in m.get("by_generator") or []:
            judges = g["judges"] or [("—", [])]
            for i, (name, cells) in enumerate(judges):
                head = (
                    (metric_label(rubric, m["key"]), g["generator"], _or_dash(g["n_items"]))
                    if i == 0
                    else ("", "", "")
                )
                humans = (
                    (_est(g["alpha"], with_n=False), _est(g["fleiss"], with_n=False))
                    if i == 0
                    else ("", "")
                )
                corr = tuple(_est(c, with_n=False) for c in cells) or ("—", "—", "—")
                rows.append((*head, *humans, name, *corr))
    blocks: tuple[Block, ...] = (
        (
            Table(
                "byGeneratorTable",
                (
                    "metric",
                    "generator",
                    "items",
                    "human alpha [95% CI]",
                    "Fleiss' kappa",
                    "judge",
                    "Pearson",
                    "Spearman",
                    "Kendall tau-b",
                ),
                tuple(rows),
            ),
        )
        if rows
        else (Note("No generator has answers yet."),)
    )
    return Section(
        "by_generator",
        "Agreement per generator",
        "The humans' alpha and Fleiss' kappa on each generator's items, and each judge's "
        "correlations with the human mean there (as the field reports agreement per model).",
        blocks,
    )
