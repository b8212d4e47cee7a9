"""Accessibility of every screen: what a screen reader is told, keyboard operation, contrast
computed from the rendered screens (light and dark palettes), and text that follows the
system font size."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gui_support import build_study
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAccessible, QFont, QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGraphicsView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QTableWidget,
    QTextEdit,
    QWidget,
)
from screens import dashboard_screen, walk_screens

from annotator.ui.style import AA, dark_palette

CONTROLS = (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QListWidget,
    QTableWidget,
    QGraphicsView,
    QProgressBar,
)
QT_PARTS = ("QTableCornerButton", "QScrollBar", "QLineEditIconButton", "QToolButton")
KEY_IN_TEXT = re.compile(r"\(.+\)|\[.+\]|^\s*\d|^[←✓]")


def _controls(root: QWidget) -> list[QWidget]:
    return [
        w
        for w in [root, *root.findChildren(QWidget)]
        if isinstance(w, CONTROLS)
        and w.isVisible()
        and not w.objectName().startswith("qt_")
        and type(w).__name__ not in QT_PARTS
        and not w.visibleRegion().isEmpty()
    ]


@pytest.fixture(scope="module")
def a11y_folder(tmp_path_factory):
    return build_study(tmp_path_factory.mktemp("a11y"), "ui", anchors=True, anchor_every=0).folder


def test_every_control_has_an_accessible_name_and_description(qtbot, a11y_folder):
    missing: dict[str, list] = {}
    mouse_only: dict[str, list] = {}
    for name, win in walk_screens(qtbot, a11y_folder):
        for w in _controls(win):
            iface = QAccessible.queryAccessibleInterface(w)
            assert iface is not None and iface.isValid()
            label = iface.text(QAccessible.Text.Name)
            desc = iface.text(QAccessible.Text.Description)
            if not label.strip() or not desc.strip():
                missing.setdefault(name, []).append((type(w).__name__, w.objectName(), label, desc))
            # Full keyboard operation: a control the Tab key cannot reach shows the key that does its work.
            if (
                isinstance(w, QAbstractButton)
                and w.isEnabled()
                and w.focusPolicy() == Qt.FocusPolicy.NoFocus
            ):
                if not KEY_IN_TEXT.search(w.text()):
                    mouse_only.setdefault(name, []).append(w.text())
        # The accessibility tree reaches the controls from the window down.
        root = QAccessible.queryAccessibleInterface(win)
        assert root is not None and root.childCount() > 0
    assert not missing, missing
    assert not mouse_only, mouse_only


# -- contrast, from what is rendered -------------------------------------------------------------
def _pixels(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
    # a copy: the view would point into the QImage's memory, freed when `img` goes
    return arr.reshape(img.height(), img.bytesPerLine() // 4, 4)[:, : img.width(), :3][
        :, :, ::-1
    ].copy()


def _lum(rgb: np.ndarray) -> np.ndarray:
    c = rgb.astype(float) / 255.0
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]


def text_contrast(crop: np.ndarray) -> float:
    """Contrast of a text's ink against its background: the background is the crop's most common
    colour, the ink the pixel that stands out from it most (the glyphs' cores)."""
    flat = crop.reshape(-1, 3)
    packed = (flat[:, 0].astype(np.uint32) << 16) | (flat[:, 1].astype(np.uint32) << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    bg = values[counts.argmax()]
    bg_rgb = np.array([(bg >> 16) & 255, (bg >> 8) & 255, bg & 255], dtype=np.uint8)
    lb = float(_lum(bg_rgb[None, :])[0])
    lum = _lum(flat)
    ratio = (np.maximum(lum, lb) + 0.05) / (np.minimum(lum, lb) + 0.05)
    return float(ratio.max())


def _texts(win: QWidget) -> list[QWidget]:
    out = []
    for w in [win, *win.findChildren(QWidget)]:
        if not w.isVisible() or not w.isEnabled() or w.visibleRegion().isEmpty():
            continue
        if isinstance(w, QLabel) and w.text().strip() and w.pixmap().isNull():
            out.append(w)
        elif (
            isinstance(w, QAbstractButton) and w.text().strip() and type(w).__name__ not in QT_PARTS
        ):
            out.append(w)
    return out


def low_contrast(win: QWidget) -> list[tuple[str, float]]:
    shot = _pixels(win.grab().toImage())
    ratio = win.devicePixelRatioF()
    bad = []
    for w in _texts(win):
        r = w.visibleRegion().boundingRect()
        top_left = w.mapTo(win, r.topLeft()) if w is not win else QPoint(0, 0)
        x0, y0 = int(top_left.x() * ratio), int(top_left.y() * ratio)
        crop = shot[
            max(0, y0) : y0 + int(r.height() * ratio), max(0, x0) : x0 + int(r.width() * ratio)
        ]
        if crop.size == 0 or crop.shape[0] < 4 or crop.shape[1] < 4:
            continue
        c = text_contrast(crop)
        if c < AA:
            bad.append((w.text()[:40], round(c, 2)))
    return bad


@pytest.fixture(params=["light", "dark"])
def palette(request, qapp):
    """The platform's light palette, or a dark one like the platforms' dark themes."""
    before = qapp.palette()
    if request.param == "dark":
        qapp.setPalette(dark_palette())
    yield request.param
    qapp.setPalette(before)


def test_every_screen_has_readable_text(qtbot, a11y_folder, palette, screenshot_dir):
    found = {}
    for name, win in walk_screens(qtbot, a11y_folder):
        bad = low_contrast(win)
        if bad:
            found[name] = bad[:5]
        if palette == "dark" and name == "label_answered":
            assert win.grab().save(str(screenshot_dir / "label_dark.png"))
    assert not found, found


@pytest.mark.slow
def test_the_dashboard_has_readable_text_and_symbols(qtbot, a11y_folder, palette, screenshot_dir):
    w = dashboard_screen(qtbot, a11y_folder)
    view = w.current_view
    assert not low_contrast(w)
    for name in ("page_down", "next_section", "bottom", "top"):  # every part reachable by keys
        view.key_actions()[name]()
    assert _controls(w) and all(
        QAccessible.queryAccessibleInterface(c).text(QAccessible.Text.Name) for c in _controls(w)
    )
    if palette == "dark":
        assert w.grab().save(str(screenshot_dir / "dashboard_dark.png"))
    w.close()


def test_a_hard_coded_dark_on_dark_text_is_caught(qtbot, qapp):
    """The check itself: a label coloured by hand, unreadable on the dark palette, fails it."""
    before = qapp.palette()
    qapp.setPalette(dark_palette())
    try:
        w = QWidget()
        qtbot.addWidget(w)
        w.resize(300, 80)
        lab = QLabel("Hard-coded ink", w)
        lab.setStyleSheet("color: #1f2430;")
        lab.move(10, 10)
        w.show()
        qtbot.wait(20)
        assert low_contrast(w)
        lab.setStyleSheet("")
        qtbot.wait(20)
        assert not low_contrast(w)
    finally:
        qapp.setPalette(before)


def test_text_follows_the_system_font_size(qtbot, qapp, a11y_folder):
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    before = qapp.font()
    sizes = []
    try:
        for pt in (9.0, 18.0):
            f = QFont(before)
            f.setPointSizeF(pt)
            qapp.setFont(f)
            w = MainWindow(AppSettings())
            qtbot.addWidget(w)
            sizes.append((w.start.title.font().pointSizeF(), w.start.welcome.font().pointSizeF()))
            w.close()
    finally:
        qapp.setFont(before)
    (t9, b9), (t18, b18) = sizes
    assert t18 == pytest.approx(2 * t9, rel=0.05) and b18 == pytest.approx(2 * b9, rel=0.05)


def test_first_screens_tell_where_to_begin(qtbot):
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    w = MainWindow(AppSettings())
    qtbot.addWidget(w)
    w.show()
    assert (
        w.start.welcome.isVisible()
        and "demo" in w.start.welcome.text()
        and ".annot" in w.start.welcome.text()
    )
    assert w.start.demo_btn.isVisible() and w.start.package_btn.isVisible()
    w.close()
    assert QApplication.instance() is not None
