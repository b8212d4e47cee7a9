"""A filled form works like a fresh one: the same keys give the same answers on a
blank form, on a correction (Ctrl+Z) and on a form already answered, and a key that does nothing
says why. Before, on a filled form the focus did not advance after an answer and a digit on a
PASS/FAIL metric did nothing without a word: ``p 4 f 4 Enter`` saved FAIL/1/PASS/1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gui_support import RATER, open_window, wait_ready
from PySide6.QtCore import Qt

from annotator.ingest.rubrics import load_rubric
from annotator.ui.keymap import Keymap
from annotator.ui.rubric_form import RubricForm

REPO = Path(__file__).resolve().parents[2]
KEYS = ("pass", "value_4", "fail", "value_1")
EXPECT = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "FAIL",
    "ui_affordance": 1,
}
FILLED = {
    "instruction_following": "FAIL",
    "layout_hierarchy": 1,
    "text_rendering": "PASS",
    "ui_affordance": 5,
    "failure_tags": ["broken_layout"],
}


def _form(qtbot) -> RubricForm:
    form = RubricForm(load_rubric(REPO / "rubrics" / "ui_mockup.toml"), Keymap())
    qtbot.addWidget(form)
    return form


def _typed(form: RubricForm) -> dict:
    for k in KEYS:
        assert form.apply(k), k
    return {k: form.answers().get(k) for k in EXPECT}


def test_the_same_keys_give_the_same_answers_on_a_blank_and_a_filled_form(qtbot):
    blank = _form(qtbot)
    blank.set_answers(None)
    filled = _form(qtbot)
    filled.set_answers(FILLED)
    assert filled.focused_key() == "instruction_following"  # nothing missing: the first
    assert _typed(blank) == EXPECT
    assert _typed(filled) == EXPECT
    assert blank.focused_key() == filled.focused_key() == "failure_tags"


def test_a_key_that_does_nothing_says_why(qtbot):
    form = _form(qtbot)
    form.set_answers(None)
    assert not form.apply("value_4")  # a digit on a PASS/FAIL metric
    line = form.refusal("value_4")
    assert line == "4 does not answer “Instruction following”: its keys are P, F, X.", line
    form.apply("pass")
    assert not form.apply("pass") or form.focused_key() == "text_rendering"
    form.focus_metric("layout_hierarchy")
    assert not form.apply("fail")
    assert form.refusal("fail").endswith("its keys are 0-5, X."), form.refusal("fail")


def test_a_correction_by_keys_stores_what_the_keys_say(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    first = view.current_item.item_pk
    assert view.submit_answers(FILLED)
    qtbot.waitUntil(lambda: view.state == "ready" and view.current_item.item_pk != first)
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.state == "ready" and view.current_item.item_pk == first)
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_F, Qt.Key.Key_1):
        qtbot.keyClick(view, key)
    qtbot.keyClick(view, Qt.Key.Key_1)  # on the tags now: toggles the first tag
    assert "does not answer" not in view.message.text()
    with qtbot.waitSignal(view.submitted, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    wait_ready(qtbot, view)
    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        rows = con.execute("SELECT answers, supersedes FROM judgements ORDER BY id").fetchall()
    assert len(rows) == 2 and rows[1][1] is not None
    stored = json.loads(rows[1][0])
    assert {k: stored[k] for k in EXPECT} == EXPECT
    assert RATER
    # a digit on a gate of a fresh item says why, and changes nothing
    qtbot.keyClick(view, Qt.Key.Key_4)
    assert view.message.text().startswith("4 does not answer “Instruction following”")
    assert view.form.answers().get("instruction_following") is None


def test_the_progress_line_never_says_about_0_min_left():
    from annotator.domain.records import Progress
    from annotator.ui.label_view import format_progress

    # 17 of 18 done at 10 s an item: 10 s left
    line = format_progress(Progress(done=17, total=18, session_done=17, session_seconds=170))
    assert "less than a minute left" in line and "0 min" not in line, line
    line = format_progress(Progress(done=6, total=18, session_done=6, session_seconds=60))
    assert "about 2 min left" in line, line


def test_a_single_arrow_key_on_who_is_rating_does_not_enter_rater_mode(qtbot, tmp_path):
    """Down on the closed rater list picked the next rater and entered rater mode
    without a word; now the arrows open the list, and only Enter or a click chooses."""
    from gui_support import build_study
    from screens import leave_rater

    built = build_study(tmp_path, "ui", anchor_every=0, raters=("rater-one", "zed"))
    w = open_window(qtbot, built.folder, rater=None)
    if w.rater is not None:
        leave_rater(qtbot, w)
    combo = w.start.rater_combo
    combo.setFocus()
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_Down):
        qtbot.keyClick(combo, key)
        assert w.rater is None, key
        combo.hidePopup()
    assert w.mode == "start"
    w.close()
