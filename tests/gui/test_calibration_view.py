"""CalibrationView driven by the keyboard on the shipped anchor set, real SQLite study."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from gui_support import hold_study, open_window
from PySide6.QtCore import Qt

from annotator.services.study import Study
from annotator.ui.calibration_view import CalibrationView
from annotator.ui.worker import DbWorker

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
ANCHORS = REPO / "anchors" / "ui_mockup" / "anchors.jsonl"
RATER = "cal"
KEY = {
    "P": Qt.Key.Key_P,
    "F": Qt.Key.Key_F,
    **{str(d): getattr(Qt.Key, f"Key_{d}") for d in range(10)},
}


@pytest.fixture(scope="session")
def _cal_template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cal") / "study"
    study = Study.create(folder, RUBRIC)
    assert study.import_anchors(ANCHORS) == 14
    study.add_rater(RATER)
    study.close()
    return folder


@pytest.fixture()
def cal_study(tmp_path: Path, _cal_template, db_worker):
    import shutil

    shutil.copytree(_cal_template, tmp_path / "study")
    return hold_study(db_worker, tmp_path / "study")


def _references(study) -> dict[str, dict]:
    """Reference answers by display code, read from the shipped file and the study database."""
    by_id = {}
    for line in ANCHORS.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        by_id[rec["item_id"]] = rec["reference"]
    con = sqlite3.connect(Path(getattr(study, "folder", study)) / "study.sqlite")
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(items)")}
        assert {"item_id", "display_code"} <= cols
        return {
            code: by_id[iid] for iid, code in con.execute("SELECT item_id, display_code FROM items")
        }
    finally:
        con.close()


def _keys_for(answers: dict, options: list[str]) -> list[Qt.Key]:
    """The key presses that give these answers, in the form's metric order."""
    keys = [
        KEY[answers["instruction_following"][0]],
        KEY[str(answers["layout_hierarchy"])],
        KEY[answers["text_rendering"][0]],
        KEY[str(answers["ui_affordance"])],
    ]
    keys += [KEY[str(options.index(t) + 1)] for t in answers["failure_tags"]]
    return keys


def _open(qtbot, study, worker: DbWorker) -> CalibrationView:
    view = CalibrationView(study, RATER, worker, None)
    qtbot.addWidget(view)
    view.resize(1400, 900)
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    qtbot.waitUntil(lambda: view.stage() == "answer" and not view.is_busy(), timeout=10_000)
    return view


