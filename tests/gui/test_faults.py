"""The GUI through a damaged study, a read-only study and a locked database: the window
stays open and usable, every failure is one line (never a raw SQL error), and an answer
that could not be saved stays in the form to be submitted again."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess

import pytest
from gui_support import RATER, open_window, wait_ready
from PySide6.QtCore import Qt

RAW = ("SELECT", "INSERT", "[SQL", "sqlite3.", "Traceback", "(Background on this error")


def one_line(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text.strip() and not any(r in text for r in RAW)


def shown_message(w) -> str:  # noqa: ANN001
    """The line the window shows about the failure (start page or the view)."""
    view = w.current_view
    for text in (getattr(view, "message", None) and view.message.text(), w.start.message.text()):
        if text:
            return text
    return ""


def assert_one_line_and_usable(qtbot, w) -> None:  # noqa: ANN001
    if w.current_view is not None:
        wait_ready(qtbot, w.current_view)
    qtbot.waitUntil(lambda: shown_message(w) != "", timeout=10_000)
    print(f"\nshown: {shown_message(w)}")
    assert w.isVisible() and one_line(shown_message(w)), shown_message(w)
    # Still usable: the start page comes back and answers its keys.
    w.show_start()
    assert w.mode == "start" and w.stack.currentWidget() is w.start
    w.close()


def test_damaged_study_is_one_line_and_the_window_stays(qtbot, ui_study):
    db = ui_study.folder / "study.sqlite"
    data = bytearray(db.read_bytes())
    rng = random.Random(7)
    for i in range(1024, min(len(data), 24_000)):
        data[i] = rng.randrange(256)
    db.write_bytes(bytes(data))
    assert_one_line_and_usable(qtbot, open_window(qtbot, ui_study.folder))


@pytest.fixture()
def immutable(ui_study):
    """The study folder and file made immutable (root ignores chmod; chattr +i binds root too)."""
    targets = [ui_study.folder / "study.sqlite", ui_study.folder]
    r = subprocess.run(["chattr", "+i", str(targets[0])], capture_output=True, text=True)
    if r.returncode != 0:
        reason = (
            f"chattr +i is not supported here ({(r.stderr or r.stdout).strip() or r.returncode})"
        )
        print(f"\nskipped: {reason}")
        pytest.skip(reason)
    subprocess.run(["chattr", "+i", str(targets[1])], check=True)
    try:
        yield ui_study
    finally:
        for t in targets:
            subprocess.run(["chattr", "-i", str(t)], check=False)


def test_read_only_study_is_one_line_and_the_window_stays(qtbot, immutable):
    assert_one_line_and_usable(qtbot, open_window(qtbot, immutable.folder))


def test_locked_database_shows_saving_then_one_line_and_keeps_the_answer(
    qtbot, ui_study, monkeypatch
):
    import annotator.store.engine as engine

    monkeypatch.setenv("ANNOTATOR_BUSY_TIMEOUT_MS", "1500")
    if hasattr(engine, "BUSY_TIMEOUT_MS"):
        monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 1500)
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    first = view.current_item.item_pk
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_3):
        qtbot.keyClick(view, key)
    answers = view.form.answers()
    assert not view.form.missing()

    other = sqlite3.connect(ui_study.folder / "study.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        qtbot.keyClick(view, Qt.Key.Key_Return)
        assert view.state == "busy"
        qtbot.waitUntil(lambda: view.message.text().startswith("Saving"), timeout=5000)
        qtbot.keyClick(view, Qt.Key.Key_Return)  # ignored while the write waits
        qtbot.waitUntil(lambda: view.state == "ready", timeout=30_000)
    finally:
        other.rollback()
        other.close()
    text = view.message.text()
    print(f"\nshown: {text}")
    assert one_line(text) and not text.startswith("Saving"), text
    assert w.isVisible()
    # Nothing was stored, the answer is still in the form, and submitting again works.
    assert view.current_item.item_pk == first and view.form.answers() == answers
    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        assert con.execute("SELECT count(*) FROM judgements").fetchone()[0] == 0
    with qtbot.waitSignal(view.submitted, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    wait_ready(qtbot, view)
    assert view.current_item.item_pk != first
    w.close()
    assert os.path.exists(ui_study.folder / "study.sqlite")


def test_reopens_as_the_last_rater_and_says_who_is_rating(qtbot, tmp_path):
    from gui_support import build_study

    from annotator.ui.settings import AppSettings

    built = build_study(tmp_path, "ui", anchor_every=0, raters=(RATER, "zed"))
    # First run (the demo): nobody rated here yet, so the default rater.
    w = open_window(qtbot, built.folder, None, default_rater=RATER)
    assert w.rater == RATER and w.mode == "label"
    assert w.rating_as.text() == f"Rating as {RATER}" and w.rating_as.isVisible()
    assert w.set_rater("zed")
    w.close()
    # Next run: the last rater who worked here, not the default again.
    w = open_window(qtbot, built.folder, None, settings=AppSettings(), default_rater=RATER)
    assert w.rater == "zed" and w.rating_as.text() == "Rating as zed"
    assert "rating as zed" in w.windowTitle()
    w.close()
