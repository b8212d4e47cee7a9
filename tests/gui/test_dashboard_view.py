"""DashboardView on a real study with labels, live anchors (one drifting rater),
judge scores, pair votes and a calibration record."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from gui_support import hold_study
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QFrame, QLabel, QTableWidget, QToolButton, QWidget

from annotator.demo import scenario
from annotator.reports.sections import Chart
from annotator.reports.view_summary import metric_labels
from annotator.services import dashboard as dash
from annotator.services.calibration import CalibrationSession
from annotator.services.labeling import LabelSession
from annotator.services.pairing import PairSession
from annotator.services.study import Study
from annotator.ui.dashboard_view import DashboardView
from annotator.ui.section_widgets import MAX_CARDS

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
ANCHORS = REPO / "anchors" / "ui_mockup" / "anchors.jsonl"
# name -> shift of both scales on live anchors (dee stands two points severe from the start:
# a calibration offset, not drift, which is a change from where the rater started)
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
    refs = {
        json.loads(line)["item_id"]: json.loads(line)["reference"]
        for line in ANCHORS.read_text(encoding="utf-8").splitlines()
    }
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
    score = {
        pk: sum(int(files.truths[iid][m]) for m in ("layout_hierarchy", "ui_affordance"))
        for pk, iid in ids.items()
        if iid in files.truths
    }
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
    study.close()
    return tmp / "study"


@pytest.fixture()
def dash_view(qtbot, dash_study, db_worker):
    """A factory: a shown DashboardView on the shared study (reusing a cached report when there is one)."""
    snap = hold_study(db_worker, dash_study)
    made = []

    def make(**kw) -> DashboardView:
        view = DashboardView(snap, None, db_worker, None, n_boot=N_BOOT, seed=3, **kw)
        qtbot.addWidget(view)
        view.resize(1400, 1000)
        view.show()
        made.append(view)
        return view

    yield make
    for v in made:
        v.shutdown()


def _tables(view) -> dict[str, QTableWidget]:
    return {t.objectName(): t for t in view.findChildren(QTableWidget)}


def _open_folds(view) -> None:
    """Open every folded detail table (section_widgets builds one when it is first opened)."""
    for b in view.findChildren(QToolButton):
        if b.isCheckable() and not b.isChecked() and b.arrowType() == Qt.ArrowType.RightArrow:
            b.click()


def test_dashboard_renders_the_report_figures(qtbot, dash_view, monkeypatch, screenshot_dir):
    threads: list[str] = []
    real = dash.compute

    def spy(inputs, state=None):  # noqa: ANN001, ANN202
        threads.append(threading.current_thread().name)
        return real(inputs, state)

    monkeypatch.setattr(dash, "compute", spy)
    dash.CACHE.clear()
    view = dash_view(autostart=False)
    with qtbot.waitSignal(view.reportReady, timeout=60_000) as ready:
        assert view.refresh()
        assert view.is_busy() and view.busy_bar.isVisible()
        assert not view.refresh()  # one computation at a time
    report = ready.args[0]
    # Computed on the compute worker: the database worker stays free for raters' writes.
    assert threads == ["annotator-compute-worker"]
    assert not view.is_busy() and not view.busy_bar.isVisible()
    assert view.busy_label.text().startswith("Computed in")

    tables = _tables(view)
    rubric = view.snapshot.rubric
    agree = tables["agreementTable"]
    shown = {agree.item(r, 0).text() for r in range(agree.rowCount())} - {""}
    # Metrics are shown by their label, never by their key (the verdict by the report's).
    labels = {dash.metric_label(rubric, k) for k in report["metrics"]}
    assert labels <= shown and not (set(report["metrics"]) & shown - labels)
    assert shown - labels <= {(report.get("verdict") or {}).get("label"), "verdict (all rules)"}
    row = next(
        r
        for r in range(agree.rowCount())
        if agree.item(r, 0).text() == rubric.metric("layout_hierarchy").label
    )
    est = report["metrics"]["layout_hierarchy"]["human_alpha"]
    m = report["metrics"]["layout_hierarchy"]
    heads = [agree.horizontalHeaderItem(c).text().replace("\n", " ") for c in range(6)]
    assert heads[2:5] == ["items", "raters", "answers"], heads
    assert [agree.item(row, c).text() for c in (2, 3, 4)] == [
        str(m["n_items"]),
        str(m["n_raters"]),
        f"{m['n_judgements']:,}",
    ]
    alpha = heads.index("human alpha [95%]")
    assert (
        agree.item(row, alpha)
        .text()
        .startswith(f"{est['estimate']:.2f} [{est['low']:.2f}, {est['high']:.2f}]")
    )
    # each judge against the humans, in the humans-vs-judges section
    judged = tables["judgesAlphaTable"]
    jheads = [judged.horizontalHeaderItem(c).text().replace("\n", " ") for c in range(10)]
    jrow = next(
        r
        for r in range(judged.rowCount())
        if judged.item(r, 0).text().removeprefix("\u26a0 ")
        == rubric.metric("layout_hierarchy").label
    )
    assert judged.item(jrow, 1).text() == scenario.JUDGE_NAME
    vs = m["judges"][scenario.JUDGE_NAME]["alpha_vs_consensus"]
    col = jheads.index("alpha vs human consensus (flatters the judge)")
    assert judged.item(jrow, col).text().startswith(f"{vs['estimate']:.2f}")
    # per generator: the humans' alpha there and the judge's correlations (a long table: built
    # when its fold is first opened)
    _open_folds(view)
    by_gen = _tables(view)["byGeneratorTable"]
    gens = {by_gen.item(r, 1).text() for r in range(by_gen.rowCount())} - {""}
    assert gens == set(m["by_generator"])
    assert scenario.JUDGE_NAME in {by_gen.item(r, 5).text() for r in range(by_gen.rowCount())}

    # the summary first, its sentences as the report's lists
    assert next(s.key for s in view.model.sections if s.key != "team") == "summary"
    lists = view.findChild(QWidget, "section:summary").parent().findChildren(QWidget, "bullets")
    shown_lines = {lab.text() for w in lists for lab in w.findChildren(QLabel)}
    judge_texts = [j["text"] for j in report["summary"]["judges"].values() if j.get("text")]
    assert judge_texts and {f"\u2022 {t}" for t in judge_texts} <= shown_lines
    # each finding a card (the first MAX_CARDS), in the report's order, with its answers
    n = len(report["findings"])
    findings = next(s for s in view.model.sections if s.key == "findings")
    assert findings.subtitle.endswith(f" {n} finding{'' if n == 1 else 's'}.")
    cards = view.findChildren(QFrame, "itemCard")
    assert len(cards) == min(n, MAX_CARDS)
    for card, f in zip(cards, report["findings"], strict=False):
        texts = [lab.text() for lab in card.findChildren(QLabel)]
        # the metric by its label, never its key
        label = metric_labels(report)[f["metric"]]
        assert texts[0] == f"{f.get('display_code') or f['item_id']} · {label}"
        assert f"\u26a0 {f['kind'].replace('_', ' ')}" in texts
    more = [lab.text() for lab in view.findChildren(QLabel) if lab.text().startswith("The first ")]
    assert more == (
        [f"The first {MAX_CARDS} of {n} items; the HTML report shows them all."]
        if n > MAX_CARDS
        else []
    )

    raters = tables["ratersTable"]
    # each count says what it counts: items answered, not bare "judgements"
    heads = [raters.horizontalHeaderItem(c).text().replace("\n", " ") for c in range(3)]
    assert heads[1:] == ["live items answered", "anchor answers"], heads
    rows = {
        raters.item(r, 0).text().removeprefix("\u26a0 "): [
            raters.item(r, c).text() for c in range(raters.columnCount())
        ]
        for r in range(raters.rowCount())
    }
    assert set(rows) == set(RATERS)
    assert rows["dee"][0] == "\u26a0 dee"  # flagged in words and a symbol, not only by the tint
    for name, cells in rows.items():
        r = report["raters"][name]
        assert cells[1] == str(r["n_judgements"]) and cells[2] == str(r["anchors"])
        assert r["anchors"] >= 4 and cells[3] != "—"
    offsets = report["raters"]["dee"]["calibration_offset"]
    assert offsets["layout_hierarchy"]["flagged"] and offsets["layout_hierarchy"]["direction"] == (
        "severe"
    )
    assert report["raters"]["dee"]["drift"]["flagged"] is False  # steady: no change to chart
    # the standing offset in the report's words, with its interval, by the metric's label
    assert offsets["layout_hierarchy"]["text"] in rows["dee"][4], rows["dee"][4]
    assert rows["dee"][4].startswith("no drift flag; calibration: consistently severe by 2.00 [")
    assert "on Layout" in rows["dee"][4]
    assert (
        "layout_hierarchy" not in " ".join(rows["dee"]) and "Layout" in rows["dee"][3]
    )  # labels, not keys
    assert rows["ana"][4] == "no drift flag"
    dee_row = next(r for r in range(raters.rowCount()) if raters.item(r, 0).text() == "\u26a0 dee")
    from annotator.ui.style import flag_background

    assert (
        raters.item(dee_row, 0).background().color().name()
        == flag_background(view.palette()).name()
    )

    charts = [
        lab for lab in view.findChildren(QLabel) if lab.objectName().startswith("driftChart:")
    ]
    assert {c.objectName().split(":", 1)[1] for c in charts} == set(RATERS)
    assert all(c.pixmap() is not None and not c.pixmap().isNull() for c in charts)
    assert view.findChild(QLabel, "agreementChart").pixmap() is not None

    cal = tables["calibrationHistoryTable"]
    assert (
        cal.rowCount() == 1
        and cal.item(0, 0).text() == "dee"
        and cal.item(0, 2).text() == "qualified"
    )
    assert cal.horizontalHeaderItem(3).text() == rubric.metrics[0].label
    # pairwise: the strengths over all cases first, then case by case, the generators side by
    # side, with their forest plot; the side chosen over all raters, then per rater
    bt = tables["pairwiseStrengthTable"]
    assert [bt.horizontalHeaderItem(c).text() for c in range(1, bt.columnCount())] == sorted(
        report["pairwise"]["bradley_terry"]
    )
    assert bt.item(0, 0).text().startswith("all cases")
    assert bt.rowCount() == 1 + len(report["pairwise"]["bradley_terry_by_case"])
    assert view.findChild(QLabel, "pairwiseStrengthChart").pixmap() is not None
    pos = tables["pairwisePositionTable"]
    pb = report["pairwise"]["position_bias"]
    assert pos.item(0, 0).text() == "all raters"
    assert [pos.item(0, c).text() for c in (1, 2)] == [str(pb["left"]), str(pb["right"])]
    assert {pos.item(r, 0).text().removeprefix("\u26a0 ") for r in range(1, pos.rowCount())} == set(
        pb["by_rater"]
    )

    # certified judging: the split of the items, metric by metric, as the report has it
    split = tables["certifiedSplitTable"]
    want = report["certified"]["split"]
    assert split.rowCount() == len(want)
    for r in range(split.rowCount()):
        key = next(k for k in want if dash.metric_label(rubric, k) == split.item(r, 0).text())
        assert split.item(r, 2).text() == str(want[key]["escalated"])
        assert split.item(r, 3).text() == str(want[key]["already_rated"])

    bar = view.scroll_area.verticalScrollBar()
    bar.setValue(view.section_top("raters"))
    assert view.grab().save(str(screenshot_dir / "dashboard_drift.png"))
    bar.setValue(view.section_top("findings"))
    assert view.grab().save(str(screenshot_dir / "dashboard_findings.png"))
    bar.setValue(view.section_top("summary"))
    assert view.grab().save(str(screenshot_dir / "dashboard_summary.png"))
    bar.setValue(0)
    assert view.grab().save(str(screenshot_dir / "dashboard_top.png"))


def test_no_table_cell_is_clipped(qtbot, dash_view):
    view = dash_view()
    qtbot.waitSignal(view.reportReady, timeout=60_000).wait() if view.is_busy() else None
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=60_000)
    from PySide6.QtWidgets import QStyle, QToolButton

    # a folded table is measured as the lead sees it: opened
    for b in view.findChildren(QToolButton):
        if b.isCheckable() and not b.isChecked():
            b.setChecked(True)
    qtbot.wait(50)
    for t in _tables(view).values():
        fm = t.fontMetrics()
        margin = 2 * (t.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, t) + 1)
        for r in range(t.rowCount()):
            for c in range(t.columnCount()):
                text = t.item(r, c).text()
                cell = t.visualItemRect(t.item(r, c))
                need = fm.boundingRect(
                    QRect(0, 0, cell.width() - margin, 10_000), Qt.TextFlag.TextWordWrap, text
                )
                assert need.height() <= cell.height() and need.width() <= cell.width(), (
                    t.objectName(),
                    text,
                )
        assert t.viewport().height() >= sum(t.rowHeight(r) for r in range(t.rowCount())), (
            t.objectName()
        )


def test_keyboard_scrolls_the_page_and_jumps_between_sections(qtbot, dash_view):
    view = dash_view()
    qtbot.waitUntil(lambda: view.model is not None, timeout=60_000)
    view.setFocus()
    bar = view.scroll_area.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    assert bar.value() == min(bar.pageStep(), bar.maximum())
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert bar.value() == bar.maximum()
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert bar.value() > 0
    qtbot.keyClick(view, Qt.Key.Key_Home)
    tops = [min(view.section_top(s.key), bar.maximum()) for s in view.model.sections]
    for want in tops[1:3]:
        qtbot.keyClick(view, Qt.Key.Key_N)
        assert bar.value() == want
    qtbot.keyClick(view, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    assert bar.value() == tops[1]


def test_cancel_stops_at_the_next_step(qtbot, dash_view):
    view = dash_view(autostart=False)
    assert view.refresh()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=60_000)
    assert view.busy_label.text().startswith("Cancelled") and view.model is None


def test_reopen_on_unchanged_data_shows_the_cached_report(qtbot, dash_view, db_worker):
    first = dash_view()
    qtbot.waitUntil(lambda: first.model is not None, timeout=60_000)
    first.shutdown()
    calls: list[int] = []
    again = dash_view()
    again.compute.progress.connect(lambda *_: calls.append(1))
    qtbot.waitUntil(lambda: again.model is not None, timeout=10_000)
    assert (
        again.model.report is first.model.report
    )  # the cached figures: nothing recomputed (the team is read fresh)
    assert "Unchanged" in again.busy_label.text()
    # New data (a new rater's answer) changes the data version: the cache no longer applies.
    from annotator.ui.worker import call_blocking

    def add(study):  # noqa: ANN001, ANN202
        return dash.data_version(study.db)

    before = call_blocking(db_worker, add, study=True)
    call_blocking(db_worker, lambda study: study.add_rater("eve"), study=True)
    assert call_blocking(db_worker, add, study=True) != before


def _version(study):  # noqa: ANN001, ANN202
    return dash.data_version(study.db)


def _new_rater_answers(name: str):  # noqa: ANN202
    """A job for the database worker: a new rater answers the first item served."""

    def job(study):  # noqa: ANN001, ANN202
        study.add_rater(name)
        session = LabelSession(study, name)
        served = session.next()
        answers = {
            "instruction_following": "PASS",
            "text_rendering": "PASS",
            "layout_hierarchy": 3,
            "ui_affordance": 3,
            "failure_tags": [],
        }
        session.submit(served, answers, time_ms=3000)

    return job


def test_changed_data_shows_the_earlier_figures_at_once_then_the_current_ones(
    qtbot, dash_view, db_worker
):
    """After a restart on changed data: the figures kept the last time, marked with their time,
    are painted before the current ones are computed, which then replace them unmarked."""
    from annotator.ui.worker import call_blocking

    # the figures computed here, and so kept on disk under this test's signing key (every test
    # has a user data folder of its own): the app's memory may hold the current figures from an
    # earlier test, whose kept copy this test's key would refuse
    dash.CACHE.clear()
    first = dash_view()
    qtbot.waitUntil(lambda: first.model is not None and not first.is_busy(), timeout=60_000)
    first.shutdown()
    call_blocking(db_worker, _new_rater_answers("fay"), study=True)
    dash.CACHE.clear()  # a restart: only the study's .cache/ is left
    view = dash_view(autostart=False)
    view._poll.stop()
    painted: list[tuple[object, bool]] = []
    render = view._render

    def recording(model, charts):  # noqa: ANN001, ANN202
        # what the page said just before this paint: after the earlier figures, "earlier"
        painted.append((model.earlier_at, view.stale_note.isVisibleTo(view)))
        render(model, charts)

    view._render = recording
    assert view.refresh(force=False)
    qtbot.waitUntil(lambda: len(painted) == 2 and not view.is_busy(), timeout=60_000)
    (earlier_at, marked_before), (current_at, marked_between) = painted
    assert earlier_at is not None and current_at is None
    assert not marked_before and marked_between  # the earlier figures were shown marked
    assert not view.stale_note.isVisibleTo(view)
    assert view.report() is not None
    assert view.model.data_version == call_blocking(db_worker, _version, study=True)
    assert view.model.data_version != first.model.data_version
    assert "fay" in view.model.report["raters"] and "fay" not in first.model.report["raters"]


def test_the_shown_dashboard_follows_the_study_and_keeps_the_readers_place(
    qtbot, dash_view, db_worker, monkeypatch
):
    from annotator.ui import dashboard_follow
    from annotator.ui.worker import call_blocking

    monkeypatch.setattr(dashboard_follow, "_live_gap", lambda _seconds: 0.0)
    view = dash_view()
    view._poll.stop()  # the test asks itself, when it means to
    qtbot.waitUntil(lambda: view.model is not None and not view.is_busy(), timeout=60_000)
    shown = view.model
    # unchanged data: asking changes nothing
    view.check_for_changes()
    qtbot.waitUntil(lambda: not view._asking, timeout=10_000)
    assert view.model is shown and not view.is_busy() and not view.stale_note.isVisibleTo(view)
    # Follow changes off (L): a change is said, not computed
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_L)
    assert not view.live
    call_blocking(db_worker, _new_rater_answers("gus"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(lambda: view.stale_note.isVisibleTo(view), timeout=10_000)
    assert not view.is_busy() and view.model is shown
    assert "F5" in view.stale_note.text() and "changed" in view.stale_note.text()
    # on again: recomputed while the figures stay on screen, and the reader keeps their place
    # and the detail table they opened
    folds = [b for b in view.findChildren(QToolButton) if b.objectName().startswith("fold:")]
    assert folds
    folds[0].click()
    opened = folds[0].objectName()
    bar = view.scroll_area.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    place = bar.value()
    assert place > 0
    qtbot.keyClick(view, Qt.Key.Key_L)
    assert view.live
    qtbot.waitUntil(lambda: view.is_busy() or view.model is not shown, timeout=10_000)
    assert "being computed" in view.stale_note.text()
    qtbot.waitUntil(lambda: view.model is not shown and not view.is_busy(), timeout=60_000)
    assert "gus" in view.model.report["raters"]
    assert not view.stale_note.isVisibleTo(view)
    # Qt lays the new page out after the paint that set the place: wait until the scroll range
    # is the laid-out page's, then the place must have survived it
    content, viewport = view.content, view.scroll_area.viewport()
    qtbot.waitUntil(
        lambda: bar.maximum() == max(0, content.height() - viewport.height()), timeout=10_000
    )
    assert bar.value() == place
    (fold,) = (b for b in content.findChildren(QToolButton) if b.objectName() == opened)
    assert fold.isChecked() and fold.arrowType() == Qt.ArrowType.DownArrow
    table = next(t for t in content.findChildren(QTableWidget) if t.objectName() == opened[5:])
    assert table.isVisibleTo(view) and table.rowCount() > 0
    # a recomputation the reader cancels (Esc) is not restarted on its own for the same data;
    # a newer change is followed again
    call_blocking(db_worker, _new_rater_answers("hal"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(view.is_busy, timeout=10_000)
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=60_000)
    assert "hal" not in view.model.report["raters"]
    view.check_for_changes()
    qtbot.waitUntil(lambda: not view._asking, timeout=10_000)
    assert not view.is_busy() and "F5" in view.stale_note.text()
    call_blocking(db_worker, _new_rater_answers("ian"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(lambda: "ian" in view.model.report["raters"], timeout=60_000)
    assert not view.stale_note.isVisibleTo(view)


def test_a_cancelled_computation_is_not_restarted_on_its_own(
    qtbot, dash_view, db_worker, monkeypatch
):
    """Esc while the current figures compute behind the earlier ones: following the study does
    not start it again for the same data (F5 does); only a newer change is followed."""
    from annotator.ui import dashboard_follow
    from annotator.ui.worker import call_blocking

    monkeypatch.setattr(dashboard_follow, "_live_gap", lambda _seconds: 0.0)
    # computed here, so that the report kept on disk is signed with this test's user key (a
    # report another user kept is not read back: services/report_cache.py)
    dash.CACHE.clear()
    first = dash_view()
    qtbot.waitUntil(lambda: first.model is not None and not first.is_busy(), timeout=60_000)
    first.shutdown()
    call_blocking(db_worker, _new_rater_answers("jo"), study=True)
    dash.CACHE.clear()
    view = dash_view(autostart=False)
    view._poll.stop()
    assert view.refresh(force=False)
    qtbot.waitUntil(lambda: view.model is not None, timeout=60_000)
    assert view.model.earlier_at is not None and view.is_busy()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=60_000)
    view.check_for_changes()
    qtbot.waitUntil(lambda: not view._asking, timeout=10_000)
    assert not view.is_busy() and view.model.earlier_at is not None
    assert "F5" in view.stale_note.text()
    call_blocking(db_worker, _new_rater_answers("kim"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(lambda: view.model.earlier_at is None and not view.is_busy(), timeout=60_000)
    assert "kim" in view.model.report["raters"]


def _cells(view) -> list[str]:
    return [
        t.item(r, c).text()
        for t in view.findChildren(QTableWidget)
        for r in range(t.rowCount())
        for c in range(t.columnCount())
        if t.item(r, c) is not None
    ]


def test_between_full_computations_a_change_brings_a_live_estimate(
    qtbot, dash_view, dash_study, db_worker, monkeypatch
):
    """A change within the gap between full computations is shown at once as a
    live estimate (current figures, intervals carried from the last full computation and marked
    ≈); when the gap has passed, the full computation replaces it and the marks go."""
    from annotator.services import frames_cache
    from annotator.ui import dashboard_follow
    from annotator.ui.worker import call_blocking

    gap = {"s": 3600.0}
    monkeypatch.setattr(dashboard_follow, "_live_gap", lambda _seconds: gap["s"])
    monkeypatch.setattr(frames_cache, "KEEP_AFTER_NEW", 1)  # the small study's frames kept too
    view = dash_view()
    view._poll.stop()
    qtbot.waitUntil(lambda: view.model is not None and not view.is_busy(), timeout=60_000)
    exact = view.model
    assert exact.exact_at is None and not any("≈" in c for c in _cells(view))
    call_blocking(db_worker, _new_rater_answers("liv"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(lambda: view.model is not exact and view._live_task is None, timeout=60_000)
    live = view.model
    assert live.exact_at is not None and not view.is_busy()  # no full computation started
    # the team's progress, read on the database worker while the estimate computed, comes first
    # with the new rater's answer counted
    assert live.sections[0].key == "team"
    (team,) = (b for b in live.sections[0].blocks if getattr(b, "name", "") == "teamTable")
    row = next(r for r in team.rows if r[0] == "liv")
    assert int(row[2]) + int(row[3]) == 1  # done, or an anchor served first
    shown = _tables(view)["teamTable"]
    assert "liv" in {shown.item(r, 0).text() for r in range(shown.rowCount())}
    # the frames read for it are kept on disk after it, for the next start (point 5)
    qtbot.waitUntil(lambda: view._live_frames.unkept == 0, timeout=30_000)
    kept = Path(dash_study) / ".cache" / frames_cache.FOLDER
    assert (kept / "frames.json").is_file()
    shutil.rmtree(kept)  # the module's other tests start as before
    assert "liv" in live.report["raters"]  # the current answers
    assert live.report["live_estimate"]["exact_n_boot"] == N_BOOT
    assert any("≈[" in c for c in _cells(view))
    # the EM fits are the last full computation's, each marked with its time
    as_of = live.report["live_estimate"]["as_of"]
    assert live.report["live_estimate"]["carried"] > 0
    assert any(f"(as of {as_of})" in c for c in _cells(view))
    # each rater's competence is the last full computation's, marked with its time; the new
    # rater has none carried (their note, where the report has one, says it follows with the
    # next full computation: tests/unit/test_report_sections.py)
    raters = _tables(view)["ratersTable"]
    competence = {
        raters.item(r, 0).text().removeprefix("\u26a0 "): raters.item(r, 6).text()
        for r in range(raters.rowCount())
    }
    assert competence["ana"].endswith(f"(as of {as_of})"), competence
    liv = live.report["raters"]["liv"]
    assert "competence" not in liv and "(as of" not in competence["liv"]
    assert competence["liv"] == liv.get("competence_note", "—")
    matrix = _tables(view)["raterCompetenceTable"]
    assert any(
        f"(as of {as_of})" in matrix.item(r, c).text()
        for r in range(matrix.rowCount())
        for c in range(1, matrix.columnCount())
    )

    # the charts are the full computation's, drawn then, each marked with its time
    def charts(model: dash.DashboardModel) -> dict[str, Chart]:
        return {b.name: b for sec in model.sections for b in sec.blocks if isinstance(b, Chart)}

    mark = f"Chart as of {as_of}, the last full computation"
    assert charts(live) and all(mark in c.caption for c in charts(live).values())
    assert {n: c.png for n, c in charts(live).items()} == {
        n: c.png for n, c in charts(exact).items() if n in charts(live)
    }
    assert any(mark in lab.text() for lab in view.findChildren(QLabel) if lab.isVisibleTo(view))
    assert "live estimate" in view.meta.text() and f"as of {as_of}" in view.meta.text()
    assert "Live estimate in" in view.busy_label.text()
    note = view.stale_note.text()
    assert view.stale_note.isVisibleTo(view) and "Live estimate" in note and "≈" in note
    assert f'marked "as of {as_of}"' in note
    assert view.report() is None  # a live estimate is not the report
    # what the estimate counted is kept for the next one (stats/kept_counts.py), and the
    # pairwise section computed for the votes
    from annotator.stats import kept_counts, report_model

    assert kept_counts._kept and report_model._PAIRWISE
    # unchanged since: nothing more until the gap has passed
    view.check_for_changes()
    qtbot.waitUntil(lambda: not view._asking, timeout=10_000)
    assert view.model is live and not view.is_busy()
    gap["s"] = 0.0
    view.check_for_changes()
    qtbot.waitUntil(
        lambda: view.model is not live and not view.is_busy() and view.model.exact_at is None,
        timeout=60_000,
    )
    assert "liv" in view.model.report["raters"] and "live_estimate" not in view.model.report
    assert not any("≈" in c or "(as of " in c for c in _cells(view))
    assert not any("Chart as of" in c.caption for c in charts(view.model).values())
    assert not view.stale_note.isVisibleTo(view)
    view.shutdown()  # the dashboard no longer follows the study: nothing kept for it
    assert not kept_counts._kept and not report_model._PAIRWISE


def test_a_live_estimate_whose_team_read_fails_keeps_the_team_shown(
    qtbot, dash_view, db_worker, monkeypatch
):
    """The team's progress is read beside a live estimate; when that read fails (a lost
    connection), the estimate is shown with the team as it was, not without one."""
    from annotator.ui import dashboard_follow, dashboard_jobs
    from annotator.ui.worker import call_blocking

    monkeypatch.setattr(dashboard_follow, "_live_gap", lambda _seconds: 3600.0)
    view = dash_view()
    view._poll.stop()
    qtbot.waitUntil(lambda: view.model is not None and not view.is_busy(), timeout=60_000)
    exact = view.model
    (team_before,) = (s for s in exact.sections if s.key == "team")

    def lost(_study):  # noqa: ANN001, ANN202
        raise ConnectionError("server closed the connection")

    monkeypatch.setattr(dashboard_jobs, "job_team", lost)
    call_blocking(db_worker, _new_rater_answers("lost"), study=True)
    view.check_for_changes()
    qtbot.waitUntil(lambda: view.model is not exact and view._live_task is None, timeout=60_000)
    live = view.model
    assert live.exact_at is not None and "lost" in live.report["raters"]
    assert live.sections[0] is team_before  # the last team read, first as always
    assert "teamTable" in _tables(view)


def test_a_long_chart_caption_wraps_and_never_widens_the_page(qtbot):
    """A section's chart caption can be a sentence (a judge's calibration): it wraps, so the
    page never scrolls sideways at a laptop's width."""
    from annotator.reports.sections import Chart
    from annotator.ui.section_widgets import chart_widget

    caption = "demo-judge (version 5dfcae7e06db): the share equal to the humans' answer " * 4
    w = chart_widget(Chart("calibrationChart", b"", "alt", caption=caption), None)
    qtbot.addWidget(w)
    assert w.minimumSizeHint().width() < 400


