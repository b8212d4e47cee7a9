"""The main window: open or create a study, pick or add a rater, choose a mode.

Modes are views constructed as ``View(study, rater, worker, settings, parent=None)``:
label (always), and pairwise / calibration / dashboard when their modules exist
(``annotator.ui.pair_view.PairView``, ``annotator.ui.calibration_view.CalibrationView``,
``annotator.ui.dashboard_view.DashboardView``; imported lazily).

The window owns ONE ``DbWorker`` for the open study: every view runs its
database work there, and the study itself is opened and closed on it.

Blinding: the dashboard names generators, so it opens only for an operator
account or before a rater is picked (the study lead); a rater never gets it.

Public API: ``MainWindow(settings: AppSettings, *, study: Path | None = None,
rater: str | None = None, parent=None)`` with
``open_study(path) -> bool``, ``create_study(folder, rubric) -> bool``,
``close_study()``, ``raters() -> list[RaterInfo]``, ``set_rater(name) -> bool``,
``add_rater(name) -> bool``, ``available_modes() -> list[str]``, ``mode_allowed(mode) -> bool``,
``show_mode(mode) -> QWidget | None``, ``show_start()``, ``current_view``,
``study``, ``rater``, ``worker``, ``shutdown()``; signal ``viewChanged(str)``
(mode name, "start" for the start page). ``MODES`` maps mode -> (module, class).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import InputError
from .rubric_form import relative_font
from .settings import AppSettings
from .worker import DbWorker

MODES: dict[str, tuple[str, str]] = {
    "label": ("annotator.ui.label_view", "LabelView"),
    "pairwise": ("annotator.ui.pair_view", "PairView"),
    "calibration": ("annotator.ui.calibration_view", "CalibrationView"),
    "dashboard": ("annotator.ui.dashboard_view", "DashboardView"),
}
MODE_TITLES = {"label": "Label", "pairwise": "Pairwise", "calibration": "Calibration",
               "dashboard": "Dashboard"}
MODE_KEYS = {"label": "Ctrl+Shift+L", "pairwise": "Ctrl+Shift+P", "calibration": "Ctrl+Shift+C",
             "dashboard": "Ctrl+Shift+D"}
RUBRICS_DIR = Path(__file__).resolve().parents[2] / "rubrics"


def view_class(mode: str):  # noqa: ANN201 - a QWidget subclass or None
    """The view class for a mode, or None when its module is not there (yet)."""
    module, name = MODES[mode]
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _open(path: Path):  # noqa: ANN202 - runs on the worker
    from ..services.study import Study

    study = Study.open(path)
    _ = study.rubric  # loaded here, so the UI thread never queries for it
    return study, study.raters()


def _create(folder: Path, rubric: Path):  # noqa: ANN202
    from ..services.study import Study

    study = Study.create(folder, rubric)
    _ = study.rubric
    return study, study.raters()


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
        self.open_btn = QPushButton("Open study…")
        self.new_btn = QPushButton("New study…")
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
        self.add_rater_btn = QPushButton("Add rater…")
        self.add_rater_btn.clicked.connect(window.choose_new_rater)
        rl.addWidget(self.add_rater_btn, 0, Qt.AlignmentFlag.AlignLeft)
        rl.addStretch(1)
        grid.addWidget(rater_box, 0, 1)

        mode_box = QGroupBox("3. Mode")
        ml = QVBoxLayout(mode_box)
        self.mode_buttons: dict[str, QPushButton] = {}
        for mode in MODES:
            b = QPushButton(f"{MODE_TITLES[mode]}    {QKeySequence(MODE_KEYS[mode]).toString(QKeySequence.SequenceFormat.NativeText)}")
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
        if w.study is not None:
            self.study_label.setText(f"{w.study.name}  ·  rubric: {w.study.rubric.title}")
        else:
            self.study_label.setText("No study open: pick a recent one or open a study folder.")
        self.rater_combo.clear()
        for r in w.known_raters:
            self.rater_combo.addItem(f"{r.name} (operator)" if r.is_operator else r.name, r.name)
        if w.rater:
            i = self.rater_combo.findData(w.rater)
            if i >= 0:
                self.rater_combo.setCurrentIndex(i)
        elif w.known_raters:
            self.rater_combo.setCurrentIndex(-1)
        self.rater_combo.setEnabled(w.study is not None)
        self.add_rater_btn.setEnabled(w.study is not None)
        avail = set(w.available_modes())
        for mode, b in self.mode_buttons.items():
            b.setEnabled(mode in avail and w.mode_allowed(mode))
            b.setToolTip("" if mode in avail else "Not available in this version")
            if mode == "dashboard" and mode in avail:
                b.setToolTip("For the study lead (an operator account): it names generators")
        if w.study is None:
            self.hint.setText("Open a study first.")
        elif w.rater is None:
            self.hint.setText("Pick or add a rater to start.")
        else:
            self.hint.setText(f"Rating as {w.rater}.")

    def _open_recent(self, item: QListWidgetItem) -> None:
        self.window_.open_study(Path(item.data(Qt.ItemDataRole.UserRole)))

    def _rater_picked(self, index: int) -> None:
        name = self.rater_combo.itemData(index)
        if name:
            self.window_.set_rater(name)


class MainWindow(QMainWindow):
    viewChanged = Signal(str)  # noqa: N815

    def __init__(
        self,
        settings: AppSettings,
        *,
        study: Path | None = None,
        rater: str | None = None,
        mode: str = "label",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.worker = DbWorker(self)
        self.study = None
        self.study_path: Path | None = None
        self.rater: str | None = None
        self.known_raters: list = []
        self.mode = "start"
        self.current_view: QWidget | None = None
        self.setWindowTitle("annotator")
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        self.start = StartPage(self)
        self.stack.addWidget(self.start)
        self._build_menus()
        geo = settings.geometry("main")
        if geo:
            self.restoreGeometry(geo)
        else:
            cw, lh = self.fontMetrics().averageCharWidth(), self.fontMetrics().lineSpacing()
            self.resize(max(1100, cw * 170), max(720, lh * 44))
        self.statusBar().showMessage("Open a study to begin")
        if study is not None and self.open_study(study):
            pick = rater or settings.last_rater(study)
            if pick is None:
                people = [r.name for r in self.known_raters if not r.is_operator]
                pick = people[0] if len(people) == 1 else None
            if pick is not None and self.set_rater(pick, quiet=rater is None):
                self.show_mode(mode)
                return
        self.show_start()

    # -- menus ---------------------------------------------------------------------
    def _build_menus(self) -> None:
        bar = self.menuBar()
        f = bar.addMenu("&Study")
        for text, keys, slot in (
            ("&Open study…", QKeySequence.StandardKey.Open, self.choose_study),
            ("&New study…", QKeySequence.StandardKey.New, self.choose_new_study),
            ("&Start page", "Ctrl+Shift+H", self.show_start),
            ("&Close study", "Ctrl+Shift+W", self.close_study),
            ("&Quit", QKeySequence.StandardKey.Quit, self.close),
        ):
            a = QAction(text, self)
            a.setShortcut(QKeySequence(keys))
            a.triggered.connect(slot)
            f.addAction(a)
        m = bar.addMenu("&Mode")
        self.mode_actions: dict[str, QAction] = {}
        for mode in MODES:
            a = QAction(MODE_TITLES[mode], self)
            a.setShortcut(QKeySequence(MODE_KEYS[mode]))
            a.triggered.connect(lambda _=False, md=mode: self.show_mode(md))
            m.addAction(a)
            self.mode_actions[mode] = a

    def _refresh_actions(self) -> None:
        avail = set(self.available_modes())
        for mode, a in self.mode_actions.items():
            a.setEnabled(mode in avail and self.mode_allowed(mode))

    # -- study ---------------------------------------------------------------------
    def _adopt(self, result, path: Path) -> None:  # noqa: ANN001
        study, raters = result
        self.study, self.known_raters = study, list(raters)
        self.study_path = Path(path)
        self.rater = None
        self.settings.add_recent_study(path)
        self.setWindowTitle(f"annotator — {study.name}")
        self.statusBar().showMessage(f"Study {study.name} · rubric {study.rubric.title}")

    def open_study(self, path: str | Path) -> bool:
        path = Path(path)
        self.close_study()
        try:
            result = self.worker.call(_open, path, timeout=120)
        except InputError as exc:
            self._error(str(exc))
            if not (path / "study.sqlite").exists():
                self.settings.remove_recent_study(path)
            self.start.refresh()
            return False
        self._adopt(result, path)
        self.start.refresh()
        self._refresh_actions()
        return True

    def create_study(self, folder: str | Path, rubric: str | Path) -> bool:
        self.close_study()
        try:
            result = self.worker.call(_create, Path(folder), Path(rubric), timeout=120)
        except InputError as exc:
            self._error(str(exc))
            return False
        self._adopt(result, Path(folder))
        self.start.refresh()
        self._refresh_actions()
        return True

    def close_study(self) -> None:
        self._drop_view()
        if self.study is not None:
            study, self.study = self.study, None
            self.worker.call(study.close)
        self.known_raters, self.rater, self.study_path = [], None, None
        self.setWindowTitle("annotator")
        self.start.refresh()
        self._refresh_actions()

    def choose_study(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a study folder")
        if folder:
            self.open_study(folder)

    def choose_new_study(self) -> None:
        rubric, _ = QFileDialog.getOpenFileName(self, "Rubric for the new study", str(RUBRICS_DIR),
                                                "Rubric (*.toml)")
        if not rubric:
            return
        folder = QFileDialog.getExistingDirectory(self, "Empty folder for the new study")
        if folder:
            self.create_study(folder, rubric)

    # -- raters --------------------------------------------------------------------
    def raters(self) -> list:
        return list(self.known_raters)

    def set_rater(self, name: str, *, quiet: bool = False) -> bool:
        if self.study is None or name not in {r.name for r in self.known_raters}:
            if not quiet:
                self._error(f"no rater named '{name}' in this study; add one first")
            return False
        self.rater = name
        assert self.study_path is not None
        self.settings.set_last_rater(self.study_path, name)
        self.start.refresh()
        self._refresh_actions()
        self.statusBar().showMessage(f"Study {self.study.name} · rater {name}")
        return True

    def add_rater(self, name: str) -> bool:
        if self.study is None:
            return False
        name = name.strip()
        try:
            self.worker.call(self.study.add_rater, name)
            self.known_raters = list(self.worker.call(self.study.raters))
        except InputError as exc:
            self._error(str(exc))
            return False
        return self.set_rater(name)

    def choose_new_rater(self) -> None:
        name, ok = QInputDialog.getText(self, "Add rater", "Rater name:")
        if ok and name.strip():
            self.add_rater(name)

    # -- modes ---------------------------------------------------------------------
    def available_modes(self) -> list[str]:
        return [m for m in MODES if view_class(m) is not None]

    def mode_allowed(self, mode: str) -> bool:
        """Blinding: the dashboard names generators, so a (non-operator) rater never gets it."""
        if self.study is None or mode not in MODES:
            return False
        if mode == "dashboard":
            return self.rater is None or self._is_operator(self.rater)
        return self.rater is not None

    def _is_operator(self, name: str) -> bool:
        return any(r.name == name and r.is_operator for r in self.known_raters)

    def show_start(self) -> None:
        self._drop_view()
        self.mode = "start"
        self.start.refresh()
        self.stack.setCurrentWidget(self.start)
        if self.study is not None:
            who = f" · rater {self.rater}" if self.rater else ""
            self.statusBar().showMessage(f"Study {self.study.name}{who} · choose a mode")
        self.viewChanged.emit("start")

    def show_mode(self, mode: str) -> QWidget | None:
        cls = view_class(mode) if mode in MODES else None
        if cls is None or not self.mode_allowed(mode):
            self.statusBar().showMessage(f"{MODE_TITLES.get(mode, mode)} is not available now", 5000)
            return None
        self._drop_view()
        view = cls(self.study, self.rater, self.worker, self.settings, parent=self)
        if hasattr(view, "recalibrationRequested"):
            view.recalibrationRequested.connect(self._recalibrate)
        self.stack.addWidget(view)
        self.stack.setCurrentWidget(view)
        view.setFocus()
        self.current_view = view
        self.mode = mode
        who = f" · rater {self.rater}" if self.rater else ""
        self.statusBar().showMessage(f"{MODE_TITLES[mode]} · study {self.study.name}{who}"
                                     "  ·  Ctrl+Shift+H: start page")
        self.viewChanged.emit(mode)
        return view

    def _recalibrate(self) -> None:
        if "calibration" in self.available_modes():
            self.show_mode("calibration")
        else:
            self.statusBar().showMessage("Calibration is not available in this version", 6000)

    def _drop_view(self) -> None:
        view, self.current_view = self.current_view, None
        if view is None:
            return
        if hasattr(view, "shutdown"):
            view.shutdown()
        # Jobs the view queued may still call back: let them land before it goes.
        self.worker.wait_idle(30)
        self.stack.removeWidget(view)
        view.deleteLater()

    def _error(self, text: str) -> None:
        self.start.message.setText(text)
        self.statusBar().showMessage(text, 10000)

    # -- shutdown ------------------------------------------------------------------
    def shutdown(self) -> None:
        if getattr(self, "_shut", False):
            return
        self._shut = True
        self.settings.set_geometry("main", self.saveGeometry())
        self.close_study()
        self.worker.stop()

    def closeEvent(self, event) -> None:  # noqa: N802, ANN001
        self.shutdown()
        super().closeEvent(event)


__all__ = ["MODES", "MainWindow", "StartPage", "view_class"]
