"""The study lead's dashboard: the report's figures inside the app.

The figures and their rows come from ``services.dashboard`` (the same code as
``annotator report``); the page is in three pieces, and none imports ``reports``:

- this module, the view: its frame (title, progress, "Recompute", "Follow changes", the note
  on earlier figures, the tiles, the page), its keys and the reader's place on the page, which
  a recomputation keeps;
- ``ui/dashboard_follow.py`` (``DashboardFollow``, the view's base): when and how the figures are
  computed (on the workers, cancellable, the earlier figures first after a restart) and the
  following of the study while the view is shown (a live estimate between two full
  computations, a full one at most every ``max(60 s, the last one's time)``);
- ``ui/section_widgets.py``: the report's sections (tables, notes, charts, tiles) as widgets.

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
Tested in tests/gui/test_dashboard_view.py and tests/gui/test_keymap.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..services import dashboard as dash
from .dashboard_follow import LIVE_MIN_GAP_S, DashboardFollow
from .i18n import translate
from .keyed import KeyedWidget
from .keymap import Keymap
from .section_widgets import note_label, opened_folds, section_page, show_tiles
from .session_view import ShutsDownOnce
from .style import relative_font, set_accessible, soft_colour, warning_colour
from .worker import ComputeWorker

__all__ = ["DashboardView"]

# The report's own words (section titles, table headers, notes) stay English, as the HTML
# report does; the page's frame (title bar, keys, buttons, progress) is translated.
DEFAULT_N_BOOT = 1000


class DashboardView(KeyedWidget, ShutsDownOnce, DashboardFollow):
    key_contexts = ("dashboard",)

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
        self._sections: list[QWidget] = []
        self._build()
        self._init_follow(n_boot if n_boot is not None else self._setting_n_boot(), seed)
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
        self.meta = note_label(
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
        self.keys_note = note_label(
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

    # -- layout of one report ------------------------------------------------------
    def _show_tiles(self, tiles: tuple[dash.Tile, ...]) -> None:
        show_tiles(self.tiles, tiles)

    def _render(self, model: dash.DashboardModel, charts: dict[str, QImage]) -> None:
        self.title.setText(
            translate("DashboardView", "Study dashboard: {name}").format(name=self.snapshot.name)
        )
        self.meta.setText(model.meta)
        self.meta.setProperty("content", True)
        self._show_tiles(model.tiles)
        # The page's own scroll bar is about to appear: leave its room now.
        room = (
            self.scroll_area.width() - self.scroll_area.verticalScrollBar().sizeHint().width() - 40
        )
        opened = opened_folds(self.content)  # the reader's open tables stay open
        content, self._sections = section_page(model.sections, charts, room, opened)
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
        self._stop_following()
        if self._own_compute:
            self.compute.stop(timeout=0.5)  # a running step ends on its own; its result is dropped

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.setFocus()
