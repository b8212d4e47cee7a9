"""The dashboard's own sections, laid out from the report's view rows (reports/html_report.py
`build_view`): the summary, findings, raters, calibrations and pairwise. The sections of
reports/report_sections.py (agreement, humans vs judges, adjudication, generators, judge
versions and calibration, debiased, certified) are built in reports/section_*.py, where the
HTML report renders them too; services/dashboard.py puts them in order.
Tested in tests/gui/test_dashboard_view.py, tests/unit/test_stats_summary.py and
tests/unit/test_next_steps.py.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ..domain.figures import MISSING, as_dict
from ..domain.rubric import Rubric
from ..reports.formatting import as_of_text, carried_as_of
from ..reports.sections import Block, Chart, Note, Section, Table
from ..stats.rater_medians import median_agreement, median_competence

MAX_FINDING_ROWS = 200


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


def _share(v: Mapping[str, Any]) -> str:
    est = v.get("estimate")
    if est is None:
        return MISSING
    lo, hi = v.get("low"), v.get("high")
    ci = f" [{lo:.0%}, {hi:.0%}]" if lo is not None and hi is not None else ""
    return f"{est:.0%}{ci} n={v.get('n')}"


def summary_section(report: Mapping[str, Any]) -> Section:
    """The report summary's lead: what is known, then what data would decide the rest (the same
    entries as the HTML report's summary: stats/next_steps.py)."""
    s = as_dict(report.get("summary"))
    blocks: list[Block] = [
        Note(str(as_dict(per).get("text")))
        for _name, per in sorted(as_dict(s.get("judges")).items())
        if as_dict(per).get("text")
    ]  # one verdict per judge, first
    blocks += [Note(f"Known: {as_dict(e).get('text')}") for e in s.get("known") or []]
    if not s.get("known") and "known" in s:
        blocks.append(Note("Known: nothing yet for sure; every figure is undecided on these data."))
    for e in s.get("to_decide") or []:
        cmd = as_dict(e).get("command")
        blocks.append(Note(f"To decide: {as_dict(e).get('text')}" + (f"  ·  {cmd}" if cmd else "")))
    return Section(
        "summary",
        "Summary",
        "What the figures say for sure, then what data would decide the rest, with the command "
        "that deals it.",
        tuple(blocks),
    )