def test_a_chart_the_last_model_had_is_not_decoded_again(qtbot):
    """A live estimate's charts are the last full computation's bytes at every refresh: their
    images are the last model's, the same objects; a new chart is decoded, and a chart the
    model no longer has is let go."""
    import io

    from PIL import Image

    from annotator.reports.sections import Section
    from annotator.ui import dashboard_jobs

    def png(colour: tuple[int, int, int]) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (40, 30), colour).save(buf, format="PNG")
        return buf.getvalue()

    def model(*charts: Chart) -> dash.DashboardModel:
        return dash.DashboardModel("t", "m", (), (Section("s", "S", "", charts),), {}, "v", 1)

    red, blue = png((200, 0, 0)), png((0, 0, 200))
    first = dashboard_jobs.decoded_charts(model(Chart("a", red, "a"), Chart("b", red, "b")))
    assert first["a"] is first["b"] and first["a"].pixelColor(5, 5).red() == 200
    again = dashboard_jobs.decoded_charts(model(Chart("a", red, "a"), Chart("c", blue, "c")))
    assert again["a"] is first["a"]  # not decoded again
    assert again["c"].pixelColor(5, 5).blue() == 200
    assert set(dashboard_jobs._DECODED) == {red, blue}
    dashboard_jobs.decoded_charts(model(Chart("c", blue, "c")))
    assert set(dashboard_jobs._DECODED) == {blue}  # only the last model's are kept


