"""The team workflow in the app: a rater package opens like a study with no lead view in it;
in a lead's study, choosing a rater is rater mode, left only through "leaving blinded work";
operators never show to raters; the lead's dashboard shows the team's progress."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_support import RATER, build_study, open_window, wait_ready
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMessageBox, QPushButton

from annotator.services.packages import export_package
from annotator.services.study import Study
from annotator.services.team import assign
from annotator.ui.main_window import LEAD_MODES

OTHER = "rater-two"
OPERATOR = "lead-op"


@pytest.fixture
def team_study(tmp_path):
    """A lead's study dealt to two raters (one item each... K=1), with an operator account."""
    built = build_study(tmp_path, "ui", anchor_every=0)
    study = Study.open(built.folder)
    try:
        study.add_rater(OTHER)
        study.add_rater(OPERATOR, operator=True)
        assign(study, [RATER, OTHER], overlap=1, pair_overlap=None, seed=5)
    finally:
        study.close()
    return built


@pytest.fixture
def package(team_study, tmp_path) -> Path:
    study = Study.open(team_study.folder)
    try:
        return export_package(study, RATER, tmp_path / "rater-one.annot").path
    finally:
        study.close()


def _answer_by_keys(qtbot, view) -> None:  # noqa: ANN001
    """The ui_mockup form by keys alone: PASS, 4, PASS, 4 (tags and reason are optional), Enter."""
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_Return):
        qtbot.keyClick(view, key)
    wait_ready(qtbot, view)


def _every_action(w) -> list[QAction]:  # noqa: ANN001
    """Every action of the window: its menus (walked down), buttons' and shortcuts' actions."""
    found: list[QAction] = []
    menus = [a.menu() for a in w.menuBar().actions() if a.menu() is not None]
    while menus:
        m = menus.pop()
        for a in m.actions():
            if a.menu() is not None:
                menus.append(a.menu())
            elif not a.isSeparator():
                found.append(a)
    found += [a for a in w.findChildren(QAction) if a not in found]
    return found


def test_a_package_opens_labels_by_key_and_has_no_lead_view(
    qtbot, package, team_study, screenshot_dir
):
    w = open_window(
        qtbot, package, rater=None
    )  # like a double-click: the package's rater by itself
    assert w.snapshot.is_package and w.rater == RATER and w.mode == "label"
    view = w.current_view
    wait_ready(qtbot, view)
    done: list[int] = []
    view.submitted.connect(done.append)
    for _ in range(2):
        _answer_by_keys(qtbot, view)
    assert len(done) == 2
    assert w.grab().save(str(screenshot_dir / "package_label.png"))

    # The start page shows only this rater; no lead button exists on it.
    w.show_start()
    assert w.grab().save(str(screenshot_dir / "package_start.png"))
    assert [w.start.rater_combo.itemData(i) for i in range(w.start.rater_combo.count())] == [RATER]
    assert not w.start.add_rater_btn.isVisible() and not w.start.leave_btn.isVisible()
    assert not w.start.mode_buttons["dashboard"].isVisible()
    assert "dashboard" not in w.available_modes()

    # Trigger every action and every visible button: no lead view ever opens.
    seen_modes = set()
    w.viewChanged.connect(seen_modes.add)
    leaving = ("quit", "close_study", "open_study", "open_package", "connect_server", "new_study")
    for a in _every_action(w):
        # Those that leave the package (a file dialog, another study) or quit are not a way to a
        # lead view of this study; a language is checked by the i18n tests.
        if (
            a.objectName() in leaving
            or a.objectName().startswith("language_")
            or not a.objectName()
        ):
            continue
        if a.isVisible() and a.isEnabled():
            a.trigger()
            qtbot.waitUntil(lambda: not w.busy, timeout=10_000)
    for b in w.findChildren(QPushButton):
        if b.isVisible() and b.isEnabled() and b in w.start.mode_buttons.values():
            b.click()
    assert not (seen_modes & LEAD_MODES), seen_modes
    assert all(w.show_mode(m) is None for m in LEAD_MODES)
    for name in ("add_rater", "leave_rater", "mode_dashboard"):
        assert not w.actions_by_name[name].isVisible()
    menus = w.menuBar().findChildren(QMenu)
    assert not any(
        "dashboard" in a.text().lower() and a.isVisible() for m in menus for a in m.actions()
    )
    w.close()

    # The two answers are in the package, durably, under this rater.
    study = Study.open(package)
    try:
        assert study.counts()["judgements"] == 2
    finally:
        study.close()


