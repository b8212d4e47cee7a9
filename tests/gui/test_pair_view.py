"""PairView driven by the keyboard against a real SQLite study with real PNGs."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from gui_support import build_study, hold_study, save_screenshot
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPlainTextEdit, QPushButton

from annotator.demo import scenario
from annotator.services.study import Study
from annotator.ui.pair_view import PairView
from annotator.ui.settings import AppSettings
from annotator.ui.worker import DbWorker

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
RATER = "pia"


@pytest.fixture()
def pair_study(tmp_path: Path, db_worker):
    """(study folder, its snapshot held by db_worker)."""
    built = build_study(tmp_path, "ui", anchor_every=0, raters=(RATER,))
    return built.folder, hold_study(db_worker, built.folder)


def _open(qtbot, snapshot, worker: DbWorker, settings=None) -> PairView:
    view = PairView(snapshot, RATER, worker, settings)
    qtbot.addWidget(view)
    view.resize(1280, 820)
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    with qtbot.waitSignal(view.pairShown, timeout=10_000):
        pass
    view.setFocus()
    return view


def _votes(study) -> list[dict]:
    folder = study if isinstance(study, Path) else study.folder
    con = sqlite3.connect(folder / "study.sqlite")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM pair_votes ORDER BY id")]
    finally:
        con.close()


def _press(qtbot, view: PairView, key: Qt.Key, mods=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press that lands a vote (or a back step) and waits for the next pair."""
    with qtbot.waitSignal(view.pairShown, timeout=10_000):
        qtbot.keyClick(view, key, mods)
    assert not view.is_busy()


def _widget_texts(view) -> list[str]:
    out = [view.windowTitle(), view.toolTip(), view.accessibleName()]
    for cls in (QLabel, QPushButton, QLineEdit, QPlainTextEdit):
        for w in view.findChildren(cls):
            text = w.toPlainText() if isinstance(w, QPlainTextEdit) else w.text()
            out += [text, w.toolTip(), w.accessibleName()]
            if isinstance(w, QLineEdit):
                out.append(w.placeholderText())
    return out


def test_keyboard_votes_store_side_shown_and_seed(qtbot, pair_study, db_worker):
    study, snap = pair_study
    view = _open(qtbot, snap, db_worker)
    assert view.question.text() == snap.setting("pair_question")
    assert view.progress.text() == "0 / 18 done"

    cast = []
    for key, choice in (
        (Qt.Key.Key_1, "left"),
        (Qt.Key.Key_Right, "right"),
        (Qt.Key.Key_B, "both"),
        (Qt.Key.Key_4, "neither"),
        (Qt.Key.Key_Left, "left"),
        (Qt.Key.Key_2, "right"),
        (Qt.Key.Key_3, "both"),
        (Qt.Key.Key_N, "neither"),
    ):
        served = view.current()
        assert served is not None
        # The prompt shown is the pair's case prompt, and both sides come from the same case.
        assert view.prompt.text() == served.left.prompt == served.right.prompt
        cast.append((served, choice))
        _press(qtbot, view, key)

    rows = _votes(study)
    assert [r["choice"] for r in rows] == [c for _, c in cast]
    for row, (served, _choice) in zip(rows, cast, strict=True):
        assert (row["pair_pk"], row["item_left"], row["item_right"]) == (
            served.pair_pk,
            served.left_pk,
            served.right_pk,
        )
        assert row["side_seed"] == served.seed is not None
        assert row["supersedes"] is None and row["time_ms"] >= 0
    # The sides dealt differ between pairs (the seeded deal, not a fixed order by item id).
    assert any(r["item_left"] > r["item_right"] for r in rows)
    assert any(r["item_left"] < r["item_right"] for r in rows)
    assert view.progress.text() == "8 / 18 done"

    # Blinding: nothing on screen names a generator or a source file.
    texts = " ".join(_widget_texts(view)).lower()
    for gen in scenario.GENERATORS:
        assert gen not in texts
    assert ".png" not in texts and "out/" not in texts