def test_a_long_detail_table_is_folded_under_its_line_as_in_the_report(qtbot):
    """A Table with a `fold` line (the generators' case-by-case rows) is hidden under a button
    until opened, by a click or Space, as the HTML report folds it; it is built when first
    opened (at a million judgements it is 30,000 cells, a second at every refresh)."""
    from PySide6.QtWidgets import QTableWidget, QToolButton, QVBoxLayout, QWidget

    from annotator.reports.sections import Table
    from annotator.ui.section_widgets import add_blocks

    page = QWidget()
    qtbot.addWidget(page)
    lay = QVBoxLayout(page)
    rows = tuple((f"case {i}", str(i)) for i in range(40))
    add_blocks(
        lay, (Table("casesTable", ("case", "n"), rows, fold="every case (40 rows)"),), {}, 600
    )
    page.show()
    (button,) = page.findChildren(QToolButton)
    assert button.text() == "every case (40 rows)" and not page.findChildren(QTableWidget)
    button.setFocus()
    qtbot.keyClick(button, " ")
    (table,) = page.findChildren(QTableWidget)
    assert table.isVisible() and table.rowCount() == 40
    assert table.item(39, 0).text() == "case 39"
    button.click()
    assert not table.isVisible()
    button.click()  # opened again: the same table, not a second one
    assert page.findChildren(QTableWidget) == [table] and table.isVisible()


