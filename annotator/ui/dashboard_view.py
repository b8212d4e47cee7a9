"""The study lead's dashboard: the report's figures inside the app.

The figures and their rows come from ``services.dashboard`` (the same code as
``annotator report``); this module only lays out its sections (tables, notes,
charts) and never imports ``reports``.

Work: the database worker reads the inputs (quick: the data version, and the
frames unless the cached report is still valid); the compute worker computes
the report with progress (cancellable: Esc, or a newer refresh, or closing the
view), draws the charts and decodes them with Pillow; the UI thread paints.
While it computes, the counts are shown at once (a partial result). Reopening
on unchanged data shows the cached report without computing; opening it on
changed data shows the report the study kept the last time, marked with when it
was computed, until the current figures replace it.

Live: while the view is shown it asks the database worker every few seconds for
the study's data version (one cheap query). When the data has moved on, the
figures are marked as earlier and, with "Follow changes" on (the default; key L,
app setting ``dashboard_live``), recomputed, never more often than every
``max(LIVE_MIN_GAP_S, the last computation's time)`` seconds, so a large study
spends at most half a core on it. Between two full computations each change
brings a live estimate at once (``services.dashboard_live``: the new answers read,
every figure computed again without resampling, the intervals carried from the
last full computation and marked ≈, a note saying when the exact figures follow).
The reader keeps their place on the page.

This view is for the study lead, NOT for blinded raters: it names generators
and raters. The main window never opens it for a rater.

Public API
----------
``DashboardView(snapshot, rater, worker, settings=None, parent=None, *, compute=None,
n_boot=None, seed=0, autostart=True)``
    ``.refresh(force=True) -> bool`` (False while one runs); ``.cancel()``;
    ``.set_live(on)``; ``.live``; ``.check_for_changes()`` (what the timer calls);
    ``.report() -> dict | None`` (None while only earlier figures are shown); ``.model``;
    ``.is_busy()``; ``.shutdown()``;
    ``.section_top(key) -> int``. Keys: keymap context ``dashboard`` (F5 recompute,
    Esc cancel, L follow changes, PgUp / PgDn / Space, Up / Down, Home / End, N / Shift+N or
    Ctrl+Down / Ctrl+Up for the next / previous section). ``n_boot`` defaults to the
    app setting ``dashboard_n_boot`` (else 1000).
    Signals: ``reportReady(dict)``, ``failed(str)``, ``progress(str)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QImage, QPalette, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..reports.formatting import clock_text
from ..services import dashboard as dash
from ..services import dashboard_live as dash_live
from .i18n import translate
from .keyed import KeyedWidget
from .keymap import Keymap
from .session_view import ShutsDownOnce, alive, one_line
from .shown import shown_text
from .style import FLAG, flag_background, relative_font, set_accessible, soft_colour, warning_colour
from .worker import ComputeWorker, decode_image

__all__ = ["DashboardView"]

# The report's own words (section titles, table headers, notes) stay English, as the HTML
# report does; the page's frame (title bar, keys, buttons, progress) is translated.
DEFAULT_N_BOOT = 1000
MAX_COLUMN = 340  # wider text wraps inside its cell (never clipped)
COLUMN_SLACK = 12
MIN_COLUMN = 110
CHART_RATIO = 1.5  # charts are drawn at 1.5x their CSS size for sharp text
LIVE_POLL_MS = 5_000  # how often a shown dashboard asks for the study's data version
# the least time between two full recomputations it starts on its own; between them, each
# change of the study brings a live estimate (services/dashboard_live.py) in seconds
LIVE_MIN_GAP_S = 60.0


def _job_inputs(study: Any, n_boot: int, seed: int, use_cache: bool) -> dash.DashboardInputs:
    return dash.read_inputs(study, n_boot=n_boot, seed=seed, use_cache=use_cache)


def _job_earlier(study: Any, n_boot: int, seed: int) -> dash.DashboardInputs | None:
    return dash.read_earlier(study, n_boot=n_boot, seed=seed)


def _job_version(study: Any) -> str:
    return dash.data_version(study.db)


def _job_live_inputs(
    study: Any, live: Any, exact: Any, exact_at: datetime, n_boot: int, seed: int
) -> dash_live.LiveInputs:
    return dash_live.read_live_inputs(study, live, exact, exact_at, n_boot=n_boot, seed=seed)


def _job_keep_frames(study: Any, frames: Any) -> Any:
    return dash_live.keep_frames(study, frames)


def _job_live_compute(
    task: dash.TaskState, live: dash_live.LiveInputs
) -> tuple[dash.DashboardModel, dict[str, QImage]]:
    model = dash_live.compute_live(live, task)
    return model, {c.name: decode_image(c.png) for c in model.charts()}


def _live_gap(last_seconds: float) -> float:
    """The least time between two recomputations the view starts on its own: a study whose
    report takes a minute is recomputed at most every minute (half a core at most)."""
    return max(LIVE_MIN_GAP_S, last_seconds)


def _job_compute(
    task: dash.TaskState, inputs: dash.DashboardInputs
) -> tuple[dash.DashboardModel, dict[str, QImage]]:
    """Compute worker: the model, and its charts decoded with Pillow (no Qt image plugin off the UI thread)."""
    model = dash.compute(inputs, task)
    charts = {c.name: decode_image(c.png) for c in model.charts()}
    return model, charts


def _palette() -> QPalette:
    return QApplication.palette()


def _note(text: str, *, content: bool = True) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setStyleSheet(f"color: {soft_colour(_palette())};")
    lab.setProperty("content", content)  # the report's text (English, as the HTML report)
    return lab


def _fit_columns(header: QHeaderView, n: int, width: int) -> None:
    """Narrow the widest columns until the table fits `width` (their text wraps instead)."""
    sizes = [header.sectionSize(c) for c in range(n)]
    while sum(sizes) > width:
        widest = max(range(n), key=sizes.__getitem__)
        longest_word = max(
            (
                header.fontMetrics().horizontalAdvance(word)
                for word in (
                    header.model().headerData(widest, Qt.Orientation.Horizontal) or ""
                ).split()
            ),
            default=0,
        )
        target = max(
            MIN_COLUMN, longest_word + 16, sizes[widest] - max(8, (sum(sizes) - width) // 2)
        )
        if target >= sizes[widest]:
            break  # every column is as narrow as it may be: the table scrolls sideways
        sizes[widest] = target
    for c, size in enumerate(sizes):
        header.resizeSection(c, size)


def _wrap_header(w: QTableWidget, n: int) -> None:
    """Break a header label onto more lines where its column is narrower than the label."""
    fm = w.horizontalHeader().fontMetrics()
    for c in range(n):
        item = w.horizontalHeaderItem(c)
        if item is None:
            continue
        room = w.horizontalHeader().sectionSize(c) - 14
        lines: list[str] = []
        for word in item.text().split():
            if lines and fm.horizontalAdvance(f"{lines[-1]} {word}") <= room:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
        item.setText("\n".join(lines))


def _table(t: dash.Table, width: int = 0) -> QTableWidget:
    """A read-only table sized to show every row whole (the page scrolls, not the table), as
    wide as the page when its text can wrap to fit."""
    w = QTableWidget(len(t.rows), len(t.headers))
    w.setObjectName(t.name)
    w.setProperty("content", True)
    set_accessible(w, t.name, f"{len(t.rows)} rows: " + ", ".join(t.headers))
    w.setHorizontalHeaderLabels(list(t.headers))
    w.verticalHeader().setVisible(False)
    w.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    w.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    w.setAlternatingRowColors(True)
    w.setWordWrap(True)
    w.setTextElideMode(Qt.TextElideMode.ElideNone)
    w.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    w.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    for r, row in enumerate(t.rows):
        for c, value in enumerate(row):
            text = shown_text(value)  # a missing figure (None, NaN, NA) is an empty cell
            # A flagged row says so in words and a symbol, not only by its tint.
            shown = f"{FLAG} {text}" if r in t.flagged and c == 0 else text
            item = QTableWidgetItem(shown)
            item.setToolTip(shown)
            if r in t.flagged:
                item.setBackground(QBrush(flag_background(_palette())))
            w.setItem(r, c, item)
    header = w.horizontalHeader()
    w.resizeColumnsToContents()
    for c in range(len(t.headers)):
        # A little slack: text measured to the pixel can still wrap at a hyphen once drawn.
        header.resizeSection(c, min(header.sectionSize(c) + COLUMN_SLACK, MAX_COLUMN))
    if width > 0:
        _fit_columns(header, len(t.headers), width - 2 * w.frameWidth() - 2)
        _wrap_header(w, len(t.headers))
    header.setStretchLastSection(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    w.resizeRowsToContents()  # after the widths: long text wraps onto more lines
    head = header.sizeHint().height()  # (its height() lags a wrapped label until the next layout)
    height = head + sum(w.rowHeight(r) for r in range(len(t.rows))) + 2 * w.frameWidth() + 2
    if header.length() > (width or w.viewport().width()) > 0:
        height += w.horizontalScrollBar().sizeHint().height()
    w.setFixedHeight(max(height, head + 8))
    w.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return w


def _chart(chart: dash.Chart, image: QImage | None) -> QWidget:
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    if chart.caption:
        cap = QLabel(f"{FLAG} {chart.caption}" if chart.flagged else chart.caption)
        cap.setStyleSheet(
            f"color: {warning_colour(_palette()) if chart.flagged else soft_colour(_palette())};"
        )
        cap.setFont(relative_font(cap, 1.0, bold=True))
        cap.setProperty("content", True)
        lay.addWidget(cap)
    lab = QLabel()
    lab.setObjectName(chart.name)
    lab.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    lab.setProperty("content", True)
    set_accessible(lab, chart.alt, chart.caption or chart.alt)
    if image is None or image.isNull():
        lab.setText(translate("DashboardView", "(no chart: nothing to draw)"))
    else:
        pix = QPixmap.fromImage(image)
        pix.setDevicePixelRatio(CHART_RATIO)
        lab.setPixmap(pix)
        lab.setToolTip(chart.alt)
        lab.setAccessibleName(chart.alt)
    lay.addWidget(lab)
    return box


def _tile(t: dash.Tile) -> QFrame:
    f = QFrame()
    f.setObjectName("tile")
    f.setStyleSheet("QFrame#tile { border: 1px solid palette(mid); border-radius: 8px; }")
    lay = QVBoxLayout(f)
    lay.setContentsMargins(12, 8, 12, 8)
    v = QLabel(
        f"{FLAG} {t.value}" if t.warn else t.value
    )  # a warning is a symbol too, not only amber
    v.setFont(relative_font(v, 1.5, bold=True))
    v.setProperty("content", True)
    if t.warn:
        v.setStyleSheet(f"color: {warning_colour(_palette())};")
    lay.addWidget(v)
    lay.addWidget(_note(t.label))
    set_accessible(f, f"{t.value} {t.label}", t.label)
    return f


class DashboardView(KeyedWidget, ShutsDownOnce, QWidget):
    key_contexts = ("dashboard",)

    reportReady = Signal(dict)  # noqa: N815 - Qt signal naming
    failed = Signal(str)
    progress = Signal(str)

    def __init__(
        self,
        snapshot: Any,
        rater: str | None,
        worker: Any,
        settings: Any = None,
        parent: QWidget | None = None,
        *,
        compute: ComputeWorker | None = None,
        n_boot: int | None = None,
        seed: int = 0,
        autostart: bool = True,
    ) -> None:
        super().__init__(parent)
        self.snapshot = snapshot
        self.worker = worker
        self.settings = settings
        self.keymap = Keymap.from_settings(settings)
        self.setObjectName("DashboardView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._own_compute = compute is None
        self.compute = compute or ComputeWorker(self)
        self.compute.progress.connect(self._on_progress)
        self._n_boot = n_boot if n_boot is not None else self._setting_n_boot()
        self._seed = seed
        self._task: dash.TaskState | None = None
        self._job_id = -1
        self._stopped = False
        self.model: dash.DashboardModel | None = None
        self._sections: list[QWidget] = []
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
        self._build()
        self._poll = QTimer(self)
        self._poll.setInterval(LIVE_POLL_MS)
        self._poll.timeout.connect(self.check_for_changes)
        self._poll.start()
        if autostart:
            self.refresh(force=False)

    def _setting_n_boot(self) -> int:
        try:
            return (
                int(self.settings.value("dashboard_n_boot", DEFAULT_N_BOOT))
                if self.settings
                else DEFAULT_N_BOOT
            )
        except (TypeError, ValueError, AttributeError):
            return DEFAULT_N_BOOT

    def _setting_live(self) -> bool:
        try:
            return bool(self.settings.value("dashboard_live", True)) if self.settings else True
        except (TypeError, ValueError, AttributeError):
            return True

    # -- frame ---------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        bar = QHBoxLayout()
        self.title = QLabel(
            translate("DashboardView", "Study dashboard: {name}").format(name=self.snapshot.name)
        )
        set_accessible(
            self.title, self.title.text(), translate("DashboardView", "The study lead's dashboard")
        )
        self.title.setFont(relative_font(self.title, 1.5, bold=True))
        bar.addWidget(self.title)
        self.busy_label = QLabel()
        self.busy_label.setStyleSheet(f"color: {soft_colour(self.palette())};")
        self.busy_label.setWordWrap(True)
        set_accessible(
            self.busy_label,
            translate("DashboardView", "Computation"),
            translate("DashboardView", "What the dashboard is computing, or how long it took"),
        )
        self.busy_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.busy_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 100)
        self.busy_bar.setMaximumWidth(160)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        set_accessible(
            self.busy_bar,
            translate("DashboardView", "Progress"),
            translate("DashboardView", "How far the computation has got"),
        )
        bar.addWidget(self.busy_label)
        bar.addWidget(self.busy_bar)
        self.refresh_button = QPushButton(
            translate("DashboardView", "Recompute  [{key}]").format(key=self.keymap.hint("refresh"))
        )
        set_accessible(
            self.refresh_button,
            translate("DashboardView", "Recompute"),
            translate(
                "DashboardView", "Computes the report again ({key}); {cancel} cancels"
            ).format(key=self.keymap.hint("refresh"), cancel=self.keymap.hint("cancel")),
        )
        self.refresh_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.refresh_button.clicked.connect(lambda: self.refresh())
        bar.addWidget(self.refresh_button)
        self.live_box = QCheckBox(
            translate("DashboardView", "Follow changes  [{key}]").format(
                key=self.keymap.hint("live")
            )
        )
        set_accessible(
            self.live_box,
            translate("DashboardView", "Follow changes"),
            translate(
                "DashboardView",
                "Recomputes the figures when the study changes, at most every {secs} s",
            ).format(secs=int(LIVE_MIN_GAP_S)),
        )
        self.live_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.live_box.setChecked(self._setting_live())
        self.live_box.toggled.connect(self.set_live)
        bar.addWidget(self.live_box)
        outer.addLayout(bar)
        # the figures on the page are of an earlier state of the study: said where it is read
        self.stale_note = QLabel()
        self.stale_note.setWordWrap(True)
        self.stale_note.setObjectName("staleNote")
        self.stale_note.setStyleSheet(f"color: {warning_colour(self.palette())};")
        set_accessible(
            self.stale_note,
            translate("DashboardView", "Earlier figures"),
            translate("DashboardView", "Whether the figures shown are older than the study"),
        )
        self.stale_note.hide()
        outer.addWidget(self.stale_note)
        self.meta = _note(
            translate(
                "DashboardView",
                "For the study lead: this page names generators and raters. Raters never see it.",
            ),
            content=False,
        )
        outer.addWidget(self.meta)
        self.tiles = QHBoxLayout()
        self.tiles.setSpacing(10)
        outer.addLayout(self.tiles)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setFocusPolicy(
            Qt.FocusPolicy.NoFocus
        )  # the view takes the keys (see the note below)
        set_accessible(
            self.scroll_area,
            translate("DashboardView", "Report"),
            translate("DashboardView", "The report's sections; page with the keys below"),
        )
        self.content = QWidget()
        self.scroll_area.setWidget(self.content)
        outer.addWidget(self.scroll_area, 1)
        k = self.keymap.hint
        self.keys_note = _note(
            translate(
                "DashboardView",
                "Keys: {down} / {up} page, {top} / {bottom}, {next} / "
                "{prev} next / previous section, {refresh} recompute, "
                "{cancel} cancel, {live} follow changes.",
            ).format(
                down=k("page_down"),
                up=k("page_up"),
                top=k("top"),
                bottom=k("bottom"),
                next=k("next_section"),
                prev=k("prev_section"),
                refresh=k("refresh"),
                cancel=k("cancel"),
                live=k("live"),
            ),
            content=False,
        )
        outer.addWidget(self.keys_note)

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
                _job_earlier,
                self._n_boot,
                self._seed,
                on_done=self._guard(self._on_earlier),
                on_error=lambda _exc: None,  # no earlier figures: the current ones still come
            )
        self.worker.run(
            _job_inputs,
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
            _job_compute,
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

    # -- following the study's changes -------------------------------------------------
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
            _job_version,
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
            _job_live_inputs,
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
        self.compute.submit(
            _job_live_compute,
            live,
            task=self._live_task,
            on_done=self._guard(self._on_live_ready),
            on_error=self._guard(self._on_live_failed),
        )
        # the frames kept on disk for the next start, once the estimate is on its way
        self.worker.run(
            _job_keep_frames,
            live.frames,
            on_done=self._guard(self._on_frames_kept),
            on_error=lambda _exc: None,  # not kept: the next start reads the study whole
        )

    def _on_frames_kept(self, kept: Any) -> None:
        if self._live_frames is not None and kept.frames is self._live_frames.frames:
            self._live_frames = kept  # the same frames, counted as kept

    def _on_live_ready(self, result: tuple[dash.DashboardModel, dict[str, QImage]]) -> None:
        model, charts = result
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
                "Live estimate: every figure is of the current answers but the raters' "
                'competence and the latent truth (EM fits, marked "as of {when}"); the '
                "intervals (marked ≈ in the tables, and those of the charts) are carried from "
                "the exact figures of {when}. The exact figures are recomputed in about {secs} s "
                "({key} now).",
            ).format(
                when=clock_text(model.exact_at),
                secs=f"{due:.0f}",
                key=self.keymap.hint("refresh"),
            )
        )
        self.stale_note.show()

    def _on_inputs(self, inputs: dash.DashboardInputs) -> None:
        if self._task is None:
            return
        self._computing = inputs.data_version
        if self.model is None and inputs.tiles:
            self._show_tiles(inputs.tiles)  # the counts at once, while the figures compute
        self._job_id = self.compute.submit(
            _job_compute,
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

    # -- layout of one report ------------------------------------------------------
    def _show_tiles(self, tiles: tuple[dash.Tile, ...]) -> None:
        while self.tiles.count():
            item = self.tiles.takeAt(0)
            gone = item.widget() if item is not None else None
            if gone is not None:
                gone.deleteLater()
        for t in tiles:
            self.tiles.addWidget(_tile(t))
        self.tiles.addStretch(1)

    def _render(self, model: dash.DashboardModel, charts: dict[str, QImage]) -> None:
        self.title.setText(
            translate("DashboardView", "Study dashboard: {name}").format(name=self.snapshot.name)
        )
        self.meta.setText(model.meta)
        self.meta.setProperty("content", True)
        self._show_tiles(model.tiles)
        content = QWidget()
        lay = QVBoxLayout(content)
        lay.setContentsMargins(4, 0, 12, 24)
        lay.setSpacing(6)
        self._sections = []
        for s in model.sections:
            head = QWidget()
            head.setObjectName(f"section:{s.key}")
            hl = QVBoxLayout(head)
            hl.setContentsMargins(0, 14, 0, 2)
            h = QLabel(s.title)
            h.setFont(relative_font(h, 1.3, bold=True))
            h.setProperty("content", True)
            hl.addWidget(h)
            if s.subtitle:
                hl.addWidget(_note(s.subtitle))
            lay.addWidget(head)
            self._sections.append(head)
            self._blocks(lay, s.blocks, charts)
        lay.addStretch(1)
        bar = self.scroll_area.verticalScrollBar()
        place = bar.value()  # a recomputation must not throw the reader back to the top
        old = self.scroll_area.takeWidget()
        self.scroll_area.setWidget(content)
        self.content = content
        if old is not None:
            old.deleteLater()
        if place:
            content.adjustSize()
            bar.setMaximum(
                max(bar.maximum(), content.height() - self.scroll_area.viewport().height())
            )
            bar.setValue(place)

    def _blocks(
        self, lay: QVBoxLayout, blocks: tuple[dash.Block, ...], charts: dict[str, QImage]
    ) -> None:
        grid: QGridLayout | None = None
        # The page's own scroll bar is about to appear: leave its room now.
        room = (
            self.scroll_area.width() - self.scroll_area.verticalScrollBar().sizeHint().width() - 40
        )
        n = 0
        for b in blocks:
            if isinstance(b, dash.Table):
                lay.addWidget(_table(b, room + 24))
            elif isinstance(b, dash.Note):
                lay.addWidget(_note(b.text))
            elif (
                b.caption
            ):  # per-rater charts: two a row when they fit, so the page never scrolls sideways
                image = charts.get(b.name)
                if grid is None:
                    grid = QGridLayout()
                    grid.setHorizontalSpacing(16)
                    lay.addLayout(grid)
                widths = [im.width() / CHART_RATIO for im in charts.values()]
                cols = 2 if widths and room >= 2 * max(widths) + 16 else 1
                grid.addWidget(_chart(b, image), n // cols, n % cols)
                n += 1
            else:
                lay.addWidget(_chart(b, charts.get(b.name)))

    # -- keys ------------------------------------------------------------------------
    def section_top(self, key: str) -> int:
        w = self.content.findChild(QWidget, f"section:{key}")
        return w.y() if w is not None else -1

    def _jump(self, step: int) -> None:
        bar = self.scroll_area.verticalScrollBar()
        tops = sorted(w.y() for w in self._sections)
        now = bar.value()
        if step > 0:
            target = next((y for y in tops if y > now + 1), bar.maximum())
        else:
            target = next((y for y in reversed(tops) if y < now - 1), 0)
        bar.setValue(target)

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        bar = self.scroll_area.verticalScrollBar()
        return {
            "refresh": self.refresh,
            "cancel": self.cancel,
            "live": lambda: self.set_live(not self.live),
            "page_down": lambda: bar.setValue(bar.value() + bar.pageStep()),
            "page_up": lambda: bar.setValue(bar.value() - bar.pageStep()),
            "line_down": lambda: bar.setValue(bar.value() + bar.singleStep() * 3),
            "line_up": lambda: bar.setValue(bar.value() - bar.singleStep() * 3),
            "top": lambda: bar.setValue(0),
            "bottom": lambda: bar.setValue(bar.maximum()),
            "next_section": lambda: self._jump(1),
            "prev_section": lambda: self._jump(-1),
        }

    # -- queries and lifecycle -----------------------------------------------------
    def report(self) -> dict | None:
        """The current figures; None while none, only earlier ones or a live estimate are
        shown."""
        if self.model is None or self.model.earlier_at is not None or self.model.exact_at:
            return None
        return dict(self.model.report)

    def shutdown(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._poll.stop()
        self.cancel()
        if self._own_compute:
            self.compute.stop(timeout=0.5)  # a running step ends on its own; its result is dropped

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.setFocus()
