"""Start the rater app: a check of the machine first, then QApplication and the main window.

Before Qt loads its platform plugin (``preflight``), on Linux: with no display at
all the app exits with one line instead of running offscreen invisibly (which
looks like a hang); with a display, the system libraries Qt's xcb plugin needs
are looked up (``ldd`` on the plugin, else by loading them) and a missing one is
one line naming the Debian packages and the command that installs them. Qt's own
message at that point names a library that may well be installed. Offscreen
stays possible when ``QT_QPA_PLATFORM=offscreen`` is set explicitly (the tests
and the self-test do).

The platform's own style, palette (light or dark) and font are kept: the UI
sizes text relative to the system font and colours from the palette. The
language is the app setting's, else the system locale's (``i18n``).

``ANNOTATOR_QUIT_WHEN_READY=1`` makes the app print ``ready <seconds>`` once the
first view is interactive and quit (cold-start measurement, smoke tests).
``ANNOTATOR_SIMULATE_MISSING=libA.so.1,libB.so.0`` makes the library check treat
those as missing (tests of the message, on a machine that has them).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

from ..base.location import as_location
from . import keep_none_alive

_T0 = time.perf_counter()
NO_DISPLAY = "no display: set DISPLAY, or use --headless for commands that need none"

# What Qt 6's xcb platform plugin (and libQt6XcbQpa) load, by soname, and the Debian / Ubuntu
# package that ships each (docs/raters.md "Installing the app").
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


def has_screen() -> bool:
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def xcb_plugin() -> Path | None:
    """Qt's xcb platform plugin, in the installed PySide6 or the frozen bundle."""
    try:
        import PySide6  # the package only: no Qt library is loaded by this
    except ImportError:  # pragma: no cover
        return None
    base = Path(PySide6.__file__).resolve().parent
    for p in (
        base / "Qt" / "plugins" / "platforms" / "libqxcb.so",
        base / "plugins" / "platforms" / "libqxcb.so",
    ):
        if p.exists():
            return p
    return None


def missing_from_ldd(text: str) -> list[str]:
    """The sonames `ldd` reports as not found, in order, once each."""
    return list(dict.fromkeys(_NOT_FOUND.findall(text)))


def missing_libraries() -> list[str]:
    """The system libraries the xcb plugin needs that this machine lacks (sonames)."""
    simulated = [
        s for s in os.environ.get("ANNOTATOR_SIMULATE_MISSING", "").split(",") if s.strip()
    ]
    if simulated:
        return [s.strip() for s in simulated]
    plugin = xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is not None and ldd is not None:
        qpa = sorted((plugin.parents[2] / "lib").glob("libQt6XcbQpa.so*")) + sorted(
            plugin.parents[3].glob("libQt6XcbQpa.so*")
        )
        try:
            r = subprocess.run(
                [ldd, str(plugin), *map(str, qpa[:1])],
                capture_output=True,
                text=True,
                timeout=20,
                env={**os.environ, "LC_ALL": "C"},
            )
            return missing_from_ldd(r.stdout)
        except (OSError, subprocess.SubprocessError):
            pass
    out = []  # no ldd: try to load each library the plugin is known to need
    for soname in XCB_LIBRARIES:
        try:
            ctypes.CDLL(soname)
        except OSError:
            out.append(soname)
    return out


def missing_line(missing: list[str]) -> str:
    """One line: what is missing and the command that installs it."""
    packages = list(dict.fromkeys(XCB_LIBRARIES.get(s, s) for s in missing))
    unknown = [s for s in missing if s not in XCB_LIBRARIES]
    what = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    line = (
        f"the window cannot open: Qt's display plugin needs {what}, missing here; "
        f"install with: sudo apt-get install {' '.join(p for p in packages if p not in unknown)}"
    )
    if unknown:
        line += f" (and the package that provides {', '.join(unknown)})"
    return line


def preflight() -> str | None:
    """One line saying why the window cannot open here, or None. Call before any Qt import
    that loads a platform plugin."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "")
    if chosen and not chosen.startswith("xcb"):
        return None  # offscreen, wayland, vnc...: asked for explicitly
    if not (sys.platform.startswith("linux") or "bsd" in sys.platform):
        return None
    if not has_screen():
        return NO_DISPLAY
    if os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("DISPLAY") and not chosen:
        return None  # Qt picks its wayland plugin
    missing = missing_libraries()
    return missing_line(missing) if missing else None


def ensure_platform() -> None:
    """Kept for callers that build a QApplication outside ``run_app``: offscreen only when asked for."""


def make_app(argv: list[str] | None = None):  # noqa: ANN201 - QApplication
    keep_none_alive()
    from PySide6.QtWidgets import QApplication

    running = QApplication.instance()
    app = (
        cast(QApplication, running)
        if running is not None
        else QApplication(list(argv) if argv is not None else sys.argv[:1])
    )
    app.setApplicationName("annotator")
    app.setOrganizationName("annotator")
    app.setApplicationDisplayName("annotator")
    from .style import readable_placeholders

    QApplication.setPalette(readable_placeholders(QApplication.palette()))
    from PySide6.QtGui import QIcon

    from .icon import icon_path

    icon = icon_path()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    return app


def install_language(app, settings) -> str:  # noqa: ANN001 - QApplication, AppSettings
    from . import i18n

    return i18n.install(app, i18n.chosen_language(settings.language()))


def run_app(
    study: Path | str | None = None,
    rater: str | None = None,
    *,
    mode: str = "label",
    default_rater: str | None = None,
    argv: list[str] | None = None,
) -> int:
    """Open the app (on `study` as `rater` in `mode` when given); returns the exit status.

    Without `rater`, the study reopens as the last rater who worked in it here, else as
    `default_rater` (the demo's), else as its only rater.
    """
    problem = preflight()
    if problem is not None:
        if sys.stderr is not None:
            print(f"annotator: {problem}", file=sys.stderr)
        return 2
    app = make_app(argv)
    from .main_window import MainWindow
    from .settings import AppSettings
    from .worker import stop_all

    settings = AppSettings()
    install_language(app, settings)
    location = None if study is None else as_location(study)
    window = MainWindow(
        settings, study=location, rater=rater, mode=mode, default_rater=default_rater
    )
    problems = window.startup_problems()
    if problems and sys.stderr is not None:
        print(f"annotator: {problems}", file=sys.stderr)  # one line, at start-up
    app.aboutToQuit.connect(window.shutdown)
    app.aboutToQuit.connect(stop_all)
    window.show()
    if os.environ.get("ANNOTATOR_QUIT_WHEN_READY"):
        _quit_when_ready(app, window)
    try:
        return int(app.exec())
    finally:
        window.shutdown()
        stop_all()


def _quit_when_ready(app, window) -> None:  # noqa: ANN001
    from PySide6.QtCore import QTimer

    def check() -> None:
        view = window.current_view
        ready = not window.busy and (
            view is None or getattr(view, "state", "ready") in ("ready", "done")
        )
        if ready:
            print(f"ready {time.perf_counter() - _T0:.3f}", flush=True)
            app.quit()
        else:
            QTimer.singleShot(2, check)

    QTimer.singleShot(0, check)
