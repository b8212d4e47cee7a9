"""The dashboard's computations and its following of the study: ``DashboardFollow``, the base
of ``DashboardView`` (ui/dashboard_view.py), which gives it the widgets it writes to (the busy
label and bar, the recompute button, "Follow changes", the note on earlier figures) and the
painting of a model (``_render``, ``_show_tiles``).

Work: the database worker reads the inputs (quick: the data version, and the
frames unless the cached report is still valid); the compute worker computes
the report with progress (cancellable: Esc, or a newer refresh, or closing the
view), draws the charts and decodes them with Pillow; the UI thread paints.
While it computes, the counts are shown at once (a partial result). Reopening
on unchanged data shows the cached report without computing; opening it on
changed data shows the report the study kept the last time, marked with when it
was computed, until the current figures replace it. What the workers run is in
ui/dashboard_jobs.py.

Live: while the view is shown it asks the database worker every few seconds for
the study's data version (one cheap query). When the data has moved on, the
figures are marked as earlier and, with "Follow changes" on (the default; key L,
app setting ``dashboard_live``), recomputed, never more often than every
``max(LIVE_MIN_GAP_S, the last computation's time)`` seconds (``_live_gap``), so a
large study spends at most half a core on it. Between two full computations each change
brings a live estimate at once (``services.dashboard_live``: the new answers read,
every figure computed again without resampling, the intervals carried from the
last full computation and marked ≈, a note saying when the exact figures follow).
A recomputation the reader cancelled is not restarted on its own for the same data.

Its texts keep the dashboard's translation context ("DashboardView").
Tested in tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QCheckBox, QLabel, QProgressBar, QPushButton, QWidget

from ..services import dashboard as dash
from ..services import dashboard_live as dash_live
from ..services.dashboard import clock_text
from . import dashboard_jobs as jobs
from .i18n import translate
from .keymap import Keymap
from .session_view import alive, one_line
from .style import set_accessible
from .worker import ComputeWorker

__all__ = ["LIVE_MIN_GAP_S", "LIVE_POLL_MS", "DashboardFollow"]

LIVE_POLL_MS = 5_000  # how often a shown dashboard asks for the study's data version
# the least time between two full recomputations it starts on its own; between them, each
# change of the study brings a live estimate (services/dashboard_live.py) in seconds
LIVE_MIN_GAP_S = 60.0
_PENDING = object()  # the team of a live estimate, not read yet


def _live_gap(last_seconds: float) -> float:
    """The least time between two recomputations the view starts on its own: a study whose
    report takes a minute is recomputed at most every minute (half a core at most)."""
    return max(LIVE_MIN_GAP_S, last_seconds)


class DashboardFollow(QWidget):
    """Computes the figures a dashboard shows, and follows the study while it is shown."""

    reportReady = Signal(dict)  # noqa: N815 - Qt signal naming
    failed = Signal(str)
    progress = Signal(str)

    # the view's (ui/dashboard_view.py)
    worker: Any
    compute: ComputeWorker
    settings: Any
    keymap: Keymap
    busy_label: QLabel
    busy_bar: QProgressBar
    refresh_button: QPushButton
    live_box: QCheckBox
    stale_note: QLabel

    def _render(self, model: dash.DashboardModel, charts: dict[str, QImage]) -> None:
        raise NotImplementedError

    def _show_tiles(self, tiles: tuple[dash.Tile, ...]) -> None:
        raise NotImplementedError

    def _init_follow(self, n_boot: int, seed: int) -> None:
        """Start following (once the view's widgets are built)."""
        self._n_boot = n_boot
        self._seed = seed
        self._task: dash.TaskState | None = None
        self._job_id = -1
        self._stopped = False
        self.model: dash.DashboardModel | None = None
        self._started = 0.0
        self._computed_at: datetime | None = None  # when the figures shown were computed
        self._ready_at = 0.0  # monotonic time the last computation ended
        self._asking = False  # a data-version query is on the database worker
        self._declined: str | None = None  # the version whose recomputation the reader cancelled
        self._computing: str | None = None  # the data version being computed (known once read)
        self._decline_next = False  # cancelled before the data was read: decline what comes
        # the live estimate between full computations (services/dashboard_live.py)
        self._exact: dash.DashboardModel | None = None  # the last full computation's model
        self._exact_at: datetime | None = None
        self._full_seconds = 0.0  # how long the last full computation took
        self._live_frames: Any = None  # the frames a live estimate brings up to date
        self._live_task: dash.TaskState | None = None
        # a live estimate's model and charts, and the team read beside it, until both are in
        self._live_result: tuple[dash.DashboardModel, dict[str, QImage]] | None = None
        self._live_team: Any = _PENDING
        self.compute.progress.connect(self._on_progress)
        self._poll = QTimer(self)
        self._poll.setInterval(LIVE_POLL_MS)
        self._poll.timeout.connect(self.check_for_changes)
        self._poll.start()

    def _stop_following(self) -> None:
        """No more asking or computing; a running step ends on its own, its result dropped."""
        self._stopped = True
        self._poll.stop()
        self.cancel()
        dash_live.forget_kept()

    # -- computing -------------------------------------------------------------------
    def is_busy(self) -> bool:
        return self._task is not None

    def refresh(self, force: bool = True) -> bool:
        """Recompute (`force`), or show the cached report when the data has not changed."""
        if self._task is not None or self._stopped:
            return False
        self._task = dash.TaskState()
        self._started = time.monotonic()
        self.refresh_button.setEnabled(False)
        self.busy_bar.setValue(0)
        self.busy_bar.show()
        self.busy_label.setText(translate("DashboardView", "Reading the study…"))
        self._computing = None
        if not self.stale_note.isHidden():  # (isVisible is false while the view is hidden)
            self._show_stale(computing=True)
        if self.model is None and not force:
            # queued before the (slow) reading of every answer, so it is shown first
            self.worker.run(
                jobs.job_earlier,
                self._n_boot,
                self._seed,
                on_done=self._guard(self._on_earlier),
                on_error=lambda _exc: None,  # no earlier figures: the current ones still come
            )
        self.worker.run(
            jobs.job_inputs,
            self._n_boot,
            self._seed,
            not force,
            on_done=self._guard(self._on_inputs),
            on_error=self._guard(self._on_failed),
        )
        return True

    def cancel(self) -> None:
        if self._live_task is not None:
            self._live_task.cancel()
        if self._task is not None:
            self._task.cancel()
            # not restarted on its own for the same data: only a newer change follows
            if self._computing is not None:
                self._declined = self._computing
            else:
                self._decline_next = True

    def _guard(self, fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def call(arg: Any) -> None:
            if not self._stopped and alive(self):
                fn(arg)

        return call

    def _on_earlier(self, inputs: dash.DashboardInputs | None) -> None:
        if inputs is None or self._task is None or self.model is not None:
            return
        self.compute.submit(
            jobs.job_compute,
            inputs,
            task=self._task,
            on_done=self._guard(self._on_earlier_ready),
            on_error=lambda _exc: None,  # cancelled with the task, or unreadable: not shown
        )

    def _on_earlier_ready(self, result: tuple[dash.DashboardModel, dict[str, QImage]]) -> None:
        model, charts = result
        if self._task is None or self.model is not None or model.earlier_at is None:
            return
        self.model = model
        self._computed_at = model.earlier_at
        self._render(model, charts)
        self._show_stale(computing=True)

    def _on_inputs(self, inputs: dash.DashboardInputs) -> None:
        if self._task is None:
            return
        self._computing = inputs.data_version
        if self.model is None and inputs.tiles:
            self._show_tiles(inputs.tiles)  # the counts at once, while the figures compute
        self._job_id = self.compute.submit(
            jobs.job_compute,
            inputs,
            task=self._task,
            on_done=self._guard(self._on_ready),
            on_error=self._guard(self._on_failed),
        )

    def _on_progress(self, job_id: int, fraction: Any, message: str) -> None:
        if job_id != self._job_id or self._task is None or self._stopped:
            return
        if fraction is not None:
            self.busy_bar.setValue(int(fraction * 100))
        self.busy_label.setText(
            translate("DashboardView", "Computing the report: {step}…").format(step=message)
        )
        self.progress.emit(message)

    def _done(self) -> None:
        self._task = None
        self.busy_bar.hide()
        set_accessible(
            self.busy_bar,
            translate("DashboardView", "Progress"),
            translate("DashboardView", "How far the computation has got"),
        )
        self.refresh_button.setEnabled(True)

    def _on_ready(self, result: tuple[dash.DashboardModel, dict[str, QImage]]) -> None:
        model, charts = result
        self._done()
        secs = time.monotonic() - self._started
        if model.seconds and secs < model.seconds / 2:
            self.busy_label.setText(
                translate(
                    "DashboardView",
                    "Unchanged since the last computation: shown at once ({secs} s).",
                ).format(secs=f"{secs:.2f}")
            )
        else:
            self.busy_label.setText(
                translate(
                    "DashboardView", "Computed in {secs} s with {n} bootstrap resamples."
                ).format(secs=f"{secs:.1f}", n=model.n_boot)
            )
        self.model = model
        self._computed_at = datetime.now().astimezone()
        self._ready_at = time.monotonic()
        self._exact, self._exact_at = model, self._computed_at
        self._full_seconds = max(model.seconds, secs)
        self._render(model, charts)
        self.stale_note.hide()
        self.reportReady.emit(dict(model.report))

    def _on_failed(self, exc: BaseException) -> None:
        self._done()
        self._ready_at = time.monotonic()  # a failed computation is not retried at every tick
        if not self.stale_note.isHidden():
            self._show_stale(computing=False)
        if isinstance(exc, dash.Cancelled):
            self.busy_label.setText(
                translate(
                    "DashboardView", "Cancelled. The figures shown are from the last computation."
                )
                if self.model
                else translate("DashboardView", "Cancelled. {key} computes.").format(
                    key=self.keymap.hint("refresh")
                )
            )
            return
        msg = one_line(exc)
        self.busy_label.setText(
            translate("DashboardView", "The report could not be computed: {why}").format(why=msg)
        )
        self.failed.emit(msg)

    # -- following the study's changes -------------------------------------------------
    def _show_stale(self, *, computing: bool) -> None:
        when = clock_text(self._computed_at) if self._computed_at else "?"
        if computing:
            text = translate(
                "DashboardView",
                "These figures are from {when}, before the latest changes to the study; the "
                "current ones are being computed.",
            ).format(when=when)
        else:
            text = translate(
                "DashboardView",
                "The study has changed since these figures ({when}); {key} recomputes.",
            ).format(when=when, key=self.keymap.hint("refresh"))
        self.stale_note.setText(text)
        self.stale_note.show()

    @property
    def live(self) -> bool:
        return self.live_box.isChecked()

    def set_live(self, on: bool) -> None:
        """Follow the study's changes (or not); remembered in the app settings."""
        if self.live_box.isChecked() != on:
            self.live_box.setChecked(on)  # emits toggled, which calls back here
            return
        if self.settings is not None and hasattr(self.settings, "set_value"):
            self.settings.set_value("dashboard_live", bool(on))
        if on:
            self.check_for_changes()

    def check_for_changes(self) -> None:
        """Ask (off the UI thread) whether the study moved on since the figures shown."""
        if self._stopped or self._asking or self._task is not None or self.model is None:
            return
        if not self.isVisible():
            return
        self._asking = True
        self.worker.run(
            jobs.job_version,
            on_done=self._guard(self._on_version),
            on_error=self._guard(self._on_version_failed),
        )

    def _on_version_failed(self, _exc: BaseException) -> None:
        self._asking = False  # a lost connection: asked again at the next tick

    def _on_version(self, version: str) -> None:
        self._asking = False
        if self._decline_next:
            self._declined, self._decline_next = version, False
        if self.model is None or self._task is not None:
            return
        due = time.monotonic() - self._ready_at >= _live_gap(self._full_seconds)
        if version == self.model.data_version:
            if self.model.exact_at is not None and self.live and due:
                self.refresh(force=False)  # the exact figures of what the estimate shows
            return
        follow = self.live and version != self._declined
        if follow and due:
            self.refresh(force=False)
            self._show_stale(computing=True)
        elif follow and self._exact is not None:
            self.estimate()
        else:
            self._show_stale(computing=False)

    # -- the live estimate between two full computations -------------------------------
    def estimate(self) -> bool:
        """A live estimate of the current answers (False when one runs or no full computation
        has been made to carry the intervals of)."""
        if self._live_task is not None or self._exact is None or self._stopped:
            return False
        assert self._exact_at is not None
        self._live_task = dash.TaskState()
        self.worker.run(
            jobs.job_live_inputs,
            self._live_frames,
            self._exact.report,
            self._exact_at,
            self._n_boot,
            self._seed,
            on_done=self._guard(self._on_live_inputs),
            on_error=self._guard(self._on_live_failed),
        )
        return True

    def _on_live_inputs(self, live: dash_live.LiveInputs) -> None:
        if self._live_task is None:
            return
        self._live_frames = live.frames
        self._live_result = None
        self._live_team = _PENDING
        self.compute.submit(
            jobs.job_live_compute,
            live,
            task=self._live_task,
            on_done=self._guard(self._on_live_ready),
            on_error=self._guard(self._on_live_failed),
        )
        # the team's progress on this worker meanwhile (SQLite leaves the other core to the
        # estimate), before the frames are kept (a second or more at a million judgements)
        self.worker.run(
            jobs.job_team,
            on_done=self._guard(self._on_live_team),
            on_error=self._guard(self._on_live_team_failed),
        )
        # the frames kept on disk for the next start, once the estimate is on its way
        self.worker.run(
            jobs.job_keep_frames,
            live.frames,
            on_done=self._guard(self._on_frames_kept),
            on_error=lambda _exc: None,  # not kept: the next start reads the study whole
        )

    def _on_frames_kept(self, kept: Any) -> None:
        if self._live_frames is not None and kept.frames is self._live_frames.frames:
            self._live_frames = kept  # the same frames, counted as kept

    def _on_live_team(self, team: Any) -> None:
        self._live_team = team
        self._show_live_when_ready()

    def _on_live_team_failed(self, _exc: BaseException) -> None:
        # the team as last shown (a lost connection: read again at the next refresh)
        shown = self.model.sections if self.model is not None else ()
        self._live_team = next((s for s in shown if s.key == "team"), None)
        self._show_live_when_ready()

    def _on_live_ready(self, result: tuple[dash.DashboardModel, dict[str, QImage]]) -> None:
        self._live_result = result
        self._show_live_when_ready()

    def _show_live_when_ready(self) -> None:
        """The live estimate shown once it and the team's progress read beside it are in."""
        if self._live_result is None or self._live_team is _PENDING:
            return
        (model, charts), team = self._live_result, self._live_team
        self._live_result = None
        model = dash.with_team(model, team)
        self._live_task = None
        shown = self.model
        if shown is not None and shown.exact_at is None and shown.earlier_at is None:
            if shown.data_version == model.data_version:
                return  # the full computation of the same data came first
        self.model = model
        self.busy_label.setText(
            translate("DashboardView", "Live estimate in {secs} s, without resampling.").format(
                secs=f"{model.seconds:.1f}"
            )
        )
        self._render(model, charts)
        self._show_live_note(model)

    def _on_live_failed(self, _exc: BaseException) -> None:
        self._live_task = None
        self._live_frames = None  # read whole next time
        if self.model is not None and not self.stale_note.isHidden():
            self._show_stale(computing=False)

    def _show_live_note(self, model: dash.DashboardModel) -> None:
        assert model.exact_at is not None
        due = max(0.0, _live_gap(self._full_seconds) - (time.monotonic() - self._ready_at))
        self.stale_note.setText(
            translate(
                "DashboardView",
                "Live estimate: every figure in the tables is of the current answers but the "
                'raters\' competence and the latent truth (EM fits, marked "as of {when}"); the '
                "intervals (marked ≈) are carried from the exact figures of {when}, and the charts "
                'are those exact figures\' (marked "as of {when}"). The exact figures are '
                "recomputed in about {secs} s ({key} now).",
            ).format(
                when=clock_text(model.exact_at),
                secs=f"{due:.0f}",
                key=self.keymap.hint("refresh"),
            )
        )
        self.stale_note.show()