def _answer_current(
    qtbot, view: CalibrationView, refs: dict, tweak=None, reason: str | None = None
) -> dict:
    served = view._served
    answers = dict(refs[served.view.display_code])
    if tweak:
        answers = tweak(answers)
    options = list(view.form.rubric.metric("failure_tags").options)
    for k in _keys_for(answers, options):
        qtbot.keyClick(view, k)
    if reason:
        qtbot.keyClick(view, Qt.Key.Key_R)
        edit = view.form.reason_edit()
        assert edit.hasFocus()
        qtbot.keyClicks(edit, reason)  # P, F and digits typed here are text, not answers
        qtbot.keyClick(edit, Qt.Key.Key_Escape)
        assert view.hasFocus()
    assert view.form.missing() == []
    with qtbot.waitSignal(view.submitted, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.stage() == "feedback"
    return answers


def _continue(qtbot, view: CalibrationView, key=Qt.Key.Key_Return) -> None:
    qtbot.keyClick(view, key)
    qtbot.waitUntil(
        lambda: not view.is_busy() and view.stage() in ("answer", "verdict"), timeout=10_000
    )


def _worse_layout(a: dict) -> dict:
    # Two points off the reference: never "within one point".
    a = dict(a)
    a["layout_hierarchy"] = (
        a["layout_hierarchy"] - 2 if a["layout_hierarchy"] >= 2 else a["layout_hierarchy"] + 2
    )
    return a


def test_calibration_by_keyboard_feedback_and_verdict(qtbot, cal_study, db_worker, screenshot_dir):
    study = cal_study
    refs = _references(study)
    view = _open(qtbot, study, db_worker)
    assert view.counter.text() == "Anchor 1 of 14"

    # An incomplete form is not submitted: Enter names what is missing.
    qtbot.keyClick(view, Qt.Key.Key_P)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.stage() == "answer" and "Layout" in view.status.text()
    qtbot.keyClick(view, Qt.Key.Key_Up)
    qtbot.keyClick(view, Qt.Key.Key_Backspace)  # clear it again; the helper answers from scratch
    assert view.form.answers().get("instruction_following") is None

    # First anchor: exact reference answers plus a reason -> every card met.
    _answer_current(qtbot, view, refs, reason="Fits the brief; P1 F2 typed as text.")
    cards = view.feedback.cards
    assert len(cards) == 5 and all(c.property("met") is True for c in cards)
    assert "Enter / Space" in view.feedback.hint.text()
    _continue(qtbot, view, Qt.Key.Key_Space)
    assert view.counter.text() == "Anchor 2 of 14"

    # Second anchor: layout two points off -> that card is "not met", with the reference and rationale.
    served = view._served
    ref = refs[served.view.display_code]
    given = _answer_current(qtbot, view, refs, tweak=_worse_layout)
    card = next(
        c for c in view.feedback.cards if "Layout" in c.findChild(type(view.counter)).text()
    )
    assert card.property("met") is False
    texts = {
        lab.objectName(): lab.text()
        for lab in card.findChildren(type(view.counter))
        if lab.objectName()
    }
    assert texts["mark"].endswith("not met")
    assert f"<b>{given['layout_hierarchy']} " in texts["yours"]
    assert f"<b>{ref['layout_hierarchy']} " in texts["reference"]
    assert texts["rationale"]
    assert view.grab().save(str(screenshot_dir / "calibration_feedback.png"))
    _continue(qtbot, view)

    # The rest: reference answers, so 13 of 14 layouts are within one point (93% >= 80%).
    for _ in range(11):
        _answer_current(qtbot, view, refs)
        _continue(qtbot, view)
    with qtbot.waitSignal(view.completed, timeout=10_000) as done:
        _answer_current(qtbot, view, refs)
        assert "see your result" in view.feedback.hint.text()
        qtbot.keyClick(view, Qt.Key.Key_Return)
    result = done.args[0]
    assert view.stage() == "verdict"
    assert result["qualified"] is True and result["verdict"] == "qualified"
    assert (
        result["metrics"]["layout_hierarchy"]["met"] == 13
        and result["metrics"]["layout_hierarchy"]["n"] == 14
    )
    assert view.verdict_page.verdict.text() == "\u2713 Qualified"  # a symbol too, not only green

    con = sqlite3.connect(study.folder / "study.sqlite")
    try:
        recs = con.execute("SELECT qualified, result FROM calibrations").fetchall()
        contexts = con.execute(
            "SELECT context, COUNT(*) FROM judgements GROUP BY context"
        ).fetchall()
        reasons = [
            r[0] for r in con.execute("SELECT reason FROM judgements WHERE reason IS NOT NULL")
        ]
    finally:
        con.close()
    assert len(recs) == 1 and recs[0][0] == 1
    assert json.loads(recs[0][1])["metrics"]["layout_hierarchy"]["met"] == 13
    assert contexts == [("calibration", 14)]
    assert reasons == ["Fits the brief; P1 F2 typed as text."]
    with qtbot.waitSignal(view.closeRequested, timeout=2000):
        qtbot.keyClick(view, Qt.Key.Key_Return)


def test_second_session_not_yet_with_history(qtbot, cal_study, db_worker, screenshot_dir):
    study = cal_study
    refs = _references(study)
    first = _open(qtbot, study, db_worker)
    for _ in range(14):
        _answer_current(qtbot, first, refs)
        _continue(qtbot, first)
    assert first.stage() == "verdict" and first.result()["qualified"] is True
    first.close()

    # A second session with the layout off on every anchor: not yet, and history shows before/after.
    view = _open(qtbot, study, db_worker)
    for _ in range(14):
        _answer_current(qtbot, view, refs, tweak=_worse_layout)
        _continue(qtbot, view)
    res = view.result()
    assert view.stage() == "verdict"
    assert res["qualified"] is False and res["verdict"] == "not yet"
    assert res["metrics"]["layout_hierarchy"]["share"] == 0.0
    assert res["metrics"]["instruction_following"]["passed"] is True
    page = view.verdict_page
    assert page.verdict.text() == "\u25cb Not yet qualified"
    assert "Layout" in page.explain.text()
    from PySide6.QtWidgets import QLabel

    labels = {lab.objectName(): lab.text() for lab in page.findChildren(QLabel) if lab.objectName()}
    assert labels["before:layout_hierarchy"] == "100%" and labels["after:layout_hierarchy"] == "0%"
    assert labels["passed:layout_hierarchy"].endswith("not yet")
    assert labels["passed:instruction_following"].endswith("passed")
    assert view.grab().save(str(screenshot_dir / "calibration_verdict.png"))
    con = sqlite3.connect(study.folder / "study.sqlite")
    try:
        assert [r[0] for r in con.execute("SELECT qualified FROM calibrations ORDER BY id")] == [
            1,
            0,
        ]
    finally:
        con.close()


def test_study_without_anchors_says_what_to_do(qtbot, tmp_path, db_worker):
    study = Study.create(tmp_path / "bare", RUBRIC)
    study.add_rater(RATER)
    study.close()
    snap = hold_study(db_worker, tmp_path / "bare")
    view = CalibrationView(snap, RATER, db_worker, None)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.failed, timeout=10_000) as failed:
        pass
    assert view.stage() == "error"
    assert "import anchors" in failed.args[0]
    assert view.opening.text().startswith("Calibration cannot start:")
    assert not view.submit()  # nothing to submit, nothing stored


def test_enter_on_the_verdict_returns_to_the_start_page(qtbot, tmp_path, _cal_template):
    import shutil

    shutil.copytree(_cal_template, tmp_path / "study")
    w = open_window(qtbot, tmp_path / "study", RATER, mode="calibration")
    view = w.current_view
    assert w.mode == "calibration"
    qtbot.waitUntil(lambda: view.stage() == "answer" and not view.is_busy(), timeout=10_000)
    refs = _references(tmp_path / "study")
    for _ in range(14):
        _answer_current(qtbot, view, refs)
        _continue(qtbot, view)
    assert view.stage() == "verdict" and "Enter" in view.verdict_page.hint.text()
    with qtbot.waitSignal(w.viewChanged, timeout=5000) as changed:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert changed.args == ["start"] and w.mode == "start"
    w.close()
