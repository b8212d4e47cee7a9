"""The smallest window shows every control: on every screen, in English and in
Spanish, with the window at its minimum size, every visible button lies whole inside what shows
it: the window, or the scroll area it sits in (which may scroll it into view vertically, never
horizontally). At 635 x 552 the label view cut "Can't judge (X)" and "Instructions (F1)" in half."""

from __future__ import annotations

import pytest
from gui_support import build_study
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QPushButton, QWidget
from screens import walk_screens

from annotator.ui import i18n


@pytest.fixture(params=["en", "es"])
def language(request, qapp):
    assert i18n.install(qapp, request.param) == request.param
    yield request.param
    i18n.install(qapp, "en")


def _scroller(w: QWidget) -> QAbstractScrollArea | None:
    p = w.parentWidget()
    while p is not None:
        if isinstance(p, QAbstractScrollArea):
            return p
        p = p.parentWidget()
    return None


def clipped_buttons(win: QWidget) -> list[str]:
    """The visible buttons not whole inside their window or scroll area, with how."""
    out = []
    frame = win.rect()
    for b in win.findChildren(QPushButton):
        if not b.isVisibleTo(win) or b.width() == 0:
            continue
        r = QRect(b.mapTo(win, QPoint(0, 0)), b.size())
        area = _scroller(b)
        if area is not None and area.isVisibleTo(win) and win.isAncestorOf(area):
            vp = area.viewport()
            box = QRect(vp.mapTo(win, QPoint(0, 0)), vp.size())
            if r.left() < box.left() or r.right() > box.right():
                out.append(
                    f"{b.text()!r} {r.left()}..{r.right()} outside {box.left()}..{box.right()}"
                )
        elif not frame.contains(r):
            out.append(f"{b.text()!r} at {r.getRect()} outside the window {frame.getRect()}")
    return out


def test_every_control_shows_at_the_minimum_size(qtbot, tmp_path, language):
    built = build_study(tmp_path, "ui", anchors=True, anchor_every=0)
    found: dict[str, list[str]] = {}
    for name, win in walk_screens(qtbot, built.folder, size=(1100, 700)):
        if name == "instructions":
            continue  # a dialog of its own size
        small = win.minimumSizeHint().expandedTo(win.minimumSize())
        win.resize(small)
        for _ in range(3):
            QApplication.processEvents()
        qtbot.wait(20)
        bad = clipped_buttons(win)
        if bad:
            found[f"{name} at {small.width()}x{small.height()}"] = bad
    assert not found, f"{language}: {found}"