def test_vote_in_flight_ignores_more_keys_and_no_autorepeat(qtbot, pair_study, db_worker):
    study, snap = pair_study
    view = _open(qtbot, snap, db_worker)
    first = view.current()
    with qtbot.waitSignal(view.pairShown, timeout=10_000):
        # Three presses before the worker answers: only the first is a vote.
        qtbot.keyClick(view, Qt.Key.Key_1)
        assert view.is_busy()
        qtbot.keyClick(view, Qt.Key.Key_2)
        # refused in words while the vote is saved, never dropped in silence
        assert view.message.text().startswith("Saving… That key was not applied")
        qtbot.keyClick(view, Qt.Key.Key_N)
    rows = _votes(study)
    assert "not applied here: 2" in view.message.text(), view.message.text()  # said on the next
    assert [(r["pair_pk"], r["choice"]) for r in rows] == [(first.pair_pk, "left")]
    assert view.current().pair_pk != first.pair_pk
    # Holding a key down must not cast a stream of votes: an auto-repeated press does nothing.
    QApplication.sendEvent(
        view,
        QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_1, Qt.KeyboardModifier.NoModifier, "1", True),
    )
    assert not view.is_busy() and len(_votes(study)) == 1


def test_reason_box_takes_typing_and_ctrl_z_supersedes(qtbot, pair_study, db_worker):
    study, snap = pair_study
    view = _open(qtbot, snap, db_worker)
    _press(qtbot, view, Qt.Key.Key_1)
    second = view.current()

    qtbot.keyClick(view, Qt.Key.Key_R)
    assert view.reason.hasFocus()
    # Vote keys typed into the reason are text, not votes.
    qtbot.keyClicks(view.reason, "nb 1234 rr")
    qtbot.keyClick(view.reason, Qt.Key.Key_Left)
    qtbot.keyClick(view.reason, Qt.Key.Key_Right)
    assert view.reason.text() == "nb 1234 rr"
    assert len(_votes(study)) == 1
    qtbot.keyClick(view.reason, Qt.Key.Key_Escape)
    assert not view.reason.hasFocus()
    _press(qtbot, view, Qt.Key.Key_2)
    third = view.current()
    assert view.reason.text() == ""  # a fresh pair starts with an empty reason
    rows = _votes(study)
    assert (rows[-1]["pair_pk"], rows[-1]["choice"], rows[-1]["reason"]) == (
        second.pair_pk,
        "right",
        "nb 1234 rr",
    )

    # Tab also reaches the reason box.
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert view.reason.hasFocus()
    qtbot.keyClick(view.reason, Qt.Key.Key_Escape)

    # Ctrl+Z: back to the second pair with its vote and reason; a new vote supersedes.
    _press(qtbot, view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    back = view.current()
    assert back.pair_pk == second.pair_pk and back.previous_choice == "right"
    assert (back.left_pk, back.right_pk) == (second.left_pk, second.right_pk)  # same sides again
    assert view.reason.text() == "nb 1234 rr"
    _press(qtbot, view, Qt.Key.Key_B)
    # After the correction the queue continues at the first pair without a vote.
    assert view.current().pair_pk == third.pair_pk

    rows = _votes(study)
    old = next(r for r in rows if r["pair_pk"] == second.pair_pk and r["choice"] == "right")
    new = rows[-1]
    assert (new["pair_pk"], new["choice"], new["supersedes"]) == (second.pair_pk, "both", old["id"])
    assert (new["item_left"], new["item_right"]) == (old["item_left"], old["item_right"])
    assert len(rows) == 3  # append-only: the superseded vote is still there
    assert view.progress.text() == "2 / 18 done"

    # Back twice, then change again: the chain grows (vote -> correction -> correction).
    _press(qtbot, view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert view.current().pair_pk == second.pair_pk and view.current().previous_choice == "both"
    _press(qtbot, view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    first_back = view.current()
    assert first_back.previous_choice == "left"
    # Forward without changing anything returns to the open pair and writes nothing.
    _press(
        qtbot,
        view,
        Qt.Key.Key_Z,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert view.current().pair_pk == third.pair_pk
    assert len(_votes(study)) == 3
    _press(qtbot, view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    _press(qtbot, view, Qt.Key.Key_N)
    rows = _votes(study)
    chain = [r for r in rows if r["pair_pk"] == second.pair_pk]
    assert [r["choice"] for r in chain] == ["right", "both", "neither"]
    assert chain[2]["supersedes"] == chain[1]["id"] and chain[1]["supersedes"] == chain[0]["id"]


def test_zoom_is_synchronised_and_screenshot(qtbot, pair_study, db_worker, screenshot_dir):
    study, snap = pair_study
    view = _open(qtbot, snap, db_worker)
    left, right = view.left_side.views()[0], view.right_side.views()[0]
    assert left.image() is not None and right.image() is not None
    assert left.image().size() == right.image().size()
    assert left.zoom() == pytest.approx(right.zoom())  # same scale side by side
    before = left.zoom()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert left.zoom() == pytest.approx(before * 1.25)
    assert right.zoom() == pytest.approx(left.zoom())
    left.horizontalScrollBar().setValue(left.horizontalScrollBar().maximum())
    assert right.view_state().cx == pytest.approx(left.view_state().cx, abs=0.01)
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert left.is_fit() and right.zoom() == pytest.approx(before)

    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.keyClicks(view.reason, "Compared the required sections and the call to action.")
    qtbot.keyClick(view.reason, Qt.Key.Key_Escape)
    save_screenshot(
        view,
        screenshot_dir / "pair_view.png",
        shows=("Compared the required sections and the call to action.",),
    )


def test_text_outputs_are_selectable_plain_text(qtbot, tmp_path, db_worker):
    manifest = tmp_path / "text.jsonl"
    lines = [
        {
            "item_id": f"t-{g}",
            "case_id": "haiku",
            "prompt": "Write a haiku about rain.",
            "criteria": "5-7-5 syllables.",
            "generator": g,
            "text": f"<b>rain</b> on tin roofs {g[-1]}\nline two",
        }
        for g in ("model-x", "model-y")
    ]
    manifest.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    study = Study.create(tmp_path / "study", RUBRIC)
    study.import_items(manifest)
    study.add_rater(RATER)
    study.close()
    snap = hold_study(db_worker, tmp_path / "study")
    if True:
        view = _open(qtbot, snap, db_worker)
        served = view.current()
        for side, item in ((view.left_side, served.left), (view.right_side, served.right)):
            assert side.text.isVisible() and side.text.isReadOnly()
            # Plain text: markup is shown literally, never interpreted.
            assert side.text.toPlainText() == item.text and "<b>" in side.text.toPlainText()
            assert side.text.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
            assert not any(t.isVisible() for t in side.tiles)
        texts = " ".join(_widget_texts(view))
        assert "model-x" not in texts and "model-y" not in texts
        _press_done = view.vote("neither")
        assert _press_done
        with qtbot.waitSignal(view.finished, timeout=10_000):
            pass
        assert [r["choice"] for r in _votes(tmp_path / "study")] == ["neither"]
        assert "Every pair" in view.done_page.text()


def test_second_window_on_a_voted_pair_loses_nothing_silently(qtbot, pair_study, db_worker):
    study, snap = pair_study
    a = _open(qtbot, snap, db_worker)
    b = _open(qtbot, snap, db_worker)
    assert a.current().pair_pk == b.current().pair_pk
    first = a.current().pair_pk
    with qtbot.waitSignal(a.pairShown, timeout=10_000):
        assert a.vote("left")
    # b still shows the pair a just voted on. Its vote is kept as a correction (services
    # that accept a second answer from the same rater), or b says plainly that it was not.
    with qtbot.waitSignal(b.pairShown, timeout=10_000):
        assert b.vote("right")
    assert not b.is_busy()
    rows = [(r["pair_pk"], r["choice"], r["supersedes"]) for r in _votes(study)]
    kept = len(rows) == 2 and rows[1][:2] == (first, "right") and rows[1][2] is not None
    told = rows == [(first, "left", None)] and "another window" in b.message.text()
    assert kept or told, (rows, b.message.text())


def test_pair_keys_are_overridable(qtbot, pair_study, db_worker):
    study, snap = pair_study
    settings = AppSettings()
    settings.set_key_override("vote_left", ["A"])
    settings.set_key_override("vote_right", ["D"])
    view = _open(qtbot, snap, db_worker, AppSettings())
    assert "[A]" in view.buttons["left"].text()
    first = view.current().pair_pk
    qtbot.keyClick(view, Qt.Key.Key_1)  # no longer a vote
    assert not view.is_busy() and _votes(study) == []
    _press(qtbot, view, Qt.Key.Key_D)
    assert [(r["pair_pk"], r["choice"]) for r in _votes(study)] == [(first, "right")]
