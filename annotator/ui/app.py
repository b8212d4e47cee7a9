"""Start the rater app: QApplication setup and the main window.

The platform's own style, palette (light or dark) and font are kept: the UI
sizes text relative to the system font and colours from the palette. Without a
screen (no DISPLAY / WAYLAND_DISPLAY on Linux) Qt runs offscreen.

``ANNOTATOR_QUIT_WHEN_READY=1`` makes the app print ``ready <seconds>`` once the
first view is interactive and quit (cold-start measurement, smoke tests).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from . import keep_none_alive

_T0 = time.perf_counter()


def has_screen() -> bool:
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def ensure_platform() -> None:
    """Use the offscreen platform when there is no screen and none was chosen."""
    if not os.environ.get("QT_QPA_PLATFORM") and not has_screen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def make_app(argv: list[str] | None = None):  # noqa: ANN201 - QApplication
    ensure_platform()
    keep_none_alive()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    app.setApplicationName("annotator")
    app.setOrganizationName("annotator")
    app.setApplicationDisplayName("annotator")
    return app


def run_app(study: Path | str | None = None, rater: str | None = None, *, mode: str = "label",
            default_rater: str | None = None, argv: list[str] | None = None) -> int:
    """Open the app (on `study` as `rater` in `mode` when given); returns the exit status.

    Without `rater`, the study reopens as the last rater who worked in it here, else as
    `default_rater` (the demo's), else as its only rater.
    """
    app = make_app(argv)
    from .main_window import MainWindow
    from .settings import AppSettings
    from .worker import stop_all

    window = MainWindow(AppSettings(), study=Path(study) if study else None, rater=rater, mode=mode,
                        default_rater=default_rater)
    problems = window.keymap.problem_line()
    if problems and sys.stderr is not None:
        print(f"annotator: {problems}", file=sys.stderr)  # one line, at start-up
    app.aboutToQuit.connect(window.shutdown)
    app.aboutToQuit.connect(stop_all)
    window.show()
    if os.environ.get("ANNOTATOR_QUIT_WHEN_READY"):
        _quit_when_ready(app, window)
    elif os.environ.get("QT_QPA_PLATFORM") == "offscreen" and sys.stderr is not None:
        print("annotator: no screen found, running offscreen (Ctrl+C to stop)", file=sys.stderr)
    try:
        return int(app.exec())
    finally:
        window.shutdown()
        stop_all()


def _quit_when_ready(app, window) -> None:  # noqa: ANN001
    from PySide6.QtCore import QTimer

    def check() -> None:
        view = window.current_view
        ready = not window.busy and (view is None or getattr(view, "state", "ready") in ("ready", "done"))
        if ready:
            print(f"ready {time.perf_counter() - _T0:.3f}", flush=True)
            app.quit()
        else:
            QTimer.singleShot(2, check)

    QTimer.singleShot(0, check)
