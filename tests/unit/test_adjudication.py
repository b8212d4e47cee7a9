"""Adjudication: the lead's answers beside (never over) the raters', the review queue, the gold
export in every format, anchors promoted into the next calibration and silent seeding."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from conftest import copy_study
from team_study import build_team_study

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.services.adjudication import adjudicate, gold_rows, review_queue
from annotator.services.calibration import CalibrationSession
from annotator.services.labeling import LabelSession
from annotator.services.reporting import build_study_report
from annotator.services.study import DB_NAME, Study

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}


@pytest.fixture
def lead(demo_study_dir, tmp_path) -> Study:
    study = Study.open(copy_study(demo_study_dir, tmp_path / "lead"))
    yield study
    study.close()


def _judgement_rows(study: Study) -> list[tuple]:
    with sqlite3.connect(study.folder / DB_NAME) as c:
        return c.execute("SELECT * FROM judgements ORDER BY id").fetchall()


def test_the_demo_lead_has_adjudicated_and_the_queue_shows_it(lead):
    queue = review_queue(lead)
    done = [e for e in queue if e.adjudicated]
    assert len(done) >= 3 and any(e.adjudicated["category"] == "rubric_unclear" for e in done)
    assert queue[0].priority <= queue[-1].priority
    assert {r for e in queue for r in e.reasons} >= {"judge_contradicts", "humans_disagree"}
    assert all(
        review_queue(lead, metric="instruction_following")[i].metric == "instruction_following"
        for i in range(3)
    )


def test_adjudication_never_changes_a_judgement_or_human_alpha(lead):
    before_rows = _judgement_rows(lead)
    before = build_study_report(lead, n_boot=50, seed=1)
    entry = next(
        e for e in review_queue(lead, include_resolved=False) if "humans_disagree" in e.reasons
    )
    adjudicate(
        lead,
        item_id=entry.item_id,
        metric=entry.metric,
        value=entry.humans[0]["value"],
        reason="looked again",
        by="dana",
    )
    after = build_study_report(lead, n_boot=50, seed=1)
    assert _judgement_rows(lead) == before_rows
    for key, sec in before["metrics"].items():
        assert sec["human_alpha"] == after["metrics"][key]["human_alpha"], key


def test_a_later_adjudication_supersedes_and_both_are_kept(lead, capsys):
    entry = next(
        e for e in review_queue(lead, include_resolved=False) if e.metric == "instruction_following"
    )
    args = [
        "adjudicate",
        "--study",
        str(lead.folder),
        "--item",
        entry.item_id,
        "--metric",
        "instruction_following",
    ]
    assert main([*args, "--value", "PASS", "--reason", "first look"]) == 0
    assert (
        main(
            [
                *args,
                "--value",
                "FAIL",
                "--reason",
                "second look",
                "--by",
                "dana",
                "--category",
                "rater_error",
            ]
        )
        == 0
    )
    with sqlite3.connect(lead.folder / DB_NAME) as c:
        rows = c.execute(
            "SELECT a.id, a.value, a.supersedes, a.by FROM adjudications a JOIN items i "
            "ON i.id = a.item_pk WHERE i.item_id = ? AND a.metric = 'instruction_following' ORDER BY a.id",
            (entry.item_id,),
        ).fetchall()
    assert (
        [json.loads(r[1]) for r in rows] == ["PASS", "FAIL"]
        and rows[1][2] == rows[0][0]
        and rows[1][3] == "dana"
    )
    gold = {(r["item_id"], r["metric"]): r for r in gold_rows(lead)}
    g = gold[(entry.item_id, "instruction_following")]
    assert g["value"] == "FAIL" and g["source"] == "adjudicated" and g["adjudicated_by"] == "dana"
    for bad, needle in (
        (["--value", "MAYBE", "--reason", "x"], "not PASS or FAIL"),
        (["--value", "PASS", "--reason", " "], "needs its reason"),
        (["--value", "PASS", "--reason", "x", "--category", "whim"], "not one of"),
    ):
        assert main([*args, *bad]) == 2
        assert needle in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_gold_export_round_trips_through_pandas(lead, tmp_path, suffix):
    out = tmp_path / f"gold{suffix}"
    assert main(["export", "gold", "--study", str(lead.folder), "--out", str(out)]) == 0
    df = {
        ".jsonl": lambda p: pd.read_json(p, lines=True),
        ".csv": pd.read_csv,
        ".parquet": pd.read_parquet,
    }[suffix](out)
    rows = gold_rows(lead)
    assert len(df) == len(rows) == lead.counts()["items"] * 5  # live items x judged metrics
    assert set(df["source"]) <= {"adjudicated", "clear_consensus", "unresolved"}
    assert (
        (df["source"] == "adjudicated").sum()
        == sum(r["source"] == "adjudicated" for r in rows)
        >= 3
    )
    assert {"generator", "case_id", "answers", "judge"} <= set(df.columns)


def test_promoted_anchor_enters_calibration_and_seeding_with_its_version(lead, tmp_path, capsys):
    target = next(e for e in review_queue(lead) if e.adjudicated and e.consensus.clear)
    # every other metric of the item needs a final answer too
    for r in gold_rows(lead):
        if r["item_id"] == target.item_id and r["source"] == "unresolved":
            adjudicate(
                lead,
                item_id=r["item_id"],
                metric=r["metric"],
                value=r["value"]
                or (
                    "PASS"
                    if r["metric"] in ("instruction_following", "text_rendering")
                    else ""
                    if r["metric"] == "failure_tags"
                    else "3"
                ),
                reason="checked",
            )
    assert main(["anchors", "promote", "--study", str(lead.folder), "--item", target.item_id]) == 0
    out = capsys.readouterr().out
    assert "anchor set version 2" in out
    lead.add_rater("nova")
    cal = CalibrationSession(lead, "nova")
    served = []
    while (item := cal.next()) is not None:
        served.append(item.item_pk)
        cal.submit(item, ALL, 3)
    record = cal.finish()
    with sqlite3.connect(lead.folder / DB_NAME) as c:
        new_pk = c.execute(
            "SELECT id FROM items WHERE item_id = ?", (f"anchor:{target.item_id}",)
        ).fetchone()[0]
        version = c.execute(
            "SELECT anchor_set_version FROM calibrations WHERE id = ?", (record["id"],)
        ).fetchone()[0]
    assert new_pk in served and version == 2
    lead.db.set_setting("anchor_every", 2)
    session = LabelSession(lead, "nova")
    for _ in range(40):
        item = session.next()
        if item is None:
            break
        session.submit(item, ALL, 3)
    with sqlite3.connect(lead.folder / DB_NAME) as c:
        shown = c.execute(
            "SELECT item_pk, anchor_set_version FROM anchor_showings s JOIN raters r "
            "ON r.id = s.rater_pk WHERE r.name = 'nova'"
        ).fetchall()
    assert shown and all(v == 2 for _, v in shown)
    assert (
        new_pk in {pk for pk, _ in shown} or len(shown) < 15
    )  # 15 anchors now; it comes in its turn
    folder = tmp_path / "set"
    assert main(["anchors", "export", "--study", str(lead.folder), "--out", str(folder)]) == 0
    lines = (folder / "anchors.jsonl").read_text().splitlines()
    assert len(lines) == 15 and (folder / "images" / "anchor-15.png").exists()
    fresh = Study.create(tmp_path / "next", "ui_mockup")
    assert fresh.import_anchors(folder / "anchors.jsonl") == 15  # seeds the next study
    fresh.close()


def test_review_and_adjudication_are_lead_work(lead, tmp_path):
    from annotator.services.packages import export_package
    from annotator.services.team import assign

    assign(lead, ["nova", "omar"], overlap=1, pair_overlap=None, seed=2)
    export_package(lead, "nova", tmp_path / "nova.annot")
    pkg = Study.open(tmp_path / "nova.annot")
    try:
        with pytest.raises(InputError, match="not in a rater package"):
            review_queue(pkg)
        with pytest.raises(InputError, match="not in a rater package"):
            adjudicate(pkg, item_id="x", metric="instruction_following", value="PASS", reason="x")
    finally:
        pkg.close()


def _import_judge(study: Study, tmp_path, name: str, answer) -> None:
    """A judge `name` answering `answer(metric)` (None: not that metric) on every live item."""
    con = sqlite3.connect(study.folder / DB_NAME)
    try:
        items = [r[0] for r in con.execute("SELECT item_id FROM items WHERE NOT is_anchor")]
    finally:
        con.close()
    rows = ["item_id,judge,metric,value"]
    for item in items:
        for m in study.rubric.metrics:
            if (value := answer(m)) is not None:
                rows.append(f"{item},{name},{m.key},{value}")
    path = tmp_path / f"{name}.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    study.import_judge(path)


@pytest.fixture
def team(tmp_path) -> Study:
    """A study with a systematic finding: the demo (24 live items) is too
    small for the systematic test, which compares a judge with the humans' own spread and
    needs more items, so the queue's order is shown on a team study built for it: 3 raters who agree well
    and a judge planted lenient by two points on the scales and PASS on every gate
    (tests/unit/team_study.py), a finding on every scale, gate and the verdict. The judge does
    not score the failure tags, where the raters disagree on one item: an entry no systematic
    judge is on, which must come after every systematic one."""
    study = build_team_study(tmp_path / "team", judge_tags=False)
    yield study
    study.close()


def test_the_queue_puts_systematic_findings_first_from_the_last_kept_report(team):
    from annotator.services.report_cache import cached_study_report

    assert not any(e.systematic for e in review_queue(team))  # no report kept yet
    report, _ = cached_study_report(team, n_boot=20, seed=1)
    systematic = {
        (f["metric"].split(":")[0], f["judge_name"]) for f in report["systematic_findings"]
    }
    assert any(judge == "lenient-judge" for _metric, judge in systematic), systematic
    queue = review_queue(team)
    flagged = [e for e in queue if e.systematic]
    assert flagged and all(
        any((e.metric, j["judge"]) in systematic for j in e.judges) for e in flagged
    )
    first_plain = next(i for i, e in enumerate(queue) if not e.systematic)
    assert all(not e.systematic for e in queue[first_plain:])  # every systematic one before


def test_the_dashboards_report_orders_the_queue(team):
    from annotator.services.dashboard import compute, read_inputs

    assert not any(e.systematic for e in review_queue(team))
    compute(read_inputs(team, n_boot=20, seed=1, use_cache=False))  # what opening it does
    assert any(e.systematic for e in review_queue(team))


def _add_a_far_judge(study: Study, tmp_path) -> None:
    """A judge at the bottom of layout_hierarchy (so it contradicts humans whose lowest answer
    is 2 or more, however far apart they are) and FAIL on every gate. (A judge scoring on a scale
    of its own needs the rubric to say so, `judge_scale = "own"`: ui_mockup does not.)"""
    fixed = {"layout_hierarchy": "0"}
    _import_judge(
        study, tmp_path, "far-judge", lambda m: "FAIL" if m.kind == "gate" else fixed.get(m.key)
    )


def test_the_queues_judge_contradictions_are_the_reports_findings(lead, tmp_path):
    """One clear-consensus rule (stats/consensus.py): the queue flags exactly the item, metric and
    judge triples the report lists as findings (the verdict aside: the lead adjudicates rubric
    metrics). Before, the queue had its own copy: it wanted a clear consensus on a scale too
    (the report flags a judge far outside the humans' range however spread they are), and it
    compared a judge on a scale of its own with the humans' answers."""
    _add_a_far_judge(lead, tmp_path)
    report = build_study_report(lead, n_boot=20, seed=1)
    queue = review_queue(lead, report=report)
    found = [f for f in report["findings"] if f["metric"] != "verdict"]
    assert {(f["item_id"], f["metric"].split(":")[0]) for f in found} == {
        (e.item_id, e.metric) for e in queue if "judge_contradicts" in e.reasons
    }
    assert {(f["item_id"], f["metric"].split(":")[0], f["judge_name"]) for f in found} == {
        (e.item_id, e.metric, j["judge"]) for e in queue for j in e.judges if j["contradicts"]
    }
    far = [
        e for e in queue if any(j["contradicts"] and j["judge"] == "far-judge" for j in e.judges)
    ]
    assert any(e.metric == "layout_hierarchy" and not e.consensus.clear for e in far)


def test_a_tags_consensus_is_clear_option_by_option_as_the_reports_is():
    """Each option of a tags metric is its own yes/no question in the report (findings per tag);
    the queue and the gold read it the same way (before, they wanted 80% of the raters to tick
    the very same set, which five raters who agree on every tag but one each never do)."""
    from annotator.domain.clear_consensus import CLEAR_SHARE
    from annotator.ingest.rubrics import load_rubric
    from annotator.services.adjudication import consensus

    m = load_rubric(Path(__file__).resolve().parents[2] / "rubrics" / "ui_mockup.toml").metric(
        "failure_tags"
    )
    five = [("broken_layout",)] * 3 + [
        ("broken_layout", "misspelled_text"),
        ("broken_layout", "non_ui_artifacts"),
    ]
    c = consensus(m, five)  # every option: 4 or 5 of 5 agree
    assert c.clear and c.value == ("broken_layout",) and c.n == 5
    assert c.spread == pytest.approx(1 - CLEAR_SHARE)
    split = consensus(m, [("broken_layout",)] * 3 + [("misspelled_text",)] * 2)  # 3 of 5 on two
    assert not split.clear and split.value is None and split.spread == pytest.approx(0.4)
    # up to four raters, every option clear is the same as one set for all
    assert consensus(m, [("broken_layout",)] * 4).clear
    assert not consensus(m, [("broken_layout",)] * 3 + [()]).clear
