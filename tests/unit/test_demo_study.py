"""`annotator demo --headless` builds a real study whose report shows what was planted:
a lenient judge, a drifting rater, generators with known defects, pairwise votes."""

from __future__ import annotations

import csv
import json

import pytest

from annotator.cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    assert main(["demo", "--headless", "--study", str(d / "study")]) == 0
    assert main(["demo", "--headless", "--study", str(d / "study")]) == 0  # already there: reused
    assert (
        main(
            [
                "report",
                "--study",
                str(d / "study"),
                "--json",
                str(d / "r.json"),
                "--html",
                str(d / "r.html"),
                "--csv",
                str(d / "csv"),
                "--boot",
                "1000",
            ]
        )
        == 0
    )
    return d, json.loads((d / "r.json").read_text())


def test_lenient_judge_is_a_systematic_finding(demo):
    _, r = demo
    lenient = {f["metric"] for f in r["systematic_findings"] if f["kind"] == "lenient"}
    assert "verdict" in lenient and lenient & {"instruction_following", "text_rendering"}
    contradictions = [
        f
        for f in r["findings"]
        if f["judge"] == "PASS" and f["metric"] in ("instruction_following", "text_rendering")
    ]
    assert contradictions, "a judge PASS against a human FAIL consensus must be listed item by item"
    assert all(
        f.get("display_code") and f.get("case_id") and f.get("generator") for f in r["findings"]
    )


def test_judge_beats_its_permutation_baseline(demo):
    _, r = demo
    j = r["metrics"]["layout_hierarchy"]["judges"]["demo-lenient-judge"]
    assert j["alpha_vs_consensus"]["estimate"] > j["permutation_alpha"]["mean"] + 0.2
    assert abs(j["permutation_alpha"]["mean"]) < 0.15 and j["permutation_alpha"]["p_value"] < 0.05


def test_drifting_rater_is_named_and_operator_is_nowhere(demo):
    d, r = demo
    drift = r["raters"]["sim-drifting"]["drift"]
    assert drift["flagged"] and drift["direction"] == "up" and drift["first_flag_at"] >= 6
    assert not r["raters"]["sim-steady"]["drift"]["flagged"]
    assert "ops-check" not in json.dumps(r)
    import sqlite3

    with sqlite3.connect(d / "study" / "study.sqlite") as c:
        op = "select count(*) from {} t join raters r on r.id = t.rater_pk where r.name = 'ops-check'"
        assert c.execute(op.format("judgements")).fetchone()[0] > 0  # stored ...
        assert c.execute(op.format("pair_votes")).fetchone()[0] > 0
    # ... and counted nowhere: the pairwise tallies hold only the three simulated voters' votes
    assert set(r["pairwise"]["position_bias"]["by_rater"]) == {
        "sim-steady",
        "sim-severe",
        "sim-lenient",
    }
    with open(d / "csv" / "judgements.csv", newline="") as fh:
        assert "ops-check" not in {row["rater"] for row in csv.DictReader(fh)}


def test_pairwise_and_generators_show_the_planted_order(demo):
    _, r = demo
    bt = r["pairwise"]["bradley_terry"]
    assert bt["gen-alpha"]["estimate"] > bt["gen-beta"]["estimate"] > bt["gen-gamma"]["estimate"]
    assert r["pairwise"]["position_bias"]["left"] + r["pairwise"]["position_bias"]["right"] > 100
    gens = r["generators"]
    assert set(gens["by_generator"]) == {"gen-alpha", "gen-beta", "gen-gamma"}
    assert list(gens["by_generator"]["gen-alpha"]["by_case"]) == sorted(
        gens["by_generator"]["gen-alpha"]["by_case"]
    )


def test_html_report_is_self_contained_with_thumbnails(demo):
    d, _ = demo
    html = (d / "r.html").read_text()
    assert "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html
