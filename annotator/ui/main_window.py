"""The main window: open or create a study, pick or add a rater, choose a mode.

Modes are views constructed as ``View(snapshot, rater, worker, settings, parent=None)``
(``MODES``: label, pairwise, calibration, dashboard; imported lazily).

The window owns ONE ``DbWorker`` (it holds the open study; every view runs its
database work there) and ONE ``ComputeWorker`` (the dashboard's report). The UI
thread only ever holds the study's plain ``StudySnapshot``. Opening, creating
and closing a study are asynchronous: the window is disabled meanwhile (no
nested event loop), and a failure is one line on the start page.

Blinding: the dashboard names generators, so it opens only for an operator
account or before a rater is picked (the study lead); a rater never gets it.

Public API: ``MainWindow(settings, *, study=None, rater=None, mode="label",
default_rater=None, parent=None)`` with ``open_study(path)``, ``create_study(folder,
rubric)``, ``close_study()``, ``raters()``, ``set_rater(name) -> bool``, ``add_rater(name)``,
``available_modes()``, ``mode_allowed(mode)``, ``show_mode(mode) -> QWidget | None``,
``show_start()``, ``busy``, ``current_view``, ``snapshot``, ``rater``, ``worker``,
``compute``, ``keymap``, ``shutdown()``; signals ``viewChanged(str)`` ("start" for the
start page), ``studyOpened(str)``, ``studyFailed(str)``, ``studyClosed()``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QStackedWidget,
    QWidget,
)

from ..domain.records import RaterInfo
from .keymap import Keymap
from .session_view import one_line
from .settings import AppSettings
from .start_page import MODE_TITLES, MODES, StartPage
from .style import relative_font
from .worker import ComputeWorker, DbWorker

VIEWS: dict[str, tuple[str, str]] = {
    "label": ("annotator.ui.label_view", "LabelView"),
    "pairwise": ("annotator.ui.pair_view", "PairView"),
    "calibration": ("annotator.ui.calibration_view", "CalibrationView"),
    "dashboard": ("annotator.ui.dashboard_view", "DashboardView"),
}


def has_view(mode: str) -> bool:
    """Whether the mode's module is there, without importing it (start-up stays light)."""
    return importlib.util.find_spec(VIEWS[mode][0]) is not None


def view_class(mode: str) -> Any:
    """The view class for a mode, or None when its module is not there."""
    module, name = VIEWS[mode]
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def rubrics_dir() -> str:
    """Where the file dialog starts looking for a rubric (the shipped ones, when present)."""
    shipped = Path(__file__).resolve().parents[2] / "rubrics"
    return str(shipped) if shipped.is_dir() else ""


def _open_job(path: Path) -> Any:  # database worker
    from ..services.snapshot import open_study

    return open_study(path)


def _create_job(folder: Path, rubric: Path) -> Any:  # database worker
    from ..services.snapshot import create_study

    return create_study(folder, rubric)


def _add_rater_job(study: Any, name: str) -> tuple[RaterInfo, ...]:  # database worker
    study.add_rater(name)
    return tuple(study.raters())


