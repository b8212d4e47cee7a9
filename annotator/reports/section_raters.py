"""The raters section, for the dashboard, the HTML report and the CSV tables, laid out from the
rows of reports/view_raters.py: one row per rater (answers, anchors, accuracy on anchors, the
drift flag and any standing offset, agreement with the others' consensus, competence,
calibrations; a flagged rater's row is marked), then the rater x metric figures with their
intervals, fatigue, answer times, the calibration history and each rater's drift chart on
anchors (flagged raters first).

New CSVs: `raters.csv`, `rater_accuracy.csv`, `rater_calibration_accuracy.csv`,
`rater_test_retest.csv`, `rater_agreement.csv`, `rater_competence.csv`, `rater_fatigue.csv`,
`calibration_history.csv`; the answer times are in the contract's `answer_times.csv`
(csv_report.answer_times_table), so their table writes none.
Tested in tests/unit/test_report_sections.py and tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..domain.figures import MISSING
from .formatting import Est
from .section_judges import est_text
from .sections import Block, Chart, Note, Section, Table

KEY = "raters"
TITLE = "Raters"
SUBTITLE = (
    "Operators are not counted anywhere in this report. Drift is measured on anchor items "
    "against their reference answers."
)
HEADERS = (
    "rater",
    "live items answered",
    "anchor answers",
    "accuracy on anchors",
    "drift (CUSUM on anchors)",
    "agreement with consensus",
    "competence",
    "calibrations",
)
# a rater x metric table's name (its CSV: rater_<...>.csv)
MATRIX_TABLES = {
    "accuracy": "raterAccuracyTable",
    "calibration_accuracy": "raterCalibrationAccuracyTable",
    "test_retest": "raterTestRetestTable",
    "agreement_with_consensus": "raterAgreementTable",
    "competence": "raterCompetenceTable",
}


def _count(v: Any) -> str:
    return MISSING if v is None else str(v)


def _raters_blocks(rows: Sequence[Mapping[str, Any]]) -> list[Block]:
    if not rows:
        return [Note("No rater has answered yet.")]
    table = Table(
        "ratersTable",
        HEADERS,
        tuple(
            (
                r["name"],
                _count(r.get("n_judgements")),
                _count(r.get("anchors")),
                r["accuracy"],
                r["drift_text"],
                r["agreement"],
                r["competence"],
                r.get("calibrations") or "none",
            )
            for r in rows
        ),
        frozenset(i for i, r in enumerate(rows) if r["flagged"]),
        frozenset({1, 2}),
    )
    blocks: list[Block] = [
        table,
        Note(
            "Accuracy on live anchors: gates exact, scales within one point; the median over "
            "metrics and the lowest metric with its 95% interval (every metric in the table "
            "below). Drift: the CUSUM flag on anchors, and a standing offset from the "
            "reference (a calibration finding, not drift). Agreement: the median over metrics "
            "of the exact agreement with the others' consensus. Competence: the median over "
            "metrics of MACE's estimate (how often the rater knows the answer rather than "
            "guesses), with the metrics where it is clearly below the other raters'.",
            "aside",
        ),
    ]
    blocks += [
        Note(f"{r['name']}: " + " · ".join(f"{k}: {val}" for k, val in r["other"]), "aside")
        for r in rows
        if r.get("other")
    ]
    return blocks


def _cell_text(c: Mapping[str, Any]) -> str:
    """A rater x metric cell: its estimate with interval and n (several, each named), or its
    text, then what it rests on (the rule, the exact share, n)."""
    if c.get("parts"):
        text = "; ".join(f"{label} {est_text(e, with_n=False)}" for label, e in c["parts"])
    elif c.get("est") is not None:
        text = est_text(c["est"])
    else:
        text = str(c.get("text") or MISSING)
    return f"{text} · {c['sub']}" if c.get("sub") else text


def _long_notes(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The full notes the cells show shortened (a long note is shown by its reason): said once
    under the table."""
    ests: list[Est] = []
    for c in cells:
        if c.get("est") is not None:
            ests.append(c["est"])
        ests += [e for _label, e in c.get("parts") or []]
    out: list[str] = []
    for e in ests:
        if e.note and e.note != e.short_note and e.note not in out:
            out.append(e.note)
    return out


def _matrix_blocks(matrices: Sequence[Mapping[str, Any]]) -> list[Block]:
    blocks: list[Block] = []
    for m in matrices:
        cells = [c for _name, row in m["rows"] for c in row]
        n = len(m["columns"])
        blocks += [
            Note(m["title"], "heading"),
            Table(
                MATRIX_TABLES.get(m["key"], f"rater{m['key'].title().replace('_', '')}Table"),
                (m["corner"], *m["columns"]),
                tuple((name, *(_cell_text(c) for c in row)) for name, row in m["rows"]),
                numeric=frozenset(range(1, n + 1)),
            ),
        ]
        notes = _long_notes(cells)
        if notes:
            blocks.append(Note("Notes: " + "; ".join(notes) + ".", "aside"))
    return blocks


def _quarters(quarters: Sequence[Est]) -> str:
    return " / ".join(q.text if q.defined else "·" for q in quarters)


