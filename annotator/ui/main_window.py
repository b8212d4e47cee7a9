"""The main window: open or create a study, pick or add a rater, choose a mode.
(Over 500 lines on purpose: the window's modes, menus, one database worker and the study it holds
are one lifecycle.)

Modes are views constructed as ``View(snapshot, rater, worker, settings, parent=None)``
(``ALL_MODES``: label, pairwise, calibration, dashboard, review; imported lazily).
The dashboard and the review view (``LEAD_MODES``) are the study lead's.

The window owns ONE ``DbWorker`` (it holds the open study; every view runs its
database work there) and ONE ``ComputeWorker`` (the dashboard's report). The UI
thread only ever holds the study's plain ``StudySnapshot``. Opening, creating
and closing a study are asynchronous: the window is disabled meanwhile (no
nested event loop), and a failure is one line on the start page.

Where a study lives: a folder, a rater package (``.annot``: one rater's blinded
work) or a server URL. The recent list remembers ``snapshot.where`` (a URL
never with its password).

The lead is not a rater. With no rater chosen the window is the study lead's
(dashboard, adding raters). Choosing a rater puts it in *rater mode*: the lead's
views are not reachable, and every way out of the rater (leave rater mode, close
or open a study) first asks, naming the consequence ("leaving blinded work").
The rater list a rater sees never holds an operator. A package has no lead views
at all: only its rater, who is chosen on opening.

A server study: on entering rater mode the rater's work is copied to a local
package (``services.outbox``). A lost connection during a write is one line and
is retried by the view; when the server stays away the window moves the rater to
that local package (the unsaved answer goes with it) and shows how many answers
wait to sync; a timer syncs them when the server is back, then returns to it
(``ui/offline.py``, a mixin of the window).

Public API: ``MainWindow(settings, *, study=None, rater=None, mode="label",
default_rater=None, parent=None)`` with ``open_study(location)``, ``create_study(folder,
rubric)``, ``close_study()``, ``raters()``, ``set_rater(name) -> bool``, ``add_rater(name)``,
``leave_rater()``, ``available_modes()``, ``mode_allowed(mode)``, ``lead_mode``,
``show_mode(mode) -> QWidget | None``, ``show_start()``, ``set_language(lang)``,
``busy``, ``current_view``, ``snapshot``, ``rater``, ``worker``, ``compute``,
``keymap``, ``offline`` (the outbox state or None), ``pending_confirmation``
(the open "leaving blinded work" question, or None), ``shutdown()``; signals
``viewChanged(str)`` ("start" for the start page), ``studyOpened(str)``,
``studyFailed(str)``, ``studyClosed()``, ``synced(int)`` (answers still waiting).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QWidget,
)

from ..base.location import as_location, is_server_url
from ..domain.records import RaterInfo
from . import i18n
from .i18n import translate
from .keymap import Keymap
from .offline import Offline, OfflineWork, open_study_job
from .session_view import one_line
from .settings import AppSettings, location_key
from .start_page import LEAD_MODES, MODES, StartPage, mode_title
from .style import fit_to_text, relative_font, warning_colour
from .worker import ComputeWorker, DbWorker

VIEWS: dict[str, tuple[str, str]] = {
    "label": ("annotator.ui.label_view", "LabelView"),
    "pairwise": ("annotator.ui.pair_view", "PairView"),
    "calibration": ("annotator.ui.calibration_view", "CalibrationView"),
    "dashboard": ("annotator.ui.dashboard_view", "DashboardView"),
    "review": ("annotator.ui.review_view", "ReviewView"),
}
ALL_MODES = MODES  # the start page's buttons and the Mode menu list the same views
# The lead's menu actions: not there at all in a package.
HELP_CONTEXT = {"dashboard": "dashboard", "calibration": "label", "review": "review"}
LEAD_ACTIONS = ("add_rater", "leave_rater", *(f"mode_{m}" for m in sorted(LEAD_MODES)))
SYNC_EVERY_MS = 15_000


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
    """Where the file dialog starts looking for a rubric: the shipped ones (package data, so a
    wheel and the frozen build find them as a source checkout does)."""
    from ..services.resources import shipped_rubrics_folder

    shipped = shipped_rubrics_folder()
    return str(shipped) if shipped is not None else ""


def is_url(location: str | Path) -> bool:
    return is_server_url(str(location))


def _create_job(folder: Path, rubric: Path) -> Any:  # database worker
    from ..services.snapshot import create_study

    return create_study(folder, rubric)


def _add_rater_job(study: Any, name: str) -> tuple[RaterInfo, ...]:  # database worker
    study.add_rater(name)
    return tuple(study.raters())


class MainWindow(OfflineWork, QMainWindow):
    viewChanged = Signal(str)  # noqa: N815 - Qt signal naming
    studyOpened = Signal(str)  # noqa: N815
    studyFailed = Signal(str)  # noqa: N815
    studyClosed = Signal()  # noqa: N815
    synced = Signal(int)

    outbox_folder: Path | None = None  # None: the user's data folder (tests point it elsewhere)
    sync_every_ms = SYNC_EVERY_MS

    def __init__(
        self,
        settings: AppSettings,
        *,
        study: Path | str | None = None,
        rater: str | None = None,
        mode: str = "label",
        default_rater: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.keymap = Keymap.from_settings(settings)
        self.worker = DbWorker(self)
        self.compute = ComputeWorker(self)
        self.snapshot: Any = None
        self.study_path: Path | str | None = None
        self.rater: str | None = None
        self.mode = "start"
        self.current_view: QWidget | None = None
        self.offline: Offline | None = None
        self.outbox_items: dict[int, int] = {}  # the server's item numbers -> the local package's
        self.outbox_path: Path | None = None
        self.pending_confirmation: QMessageBox | None = None
        self._pending = 0  # open / create / close / add-rater jobs in flight
        self._shut = False
        self._syncing = False
        self.setWindowTitle("annotator")
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        self.start = StartPage(self)
        self.stack.addWidget(self.start)
        self.rating_as = QLabel()
        self.rating_as.setFont(relative_font(self.rating_as, 1.0, bold=True))
        self.statusBar().addPermanentWidget(self.rating_as)
        self.sync_label = QLabel()
        self.sync_label.setObjectName("syncStatus")
        self.sync_label.hide()
        self.statusBar().addPermanentWidget(self.sync_label)
        self._sync_timer = QTimer(self)
        self._sync_timer.timeout.connect(self._try_sync)
        self._build_menus()
        geo = settings.geometry("main")
        if geo:
            self.restoreGeometry(geo)
        else:
            cw, lh = self.fontMetrics().averageCharWidth(), self.fontMetrics().lineSpacing()
            self.resize(max(1100, cw * 170), max(720, lh * 44))
        # What the settings file and the key overrides hold that the app ignored stays in view
        # (one line; the whole of it in the tooltip).
        self.keys_note = QLabel()
        self.keys_note.setStyleSheet(f"color: {warning_colour(self.palette())};")
        problems = self.startup_problems()
        if problems:
            self.keys_note.setText(problems if len(problems) <= 90 else problems[:88] + "…")
            self.keys_note.setToolTip(problems)
            self.keys_note.setAccessibleName(problems)
            self.statusBar().addPermanentWidget(self.keys_note)
        self.statusBar().showMessage(translate("MainWindow", "Open a study to begin"))
        self.show_start()
        if study is not None:
            self.open_study(study, then=lambda: self._enter(rater, mode, default_rater))

    def startup_problems(self) -> str | None:
        """Ignored settings and key override problems, in one line (None when there are none)."""
        settings_line = getattr(self.settings, "problem_line", lambda: None)()
        parts = [p for p in (settings_line, self.keymap.problem_line()) if p]
        return "; ".join(parts) or None

    # -- menus ---------------------------------------------------------------------
    def _build_menus(self) -> None:
        bar = self.menuBar()
        bar.clear()
        for old in getattr(self, "_menu_objects", []):  # a language change rebuilds them
            old.deleteLater()
        self._menu_objects: list[Any] = []
        self.actions_by_name: dict[str, QAction] = {}

        def add(menu: Any, name: str, text: str, slot: Callable[[], Any]) -> QAction:
            a = QAction(text, self)
            a.setObjectName(name)
            self._menu_objects.append(a)
            a.setShortcuts(self.keymap.sequences(name))
            a.triggered.connect(slot)
            a.setStatusTip(self.keymap.label(name))
            a.setToolTip(self.keymap.label(name))
            menu.addAction(a)
            self.actions_by_name[name] = a
            return a

        f = bar.addMenu(translate("MainWindow", "&Study"))
        self._menu_objects.append(f)
        add(f, "open_study", translate("MainWindow", "&Open study folder…"), self.choose_study)
        add(f, "open_package", translate("MainWindow", "Open rater &package…"), self.choose_package)
        add(
            f,
            "connect_server",
            translate("MainWindow", "Open a study on a &server…"),
            self.choose_server,
        )
        add(f, "new_study", translate("MainWindow", "&New study…"), self.choose_new_study)
        f.addSeparator()
        add(f, "add_rater", translate("MainWindow", "&Add rater…"), self.choose_new_rater)
        add(f, "leave_rater", translate("MainWindow", "&Leave rater mode…"), self.leave_rater)
        add(f, "start_page", translate("MainWindow", "S&tart page"), self.show_start)
        add(f, "close_study", translate("MainWindow", "&Close study"), self.close_study)
        f.addSeparator()
        add(f, "quit", translate("MainWindow", "&Quit"), self.close)
        m = bar.addMenu(translate("MainWindow", "&Mode"))
        self._menu_objects.append(m)
        self.mode_actions = {
            mode: add(
                m,
                f"mode_{mode}",
                mode_title(mode),
                partial(self._mode_chosen, mode),
            )
            for mode in ALL_MODES
        }
        lang_menu = bar.addMenu(translate("MainWindow", "&Language"))
        group = QActionGroup(self)
        self._menu_objects += [lang_menu, group]
        chosen = self.settings.language() or "system"
        self.language_actions: dict[str, QAction] = {}
        for code, name in (
            ("system", translate("MainWindow", "System language")),
            *i18n.LANGUAGES.items(),
        ):
            a = QAction(name, self)
            a.setObjectName(f"language_{code}")
            self._menu_objects.append(a)
            a.setCheckable(True)
            a.setChecked(code == chosen)
            a.setStatusTip(translate("MainWindow", "Show the app in this language"))
            a.triggered.connect(lambda _checked=False, c=code: self.set_language(c))
            group.addAction(a)
            lang_menu.addAction(a)
            self.language_actions[code] = a
        help_menu = bar.addMenu(translate("MainWindow", "&Help"))
        self._menu_objects.append(help_menu)
        self.help_action = QAction(
            translate("MainWindow", "&Keys and instructions of this view…"), self
        )
        self.help_action.setObjectName("help_keys")
        self.help_action.setStatusTip(
            translate("MainWindow", "The keys of the view on screen and the rubric's instructions")
        )
        self.help_action.triggered.connect(lambda _checked=False: self.show_help())
        self._menu_objects.append(self.help_action)
        help_menu.addAction(self.help_action)

    def _refresh(self) -> None:
        avail = set(self.available_modes())
        for mode, a in self.mode_actions.items():
            a.setEnabled(mode in avail and self.mode_allowed(mode))
        package = self.snapshot is not None and self.snapshot.is_package
        for name in LEAD_ACTIONS:
            # A package has no lead views at all: the actions are not there, not merely disabled.
            self.actions_by_name[name].setVisible(not package)
        self.actions_by_name["add_rater"].setEnabled(self.snapshot is not None and self.lead_mode)
        self.actions_by_name["leave_rater"].setEnabled(
            self.snapshot is not None and self.rater is not None and not package
        )
        self.rating_as.setText(
            translate("MainWindow", "Rating as {rater}").format(rater=self.rater)
            if self.rater
            else ""
        )
        fit_to_text(self.rating_as)
        # The window system adds " — annotator" (the application's display name) itself: a
        # title that began with it too read "annotator — study — annotator".
        title = self.snapshot.name if self.snapshot is not None else "annotator"
        if self.rater:
            title = translate("MainWindow", "{title} — rating as {rater}").format(
                title=title, rater=self.rater
            )
        self.setWindowTitle(title)
        self.start.refresh()

    def set_language(self, lang: str) -> None:
        """Switch the app's language now (and for the next start); the open view is rebuilt."""
        self.settings.set_language("" if lang == "system" else lang)
        app = QApplication.instance()
        if app is not None:
            i18n.install(app, i18n.chosen_language(self.settings.language()))
        self._build_menus()
        mode = self.mode
        self.start.retranslate()
        self._refresh()
        if mode != "start" and self.current_view is not None and not self.busy:
            self.show_mode(mode)

    def _mode_chosen(self, mode: str, _checked: bool = False) -> None:
        """A mode's menu entry (`triggered(bool checked)`: `checked` is not the mode)."""
        self.show_mode(mode)

    # -- waiting for the worker (the window is disabled, the event loop runs on) ----
    @property
    def busy(self) -> bool:
        return self._pending > 0

    def _wait(self, text: str) -> None:
        self._pending += 1
        self.stack.setEnabled(False)
        self.menuBar().setEnabled(False)
        self.statusBar().showMessage(text)

    def _waited(self) -> None:
        self._pending = max(0, self._pending - 1)
        if not self._pending:
            self.stack.setEnabled(True)
            self.menuBar().setEnabled(True)

    # -- leaving blinded work ------------------------------------------------------
    def _confirm_leaving(self, doing: str, then: Callable[[], None]) -> None:
        """In rater mode every way to the lead's views asks first (a window-modal box: no nested
        event loop); `then` runs when the person says yes. Outside rater mode it runs at once."""
        if (
            self.rater is None
            or self.snapshot is None
            or self.snapshot.is_package
            or self.offline is not None
        ):
            then()
            return
        if self.pending_confirmation is not None:
            self.pending_confirmation.raise_()
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            translate("MainWindow", "Leaving blinded work"),
            translate("MainWindow", "{doing} leaves blinded work as {rater}.").format(
                doing=doing, rater=self.rater
            ),
            parent=self,
        )
        box.setInformativeText(
            translate(
                "MainWindow",
                "The study lead's views name generators and show every rater's answers. A rater who "
                "has seen them can no longer answer blind. Leave only if you are the study lead.",
            )
        )
        leave = box.addButton(
            translate("MainWindow", "Leave blinded work"), QMessageBox.ButtonRole.AcceptRole
        )
        stay = box.addButton(
            translate("MainWindow", "Stay as {rater}").format(rater=self.rater),
            QMessageBox.ButtonRole.RejectRole,
        )
        box.setDefaultButton(stay)
        box.setEscapeButton(stay)
        box.setAccessibleName(translate("MainWindow", "Leaving blinded work"))
        box.setAccessibleDescription(box.text() + " " + box.informativeText())

        def answered(_result: int) -> None:
            self.pending_confirmation = None
            if box.clickedButton() is leave:
                then()

        box.finished.connect(answered)
        self.pending_confirmation = box
        box.open()

    def leave_rater(self) -> None:
        """Back to the study lead's views (after the confirmation, in rater mode)."""
        if self.rater is None or self.snapshot is None or self.snapshot.is_package:
            return

        def go() -> None:
            self.rater = None
            if self.study_path is not None:
                self.settings.set_last_lead(self.study_path)
            self.show_start()
            self._refresh()
            self.statusBar().showMessage(
                translate("MainWindow", "Study lead: no rater chosen"), 8000
            )

        self._confirm_leaving(translate("MainWindow", "Leaving rater mode"), go)

    # -- study ---------------------------------------------------------------------
    def open_study(self, location: str | Path, *, then: Callable[[], None] | None = None) -> None:
        """Open a study folder, a rater package or a server URL in the background; `then` runs
        once it is open (a package enters its rater's work by itself)."""
        loc = as_location(location)
        self._confirm_leaving(
            translate("MainWindow", "Opening a study"),
            lambda: self._request(open_study_job, loc, path=loc, then=then),
        )

    def create_study(self, folder: str | Path, rubric: str | Path) -> None:
        self._confirm_leaving(
            translate("MainWindow", "Creating a study"),
            lambda: self._request(_create_job, Path(folder), Path(rubric), path=Path(folder)),
        )

    def _shown_name(self, loc: str | Path) -> str:
        return location_key(loc) if is_url(loc) else Path(loc).name

    def _request(
        self,
        job: Callable[..., Any],
        *args: Any,
        path: Path | str,
        then: Callable[[], None] | None = None,
        remember: bool = True,
    ) -> None:
        self._close_now()
        self._wait(translate("MainWindow", "Opening {name}…").format(name=self._shown_name(path)))
        self.start.refresh()

        def opened(snapshot: Any) -> None:
            self._waited()
            self.snapshot, self.rater = snapshot, None
            self.study_path = snapshot.where if snapshot.is_server else path
            if remember:
                self.settings.add_recent_study(snapshot.where if snapshot.is_server else path)
            self.statusBar().showMessage(
                translate("MainWindow", "Study {name} · rubric {rubric}").format(
                    name=snapshot.name, rubric=self._rubric().title
                )
            )
            self._refresh()
            self.studyOpened.emit(str(self.study_path))
            if then is not None:
                then()
            elif snapshot.is_package:
                self._enter(None, "label", None)

        def failed(exc: BaseException) -> None:
            self._waited()
            text = one_line(exc)
            if not is_url(path) and not (
                Path(path).is_file() or (Path(path) / "study.sqlite").exists()
            ):
                self.settings.remove_recent_study(path)
            self._error(text)
            self._refresh()
            self.studyFailed.emit(text)

        self.worker.open_study(job, *args, on_done=opened, on_error=failed)

    def close_study(self) -> None:
        self._confirm_leaving(translate("MainWindow", "Closing the study"), self._close_now)

    def _close_now(self) -> None:
        self._drop_view()
        if self.snapshot is not None:
            self._wait(translate("MainWindow", "Closing the study…"))

            def closed(_: Any = None) -> None:
                self._waited()
                self.studyClosed.emit()

            self.worker.close_study(on_done=closed, on_error=lambda _e: closed())
        self.snapshot, self.rater, self.study_path = None, None, None
        if self.mode != "start":
            self.show_start()
        self._refresh()

    def choose_study(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, translate("MainWindow", "Open a study folder")
        )
        if folder:
            self.open_study(folder)

    def choose_package(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            translate("MainWindow", "Open a rater package"),
            "",
            translate("MainWindow", "Rater package (*.annot)"),
        )
        if path:
            self.open_study(path)

    def choose_server(self) -> None:
        url, ok = QInputDialog.getText(
            self,
            translate("MainWindow", "Open a study on a server"),
            translate(
                "MainWindow",
                "Database URL (postgresql://user@host/db; the "
                "password comes from ~/.pgpass or PGPASSWORD):",
            ),
        )
        if ok and url.strip():
            self.open_study(url.strip())

    def choose_new_study(self) -> None:
        rubric, _ = QFileDialog.getOpenFileName(
            self,
            translate("MainWindow", "Rubric for the new study"),
            rubrics_dir(),
            translate("MainWindow", "Rubric (*.toml)"),
        )
        if not rubric:
            return
        folder = QFileDialog.getExistingDirectory(
            self, translate("MainWindow", "Empty folder for the new study")
        )
        if folder:
            self.create_study(folder, rubric)

    def _enter(self, rater: str | None, mode: str, default_rater: str | None) -> None:
        """After the study given at start-up opens: the rater (asked for, else the last one here,
        else the default, else the only one) and the mode. A package is its one rater's."""
        assert self.study_path is not None
        people = [r.name for r in self.raters() if not r.is_operator]
        if self.snapshot.is_package:
            pick = people[0] if people else None
        elif rater is None and self.settings.last_lead(self.study_path):
            # The last session here ended in the lead's mode: a rater is chosen, never assumed
            # (whoever saw the lead's views cannot rate blind).
            self._lead_reopened()
            return
        else:
            pick = rater or self.settings.last_rater(self.study_path) or default_rater
            if pick is None or self.snapshot.rater(pick) is None:
                pick = people[0] if len(people) == 1 else pick
        if pick is not None and self.set_rater(pick, quiet=rater is None):
            self.show_mode(mode)

    def _lead_reopened(self) -> None:
        self.show_start()
        self.statusBar().showMessage(
            translate(
                "MainWindow", "Study lead: no rater chosen (the last session here was the lead's)"
            ),
            8000,
        )

    def help_context(self) -> str:
        """The keymap context of the view on screen ("global" on the start page)."""
        view = self.current_view
        if view is None:
            return "global"
        return getattr(view, "context", None) or HELP_CONTEXT.get(self.mode, "global")

    def show_help(self) -> Any:
        """The Help menu's window: the keys of the view on screen (and the keys that work
        everywhere), with the rubric's instructions when a study is open."""
        from .dialogs import InstructionsDialog

        old = getattr(self, "help_dialog", None)
        if old is not None:
            old.close()
            old.deleteLater()
        rubric = self._rubric() if self.snapshot is not None else None
        self.help_dialog = InstructionsDialog(rubric, self.keymap, self, self.help_context())
        self.help_dialog.show()
        self.help_dialog.raise_()
        return self.help_dialog

    def _rubric(self) -> Any:
        """The rubric in the app's language (same version: only its texts change)."""
        return self.snapshot.rubric_in(i18n.current_language())

    # -- raters --------------------------------------------------------------------
    @property
    def lead_mode(self) -> bool:
        """The study lead's: a study (not a package) with no rater chosen."""
        return self.snapshot is not None and not self.snapshot.is_package and self.rater is None

    def raters(self) -> list[RaterInfo]:
        """The raters the start page lists: the lead sees every account; in rater mode (and in a
        package) the list never holds an operator."""
        if self.snapshot is None:
            return []
        return list(self.snapshot.raters if self.lead_mode else self.snapshot.visible_raters())

    def set_rater(self, name: str, *, quiet: bool = False) -> bool:
        if self.snapshot is None or self.snapshot.rater(name) is None:
            if not quiet:
                self._error(
                    translate(
                        "MainWindow", "no rater named '{name}' in this study; add one first"
                    ).format(name=name)
                )
            return False
        if (
            self.rater is not None
            and self.snapshot.is_operator(name)
            and not self.snapshot.is_operator(self.rater)
        ):
            return False  # a rater never switches to a staff account
        self.rater = name
        assert self.study_path is not None
        self.settings.set_last_rater(self.study_path, name)
        if self.mode in LEAD_MODES:
            self.show_start()  # a lead view never stays open under a rater
        self._refresh()
        self.statusBar().showMessage(
            translate("MainWindow", "Study {name} · rating as {rater}").format(
                name=self.snapshot.name, rater=name
            )
        )
        if self.snapshot.is_server and self.offline is None:
            self._prepare_outbox(name)
        return True

    def add_rater(self, name: str) -> None:
        if self.snapshot is None or not self.lead_mode:
            return
        self._wait(translate("MainWindow", "Adding {name}…").format(name=name.strip()))

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
        if not self.lead_mode:
            return
        name, ok = QInputDialog.getText(
            self, translate("MainWindow", "Add rater"), translate("MainWindow", "Rater name:")
        )
        if ok and name.strip():
            self.add_rater(name)

    # -- modes ---------------------------------------------------------------------
    def available_modes(self) -> list[str]:
        package = self.snapshot is not None and self.snapshot.is_package
        return [m for m in ALL_MODES if has_view(m) and not (package and m in LEAD_MODES)]

    def mode_allowed(self, mode: str) -> bool:
        """Blinding: the lead's views only in lead mode; the rater's views only with a rater."""
        if self.snapshot is None or mode not in ALL_MODES or self.busy:
            return False
        if mode in LEAD_MODES:
            return self.lead_mode and self.offline is None
        return self.rater is not None

    def why_not(self, mode: str) -> str:
        """Why a mode cannot be opened now, in one line (shown on the start page, not only as a tip)."""
        if mode not in self.available_modes():
            return (
                translate("MainWindow", "Not in a rater package: it is the study lead's.")
                if mode in LEAD_MODES
                else translate("MainWindow", "Not available in this version.")
            )
        if self.snapshot is None:
            return translate("MainWindow", "Open a study first.")
        if mode in LEAD_MODES and self.rater is not None:
            return translate(
                "MainWindow",
                "For the study lead only: it names generators. You are rating as "
                "{rater}; {key} leaves rater mode.",
            ).format(rater=self.rater, key=self.keymap.hint("leave_rater"))
        if mode not in LEAD_MODES and self.rater is None:
            return translate("MainWindow", "Pick a rater first.")
        return ""

    def show_start(self) -> None:
        self._drop_view()
        self.mode = "start"
        self.start.refresh()
        self.stack.setCurrentWidget(self.start)
        if self.snapshot is not None:
            self.statusBar().showMessage(
                translate("MainWindow", "Study {name} · choose a mode").format(
                    name=self.snapshot.name
                )
            )
        self.start.setFocus()
        self.viewChanged.emit("start")

    def show_mode(self, mode: str) -> QWidget | None:
        cls = view_class(mode) if mode in ALL_MODES else None
        if cls is None or not self.mode_allowed(mode):
            self.statusBar().showMessage(
                translate("MainWindow", "{mode} is not available now: {why}").format(
                    mode=mode_title(mode) if mode in ALL_MODES else mode,
                    why=self.why_not(mode) if mode in ALL_MODES else "",
                ),
                5000,
            )
            return None
        self._drop_view()
        kwargs = {"compute": self.compute} if mode == "dashboard" else {}
        snapshot = self.snapshot
        view = cls(snapshot, self.rater, self.worker, self.settings, parent=self, **kwargs)
        if hasattr(view, "recalibrationRequested"):
            view.recalibrationRequested.connect(self._recalibrate)
        if hasattr(view, "closeRequested"):
            view.closeRequested.connect(self.show_start)
        if hasattr(view, "serverUnreachable"):
            view.serverUnreachable.connect(self._go_offline)
        if hasattr(view, "submitted") and self.offline is not None:
            view.submitted.connect(self._answered_offline)
        if self.offline is None and self.snapshot is not None and self.snapshot.is_server:
            for signal in ("submitted", "voted"):
                if hasattr(view, signal):
                    getattr(view, signal).connect(self._refresh_outbox)
        if self.offline is not None and self.offline.carried is not None and hasattr(view, "carry"):
            view.carry(self.offline.carried)
            self.offline.carried = None
        self.stack.addWidget(view)
        self.stack.setCurrentWidget(view)
        view.setFocus()
        self.current_view = view
        self.mode = mode
        if mode in LEAD_MODES and self.study_path is not None:
            self.settings.set_last_lead(self.study_path)  # reopened later: as the lead again
        self.statusBar().showMessage(
            translate("MainWindow", "{mode} · study {name}  ·  {key}: start page").format(
                mode=mode_title(mode), name=self.snapshot.name, key=self.keymap.hint("start_page")
            )
        )
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
        cast(Any, view).shutdown()  # every view has one (ShutsDownOnce)
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
        self._sync_timer.stop()
        if self.pending_confirmation is not None:
            self.pending_confirmation.close()
        self.settings.set_geometry("main", self.saveGeometry())
        self._drop_view()
        self.compute.stop(timeout=1.0)
        self.worker.stop()  # closes the study on the worker thread, then joins it

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)


__all__ = ["ALL_MODES", "LEAD_MODES", "MODES", "VIEWS", "MainWindow", "StartPage", "view_class"]