def test_choosing_a_rater_is_rater_mode_left_only_by_confirming(qtbot, team_study, screenshot_dir):
    w = open_window(qtbot, team_study.folder, rater=None)
    assert w.lead_mode and w.mode_allowed("dashboard")
    # The lead sees every account, operators marked; a rater is picked from the combo.
    names = [w.start.rater_combo.itemText(i) for i in range(w.start.rater_combo.count())]
    assert f"{OPERATOR} (operator)" in names
    assert w.set_rater(RATER)
    assert not w.mode_allowed("dashboard") and w.show_mode("dashboard") is None
    # The reason is shown beside the button, not only as a tooltip.
    why = w.start.mode_reasons["dashboard"]
    assert why.isVisible() and "study lead" in why.text() and RATER in why.text()
    # Operators never appear in the list a rater sees; a rater cannot switch to one.
    shown = [w.start.rater_combo.itemData(i) for i in range(w.start.rater_combo.count())]
    assert OPERATOR not in shown and set(shown) == {RATER, OTHER}
    assert not w.set_rater(OPERATOR) and w.rater == RATER

    # Leaving asks first, naming the consequence; "Stay" keeps the rater.
    w.show_start()
    w.leave_rater()
    box = w.pending_confirmation
    assert isinstance(box, QMessageBox) and "blinded work" in box.text()
    qtbot.waitExposed(box)
    assert box.grab().save(str(screenshot_dir / "leaving_blinded_work.png"))
    assert w.grab().save(str(screenshot_dir / "start_rater_mode.png"))
    assert "name generators" in box.informativeText()
    box.reject()
    qtbot.waitUntil(lambda: w.pending_confirmation is None)
    assert w.rater == RATER and not w.mode_allowed("dashboard")
    # Closing the study is a way out too: it asks the same.
    w.close_study()
    assert w.pending_confirmation is not None
    w.pending_confirmation.reject()
    qtbot.waitUntil(lambda: w.pending_confirmation is None)
    assert w.snapshot is not None and w.rater == RATER

    w.leave_rater()
    box = w.pending_confirmation
    leave = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    leave.click()
    qtbot.waitUntil(lambda: w.rater is None)
    assert w.lead_mode and w.mode_allowed("dashboard")
    w.close()


@pytest.mark.slow
def test_the_lead_dashboard_shows_the_team(qtbot, team_study):
    from annotator.ui.settings import AppSettings

    s = AppSettings()
    s.set_value("dashboard_n_boot", 20)
    w = open_window(qtbot, team_study.folder, rater=None, settings=s)
    view = w.show_mode("dashboard")
    qtbot.waitUntil(lambda: view.model is not None, timeout=120_000)
    team = view.model.sections[0]
    assert team.key == "team"
    table = next(b for b in team.blocks if getattr(b, "name", "") == "teamTable")
    rows = {r[0]: r for r in table.rows}
    assert rows[RATER][1] == "9" and rows[OTHER][1] == "9"  # 18 items, K=1, balanced
    assert f"{OPERATOR} (operator)" in rows
    # The lead's findings name items by the lead's ids, never a rater's display code.
    findings = next((s for s in view.model.sections if s.key == "findings"), None)
    assert findings is not None
    w.close()
