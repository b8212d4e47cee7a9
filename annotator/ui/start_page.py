"""The start page: study, rater and mode, everything reachable by keyboard (Tab, Enter)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .style import relative_font

if TYPE_CHECKING:
    from .main_window import MainWindow

MODES = ("label", "pairwise", "calibration", "dashboard")
MODE_TITLES = {"label": "Label", "pairwise": "Pairwise", "calibration": "Calibration", "dashboard": "Dashboard"}


class StartPage(QWidget):
    """Study, rater and mode: everything reachable by keyboard (Tab, Enter)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(14)
        title = QLabel("annotator")
        title.setFont(relative_font(title, 1.8, bold=True))
        sub = QLabel("Blinded expert rating of generated outputs")
        sub.setFont(relative_font(sub, 1.05))
        outer.addWidget(title)
        outer.addWidget(sub)

        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(14)
        outer.addLayout(grid, 1)

        study_box = QGroupBox("1. Study")
        sl = QVBoxLayout(study_box)
        self.study_label = QLabel("No study open")
        self.study_label.setWordWrap(True)
        self.study_label.setFont(relative_font(self.study_label, 1.05, bold=True))
        sl.addWidget(self.study_label)
        sl.addWidget(QLabel("Recent studies (Enter opens the selected one)"))
        self.recent = QListWidget()
        self.recent.itemActivated.connect(self._open_recent)
        sl.addWidget(self.recent, 1)
        row = QHBoxLayout()
        k = window.keymap.hint
        self.open_btn = QPushButton(f"Open study…  ({k('open_study')})")
        self.new_btn = QPushButton(f"New study…  ({k('new_study')})")
        self.open_btn.clicked.connect(window.choose_study)
        self.new_btn.clicked.connect(window.choose_new_study)
        row.addWidget(self.open_btn)
        row.addWidget(self.new_btn)
        row.addStretch(1)
        sl.addLayout(row)
        grid.addWidget(study_box, 0, 0, 2, 1)

        rater_box = QGroupBox("2. Rater")
        rl = QVBoxLayout(rater_box)
        self.rater_combo = QComboBox()
        self.rater_combo.setMinimumContentsLength(18)
        self.rater_combo.activated.connect(self._rater_picked)
        rl.addWidget(self.rater_combo)
        self.add_rater_btn = QPushButton(f"Add rater…  ({k('add_rater')})")
        self.add_rater_btn.clicked.connect(window.choose_new_rater)
        rl.addWidget(self.add_rater_btn, 0, Qt.AlignmentFlag.AlignLeft)
        rl.addStretch(1)
        grid.addWidget(rater_box, 0, 1)

        mode_box = QGroupBox("3. Mode")
        ml = QVBoxLayout(mode_box)
        self.mode_buttons: dict[str, QPushButton] = {}
        for mode in MODES:
            b = QPushButton(f"{MODE_TITLES[mode]}    {k('mode_' + mode)}")
            b.clicked.connect(lambda _=False, m=mode: window.show_mode(m))
            ml.addWidget(b)
            self.mode_buttons[mode] = b
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setFont(relative_font(self.hint, 0.95))
        ml.addWidget(self.hint)
        ml.addStretch(1)
        grid.addWidget(mode_box, 1, 1)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        grid.setRowStretch(0, 0)
        grid.setRowStretch(1, 1)

        self.message = QLabel()
        self.message.setWordWrap(True)
        outer.addWidget(self.message)

    def refresh(self) -> None:
        w = self.window_
        self.recent.clear()
        for p in w.settings.recent_studies():
            it = QListWidgetItem(f"{p.name}    {p.parent}")
            it.setData(Qt.ItemDataRole.UserRole, str(p))
            self.recent.addItem(it)
        if w.snapshot is not None:
            self.study_label.setText(f"{w.snapshot.name}  ·  rubric: {w.snapshot.rubric.title}")
        elif w.busy:
            self.study_label.setText("Opening…")
        else:
            self.study_label.setText("No study open: pick a recent one or open a study folder.")
        self.rater_combo.clear()
        for r in w.raters():
            self.rater_combo.addItem(f"{r.name} (operator)" if r.is_operator else r.name, r.name)
        if w.rater:
            i = self.rater_combo.findData(w.rater)
            if i >= 0:
                self.rater_combo.setCurrentIndex(i)
        elif w.raters():
            self.rater_combo.setCurrentIndex(-1)
        self.rater_combo.setEnabled(w.snapshot is not None)
        self.add_rater_btn.setEnabled(w.snapshot is not None)
        avail = set(w.available_modes())
        for mode, b in self.mode_buttons.items():
            b.setEnabled(mode in avail and w.mode_allowed(mode))
            b.setToolTip("" if mode in avail else "Not available in this version")
            if mode == "dashboard" and mode in avail:
                b.setToolTip("For the study lead (an operator account): it names generators")
        if w.snapshot is None:
            self.hint.setText("Open a study first.")
        elif w.rater is None:
            self.hint.setText("Pick or add a rater to start.")
        else:
            self.hint.setText(f"Rating as {w.rater}. Not you? Pick your name above.")

    def _open_recent(self, item: QListWidgetItem) -> None:
        self.window_.open_study(Path(item.data(Qt.ItemDataRole.UserRole)))

    def _rater_picked(self, index: int) -> None:
        name = self.rater_combo.itemData(index)
        if name:
            self.window_.set_rater(name)
