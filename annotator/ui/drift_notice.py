"""The label view's drift notice: the banner that tells a rater their answers on live anchors
have drifted (and offers recalibration), and the drift check that raises it.

The check runs as a database job of its own after an anchor's answer is stored, once the
statistics it needs are imported (a flag may come an item or two later, never in the way of a
save); the notice is calm, dismissed by Esc or its button, and its texts keep the label view's
translation context.
Tested in tests/gui/test_label_session.py and tests/gui/test_blinding.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from ..domain.rubric import Rubric
from .i18n import translate
from .keymap import Keymap
from .style import set_accessible

log = logging.getLogger(__name__)

DRIFT_RETRY_MS = 200  # how often a due drift check looks whether that import is done


def job_drift(_study: Any, session: Any) -> None:  # database worker
    """The drift check of the anchor just answered: queued after the next item is shown, so the
    save itself never waits for it (a flag is shown after the next live answer, as before)."""
    session.check_drift()


def drift_failed(exc: BaseException) -> None:
    # only a check: the answers are stored; the next anchor's check tries again
    log.warning("drift check failed: %s", exc)


def warm_in_background() -> None:
    """Import the drift check's statistics (after the first item has painted: never before it)."""
    from ..services.labeling import warm_drift_check

    warm_drift_check()


class DriftBanner(QFrame):
    """A calm notice with a button, above the item: "your answers have drifted"."""

    recalibrate = Signal()

    def __init__(self, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        self.text = QLabel()
        self.text.setWordWrap(True)
        lay.addWidget(self.text, 1)
        self.action = QPushButton(
            translate("LabelView", "Recalibrate now ({key})").format(
                key=keymap.hint("mode_calibration")
            )
        )
        self.dismiss = QPushButton(
            translate("LabelView", "Continue labelling ({key})").format(key=keymap.hint("dismiss"))
        )
        for b in (self.action, self.dismiss):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            lay.addWidget(b)
        set_accessible(
            self.action,
            translate("LabelView", "Recalibrate now"),
            translate("LabelView", "Opens a short session that brings your answers back in line"),
        )
        set_accessible(
            self.dismiss,
            translate("LabelView", "Continue labelling"),
            translate("LabelView", "Closes the drift notice"),
        )
        set_accessible(
            self.text,
            translate("LabelView", "Drift notice"),
            translate("LabelView", "A notice about your recent answers"),
        )
        self.dismiss.clicked.connect(self.hide)
        self.action.clicked.connect(self._recalibrate)
        self.hide()

    def show_alert(self, alert: Mapping[str, Any], rubric: Rubric) -> None:
        """The session's drift alert ({"metric", "direction": up|down|None}) in words."""
        metric = alert.get("metric")
        label = rubric.metric(metric).label if metric and rubric.has(metric) else metric
        text = {
            "up": translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted above the reference "
                "answers. A short recalibration session brings them back in line.",
            ),
            "down": translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted below the reference "
                "answers. A short recalibration session brings them back in line.",
            ),
        }.get(
            alert.get("direction") or "",
            translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted away from the reference answers. "
                "A short recalibration session brings them back in line.",
            ),
        )
        self.text.setText(text.format(metric=label))
        self.show()

    def dismiss_if_shown(self) -> bool:
        """Esc on a shown notice hides it (and takes the key); otherwise the key goes on."""
        if not self.isVisible():
            return False
        self.hide()
        return True

    def _recalibrate(self) -> None:
        self.hide()
        self.recalibrate.emit()


class DriftChecks(QObject):
    """When an anchor's drift check runs: as soon as the statistics stack is imported (looked at
    every DRIFT_RETRY_MS, the import warmed meanwhile), as a job on the view's worker."""

    def __init__(self, run_job: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._run_job = run_job
        self._timer = QTimer(self)
        self._timer.setInterval(DRIFT_RETRY_MS)
        self._timer.timeout.connect(self._tick)

    @property
    def waiting(self) -> bool:
        """A check waits for the statistics import (tests wait on this as a rater's seconds per
        item would)."""
        return self._timer.isActive()

    def when_warm(self) -> None:
        from ..services.labeling import drift_check_ready

        if not drift_check_ready():
            warm_in_background()
            self._timer.start()
            return
        self._timer.stop()
        self._run_job()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        from ..services.labeling import drift_check_ready

        if drift_check_ready():
            self.when_warm()


__all__ = ["DriftBanner", "DriftChecks", "drift_failed", "job_drift", "warm_in_background"]
