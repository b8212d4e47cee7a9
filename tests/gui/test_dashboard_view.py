"""DashboardView on a real study with labels, live anchors (one drifting rater),
judge scores, pair votes and a calibration record."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QTableWidget

from annotator.demo import scenario
from annotator.services.calibration import CalibrationSession
from annotator.services.labeling import LabelSession
from annotator.services.pairing import PairSession
from annotator.services.study import Study
from annotator.ui.dashboard_view import DashboardView
from annotator.ui.worker import DbWorker

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
ANCHORS = REPO / "anchors" / "ui_mockup" / "anchors.jsonl"
SHOTS = REPO / "packaging" / "screenshots"
# name -> shift of both scales on live anchors (dee drifts down by two points)
RATERS = {"ana": 0, "ben": 0, "dee": -2}
N_BOOT = 40


def _item_ids(study: Study) -> dict[int, str]:
    con = sqlite3.connect(study.folder / "study.sqlite")
    try:
        return dict(con.execute("SELECT id, item_id FROM items"))
    finally:
        con.close()


def _answers(truth: dict, shift: int = 0) -> dict:
    a = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in truth.items()}
    for k in ("layout_hierarchy", "ui_affordance"):
        a[k] = min(5, max(0, int(a[k]) + shift))
    return a


@pytest.fixture(scope="module")
def dash_study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dash")
    files = scenario.write_demo_inputs(tmp / "in", variants_per_case=1)
    study = Study.create(tmp / "study", RUBRIC)
    study.import_items(files.manifest)
    study.import_judge(files.judge_csv)
    study.import_anchors(ANCHORS)
    study.db.set_setting("anchor_every", 2)  # anchors often, so a drift shows within one queue
    refs = {json.loads(line)["item_id"]: json.loads(line)["reference"]
            for line in ANCHORS.read_text(encoding="utf-8").splitlines()}
    ids = _item_ids(study)
    for n, (name, shift) in enumerate(RATERS.items()):
        study.add_rater(name)
        session = LabelSession(study, name)
        k = 0
        while (served := session.next()) is not None:
            item_id = ids[served.item_pk]
            if served.context == "anchor":
                answers = _answers(refs[item_id], shift)
            else:
                # ben is a point harsher on every third live layout: humans do not agree perfectly
                answers = _answers(files.truths[item_id])
                if n == 1 and k % 3 == 0:
                    answers["layout_hierarchy"] = max(0, answers["layout_hierarchy"] - 1)
            k += 1
            session.submit(served, answers, time_ms=4000 + 100 * k)
    # pair votes: the output with the better truth wins; ties on equal scores
    score = {pk: sum(int(files.truths[iid][m]) for m in ("layout_hierarchy", "ui_affordance"))
             for pk, iid in ids.items() if iid in files.truths}
    for name in ("ana", "ben"):
        ps = PairSession(study, name)
        while (sp := ps.next()) is not None:
            a, b = score[sp.left_pk], score[sp.right_pk]
            ps.vote(sp, "left" if a > b else "right" if b > a else "both", None, 3000)
    # one calibration session for the calibration history
    cs = CalibrationSession(study, "dee")
    while (item := cs.next()) is not None:
        cs.submit(item, _answers(refs[ids[item.item_pk]]), 5000)
    assert cs.finish()["qualified"] is True
    yield study
    study.close()


@pytest.fixture()
def db_worker():
    w = DbWorker()
    yield w
    w.stop()
    assert not w.running


def test_dashboard_renders_the_report_figures(qtbot, dash_study, db_worker):
    view = DashboardView(dash_study, None, db_worker, None, n_boot=N_BOOT, seed=3)
    qtbot.addWidget(view)
    view.resize(1400, 1000)
    view.show()
    qtbot.waitExposed(view)
    assert view.is_busy() and view.busy_bar.isVisible()
    assert not view.refresh()  # one computation at a time

    # The UI thread keeps running while the worker computes: a 20 ms timer keeps firing.
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    with qtbot.waitSignal(view.reportReady, timeout=120_000) as ready:
        pass
    timer.stop()
    report = ready.args[0]
    assert len(ticks) > 10
    assert max(b - a for a, b in zip(ticks, ticks[1:], strict=False)) < 1.0
    assert not view.is_busy() and not view.busy_bar.isVisible()
    assert view.busy_label.text().startswith("Computed in")

    tables = {t.objectName(): t for t in view.findChildren(QTableWidget)}
    # agreement: one row per metric (and judge) with the human alpha and its interval
    agree = tables["agreementTable"]
    metrics_in_table = {agree.item(r, 0).text() for r in range(agree.rowCount())} - {""}
    assert set(report["metrics"]) <= metrics_in_table
    # the report's overall verdict is shown as one more row, as in the HTML report
    assert metrics_in_table - set(report["metrics"]) <= {"verdict", "verdict (all rules)"}
    row = next(r for r in range(agree.rowCount()) if agree.item(r, 0).text() == "layout_hierarchy")
    est = report["metrics"]["layout_hierarchy"]["human_alpha"]
    m = report["metrics"]["layout_hierarchy"]
    assert agree.item(row, 2).text() == f"{m['n_items']} · {m['n_raters']} · {m['n_judgements']}"
    assert agree.item(row, 3).text().startswith(f"{est['estimate']:.2f} [{est['low']:.2f}, {est['high']:.2f}]")
    assert agree.item(row, 4).text() == scenario.JUDGE_NAME

    # findings count as in the report
    headings = [lab.text() for lab in view.findChildren(QLabel)]
    assert f"Findings: {len(report['findings'])}" in headings
    if report["findings"]:
        assert tables["findingsTable"].rowCount() == min(len(report["findings"]), 200)

    # raters: judgements, anchors, accuracy, drift flag; dee flagged (and highlighted)
    raters = tables["ratersTable"]
    rows = {raters.item(r, 0).text(): [raters.item(r, c).text() for c in range(raters.columnCount())]
            for r in range(raters.rowCount())}
    assert set(rows) == set(RATERS)
    for name, cells in rows.items():
        r = report["raters"][name]
        assert cells[1] == str(r["n_judgements"]) and cells[2] == str(r["anchors"])
        assert r["anchors"] >= 4
        assert cells[3] != "—"
    assert report["raters"]["dee"]["drift"]["flagged"] is True
    assert report["raters"]["dee"]["drift"]["direction"] == "down"
    assert rows["dee"][4].startswith("drift:") and "down" in rows["dee"][4]
    assert rows["ana"][4] == "no drift flag"
    dee_row = next(r for r in range(raters.rowCount()) if raters.item(r, 0).text() == "dee")
    assert raters.item(dee_row, 0).background().color().name() == "#fff6ed"

    # a drift chart per rater, the flagged one first
    charts = [lab for lab in view.findChildren(QLabel) if lab.objectName().startswith("driftChart:")]
    assert {c.objectName().split(":", 1)[1] for c in charts} == set(RATERS)
    assert all(c.pixmap() is not None and not c.pixmap().isNull() for c in charts)
    series = report["raters"]["dee"]["series"]["layout_hierarchy"]
    assert max(series["cusum_down"]) > series["h"]
    assert view.findChild(QLabel, "agreementChart").pixmap() is not None

    # calibration history and pairwise summary
    cal = tables["calibrationTable"]
    assert cal.rowCount() == 1 and cal.item(0, 0).text() == "dee" and cal.item(0, 2).text() == "qualified"
    bt = tables["btTable"]
    assert {bt.item(r, 0).text() for r in range(bt.rowCount())} == set(report["pairwise"]["bradley_terry"])
    pos = tables["positionTable"]
    pb = report["pairwise"]["position_bias"]
    assert [pos.item(0, c).text() for c in (1, 2)] == [str(pb["left"]), str(pb["right"])]
    assert pb["left"] + pb["right"] > 0

    SHOTS.mkdir(parents=True, exist_ok=True)
    anchor = next(lab for lab in view.findChildren(QLabel) if lab.text() == "Drift on anchors")
    view.scroll.ensureWidgetVisible(anchor, 0, 0)
    view.scroll.verticalScrollBar().setValue(anchor.parentWidget().y())
    assert view.grab().save(str(SHOTS / "dashboard_drift.png"))
    view.scroll.verticalScrollBar().setValue(0)
    assert view.grab().save(str(SHOTS / "dashboard_top.png"))

    # F5 recomputes with the same seed: the same figures
    with qtbot.waitSignal(view.reportReady, timeout=120_000) as again:
        assert view.refresh()
    assert again.args[0]["metrics"]["layout_hierarchy"]["human_alpha"] == est
