"""An answer counts only for an item the rater saw: on the label, pairwise and
calibration views, an answer key, a vote or a submit 0, 10 and 30 ms after the item's pictures
are on screen is refused in words and changes nothing; at 400 ms it counts, and the time stored
with the answer is that exposure. The views read a test clock here (``SessionView.clock``), so
"10 ms after" is exact on a loaded machine; tests/gui/test_exposure_x11.py replays the same
bursts with real keys and real time under Xvfb."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from gui_support import (
    RATER,
    hold_study,
    open_window,
    wait_ready,
    with_minimum_exposure,
)
from PySide6.QtCore import Qt

from annotator.ui.session_view import SessionView

pytestmark = pytest.mark.exposure
TOO_SOON_MS = (0, 10, 30)
SEEN_MS = 400


class Clock:
    """A monotonic clock the test moves by hand (seconds, as time.monotonic)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(SessionView, "clock", staticmethod(c))
    return c


def _rows(folder: Path, table: str) -> list[tuple]:
    with sqlite3.connect(folder / "study.sqlite") as con:
        return con.execute(f"SELECT id, time_ms FROM {table} ORDER BY id").fetchall()


def _seen(qtbot, view) -> float:
    """Wait until the item's pictures are on screen; the clock's time then."""
    qtbot.waitUntil(lambda: view.exposure_ms() is not None, timeout=10_000)
    return view._exposed_at


def test_label_view_refuses_answer_keys_and_enter_before_the_minimum(qtbot, tmp_path, clock):
    folder = with_minimum_exposure(tmp_path)
    w = open_window(qtbot, folder)
    view = w.current_view
    wait_ready(qtbot, view)
    assert view.min_exposure_ms == 250
    t0 = _seen(qtbot, view)
    for ms in TOO_SOON_MS:
        clock.now = t0 + ms / 1000
        for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_X):
            qtbot.keyClick(view, key)
            assert view.message.text().startswith("Too fast"), (ms, view.message.text())
        assert view.form.answers().get("instruction_following") is None, ms
    clock.now = t0 + SEEN_MS / 1000
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_3):
        qtbot.keyClick(view, key)
    assert not view.form.missing()
    first = view.current_item.item_pk
    with qtbot.waitSignal(view.submitted, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    wait_ready(qtbot, view)
    assert _rows(folder, "judgements") == [(1, SEEN_MS)]  # the stored time is the exposure
    # the next item: the same burst at once is refused; nothing of it lands on the new item
    assert view.current_item.item_pk != first
    t1 = _seen(qtbot, view)
    clock.now = t1
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_3, Qt.Key.Key_Return):
        qtbot.keyClick(view, key)
        assert view.message.text().startswith("Too fast"), view.message.text()
    assert view.form.answers().get("instruction_following") is None
    assert len(_rows(folder, "judgements")) == 1
    w.close()


def test_the_rule_is_off_at_zero(qtbot, tmp_path, clock):
    folder = with_minimum_exposure(tmp_path, 0)
    w = open_window(qtbot, folder)
    view = w.current_view
    wait_ready(qtbot, view)
    clock.now = _seen(qtbot, view)
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert view.form.answers()["instruction_following"] == "PASS"
    w.close()


def test_pair_view_refuses_a_vote_before_the_minimum(qtbot, tmp_path, clock, db_worker):
    from annotator.ui.pair_view import PairView

    folder = with_minimum_exposure(tmp_path)
    snap = hold_study(db_worker, folder)
    view = PairView(snap, RATER, db_worker, None)
    qtbot.addWidget(view)
    view.resize(1280, 820)
    view.show()
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    view.setFocus()
    t0 = _seen(qtbot, view)
    for ms in TOO_SOON_MS:
        clock.now = t0 + ms / 1000
        for key in (Qt.Key.Key_4, Qt.Key.Key_1):
            qtbot.keyClick(view, key)
            assert view.message.text().startswith("Too fast"), (ms, view.message.text())
        assert view.state == "ready"
    assert _rows(folder, "pair_votes") == []
    clock.now = t0 + SEEN_MS / 1000
    with qtbot.waitSignal(view.pairShown, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_4)
    assert _rows(folder, "pair_votes") == [(1, SEEN_MS)]
    clock.now = _seen(qtbot, view) + 0.013  # "4 4": the second 13 ms after its pair appeared
    qtbot.keyClick(view, Qt.Key.Key_4)
    assert view.message.text().startswith("Too fast")
    assert len(_rows(folder, "pair_votes")) == 1
    view.close()


def test_calibration_view_refuses_answers_before_the_minimum(qtbot, tmp_path, clock, db_worker):
    from annotator.ui.calibration_view import CalibrationView

    snap = hold_study(db_worker, with_minimum_exposure(tmp_path, anchors=True))
    view = CalibrationView(snap, RATER, db_worker, None)
    qtbot.addWidget(view)
    view.resize(1400, 900)
    view.show()
    qtbot.waitUntil(lambda: view.stage() == "answer" and not view.is_busy(), timeout=10_000)
    view.setFocus()
    t0 = _seen(qtbot, view)
    for ms in TOO_SOON_MS:
        clock.now = t0 + ms / 1000
        qtbot.keyClick(view, Qt.Key.Key_P)
        assert view.message.text().startswith("Too fast"), (ms, view.message.text())
        assert view.form.answers().get("instruction_following") is None
    clock.now = t0 + SEEN_MS / 1000
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert view.form.answers()["instruction_following"] == "PASS"
    view.close()