def findings_section(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    findings = view.get("findings") or []
    sub = (
        "Each disagreement between the humans and the judge (or among the humans), item by item and "
        "metric by metric; none is averaged away."
    )
    if not findings:
        return Section(
            "findings",
            "Findings: 0",
            sub,
            (Note("No findings: humans and judges agree wherever both answered."),),
        )
    # The lead's item id (case + generator), never a rater's display code: codes are per rater.
    rows = tuple(
        (
            str(f.get("item_id") or f.get("title") or ""),
            metric_label(rubric, str(f.get("metric") or "")),
            str(f.get("kind") or ""),
            str(f.get("humans") or ""),
            str(f.get("judge_value") or ""),
            str(f.get("generator") or ""),
        )
        for f in findings[:MAX_FINDING_ROWS]
    )
    blocks: list[Block] = [
        Table("findingsTable", ("item", "metric", "kind", "humans", "judge", "generator"), rows)
    ]
    if len(findings) > MAX_FINDING_ROWS:
        blocks.append(
            Note(
                f"The first {MAX_FINDING_ROWS} of {len(findings)} findings; the HTML report "
                "lists them all."
            )
        )
    return Section("findings", f"Findings: {len(findings)}", sub, tuple(blocks))


def drift_text(
    rubric: Rubric, d: Mapping[str, Any], offsets: Mapping[str, Any] | None = None
) -> str:
    """The rater's drift flag (a change from where they started), then any standing offset
    from the reference (a calibration finding, not drift: stats/drift.calibration_offset)."""
    standing = "; ".join(
        f"consistently {off['direction']} by {abs(off['estimate']):.2f} on {metric_label(rubric, k)}"
        for k, off in (offsets or {}).items()
        if as_dict(off).get("flagged") and off.get("estimate") is not None
    )
    if not d:
        return standing or "—"
    if not d.get("flagged"):
        return "no drift flag" + (f"; {standing}" if standing else "")
    bits = [metric_label(rubric, str(d.get("metric") or "a metric")), str(d.get("direction") or "")]
    if d.get("first_flag_at") is not None:
        bits.append(f"from anchor answer {d.get('first_flag_at')}")
    return "drift: " + ", ".join(b for b in bits if b) + (f"; {standing}" if standing else "")


def agreement_text(rep: Mapping[str, Any]) -> str:
    """Median over metrics of the rater's exact agreement with the others' consensus."""
    med = median_agreement(rep)
    return f"{med[0]:.0%} (median of {med[1]} metrics)" if med else "—"


def competence_text(
    rubric: Rubric,
    name: str,
    raters: Mapping[str, Any],
    low_by_rater: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The rater's median competence, and the metrics where it is clearly below the others'
    (`low_by_rater`: the report summary's verdict, worked out again only when not given)."""
    comp = {r: dict(as_dict(as_dict(v).get("competence"))) for r, v in raters.items()}
    mine = median_competence(as_dict(raters.get(name)))
    pending = as_dict(raters.get(name)).get("competence_note")
    if mine is None and not comp.get(name) and pending:
        return str(pending)  # a live estimate's rater new since the last full computation
    return _competence_line(rubric, name, comp, mine, low_by_rater) + as_of_text(
        carried_as_of(comp.get(name))
    )


def _competence_line(
    rubric: Rubric,
    name: str,
    comp: dict[str, dict[str, Any]],
    mine: float | None,
    low_by_rater: Mapping[str, Mapping[str, Any]] | None,
) -> str:
    if mine is None:
        # a degenerate fit is said as such, never as a number (report: "not estimable")
        notes = [str(as_dict(f).get("note") or "") for f in comp.get(name, {}).values()]
        return (
            "not estimable: too little overlap"
            if any(n.startswith("not estimable") for n in notes)
            else "—"
        )
    if low_by_rater is None:
        from ..stats.competence import low_competence  # numpy: never on the UI thread's import

        low_by_rater = low_competence(comp)
    low = low_by_rater.get(name, {})
    text = f"{mine:.2f} (median)"
    if low:
        text += "; low on " + ", ".join(
            f"{metric_label(rubric, k)} {f['estimate']:.2f}" for k, f in low.items()
        )
    return text


def rater_sections(
    rubric: Rubric, report: Mapping[str, Any], view: Mapping[str, Any]
) -> tuple[Section, Section]:
    raters = as_dict(report.get("raters"))
    attention = as_dict(report.get("summary")).get("raters_needing_attention")
    low_by_rater = (
        {a["rater"]: as_dict(a.get("low_competence")) for a in attention}
        if isinstance(attention, list)
        else None
    )
    rows, flagged = [], set()
    for i, r in enumerate(view.get("raters") or []):
        rep = as_dict(raters.get(r["name"]))
        acc = as_dict(rep.get("accuracy"))
        acc_text = (
            "; ".join(
                f"{metric_label(rubric, k)} {_share(v)}"
                for k, v in acc.items()
                if isinstance(v, Mapping)
            )
            or "—"
        )
        if r["flagged"]:
            flagged.add(i)
        rows.append(
            (
                r["name"],
                _or_dash(r.get("n_judgements")),
                _or_dash(r.get("anchors")),
                acc_text,
                drift_text(
                    rubric, as_dict(rep.get("drift")), as_dict(rep.get("calibration_offset"))
                ),
                agreement_text(rep),
                competence_text(rubric, r["name"], raters, low_by_rater),
                r.get("calibrations") or "none",
            )
        )
    table = Section(
        "raters",
        "Raters",
        "Judgements, live anchors answered, accuracy on those anchors (gates exact, scales within one "
        "point; 95% interval), the CUSUM drift flag, agreement with the others' consensus and "
        "competence (MACE: how often the rater knows the answer rather than guesses).",
        (
            Table(
                "ratersTable",
                (
                    "rater",
                    "live items answered",
                    "anchor answers",
                    "accuracy on anchors",
                    "drift",
                    "agreement with consensus",
                    "competence",
                    "calibration",
                ),
                tuple(rows),
                frozenset(flagged),
            ),
        ),
    )
    charts: list[Block] = []
    drift = as_dict(as_dict(view.get("charts")).get("drift"))
    for name in sorted(
        drift, key=lambda n: (not as_dict(as_dict(raters.get(n)).get("drift")).get("flagged"), n)
    ):
        d = as_dict(as_dict(raters.get(name)).get("drift"))
        png = _png(drift[name])
        if png:
            caption = drift_text(rubric, d).replace("drift:", "drift flag:", 1)
            charts.append(
                Chart(
                    f"driftChart:{name}",
                    png,
                    f"Drift chart for {name}",
                    f"{name}: {caption}",
                    bool(d.get("flagged")),
                )
            )
    if not charts:
        charts.append(Note("No drift charts yet: no rater has answered a live anchor."))
    return table, Section(
        "drift",
        "Drift on anchors",
        "Per rater: each anchor answer's deviation from the reference with its EWMA and control "
        "limits (top), and the CUSUM up / down against the threshold h that raises the flag "
        "(bottom). Flagged raters first.",
        tuple(charts),
    )


def calibrations_section(rubric: Rubric, report: Mapping[str, Any]) -> Section:
    raters = as_dict(report.get("raters"))
    keys: list[str] = []
    recs: list[tuple[str, Mapping[str, Any]]] = []
    for name in sorted(raters, key=str):
        for c in as_dict(raters[name]).get("calibrations") or []:
            if isinstance(c, Mapping):
                recs.append((str(name), c))
                keys.extend(k for k in as_dict(c.get("metrics")) if k not in keys)
    sub = "Every calibration session: the share of anchors met per metric against its rule, and the verdict."
    if not recs:
        return Section(
            "calibration",
            "Calibration history",
            sub,
            (Note("No calibration session has been run yet."),),
        )
    rows, flagged = [], set()
    for i, (name, c) in enumerate(recs):
        metrics = as_dict(c.get("metrics"))
        cells = []
        for k in keys:
            m = as_dict(metrics.get(k))
            share = m.get("share")
            cells.append(
                "—"
                if share is None
                else f"{share:.0%} of {m.get('n')} (need {m.get('threshold', 0):.0%})"
                + ("" if m.get("passed") else " ✗")
            )
        ok = bool(c.get("qualified"))
        if not ok:
            flagged.add(i)
        rows.append(
            (name, str(c.get("created_at") or ""), "qualified" if ok else "not yet", *cells)
        )
    headers = ("rater", "when", "verdict", *(metric_label(rubric, k) for k in keys))
    return Section(
        "calibration",
        "Calibration history",
        sub,
        (Table("calibrationTable", headers, tuple(rows), frozenset(flagged)),),
    )


def pairwise_section(view: Mapping[str, Any]) -> Section:
    p = view.get("pairwise")
    sub = (
        "Bradley-Terry strength per generator (95% interval) from the A/B votes, and whether raters favour "
        "a side."
    )
    if not p:
        return Section("pairwise", "Pairwise preferences", sub, (Note("No pair votes yet."),))
    blocks: list[Block] = []
    bt = p.get("bradley_terry") or []
    if bt:
        blocks.append(
            Table(
                "btTable",
                ("generator", "strength [95% CI]"),
                tuple((r["name"], _est(r["est"])) for r in bt),
            )
        )
        png = _png(as_dict(view.get("charts")).get("bradley_terry"))
        if png:
            blocks.append(Chart("btChart", png, "Bradley-Terry strength per generator"))
    elif p.get("bradley_terry_note"):
        blocks.append(Note(str(p["bradley_terry_note"])))
    pb = p.get("position_bias") or {}
    if pb.get("present"):
        by_rater = p.get("by_rater") or []
        rows = (
            (pb["name"], pb["left"], pb["right"], pb["n"], pb["p"]),
            *((r["name"], r["left"], r["right"], r["n"], r["p"]) for r in by_rater),
        )
        blocks.append(
            Note(
                "Position bias: how often the output shown on the left or the right won (binomial "
                "test against 50 / 50)." + (f" {pb['note']}." if pb.get("note") else "")
            )
        )
        blocks.append(
            Table(
                "positionTable",
                ("who", "left won", "right won", "n", "p"),
                tuple(tuple(str(c) for c in r) for r in rows),
                frozenset(i + 1 for i, r in enumerate(by_rater) if r.get("flagged")),
            )
        )
    ra = p.get("rater_alpha")
    if ra is not None and ra.present:
        blocks.append(Note(f"Agreement among raters on the votes (alpha): {_est(ra)}"))
    judges = p.get("judges") or []
    if judges:
        blocks.append(
            Table(
                "pairJudgesTable",
                ("judge", "n", "agreement with majority", "kappa vs majority"),
                tuple(
                    (j["name"], str(j.get("n") or "—"), _est(j["agreement"]), _est(j["kappa"]))
                    for j in judges
                ),
            )
        )
    return Section("pairwise", "Pairwise preferences", sub, tuple(blocks))