class MainWindow(QMainWindow):
    viewChanged = Signal(str)  # noqa: N815 - Qt signal naming
    studyOpened = Signal(str)  # noqa: N815
    studyFailed = Signal(str)  # noqa: N815
    studyClosed = Signal()  # noqa: N815

    def __init__(self, settings: AppSettings, *, study: Path | str | None = None, rater: str | None = None,
                 mode: str = "label", default_rater: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.keymap = Keymap.from_settings(settings)
        self.worker = DbWorker(self)
        self.compute = ComputeWorker(self)
        self.snapshot: Any = None
        self.study_path: Path | None = None
        self.rater: str | None = None
        self.mode = "start"
        self.current_view: QWidget | None = None
        self._pending = 0  # open / create / close / add-rater jobs in flight
        self._shut = False
        self.setWindowTitle("annotator")
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        self.start = StartPage(self)
        self.stack.addWidget(self.start)
        self.rating_as = QLabel()
        self.rating_as.setFont(relative_font(self.rating_as, 1.0, bold=True))
        self.statusBar().addPermanentWidget(self.rating_as)
        self._build_menus()
        geo = settings.geometry("main")
        if geo:
            self.restoreGeometry(geo)
        else:
            cw, lh = self.fontMetrics().averageCharWidth(), self.fontMetrics().lineSpacing()
            self.resize(max(1100, cw * 170), max(720, lh * 44))
        # Key override problems stay in view (one line; the whole of it in the tooltip).
        self.keys_note = QLabel()
        self.keys_note.setStyleSheet("color: #b54708;")
        problems = self.keymap.problem_line()
        if problems:
            self.keys_note.setText(problems if len(problems) <= 90 else problems[:88] + "…")
            self.keys_note.setToolTip(problems)
            self.statusBar().addPermanentWidget(self.keys_note)
        self.statusBar().showMessage("Open a study to begin")
        self.show_start()
        if study is not None:
            self.open_study(study, then=lambda: self._enter(rater, mode, default_rater))

    # -- menus ---------------------------------------------------------------------
    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.actions_by_name: dict[str, QAction] = {}

        def add(menu: Any, name: str, text: str, slot: Callable[[], Any]) -> QAction:
            a = QAction(text, self)
            a.setShortcuts(self.keymap.sequences(name))
            a.triggered.connect(slot)
            menu.addAction(a)
            self.actions_by_name[name] = a
            return a

        f = bar.addMenu("&Study")
        add(f, "open_study", "&Open study…", self.choose_study)
        add(f, "new_study", "&New study…", self.choose_new_study)
        add(f, "add_rater", "&Add rater…", self.choose_new_rater)
        add(f, "start_page", "&Start page", self.show_start)
        add(f, "close_study", "&Close study", self.close_study)
        add(f, "quit", "&Quit", self.close)
        m = bar.addMenu("&Mode")
        # triggered(bool checked): the lambda must not take `checked` for the mode
        self.mode_actions = {mode: add(m, f"mode_{mode}", MODE_TITLES[mode],
                                       lambda _checked=False, md=mode: self.show_mode(md)) for mode in MODES}

    def _refresh(self) -> None:
        avail = set(self.available_modes())
        for mode, a in self.mode_actions.items():
            a.setEnabled(mode in avail and self.mode_allowed(mode))
        self.actions_by_name["add_rater"].setEnabled(self.snapshot is not None)
        self.rating_as.setText(f"Rating as {self.rater}" if self.rater else "")
        title = f"annotator — {self.snapshot.name}" if self.snapshot is not None else "annotator"
        self.setWindowTitle(f"{title} — rating as {self.rater}" if self.rater else title)
        self.start.refresh()

    # -- waiting for the worker (the window is disabled, the event loop runs on) ----
    @property
    def busy(self) -> bool:
        return self._pending > 0

    def _wait(self, text: str) -> None:
        self._pending += 1
        self.centralWidget().setEnabled(False)
        self.menuBar().setEnabled(False)
        self.statusBar().showMessage(text)

    def _waited(self) -> None:
        self._pending = max(0, self._pending - 1)
        if not self._pending:
            self.centralWidget().setEnabled(True)
            self.menuBar().setEnabled(True)

    # -- study ---------------------------------------------------------------------
    def open_study(self, path: str | Path, *, then: Callable[[], None] | None = None) -> None:
        """Open a study folder in the background; `then` runs once it is open."""
        self._request(_open_job, Path(path), then=then)

    def create_study(self, folder: str | Path, rubric: str | Path) -> None:
        self._request(_create_job, Path(folder), Path(rubric), path=Path(folder))

    def _request(self, job: Callable[..., Any], *args: Any, path: Path | None = None,
                 then: Callable[[], None] | None = None) -> None:
        path = path or args[0]
        self.close_study()
        self._wait(f"Opening {path.name}…")
        self.start.refresh()

        def opened(snapshot: Any) -> None:
            self._waited()
            self.snapshot, self.study_path, self.rater = snapshot, path, None
            self.settings.add_recent_study(path)
            self.statusBar().showMessage(f"Study {snapshot.name} · rubric {snapshot.rubric.title}")
            self._refresh()
            self.studyOpened.emit(str(path))
            if then is not None:
                then()

        def failed(exc: BaseException) -> None:
            self._waited()
            text = one_line(exc)
            if not (path / "study.sqlite").exists():
                self.settings.remove_recent_study(path)
            self._error(text)
            self._refresh()
            self.studyFailed.emit(text)

        self.worker.open_study(job, *args, on_done=opened, on_error=failed)

    def close_study(self) -> None:
        self._drop_view()
        if self.snapshot is not None:
            self._wait("Closing the study…")

            def closed(_: Any = None) -> None:
                self._waited()
                self.studyClosed.emit()

            self.worker.close_study(on_done=closed, on_error=lambda _e: closed())
        self.snapshot, self.rater, self.study_path = None, None, None
        if self.mode != "start":
            self.show_start()
        self._refresh()

    def choose_study(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a study folder")
        if folder:
            self.open_study(folder)

    def choose_new_study(self) -> None:
        rubric, _ = QFileDialog.getOpenFileName(self, "Rubric for the new study", rubrics_dir(), "Rubric (*.toml)")
        if not rubric:
            return
        folder = QFileDialog.getExistingDirectory(self, "Empty folder for the new study")
        if folder:
            self.create_study(folder, rubric)

    def _enter(self, rater: str | None, mode: str, default_rater: str | None) -> None:
        """After the study given at start-up opens: the rater (asked for, else the last one here,
        else the default, else the only one) and the mode."""
        assert self.study_path is not None
        pick = rater or self.settings.last_rater(self.study_path) or default_rater
        if pick is None or self.snapshot.rater(pick) is None:
            people = [r.name for r in self.raters() if not r.is_operator]
            pick = people[0] if len(people) == 1 else pick
        if pick is not None and self.set_rater(pick, quiet=rater is None):
            self.show_mode(mode)

    # -- raters --------------------------------------------------------------------
    def raters(self) -> list[RaterInfo]:
        return list(self.snapshot.raters) if self.snapshot is not None else []

    def set_rater(self, name: str, *, quiet: bool = False) -> bool:
        if self.snapshot is None or self.snapshot.rater(name) is None:
            if not quiet:
                self._error(f"no rater named '{name}' in this study; add one first")
            return False
        self.rater = name
        assert self.study_path is not None
        self.settings.set_last_rater(self.study_path, name)
        self._refresh()
        self.statusBar().showMessage(f"Study {self.snapshot.name} · rating as {name}")
        return True

    def add_rater(self, name: str) -> None:
        if self.snapshot is None:
            return
        self._wait(f"Adding {name.strip()}…")

        def added(raters: tuple[RaterInfo, ...]) -> None:
            self._waited()
            if self.snapshot is not None:
                self.snapshot = self.snapshot.with_raters(raters)
                self.set_rater(name.strip())

        def failed(exc: BaseException) -> None:
            self._waited()
            self._error(one_line(exc))

        self.worker.run(_add_rater_job, name.strip(), on_done=added, on_error=failed)

    def choose_new_rater(self) -> None:
        name, ok = QInputDialog.getText(self, "Add rater", "Rater name:")
        if ok and name.strip():
            self.add_rater(name)

    # -- modes ---------------------------------------------------------------------
    def available_modes(self) -> list[str]:
        return [m for m in MODES if has_view(m)]

    def mode_allowed(self, mode: str) -> bool:
        """Blinding: the dashboard names generators, so a (non-operator) rater never gets it."""
        if self.snapshot is None or mode not in MODES or self.busy:
            return False
        if mode == "dashboard":
            return self.rater is None or self.snapshot.is_operator(self.rater)
        return self.rater is not None

    def show_start(self) -> None:
        self._drop_view()
        self.mode = "start"
        self.start.refresh()
        self.stack.setCurrentWidget(self.start)
        if self.snapshot is not None:
            self.statusBar().showMessage(f"Study {self.snapshot.name} · choose a mode")
        self.viewChanged.emit("start")

    def show_mode(self, mode: str) -> QWidget | None:
        cls = view_class(mode) if mode in MODES else None
        if cls is None or not self.mode_allowed(mode):
            self.statusBar().showMessage(f"{MODE_TITLES.get(mode, mode)} is not available now", 5000)
            return None
        self._drop_view()
        kwargs = {"compute": self.compute} if mode == "dashboard" else {}
        view = cls(self.snapshot, self.rater, self.worker, self.settings, parent=self, **kwargs)
        if hasattr(view, "recalibrationRequested"):
            view.recalibrationRequested.connect(self._recalibrate)
        if hasattr(view, "closeRequested"):
            view.closeRequested.connect(self.show_start)
        self.stack.addWidget(view)
        self.stack.setCurrentWidget(view)
        view.setFocus()
        self.current_view = view
        self.mode = mode
        self.statusBar().showMessage(f"{MODE_TITLES[mode]} · study {self.snapshot.name}  ·  "
                                     f"{self.keymap.hint('start_page')}: start page")
        self.viewChanged.emit(mode)
        return view

    def _recalibrate(self) -> None:
        if "calibration" in self.available_modes():
            self.show_mode("calibration")

    def _drop_view(self) -> None:
        view, self.current_view = self.current_view, None
        if view is None:
            return
        # Its jobs may still call back: the view ignores them once shut down, so nothing waits here.
        view.shutdown()
        self.stack.removeWidget(view)
        view.deleteLater()

    def _error(self, text: str) -> None:
        self.start.message.setText(text)
        self.statusBar().showMessage(text, 15000)

    # -- shutdown ------------------------------------------------------------------
    def shutdown(self) -> None:
        if self._shut:
            return
        self._shut = True
        self.settings.set_geometry("main", self.saveGeometry())
        self._drop_view()
        self.compute.stop(timeout=1.0)
        self.worker.stop()  # closes the study on the worker thread, then joins it

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)


__all__ = ["MODES", "VIEWS", "MainWindow", "StartPage", "view_class"]
