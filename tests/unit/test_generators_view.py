"""The generators' tables: one per figure, in the order the figures are first met (declared,
then each generator's overall and cases), a case's notes and counts never a figure; every case
of every generator a row."""

from __future__ import annotations

from annotator.reports.view_study import generators_view


def _fig(x: float) -> dict:
    return {"estimate": x, "low": x - 0.1, "high": x + 0.1, "n": 5}


def test_figures_come_in_the_order_first_met_and_every_case_is_a_row() -> None:
    gens = {
        "cases": ["c1", "c2"],
        "figures": {"a": "pass rate"},
        "by_generator": {
            "g1": {
                "overall": {"a": _fig(0.5), "n_items": 3},
                "by_case": {
                    "c1": {"a": _fig(0.4), "n_items": 2},
                    "c2": {"a": _fig(0.6), "b": _fig(2.0), "b_note": "few", "n_items": 1},
                },
            },
            "g2": {
                "overall": {"a": _fig(0.7), "z": _fig(1.0), "n_cases": 2},
                "by_case": {
                    "c1": {"a": _fig(0.8), "n_items": 4},
                    "c3": {"y": _fig(3.0), "a": _fig(0.9), "verdict_pass_rate": _fig(0.2)},
                },
            },
        },
    }
    view = generators_view(gens)
    assert view is not None
    # the verdict first, then the figures as met: declared a, g1's case b, g2's z, its case y
    assert [f["key"] for f in view["figures"]] == ["verdict_pass_rate", "a", "b", "z", "y"]
    for f in view["figures"]:
        assert [cid for cid, _ in f["rows"]] == ["c1", "c2", "c3"]
    b = next(f for f in view["figures"] if f["key"] == "b")
    assert [cells for cid, cells in b["rows"] if cid == "c1"] == [["—", "—"]]
    assert b["rows"][1][1][1] == "—" and b["rows"][1][1][0] != "—"  # c2: g1's b, not g2's