def _fatigue_blocks(f: Mapping[str, Any] | None) -> list[Block]:
    if not f:
        return []
    blocks: list[Block] = [
        Note("Fatigue", "heading"),
        Note("Agreement with the others' consensus, by place in the session.", "aside"),
    ]
    rows = f.get("rows") or []
    if rows:
        blocks.append(
            Table(
                "raterFatigueTable",
                (
                    "rater",
                    "first half",
                    "second half",
                    "change",
                    "by quarter",
                    "metric answers compared",
                    "sessions",
                ),
                tuple(
                    (
                        r["name"],
                        *(
                            (r["note"] or MISSING, MISSING, MISSING, MISSING)
                            if r["early"] is None
                            else (
                                est_text(r["early"]),
                                est_text(r["late"]),
                                est_text(r["change"], with_n=False),
                                _quarters(r["quarters"]),
                            )
                        ),
                        r["n"],
                        r["sessions"],
                    )
                    for r in rows
                ),
                numeric=frozenset({1, 2, 3, 4, 5, 6}),
            )
        )
        # the reason of each quarter without a figure, whole (the cell shows a dot)
        undefined = sorted(
            {
                q.note or q.text
                for r in rows
                for q in r["quarters"]
                if isinstance(q, Est) and q.present and not q.defined
            }
        )
        if undefined:
            blocks.append(Note("By quarter, · is " + "; ".join(undefined) + ".", "aside"))
        blocks.append(
            Note(
                "Each metric of each live answer is compared with the other raters' consensus.",
                "aside",
            )
        )
    if f.get("note"):
        blocks.append(Note(str(f["note"]), "aside"))
    return blocks


def _answer_times_blocks(t: Mapping[str, Any] | None) -> list[Block]:
    if not t:
        return []
    low = f"below {t['minimum']} ms"
    rows = t["rows"]
    blocks: list[Block] = [
        Note("Answer times", "heading"),
        Note(
            f"Answers stored faster than the item could be seen ({low}), and items left on "
            "screen a day or more.",
            "aside",
        ),
        Table(
            "answerTimesTable",
            ("rater", "answers", "with a time", low, "a day or more"),
            tuple((r["name"], r["answers"], r["timed"], r["below"], r["at_cap"]) for r in rows),
            frozenset(i for i, r in enumerate(rows) if r["flagged"]),
            frozenset({1, 2, 3, 4}),
            csv="",  # answer_times.csv (the contract) holds these counts
        ),
    ]
    if t.get("note"):
        blocks.append(Note(str(t["note"])))
    return blocks


def _calibration_blocks(c: Mapping[str, Any] | None) -> list[Block]:
    if not c:
        return []
    rows = c["rows"]
    return [
        Note("Calibration history", "heading"),
        Note(
            "Every calibration session: the share of anchors met per metric against its rule "
            "(✗: not met), and the verdict.",
            "aside",
        ),
        Table(
            "calibrationHistoryTable",
            ("rater", "when", "verdict", *c["metrics"]),
            tuple(
                (r["name"], r["when"], "qualified" if r["qualified"] else "not yet", *r["cells"])
                for r in rows
            ),
            frozenset(i for i, r in enumerate(rows) if not r["qualified"]),
        ),
    ]


def _drift_blocks(rows: Sequence[Mapping[str, Any]], charts: Mapping[str, bytes]) -> list[Block]:
    drawn = [r for r in rows if charts.get(r["name"])]
    if not drawn:
        if rows and not any(r["series"] for r in rows):
            return [Note("No drift chart: no rater has answered a live anchor yet.", "aside")]
        return []
    blocks: list[Block] = [
        Note("Drift on anchors", "heading"),
        Note(
            "Top: each anchor answer minus its reference (dots), the EWMA (line) and its control "
            "limits (dashed). Bottom: the upper and lower CUSUM; a rater is flagged when either "
            "crosses the threshold h. Flagged raters first.",
            "aside",
        ),
    ]
    for r in sorted(drawn, key=lambda r: (not r["drift_flagged"], r["name"])):
        flag = r["drift_words"] if r["drift_flagged"] else "no flag"
        blocks.append(
            Chart(
                f"driftChart:{r['name']}",
                charts[r["name"]],
                f"Drift chart for rater {r['name']}: per anchor answer, the deviation from the "
                "reference with its running average (EWMA) and control limits, and the CUSUM "
                f"up and down against h, on {', '.join(r['series'])}",
                f"{r['name']}: {_count(r.get('anchors'))} anchor answers · {flag}",
                r["drift_flagged"],
            )
        )
    return blocks


def raters_section(view: Mapping[str, Any]) -> Section:
    v = view.get(KEY)
    if not v:
        return Section(KEY, TITLE, SUBTITLE, (Note("No rater has answered yet."),))
    rows = v.get("rows") or []
    blocks = (
        _raters_blocks(rows)
        + _matrix_blocks(v.get("matrices") or [])
        + _fatigue_blocks(v.get("fatigue"))
        + _answer_times_blocks(v.get("answer_times"))
        + _calibration_blocks(v.get("calibrations"))
        # last: the app lays the captioned charts out in one grid of their own
        + _drift_blocks(rows, v.get("charts") or {})
    )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["raters_section"]
