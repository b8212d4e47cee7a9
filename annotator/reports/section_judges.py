"""The judge versions and calibration section, for the dashboard, the HTML report and the CSV
tables: each judge's versions compared on the same items, and the calibration of its latest
version with confidences (reliability diagram, calibration error, Brier score), laid out from
the rows of reports/view_judges.py. One table per part with a judge column, not one per judge,
so that each part is one CSV (`judge_versions.csv`, `judge_calibration.csv`: the cells as the
report shows them; the figures as numbers are in report.json)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import Est
from .sections import Block, Chart, Note, Section, Table

KEY = "judge_versions"
TITLE = "Judge versions and calibration"
SUBTITLE = (
    "A new prompt, model, schema or setting is a new version of a judge; the other sections "
    "show each judge's latest. Here its versions are compared on the same items, and its "
    "stated confidences are checked against how often it equals the clear human consensus."
)
VERSION_HEADERS = (
    "judge",
    "versions A → B",
    "metric",
    "measure",
    "A [95%]",
    "B [95%]",
    "B − A [95%]",
    "changed items",
    "paired tests",
)
CALIBRATION_HEADERS = (
    "judge",
    "version",
    "metric",
    "items",
    "accuracy",
    "mean confidence",
    "calibration error [95%]",
    "test",
    "Brier [95%]",
)


def est_text(e: Est, *, with_n: bool = True) -> str:
    """An estimate as one cell: '0.94 [0.86, 1.00] n=34', or why it is undefined."""
    s = str(e)
    if with_n and e.defined and e.n is not None:
        s += f" n={e.n}"
    return s


def _worse(r: Mapping[str, Any]) -> bool:
    """Whether B is worse than A beyond the paired interval (a regression of the latest)."""
    d: Est = r["difference"]
    if d.low is None or d.high is None:
        return False
    return d.high < 0 if r["better_if"] != "lower" else d.low > 0


def _short(judge: str, version: str) -> str:
    """'judge@v2' -> 'v2' in the judge's own row."""
    return version.removeprefix(f"{judge}@")


def _changed(r: Mapping[str, Any]) -> str:
    text = str(r["n_changed"])
    if r["n_changed"]:
        other = f", {r['n_other']} other" if r["n_other"] else ""
        text += f" ({r['n_better']} better, {r['n_worse']} worse{other})"
    return text


def _version_blocks(versions: list[Mapping[str, Any]]) -> list[Block]:
    if not versions:
        return []
    blocks: list[Block] = [Note("Versions compared on the same items", "heading")]
    for jv in versions:
        listed = " · ".join(
            f"{v['version']} ({v['n_items']} items"
            + (", with confidences)" if v["with_confidence"] else ")")
            for v in jv["versions"]
        )
        blocks.append(
            Note(f"{jv['judge']}: A = {jv['a']} · B = {jv['b']} (latest). Versions: {listed}.")
        )
    blocks.append(
        Note(
            "Accuracy ↑: the share of items where the version's answer equals the clear human "
            "consensus (higher is better); mean abs. error ↓: its mean distance from the human "
            "median on a scale (lower is better). Changed items are better or worse against the "
            "consensus. B−A is paired: the items both versions answered and the humans agree on, "
            "resampled together; a row is flagged where B is worse beyond that interval.",
            "aside",
        )
    )
    rows: list[tuple[str, ...]] = []
    flagged: set[int] = set()
    examples: list[Block] = []
    for jv in versions:
        for r in jv["rows"]:
            if _worse(r):
                flagged.add(len(rows))
            rows.append(
                (
                    jv["judge"],
                    f"{_short(jv['judge'], jv['a'])} → {_short(jv['judge'], jv['b'])}",
                    r["metric"],
                    f"{r['measure']} {'↓' if r['better_if'] == 'lower' else '↑'}",
                    est_text(r["a"]),
                    est_text(r["b"]),
                    est_text(r["difference"], with_n=False),
                    _changed(r),
                    r["tests"] or "—",
                )
            )
            if r["examples"]:
                items = " · ".join(
                    f"{e['kind']}: {e.get('item_id')} ({e.get('a')} → {e.get('b')}, humans "
                    f"{e.get('humans')})"
                    for e in r["examples"]
                )
                examples.append(Note(f"{jv['judge']}, {r['metric']}: {items}", "aside"))
    blocks.append(
        Table(
            "judgeVersionsTable",
            VERSION_HEADERS,
            tuple(rows),
            frozenset(flagged),
            frozenset({4, 5, 6}),
        )
    )
    return blocks + examples


def _calibration_blocks(
    calibration: list[Mapping[str, Any]], charts: Mapping[str, bytes]
) -> list[Block]:
    if not calibration:
        return []
    blocks: list[Block] = [
        Note("Calibration of each judge's latest version with confidences", "heading"),
        Note(
            "Does the judge's stated probability match how often it equals the clear human "
            "consensus? Calibration error: the gap between confidence and accuracy over ten "
            "confidence bins (root mean square, debiased so that a calibrated judge reads about "
            "0; Kumar et al. 2019). Test: consistency resampling (Bröcker & Smith 2007), outcomes "
            'redrawn from the judge\'s own confidences; "not miscalibrated at 5%" where the gap '
            "is within what a calibrated judge shows (a miscalibrated row is flagged). Brier "
            "score: the mean squared distance between confidence and being right (0 is perfect; "
            "0.25 is a constant 0.5).",
            "aside",
        ),
    ]
    rows: list[tuple[str, ...]] = []
    flagged: set[int] = set()
    for jc in calibration:
        for r in jc["rows"]:
            if r.get("miscalibrated"):
                flagged.add(len(rows))
            rows.append(
                (
                    jc["judge"],
                    jc["version"],
                    r["metric"],
                    "—" if r["n"] is None else str(r["n"]),
                    r["accuracy"],
                    r["mean_confidence"],
                    est_text(r["ece"], with_n=False),
                    r["calibration_test"] or "—",
                    est_text(r["brier"], with_n=False),
                )
            )
    blocks.append(
        Table(
            "judgeCalibrationTable",
            CALIBRATION_HEADERS,
            tuple(rows),
            frozenset(flagged),
            frozenset({3, 4, 5, 6, 8}),
        )
    )
    drawn = [jc for jc in calibration if charts.get(jc["judge"])]
    for i, jc in enumerate(drawn):
        blocks.append(
            Chart(
                f"judgeCalibrationChart{i}",
                charts[jc["judge"]],
                f"Reliability diagram of judge {jc['judge']}",
                f"{jc['judge']} (version {jc['version']}): the share equal to the human "
                "consensus per confidence bin (marker area: the bin's items), against the "
                "diagonal of perfect calibration.",
            )
        )
    return blocks


def judges_section(view: Mapping[str, Any]) -> Section:
    j = view.get(KEY)
    if not j:
        return Section(
            KEY,
            TITLE,
            SUBTITLE,
            (Note("No judge with two versions, nor one that stated confidences, yet."),),
        )
    blocks = _version_blocks(j.get("versions") or []) + _calibration_blocks(
        j.get("calibration") or [], j.get("charts") or {}
    )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["judges_section"]
