"""A live estimate keeps the generators' rows whose figures did not move since the last live
estimate (stats/live_cases.py), and the dashboard's view keeps their cells (reports/cell_memo.py):
the estimate and its view are the ones made afresh, bit for bit, and only the cases the new
answers touched are made again."""

from __future__ import annotations

import json
from dataclasses import replace

from conftest import LIVE_N_BOOT

from annotator.reports.cell_memo import CaseRowMemo, CellMemo
from annotator.reports.view_study import generators_section_view
from annotator.stats.live_cases import LiveCases
from annotator.stats.report_model import build_report


def _forget() -> None:
    LiveCases._last = (None, 0, None)
    CaseRowMemo._last = ((), {})
    CellMemo._last, CellMemo._last_ids = {}, {}


def _rows(report: dict) -> dict[tuple[str, str], dict]:
    gens = report["generators"]["by_generator"]
    return {(g, c): row for g, e in gens.items() for c, row in e["by_case"].items()}


def _carried(cell: object) -> bool:
    return not isinstance(cell, dict) or cell.get("approximate") is True


def test_unmoved_rows_are_kept_and_the_estimate_is_the_one_made_afresh(demo_moved_on):
    frames, before, _after = demo_moved_on
    j = frames.judgements
    earlier = replace(frames, judgements=j[j["rater"].astype(str) != "zed"])  # before zed's answers
    _forget()
    first = build_report(earlier, n_boot=LIVE_N_BOOT, intervals_from=before)
    first_view = generators_section_view(first)
    now = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=before)  # keeps unmoved rows
    now_view = generators_section_view(now)
    _forget()
    afresh = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=before)
    assert json.dumps(now, sort_keys=True) == json.dumps(afresh, sort_keys=True)
    assert now_view == generators_section_view(afresh) and now_view != first_view
    was, rows = _rows(first), _rows(now)
    kept = {k for k in rows if rows[k] is was.get(k)}
    items = frames.items.set_index("item_id")
    zed = items.loc[j.loc[j["rater"].astype(str) == "zed", "item_id"].unique()]
    touched = set(zip(zed["generator"], zed["case_id"], strict=True))
    # every case zed's 20 answers left alone keeps the last estimate's row, the very object,
    # cells the full computation gave no interval among them; a case they moved is made again
    untouched = set(rows) - touched
    assert untouched and untouched <= kept
    assert any(not _carried(v) for k in untouched for v in rows[k].values())
    assert all(rows[k] is not was.get(k) for k in rows if rows[k] != was.get(k))
    assert any(rows[k] != was.get(k) for k in touched)


def test_another_full_computation_makes_every_row_again(demo_moved_on):
    frames, before, after = demo_moved_on
    _forget()
    one = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=before)
    other = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=after)
    assert not any(a is b for a, b in zip(_rows(one).values(), _rows(other).values(), strict=True))


def test_cells_laid_out_otherwise_make_every_row_again(demo_moved_on):
    """A generator's first answers add its cells to every figure: no row of the last estimate is
    kept (each figure's cells are compared in place), and the estimate is the one made afresh."""
    frames, before, _after = demo_moved_on
    j = frames.judgements
    generator = frames.items.set_index("item_id")["generator"]
    first_gen = sorted(generator.dropna().unique())[0]
    without = replace(frames, judgements=j[j["item_id"].map(generator) != first_gen])
    _forget()
    was = _rows(build_report(without, n_boot=LIVE_N_BOOT, intervals_from=before))
    now = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=before)
    assert not any(row is was.get(k) for k, row in _rows(now).items())
    assert any(g == first_gen for g, _ in _rows(now)) and not any(g == first_gen for g, _ in was)
    _forget()
    afresh = build_report(frames, n_boot=LIVE_N_BOOT, intervals_from=before)
    assert json.dumps(now, sort_keys=True) == json.dumps(afresh, sort_keys=True)
