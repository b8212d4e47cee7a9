"""Child process for test_label_form: the label view in a real X11 window (Xvfb).

Moves the metric focus with the keys and, after each move, reads the screen's own
pixels (`QScreen.grabWindow(0)`: what the X server shows, not a fresh render) to
see which metric has the highlight frame. Prints JSON lines; exits 3 when the
xcb platform cannot start (the test skips with the reason).

    python tests/gui/xcb_focus_child.py STUDY RATER
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import annotator.ui  # noqa: E402,F401


def settle(app, ms: int = 250) -> None:  # noqa: ANN001
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def framed_rows(app, view) -> list[int]:  # noqa: ANN001
    """Rows whose left border shows the highlight colour on screen."""
    from PySide6.QtCore import QPoint

    shot = app.primaryScreen().grabWindow(0).toImage()
    hl = view.palette().highlight().color()
    out = []
    for i, row in enumerate(view.form.rows):
        if not row.isVisible():
            continue
        p = row.mapToGlobal(QPoint(1, row.height() // 2))
        hits = 0
        for dx in range(0, 3):
            c = shot.pixelColor(p.x() + dx - 1, p.y())
            if (
                abs(c.red() - hl.red()) + abs(c.green() - hl.green()) + abs(c.blue() - hl.blue())
                < 60
            ):
                hits += 1
        if hits:
            out.append(i)
    return out


def main() -> int:
    from PySide6.QtWidgets import QApplication

    try:
        app = QApplication(sys.argv[:1])
    except Exception as exc:  # noqa: BLE001
        print(f"the xcb platform could not start: {exc}")
        return 3
    if app.platformName() != "xcb":
        print(f"platform is {app.platformName()}, not xcb")
        return 3
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from annotator.ui.main_window import MainWindow
    from annotator.ui.session_view import SessionView
    from annotator.ui.settings import AppSettings

    # the focus frame under keys, not a rater's looking: the exposure rule is off
    SessionView.exposure_minimum = staticmethod(lambda _snapshot: 0)
    w = MainWindow(AppSettings(), study=Path(sys.argv[1]), rater=sys.argv[2])
    w.resize(1100, 720)
    w.show()
    w.activateWindow()
    end = time.monotonic() + 20
    while (
        w.busy or w.current_view is None or w.current_view.state != "ready"
    ) and time.monotonic() < end:
        app.processEvents()
    view = w.current_view
    view.setFocus()
    settle(app, 500)
    steps = []
    for key in (
        None,
        Qt.Key.Key_Down,
        Qt.Key.Key_Down,
        Qt.Key.Key_Up,
        Qt.Key.Key_P,
        Qt.Key.Key_Down,
    ):
        if key is not None:
            QTest.keyClick(view, key)
        settle(app)
        focused = view.form.rows.index(view.form.focused_row())
        steps.append(
            {
                "key": None if key is None else int(key.value),
                "focused": focused,
                "framed": framed_rows(app, view),
            }
        )
    print(json.dumps(steps), flush=True)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
