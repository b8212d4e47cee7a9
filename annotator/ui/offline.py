"""A server study's rater when the server goes away (moved out of
ui/main_window.py, which owns it as a mixin).

On entering rater mode the rater's work is copied to a local package
(``services.outbox``), and brought up to the server after each answer stored there. When the
server stays away the window moves the rater to that package (the answer whose save failed goes
with it) and shows how many answers wait to sync; a timer syncs them through the package merge
when the server is back, then returns to it. Every database step runs on the window's worker.

Why a mixin and not an object of its own: going offline and back re-enters the window's own
flow (``_request`` to open a study, ``set_rater``, ``show_mode``, the status bar), so the
methods keep ``self`` the window; the state they keep (``offline``,
``outbox_path``, ``outbox_items``, ``_syncing``, ``_sync_timer``, ``sync_label``), set up by
``MainWindow.__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .i18n import translate
from .session_view import one_line
from .style import fit_to_text

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer, SignalInstance
    from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

    from .worker import DbWorker


def open_study_job(location: str | Path) -> Any:  # database worker
    """Open a study (folder, package or server) on the worker: the window's job for every
    opening, and going offline's and back's."""
    from ..services.snapshot import open_study

    return open_study(location)


def _prepare_outbox_job(
    study: Any, rater: str, folder: Path | None
) -> tuple[Path, dict[int, int]]:  # database worker
    from ..services.outbox import Outbox

    box = Outbox(study, rater, folder)
    return box.prepare(), box.local_items


def _refresh_outbox_job(
    study: Any, rater: str, folder: Path | None
) -> tuple[Path, dict[int, int]]:  # database worker
    """The local package brought up to the server after an answer stored there."""
    from ..services.outbox import Outbox

    box = Outbox(study, rater, folder)
    return box.refresh(), box.local_items


def _sync_job(_package: Any, url: str, rater: str, folder: Path | None) -> int:  # database worker
    """Push the local package's answers to the server; the answers still waiting (0: all there)."""
    from ..services.outbox import Outbox
    from ..services.study import Study

    server = Study.open(url)
    try:
        box = Outbox(server, rater, folder)
        box.sync()
        return box.pending()
    finally:
        server.close()


@dataclass
class Offline:
    """A server study's rater working in the local package while the server is away."""

    url: str
    rater: str
    mode: str
    package: Path
    waiting: int = 0  # answers given offline (or carried over) not yet confirmed on the server
    carried: Any = (
        None  # the answer whose save failed on the server, stored in the package on arrival
    )


