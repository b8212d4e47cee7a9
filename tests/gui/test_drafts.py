"""A half-given answer is not lost without asking: two metrics answered and a
reason typed, then the window closed (what Alt+F4 does): on reopen the item comes back with them,
and the screen says so; once submitted, the draft is gone and nothing of it is restored again."""

from __future__ import annotations

import sqlite3

from gui_support import open_window, wait_ready
from PySide6.QtCore import Qt

from annotator.ui.settings import AppSettings


def test_an_unfinished_answer_survives_closing_the_window(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    item = view.current_item.item_pk
    for key in (Qt.Key.Key_P, Qt.Key.Key_4):
        qtbot.keyClick(view, key)
    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.keyClicks(view.form.reason_edit(), "the button is cut off")
    qtbot.keyClick(view.form.reason_edit(), Qt.Key.Key_Escape)
    typed = view.form.answers()
    assert typed["instruction_following"] == "PASS" and typed["layout_hierarchy"] == 4
    w.close()  # at once: the draft written within the moment after the last key is kept too
    qtbot.waitUntil(lambda: not w.isVisible())
    drafts = list((AppSettings().path.parent / "drafts").glob("*.json"))
    assert len(drafts) == 1

    w2 = open_window(qtbot, ui_study.folder)
    view2 = w2.current_view
    wait_ready(qtbot, view2)
    assert view2.current_item.item_pk == item
    assert view2.form.answers() == typed
    assert "unfinished answer" in view2.message.text(), view2.message.text()
    for key in (Qt.Key.Key_P, Qt.Key.Key_3):  # the two metrics left
        qtbot.keyClick(view2, key)
    with qtbot.waitSignal(view2.submitted, timeout=10_000):
        qtbot.keyClick(view2, Qt.Key.Key_Return)
    wait_ready(qtbot, view2)
    assert not drafts[0].exists()  # stored: nothing to restore any more
    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        (reason,) = con.execute("SELECT reason FROM judgements").fetchone()
    assert reason == "the button is cut off"
    w2.close()
