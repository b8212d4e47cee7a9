"""One key system: every key of every view comes from the keymap; overrides and their
clashes are reported in one line at start-up, never dropped silently."""

from __future__ import annotations

import pytest
from gui_support import RATER, open_window
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QImage, QKeyEvent

from annotator.ui.keymap import ACTIONS, Keymap
from annotator.ui.settings import AppSettings

# Handled by the reason-box filter of the pair view rather than by the view's own table.
REASON_BOX = {"pair_reason_done"}


def test_the_defaults_have_no_clash():
    km = Keymap()
    assert km.problems() == [] and km.problem_line() is None


def test_a_clashing_override_is_reported_in_one_line_and_the_first_action_kept():
    km = Keymap(
        {"fail": ["P"], "vote_lft": ["A"], "pass": ["Nope"], "vote_left": ["P"]}, source="keys.toml"
    )
    line = km.problem_line()
    assert line is not None and "\n" not in line and "keys.toml" in line
    assert "'vote_lft' is not an action" in line
    assert "'Nope' for pass is not a key" in line
    # "pass" lost its key to the unreadable override, so P belongs to fail now: no clash there.
    assert km.action_for(_key(Qt.Key.Key_P), "label") == "fail"
    # In the pair context P is vote_left only (label keys are not live there).
    assert km.action_for(_key(Qt.Key.Key_P), "pair") == "vote_left"
    clash = Keymap({"fail": ["P"]})
    assert clash.problems() == ["P is bound to both pass and fail (label): pass kept"]
    assert clash.action_for(_key(Qt.Key.Key_P), "label") == "pass"


def test_a_global_key_clashes_with_every_context():
    km = Keymap({"vote_left": ["Ctrl+O"]})
    assert any("open_study" in p and "vote_left" in p for p in km.problems())


def _key(key: Qt.Key, mods=Qt.KeyboardModifier.NoModifier, text: str = "") -> QKeyEvent:
    return QKeyEvent(QEvent.Type.KeyPress, key, mods, text)


def test_the_keys_file_is_read_and_its_problems_reach_the_status_bar(qtbot, ui_study):
    settings = AppSettings()
    settings.keys_path.parent.mkdir(parents=True, exist_ok=True)
    settings.keys_path.write_text(
        '[keys]\nfail = ["P"]\nsubmit = "Ctrl+Return"\nzoom_in = 5\n', encoding="utf-8"
    )
    w = open_window(qtbot, ui_study.folder, None, settings=AppSettings())
    line = w.keymap.problem_line()
    assert "P is bound to both pass and fail" in line and "'zoom_in' must be a list of keys" in line
    assert w.keymap.hint("submit") == "Ctrl+Enter"  # the key marked Enter on the keyboard
    assert w.keys_note.toolTip() == line and w.keys_note.isVisible()
    settings.keys_path.write_text("[keys\n", encoding="utf-8")
    assert "keys.toml cannot be read" in Keymap.from_settings(AppSettings()).problem_line()
    w.close()


def test_every_action_is_bound_in_its_view(qtbot, ui_study, db_worker):
    """Each context's actions have a handler in the view that owns the context."""
    from gui_support import hold_study

    from annotator.ui.calibration_view import CalibrationView
    from annotator.ui.dashboard_view import DashboardView
    from annotator.ui.label_view import LabelView
    from annotator.ui.pair_view import PairView

    snap = hold_study(db_worker, ui_study.folder)
    label = LabelView(snap, RATER, db_worker)
    pair = PairView(snap, RATER, db_worker)
    cal = CalibrationView(snap, RATER, db_worker)
    board = DashboardView(snap, None, db_worker, autostart=False)
    for v in (label, pair, cal, board):
        qtbot.addWidget(v)
    cal._page = "answer"
    answer_keys = set(cal.key_actions())
    cal._page = "feedback"
    feedback_keys = set(cal.key_actions())
    cal._page = "verdict"
    feedback_keys |= set(cal.key_actions())
    tables = {
        "label": set(label.key_actions()) | REASON_BOX,
        "pair": set(pair.key_actions()) | REASON_BOX,
        "feedback": feedback_keys,
        "dashboard": set(board.key_actions()),
    }
    for ctx, names in tables.items():
        want = {a.name for a in ACTIONS if ctx in a.contexts}
        assert want <= names, f"{ctx}: no handler for {sorted(want - names)}"
    # The calibration answer screen takes the label form's keys.
    assert {a.name for a in ACTIONS if "label" in a.contexts} - {
        "back",
        "instructions",
        "dismiss",
    } <= answer_keys
    # Every reason box handles the reason context's keys (Esc leaves it).
    reason = {a.name for a in ACTIONS if "reason" in a.contexts}
    from annotator.ui.session_view import ReasonKeys

    for v in (label, cal):
        boxes = [f for f in v.form.reason_edit().children() if isinstance(f, ReasonKeys)]
        assert boxes and reason <= set(boxes[0].actions)
    for v in (label, pair, cal, board):
        v.shutdown()


def test_main_window_actions_and_image_keys_come_from_the_keymap(qtbot, ui_study):
    settings = AppSettings()
    settings.set_key_override("start_page", ["F9"])
    settings.set_key_override("image_fit", ["F"])
    w = open_window(qtbot, ui_study.folder, None, settings=AppSettings())
    names = {a.name for a in ACTIONS if "global" in a.contexts}
    assert names <= set(w.actions_by_name)
    assert [s.toString() for s in w.actions_by_name["start_page"].shortcuts()] == ["F9"]
    # The menu actions (what their keys trigger) open their modes.
    assert w.mode == "label"
    w.mode_actions["pairwise"].trigger()
    assert w.mode == "pairwise"
    w.actions_by_name["start_page"].trigger()
    assert w.mode == "start"
    from annotator.ui.image_view import ImageView

    v = ImageView(keymap=w.keymap)
    qtbot.addWidget(v)
    v.resize(200, 200)
    v.set_image(QImage(400, 400, QImage.Format.Format_RGB32))
    v.show()
    qtbot.keyClick(v, Qt.Key.Key_1)
    assert v.zoom() == pytest.approx(1.0)
    qtbot.keyClick(v, Qt.Key.Key_F)
    assert v.is_fit()
    w.close()


def test_the_zoom_keys_are_one_table(qtbot):
    """The four views with images took their zoom keys from four copies of
    one table; SyncGroup.actions is the one, and it names every zoom key of the keymap."""
    from annotator.ui.image_view import SyncGroup

    zoom = {a.name for a in ACTIONS if a.name.startswith("zoom_")}
    assert zoom and set(SyncGroup().key_actions()) == zoom


def test_images_at_100_percent_are_at_100_percent_whatever_their_size(qtbot):
    """Ctrl+1 put every image at the first one's zoom relative to its fit: a second image of
    another size (an edit's input beside its output) stood at 50 %, and a view that a scroll bar
    had just narrowed at 99.7 % (a flaky GUI test caught it). Each is at 100 % now, centred in
    step."""
    from annotator.ui.image_view import ImageView, SyncGroup

    views = []
    for side in (400, 800):
        v = ImageView()
        qtbot.addWidget(v)
        v.resize(300, 300)
        v.set_image(QImage(side, side, QImage.Format.Format_RGB32))
        v.show()
        views.append(v)
    group = SyncGroup(views)
    group.zoom_in()
    group.actual_size()
    assert [v.zoom() for v in views] == [pytest.approx(1.0), pytest.approx(1.0)]
    cx = [v.view_state().cx for v in views]
    assert cx[0] == pytest.approx(cx[1], abs=0.01)
    group.fit()
    assert all(v.is_fit() for v in views)