def test_lists_and_item_cards_as_in_the_report(qtbot):
    """A list is bulleted lines; an item card shows its picture (bytes or a data: URI), its
    title, its flag in words and a symbol, its lines and each answer with the reason as plain
    text; a section builds at most MAX_CARDS cards and says how many it left to the report."""
    import base64
    import io

    from PIL import Image
    from PySide6.QtWidgets import QVBoxLayout

    from annotator.reports.sections import Answer, Bullets, ItemCard
    from annotator.ui.section_widgets import add_blocks

    buf = io.BytesIO()
    Image.new("RGB", (320, 200), (200, 80, 60)).save(buf, format="PNG")
    png = buf.getvalue()
    uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    first = ItemCard(
        "K7Q2 · tone",
        png,
        "item K7Q2",
        ("case c · generator g · item `demo-1`",),
        (
            Answer("r1", "FAIL", "<b>not bold</b> " * 20),
            Answer("humans", "FAIL (1 of 1)", role="pooled"),
            Answer("j", "PASS", "fine", "judge"),
        ),
        "judge lenient",
        ("note: odd",),
    )
    cards = (
        first,
        ItemCard("P3ZX", uri, "item P3ZX"),
        ItemCard("M81D"),
        ItemCard("X", "https://x"),
    )
    many = cards + tuple(ItemCard(f"item {i}") for i in range(MAX_CARDS))
    page = QWidget()
    qtbot.addWidget(page)
    lay = QVBoxLayout(page)
    add_blocks(lay, (Bullets(("first point", "second point")), *many), {}, 600)
    page.resize(640, 400)
    page.show()
    (bullets,) = page.findChildren(QWidget, "bullets")
    assert [lab.text() for lab in bullets.findChildren(QLabel)] == [
        "\u2022 first point",
        "\u2022 second point",
    ]
    shown = page.findChildren(QFrame, "itemCard")
    assert len(shown) == MAX_CARDS
    more = [lab.text() for lab in page.findChildren(QLabel) if lab.text().startswith("The first ")]
    assert more == [f"The first {MAX_CARDS} of {len(many)} items; the HTML report shows them all."]
    # the pictures of bytes and of a data: URI; none for a card without one or with a link
    images = [c.findChild(QLabel, "itemCardImage") for c in shown[:4]]
    assert [i is not None and not i.pixmap().isNull() for i in images] == [True, True, False, False]
    texts = [lab.text() for lab in shown[0].findChildren(QLabel)]
    # a `code` span of the report's words reads as plain words, as in the report's text
    assert texts[1:4] == [
        "K7Q2 · tone",
        "\u26a0 judge lenient",
        "case c · generator g · item demo-1",
    ]
    assert "humans (pooled)" in texts and "j (judge)" in texts and "note: odd" in texts
    reason = next(lab for lab in shown[0].findChildren(QLabel) if lab.text().startswith("<b>"))
    assert reason.textFormat() == Qt.TextFormat.PlainText and reason.wordWrap()
    # a long reason wraps: the card never widens the page
    assert shown[0].minimumSizeHint().width() < 600
