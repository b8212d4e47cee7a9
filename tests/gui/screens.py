"""Every screen of the app, reached as a person reaches it, for the walks that look at all of them
(translation, accessibility, contrast) and for the screenshots of the README and docs/raters.md.

``walk_screens(qtbot, folder)`` yields ``(name, window)`` with the window showing that screen
and settled: the empty start page, the start page of a study (lead), the label view, the
instructions dialog over it, the pairwise view, the calibration answer, feedback and verdict.
``dashboard_screen(qtbot, folder)`` is separate (computing the report takes a while).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from gui_support import RATER, complete_answers, open_window, wait_ready
from PySide6.QtWidgets import QWidget

from annotator.ui.main_window import MainWindow
from annotator.ui.settings import AppSettings

CALIBRATION_TIMEOUT_S = 120  # generous: the machine may be shared; a working run takes seconds


def _settle(qtbot, w: MainWindow) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: not w.busy and not w.worker.busy, timeout=30_000)
    view = w.current_view
    if view is not None and hasattr(view, "state"):
        qtbot.waitUntil(lambda: view.state in ("ready", "done", "error"), timeout=30_000)
    qtbot.wait(30)


def walk_screens(qtbot, folder: Path, *, size=(1280, 820)) -> Iterator[tuple[str, QWidget]]:  # noqa: ANN001
    empty = MainWindow(AppSettings())
    qtbot.addWidget(empty)
    empty.resize(*size)
    empty.show()
    qtbot.wait(30)
    yield "start_empty", empty
    empty.close()

    w = open_window(qtbot, folder, rater=None, size=size)
    _settle(qtbot, w)
    if w.rater is not None:  # the study's only rater was entered by itself: back to the lead
        leave_rater(qtbot, w)
    _settle(qtbot, w)
    yield "start_lead", w
    assert w.set_rater(RATER)
    view = w.show_mode("label")
    _settle(qtbot, w)
    yield "label", w
    view.apply_action("instructions")
    qtbot.wait(30)
    yield "instructions", view._instructions
    view.apply_action("instructions")
    view.form.set_answers(complete_answers(view.rubric, 1))
    qtbot.wait(10)
    yield "label_answered", w
    w.show_mode("pairwise")
    _settle(qtbot, w)
    yield "pairwise", w
    cal = w.show_mode("calibration")
    _settle(qtbot, w)
    yield "calibration_answer", w
    cal.form.set_answers(complete_answers(cal._rubric, 2))
    assert cal.submit()
    qtbot.waitUntil(lambda: cal.stage() == "feedback", timeout=20_000)
    qtbot.wait(30)
    yield "calibration_feedback", w
    # through the remaining anchors; bounded, so a calibration that never ends fails, not hangs
    deadline = time.monotonic() + CALIBRATION_TIMEOUT_S
    while cal.stage() != "verdict":
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the calibration did not reach its verdict in {CALIBRATION_TIMEOUT_S} s: "
                f"stuck at stage {cal.stage()!r}, state {cal.state!r}"
            )
        if cal.stage() == "feedback":
            cal.advance()
        elif cal.stage() == "answer" and cal.state == "ready":
            cal.form.set_answers(complete_answers(cal._rubric, 3))
            cal.submit()
        qtbot.wait(5)
    qtbot.wait(30)
    yield "calibration_verdict", w
    w.close()


def leave_rater(qtbot, w: MainWindow) -> None:  # noqa: ANN001
    """Leave rater mode, answering the "leaving blinded work" question with yes."""
    from PySide6.QtWidgets import QMessageBox

    w.leave_rater()
    box = w.pending_confirmation
    next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole).click()
    qtbot.waitUntil(lambda: w.rater is None, timeout=5_000)


def dashboard_screen(qtbot, folder: Path, *, size=(1280, 820)) -> MainWindow:  # noqa: ANN001
    s = AppSettings()
    s.set_value("dashboard_n_boot", 20)
    w = open_window(qtbot, folder, rater=None, size=size, settings=s)
    if w.rater is not None:
        leave_rater(qtbot, w)
    view = w.show_mode("dashboard")
    qtbot.waitUntil(lambda: view.model is not None, timeout=120_000)
    qtbot.wait(50)
    return w


__all__ = ["dashboard_screen", "leave_rater", "walk_screens", "wait_ready"]