class OfflineWork:
    """The offline part of the main window (see the module docstring)."""

    if TYPE_CHECKING:  # what the mixin reads of its window (MainWindow sets each)
        worker: DbWorker
        outbox_folder: Path | None
        sync_every_ms: int
        snapshot: Any
        study_path: Path | str | None
        rater: str | None
        mode: str
        current_view: QWidget | None
        offline: Offline | None
        outbox_items: dict[int, int]
        outbox_path: Path | None
        sync_label: QLabel
        synced: SignalInstance
        _sync_timer: QTimer
        _shut: bool
        _syncing: bool

        def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)
        def set_rater(self, name: str, *, quiet: bool = False) -> bool: ...
        def show_mode(self, mode: str) -> QWidget | None: ...
        def _request(
            self,
            job: Callable[..., Any],
            *args: Any,
            path: Path | str,
            then: Callable[[], None] | None = None,
            remember: bool = True,
        ) -> None: ...

    def _prepare_outbox(self, rater: str) -> None:
        """Copy the rater's work to a local package now, while the server is there."""
        self.outbox_path = None

        def ready(made: tuple[Path, dict[int, int]]) -> None:
            self.outbox_path, self.outbox_items = Path(made[0]), made[1]

        def failed(exc: BaseException) -> None:
            self.statusBar().showMessage(
                translate("MainWindow", "No local copy for offline work: {why}").format(
                    why=one_line(exc)
                ),
                10000,
            )

        self.worker.run(
            _prepare_outbox_job, rater, self.outbox_folder, on_done=ready, on_error=failed
        )

    def _refresh_outbox(self, *_: Any) -> None:
        """An answer is stored on the server: the local package learns it too (same UUID), so
        offline it is neither served again nor sent twice."""
        if self.offline is not None or self.outbox_path is None or self.rater is None:
            return
        if self.snapshot is None or not self.snapshot.is_server:
            return

        def ready(made: tuple[Path, dict[int, int]]) -> None:
            if self.offline is None:
                self.outbox_path, self.outbox_items = Path(made[0]), made[1]

        def failed(_exc: BaseException) -> None:
            pass  # the server went meanwhile: the package keeps its last state, the sync sorts it

        self.worker.run(
            _refresh_outbox_job, self.rater, self.outbox_folder, on_done=ready, on_error=failed
        )

    def _go_offline(self, carried: Any) -> None:
        """The server stayed away: the rater goes on in the local package; `carried` (the answer
        that could not be saved) is stored there as soon as its item is shown."""
        if self.offline is not None or self.snapshot is None or not self.snapshot.is_server:
            return
        if self.outbox_path is None:
            self.statusBar().showMessage(
                translate(
                    "MainWindow",
                    "The server is unreachable and there is no local copy yet: still retrying",
                ),
                10000,
            )
            return
        view = self.current_view
        if (
            carried and hasattr(view, "submitted") and carried[0] in self.outbox_items
        ):  # the server's item number -> the package's
            carried = (self.outbox_items[carried[0]], *carried[1:])
        self.offline = Offline(
            str(self.study_path),
            str(self.rater),
            self.mode if self.mode != "start" else "label",
            self.outbox_path,
            carried=carried,
        )
        if view is not None and hasattr(view, "stop_retrying"):
            view.stop_retrying()
        rater, mode, path = self.offline.rater, self.offline.mode, self.offline.package

        def enter() -> None:
            if self.set_rater(rater, quiet=True):
                self.show_mode(mode)
            self._show_waiting()
            self._sync_timer.start(self.sync_every_ms)

        self._request(open_study_job, path, path=path, then=enter, remember=False)

    def _answered_offline(self, *_: Any) -> None:
        if self.offline is not None:
            self.offline.waiting += 1
            self._show_waiting()

    def _show_waiting(self) -> None:
        if self.offline is None:
            self.sync_label.hide()
            return
        n = self.offline.waiting
        # (lupdate marks a plural only for a literal count, so the two forms are two strings)
        text = (
            translate("MainWindow", "Working offline: 1 answer waiting to sync")
            if n == 1
            else translate("MainWindow", "Working offline: {n} answers waiting to sync").format(n=n)
        )
        self.sync_label.setText(text)
        self.sync_label.setAccessibleName(self.sync_label.text())
        self.sync_label.setAccessibleDescription(
            translate(
                "MainWindow",
                "Answers given offline, stored here, sent to the server when it is back",
            )
        )
        fit_to_text(self.sync_label)
        self.sync_label.show()

    def _try_sync(self) -> None:
        """Background sync (on the worker, between the rater's own jobs): the package's new rows go
        to the server by the package merge (idempotent by UUID, so a cut sync is simply rerun)."""
        if self.offline is None or self._syncing or self._shut:
            return
        view = self.current_view
        if view is not None and getattr(view, "busy", False):
            return  # a write is in flight: sync after it
        self._syncing = True
        off = self.offline

        def done(waiting: int) -> None:
            self._syncing = False
            if self.offline is not off:
                return
            off.waiting = waiting
            self.synced.emit(waiting)
            if waiting == 0:
                self._back_online()
            else:
                self._show_waiting()

        def failed(_exc: BaseException) -> None:
            self._syncing = False  # still away: the timer tries again

        self.worker.run(
            _sync_job, off.url, off.rater, self.outbox_folder, on_done=done, on_error=failed
        )

    def _back_online(self) -> None:
        """Every offline answer is on the server: the rater goes back to it."""
        off, self.offline = self.offline, None
        self._sync_timer.stop()
        self.sync_label.setText(
            translate("MainWindow", "Back on the server: every answer is synced")
        )
        if off is None:
            return

        def enter() -> None:
            if self.set_rater(off.rater, quiet=True):
                self.show_mode(off.mode)

        self._request(open_study_job, off.url, path=off.url, then=enter, remember=False)
