"""The generators' case-by-case cells made once per content: a view that reuses the cells of the
view before it is the view made afresh, cell for cell and text for text."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from annotator.reports.cell_memo import CaseRowMemo, CellMemo, TextMemo
from annotator.reports.html_report import build_view
from annotator.reports.report_sections import report_sections
from annotator.reports.sections import Table

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"


@pytest.fixture
def tifa() -> dict[str, Any]:
    return json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _no_memory_between_tests():
    _forget()
    yield
    _forget()


def _forget() -> None:
    CellMemo._last, CellMemo._last_ids = {}, {}
    TextMemo._last, TextMemo._last_rows = {}, {}
    CaseRowMemo._last = ((), {})


def _generators(report: dict[str, Any]) -> tuple[Any, dict[str, tuple]]:
    view = build_view(report, with_charts=False)
    (section,) = (s for s in report_sections(view) if s.key == "generators")
    tables = {b.name: b.rows for b in section.blocks if isinstance(b, Table)}
    return view["generators"], tables


def _afresh(report: dict[str, Any]) -> tuple[Any, dict[str, tuple]]:
    _forget()
    return _generators(report)


def test_a_view_of_reused_cells_is_the_view_made_afresh(tifa):
    """TIFA's 160 cases, then the same report with a few cells changed as new answers and a
    live estimate change them: moved, marked carried, a count that became a float (it prints
    "n=3.0", not "n=3"); every other cell comes from the memo."""
    first = _generators(tifa)
    assert first == _afresh(tifa)
    moved = copy.deepcopy(tifa)
    cases = moved["generators"]["by_generator"]["mini_dalle"]["by_case"]
    a, b, c = sorted(cases)[:3]
    cases[a]["faithfulness"]["estimate"] += 0.25
    cases[b]["faithfulness"].update(approximate=True, as_of="14:02")
    cases[c]["faithfulness"]["n"] = float(cases[c]["faithfulness"]["n"])
    _generators(tifa)  # the memo holds the unchanged report's cells
    reused = _generators(moved)
    assert reused == _afresh(moved)
    rows = {r[1]: r for r in reused[1]["generatorCasesTable"]}
    names = reused[0]["names"]
    at = 2 + names.index("mini_dalle")
    assert rows[c][at].endswith(f"n={float(cases[c]['faithfulness']['n'])}")
    assert "(as of 14:02)" in rows[b][at]


def test_the_memo_is_used_and_keeps_one_tables_cells(tifa, monkeypatch):
    """The same report again makes no cell afresh; another report's view replaces the memo,
    which never holds more than the last table's cells."""
    from annotator.reports import cell_memo

    made: list[Any] = []
    monkeypatch.setattr(cell_memo, "cell", lambda v: made.append(v) or cell_memo_cell(v))
    cells = _distinct_cells(tifa)  # 800 cells, 9 distinct figures: each made once
    _, tables = _generators(tifa)
    assert len(made) == len(cells)
    assert len(CellMemo._last) == len(cells)
    # laid out twice (the view's sections, then ours): the second read every case row whole
    case_rows = [r for r in tables["generatorCasesTable"] if r[1] != "all cases"]
    assert len(TextMemo._last_rows) == len(case_rows)
    made.clear()
    _generators(tifa)
    assert made == []
    other = copy.deepcopy(tifa)
    for g in other["generators"]["by_generator"].values():
        for case in g["by_case"].values():
            case["faithfulness"]["n"] = 10_000  # no cell of `tifa` has it
    _generators(other)
    assert len(made) == len(_distinct_cells(other))
    assert all(dict(zip(*key[:2], strict=True))["n"] == 10_000 for key in CellMemo._last)


def _distinct_cells(report: dict[str, Any]) -> set[str]:
    return {
        json.dumps(fig, sort_keys=True)
        for g in report["generators"]["by_generator"].values()
        for case in g["by_case"].values()
        for k, fig in case.items()
        if k != "n_items"
    }


def cell_memo_cell(v: Any) -> Any:
    from annotator.reports.view_metrics import cell

    return cell(v)


def test_rows_whose_cells_no_answer_moved_are_the_last_views_rows(tifa):
    """As a live estimate keeps them (stats/live_cases.py): the report again with one case's
    figures made anew and every other case the very dict of the last report. The section's
    rows of the untouched cases are the last view's tuples, the touched case's rows are made
    again, and the section equals the one made afresh."""
    _, before = _generators(tifa)
    moved = copy.copy(tifa)
    moved["generators"] = gens = copy.copy(tifa["generators"])
    gens["by_generator"] = by_gen = dict(gens["by_generator"])
    by_gen["mini_dalle"] = one = dict(by_gen["mini_dalle"])
    one["by_case"] = cases = dict(one["by_case"])
    touched = sorted(cases)[0]
    cases[touched] = copy.deepcopy(cases[touched])
    cases[touched]["faithfulness"]["estimate"] += 0.25
    _, after = _generators(moved)
    old = {(r[0], r[1]): r for r in before["generatorCasesTable"]}
    kept = made = 0
    for r in after["generatorCasesTable"]:
        if r[1] == touched:
            assert r is not old[(r[0], r[1])]
            made += 1
        elif r[1] != "all cases":
            assert r is old[(r[0], r[1])]
            kept += 1
    assert made >= 1 and kept > 100
    assert after == _afresh(moved)[1]


def _pairs_table(report: dict[str, Any]) -> tuple:
    """The view's pair cells (Est: every field compared) and the section's pair table."""
    view = build_view(report, with_charts=False)
    cells = [row for m in view["agreement"]["metrics"] for row in m["pair_rows"]]
    (section,) = (s for s in report_sections(view) if s.key == "agreement")
    (table,) = (b for b in section.blocks if isinstance(b, Table) and "Pairs" in b.name)
    return cells, table.rows


def test_pair_cells_kept_across_views_are_the_cells_made_afresh(tifa):
    """The rater pairs' cells are kept by content across views (formatting.kept_est_of, the
    section's text by the cell): a pair whose figure moved, became approximate, took a float
    count or an outer note prints as a view made afresh prints it; an equal figure gets the
    very cell of the view before."""
    from annotator.reports import formatting, section_agreement

    def afresh(report: dict[str, Any]) -> tuple:
        formatting._KEPT_ESTS.clear()
        section_agreement._PAIR_TEXTS.clear()
        return _pairs_table(report)

    first = afresh(tifa)
    assert _pairs_table(tifa) == first
    pair = tifa["metrics"]["faithfulness"]["rater_pairs"]["tifa_slot1 vs tifa_slot2"]
    assert formatting.kept_est_of(pair, "linear") is formatting.kept_est_of(
        copy.deepcopy(pair), "linear"
    )
    for change in (
        lambda p: p["unweighted"].update(estimate=p["unweighted"]["estimate"] + 0.125),
        lambda p: p["linear"].update(approximate=True, as_of="14:02"),
        lambda p: p["quadratic"].update(n=float(p["quadratic"]["n"])),
        lambda p: p.update(quadratic_note="a note beside the figure"),
    ):
        moved = copy.deepcopy(tifa)
        change(moved["metrics"]["faithfulness"]["rater_pairs"]["tifa_slot1 vs tifa_slot2"])
        _pairs_table(tifa)  # the memo holds the unmoved report's cells
        kept = _pairs_table(moved)
        # repr: an Est of n=800.0 equals one of n=800, and prints otherwise
        assert repr(kept) == repr(afresh(moved))
        assert repr(kept[0]) != repr(first[0])
