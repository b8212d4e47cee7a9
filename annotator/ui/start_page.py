"""The start page: study, rater and mode, everything reachable by keyboard (Tab, Enter).

With nothing open it says where to begin: the demo study, a rater package someone
sent, or a study folder. A mode that cannot be opened says why beside its button
(not only in a tooltip). In rater mode the rater list holds no operator; in a
package it holds only the package's rater and the lead's views are not there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .i18n import QT_TRANSLATE_NOOP, translate
from .layouts import FlowLayout
from .style import relative_font, set_accessible, soft_colour

if TYPE_CHECKING:
    from .main_window import MainWindow

MODES = ("label", "pairwise", "calibration", "dashboard", "review")
# the lead's views (they name generators and every rater): never in rater mode, not even
# shown in a rater package
LEAD_MODES = frozenset({"dashboard", "review"})
_MODE_TITLES = {
    "label": QT_TRANSLATE_NOOP("StartPage", "Label"),
    "pairwise": QT_TRANSLATE_NOOP("StartPage", "Pairwise"),
    "calibration": QT_TRANSLATE_NOOP("StartPage", "Calibration"),
    "dashboard": QT_TRANSLATE_NOOP("StartPage", "Dashboard"),
    "review": QT_TRANSLATE_NOOP("StartPage", "Review and adjudicate"),
}
_MODE_HELP = {
    "label": QT_TRANSLATE_NOOP("StartPage", "Answer the rubric on one item at a time"),
    "pairwise": QT_TRANSLATE_NOOP("StartPage", "Choose the better of two outputs of the same case"),
    "calibration": QT_TRANSLATE_NOOP(
        "StartPage", "Answer anchor items and compare with the reference"
    ),
    "dashboard": QT_TRANSLATE_NOOP(
        "StartPage", "The study lead's figures: agreement, findings, drift, team progress"
    ),
    "review": QT_TRANSLATE_NOOP(
        "StartPage", "Resolve disagreements and findings, one key per answer (study lead)"
    ),
}
MODE_TITLES = dict(_MODE_TITLES)  # English, for code that names modes in logs


def mode_title(mode: str) -> str:
    return translate("StartPage", _MODE_TITLES[mode])


def _demo_job() -> Any:  # database worker: build the demo (once) and open it
    from ..services.demo import build_demo, default_demo_folder
    from ..services.snapshot import open_study

    folder = default_demo_folder()
    build_demo(folder)
    return open_study(folder)


class StartPage(QWidget):
    """Study, rater and mode: everything reachable by keyboard (Tab, Enter)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(14)
        self.title = QLabel("annotator")
        self.title.setFont(relative_font(self.title, 1.8, bold=True))
        self.sub = QLabel()
        self.sub.setFont(relative_font(self.sub, 1.05))
        outer.addWidget(self.title)
        outer.addWidget(self.sub)

        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(14)
        outer.addLayout(grid, 1)

        self.study_box = QGroupBox()
        sl = QVBoxLayout(self.study_box)
        self.study_label = QLabel()
        self.study_label.setWordWrap(True)
        self.study_label.setFont(relative_font(self.study_label, 1.05, bold=True))
        self.study_label.setProperty(
            "content", True
        )  # a study's name is the study's, not the app's
        sl.addWidget(self.study_label)
        self.welcome = QLabel()
        self.welcome.setWordWrap(True)
        sl.addWidget(self.welcome)
        # Button rows wrap (FlowLayout): in Spanish, with their keys, they are wider than the
        # window's 1100 px in one line
        first = FlowLayout()
        self.demo_btn = QPushButton()
        self.demo_btn.clicked.connect(self.open_demo)
        self.package_btn = QPushButton()
        self.package_btn.clicked.connect(window.choose_package)
        first.addWidget(self.demo_btn)
        first.addWidget(self.package_btn)
        sl.addLayout(first)
        self.recent_title = QLabel()
        sl.addWidget(self.recent_title)
        self.recent = QListWidget()
        self.recent.itemActivated.connect(self._open_recent)
        self.recent.setProperty("content", True)  # study names and places are the user's
        self.recent_title.setBuddy(self.recent)
        sl.addWidget(self.recent, 1)
        row = FlowLayout()
        self.open_btn = QPushButton()
        self.server_btn = QPushButton()
        self.new_btn = QPushButton()
        self.open_btn.clicked.connect(window.choose_study)
        self.server_btn.clicked.connect(window.choose_server)
        self.new_btn.clicked.connect(window.choose_new_study)
        for b in (self.open_btn, self.server_btn, self.new_btn):
            row.addWidget(b)
        sl.addLayout(row)
        # Takes the room only while the recent list (stretch 1) is hidden: the buttons stay on top.
        sl.addStretch(0)
        grid.addWidget(self.study_box, 0, 0, 2, 1)

        self.rater_box = QGroupBox()
        rl = QVBoxLayout(self.rater_box)
        self.rater_title = QLabel()
        rl.addWidget(self.rater_title)
        self.rater_combo = QComboBox()
        self.rater_combo.setMinimumContentsLength(18)
        self.rater_combo.activated.connect(self._rater_picked)
        self.rater_combo.installEventFilter(self)
        self.rater_combo.setProperty("content", True)  # rater names are people's names
        self.rater_title.setBuddy(self.rater_combo)
        rl.addWidget(self.rater_combo)
        buttons = FlowLayout()
        self.add_rater_btn = QPushButton()
        self.add_rater_btn.clicked.connect(window.choose_new_rater)
        self.leave_btn = QPushButton()
        self.leave_btn.clicked.connect(window.leave_rater)
        buttons.addWidget(self.add_rater_btn)
        buttons.addWidget(self.leave_btn)
        rl.addLayout(buttons)
        self.rater_note = QLabel()
        self.rater_note.setWordWrap(True)
        rl.addWidget(self.rater_note)
        rl.addStretch(1)
        grid.addWidget(self.rater_box, 0, 1)

        self.mode_box = QGroupBox()
        ml = QVBoxLayout(self.mode_box)
        self.mode_buttons: dict[str, QPushButton] = {}
        self.mode_reasons: dict[str, QLabel] = {}
        for mode in MODES:
            b = QPushButton()
            b.clicked.connect(lambda _=False, m=mode: window.show_mode(m))
            ml.addWidget(b)
            why = QLabel()
            why.setWordWrap(True)
            why.setObjectName(f"why:{mode}")
            why.setFont(relative_font(why, 0.9))
            ml.addWidget(why)
            self.mode_buttons[mode] = b
            self.mode_reasons[mode] = why
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setFont(relative_font(self.hint, 0.95))
        ml.addWidget(self.hint)
        ml.addStretch(1)
        grid.addWidget(self.mode_box, 1, 1)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        grid.setRowStretch(0, 0)
        grid.setRowStretch(1, 1)

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setObjectName("startMessage")
        outer.addWidget(self.message)
        self.retranslate()

    def retranslate(self) -> None:
        """Every fixed text of the page in the app's current language."""
        k = self.window_.keymap.hint
        soft = soft_colour(self.palette())
        self.sub.setText(translate("StartPage", "Blinded expert rating of generated outputs"))
        self.study_box.setTitle(translate("StartPage", "1. Study"))
        self.rater_box.setTitle(translate("StartPage", "2. Rater"))
        self.mode_box.setTitle(translate("StartPage", "3. Mode"))
        self.recent_title.setText(
            translate("StartPage", "&Recent studies (Enter opens the selected one)")
        )
        self.rater_title.setText(translate("StartPage", "&Who is rating:"))
        self.welcome.setText(
            translate(
                "StartPage",
                "New here? Try the demo study: a few made-up screens to rate, with nothing to set "
                "up. Were you sent a rater package (a file ending in .annot)? Open it: it holds "
                "your work for the study.",
            )
        )
        self.welcome.setStyleSheet(f"color: {soft};")
        self.rater_note.setStyleSheet(f"color: {soft};")
        for why in self.mode_reasons.values():
            why.setStyleSheet(f"color: {soft};")
        for button, text, key, desc in (
            (
                self.demo_btn,
                translate("StartPage", "Try the demo study"),
                "",
                translate("StartPage", "Builds the demo study once and opens it"),
            ),
            (
                self.package_btn,
                translate("StartPage", "Open a rater package…"),
                "open_package",
                translate("StartPage", "Opens a .annot file: one rater's blinded work"),
            ),
            (
                self.open_btn,
                translate("StartPage", "Open study folder…"),
                "open_study",
                translate("StartPage", "Opens a study folder (study.sqlite + media)"),
            ),
            (
                self.server_btn,
                translate("StartPage", "Study on a server…"),
                "connect_server",
                translate("StartPage", "Opens a study kept on a PostgreSQL server, by its URL"),
            ),
            (
                self.new_btn,
                translate("StartPage", "New study…"),
                "new_study",
                translate("StartPage", "Creates a study folder from a rubric file"),
            ),
            (
                self.add_rater_btn,
                translate("StartPage", "Add rater…"),
                "add_rater",
                translate("StartPage", "Adds a rater account to the study (study lead)"),
            ),
            (
                self.leave_btn,
                translate("StartPage", "Leave rater mode…"),
                "leave_rater",
                translate(
                    "StartPage",
                    "Back to the study lead's views; asks first, because it leaves blinded work",
                ),
            ),
        ):
            hint = k(key) if key else ""
            button.setText(f"{text}  ({hint})" if hint else text)
            set_accessible(button, text, desc)
        set_accessible(
            self.recent,
            translate("StartPage", "Recent studies"),
            translate("StartPage", "Studies opened before; Enter opens the selected one"),
        )
        set_accessible(
            self.rater_combo,
            translate("StartPage", "Rater"),
            translate("StartPage", "Who is rating: choosing a rater enters rater mode"),
        )
        for mode, b in self.mode_buttons.items():
            b.setText(f"{mode_title(mode)}    {k('mode_' + mode)}")
            set_accessible(b, mode_title(mode), translate("StartPage", _MODE_HELP[mode]))
        self.refresh()

    def refresh(self) -> None:
        w = self.window_
        snap = w.snapshot
        package = snap is not None and snap.is_package
        self.recent.clear()
        for p in w.settings.recent_studies():
            shown = str(p) if isinstance(p, str) else f"{p.name}    {p.parent}"
            it = QListWidgetItem(shown)
            it.setData(Qt.ItemDataRole.UserRole, str(p))
            it.setToolTip(str(p))
            self.recent.addItem(it)
        self.welcome.setVisible(snap is None)
        self.demo_btn.setVisible(snap is None)
        self.package_btn.setVisible(snap is None)
        self.recent_title.setVisible(self.recent.count() > 0)
        self.recent.setVisible(self.recent.count() > 0)  # an empty list is only a white box
        if snap is not None:
            kind = {
                "package": translate("StartPage", "rater package"),
                "server": translate("StartPage", "study on a server"),
            }.get(snap.kind, translate("StartPage", "study"))
            self.study_label.setText(
                translate("StartPage", "{name}  ·  {kind}  ·  rubric: {rubric}").format(
                    name=snap.name, kind=kind, rubric=w._rubric().title
                )
            )
        elif w.busy:
            self.study_label.setText(translate("StartPage", "Opening…"))
        else:
            self.study_label.setText(translate("StartPage", "No study open."))
        self.rater_combo.clear()
        for r in w.raters():
            self.rater_combo.addItem(
                translate("StartPage", "{name} (operator)").format(name=r.name)
                if r.is_operator
                else r.name,
                r.name,
            )
        if w.rater:
            i = self.rater_combo.findData(w.rater)
            if i >= 0:
                self.rater_combo.setCurrentIndex(i)
        elif w.raters():
            self.rater_combo.setCurrentIndex(-1)
        self.rater_combo.setEnabled(snap is not None and not package)
        self.add_rater_btn.setVisible(not package)
        self.add_rater_btn.setEnabled(snap is not None and w.lead_mode)
        self.leave_btn.setVisible(not package and w.rater is not None)
        if package:
            self.rater_note.setText(
                translate("StartPage", "This package holds {rater}'s work only.").format(
                    rater=w.rater or "—"
                )
            )
        elif w.rater is not None:
            self.rater_note.setText(
                translate(
                    "StartPage", "Rater mode: the study lead's views are closed while you rate."
                )
            )
        elif snap is not None:
            self.rater_note.setText(
                translate(
                    "StartPage", "Study lead: no rater chosen. Choosing a rater enters rater mode."
                )
            )
        else:
            self.rater_note.setText("")
        avail = set(w.available_modes())
        for mode, b in self.mode_buttons.items():
            present = mode in avail or not (package and mode in LEAD_MODES)
            b.setVisible(present)
            ok = mode in avail and w.mode_allowed(mode)
            b.setEnabled(ok)
            why = "" if ok or not present else w.why_not(mode)
            self.mode_reasons[mode].setText(why)
            self.mode_reasons[mode].setVisible(bool(why) and snap is not None)
            b.setToolTip(why or translate("StartPage", _MODE_HELP[mode]))
        if snap is None:
            self.hint.setText(translate("StartPage", "Open a study first."))
        elif w.rater is None:
            self.hint.setText(translate("StartPage", "Pick or add a rater to start."))
        elif package:
            self.hint.setText(translate("StartPage", "Rating as {rater}.").format(rater=w.rater))
        else:
            self.hint.setText(
                translate("StartPage", "Rating as {rater}. Not you? Pick your name above.").format(
                    rater=w.rater
                )
            )

    def open_demo(self) -> None:
        from ..services.demo import DEMO_RATER

        w = self.window_
        w._request(
            _demo_job, path=self._demo_folder(), then=lambda: w._enter(None, "label", DEMO_RATER)
        )

    @staticmethod
    def _demo_folder() -> Path:
        from ..services.demo import default_demo_folder

        return default_demo_folder()

    def _open_recent(self, item: QListWidgetItem) -> None:
        self.window_.open_study(item.data(Qt.ItemDataRole.UserRole))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """On the closed rater list, an arrow key or the wheel would pick the next rater and
        enter rater mode at once: the arrows open the list instead, the wheel does nothing, and a
        rater is chosen only by Enter or a click in the open list."""
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.Wheel) or obj is not self.rater_combo:
            return super().eventFilter(obj, event)  # first: view() below makes child events
        if self.rater_combo.view().isVisible():
            return super().eventFilter(obj, event)
        if kind == QEvent.Type.Wheel:
            return True
        if isinstance(event, QKeyEvent) and event.key() in (
            Qt.Key.Key_Up,
            Qt.Key.Key_Down,
            Qt.Key.Key_PageUp,
            Qt.Key.Key_PageDown,
            Qt.Key.Key_Home,
            Qt.Key.Key_End,
        ):
            self.rater_combo.showPopup()
            return True
        return super().eventFilter(obj, event)

    def _rater_picked(self, index: int) -> None:
        name = self.rater_combo.itemData(index)
        if name:
            self.window_.set_rater(name)
