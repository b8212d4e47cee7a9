"""Fonts and the few style sheets the views share.

Text is sized relative to the system font (never in pixels) and coloured from
the palette, so the platform's light or dark theme and the user's font size hold.
"""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

FORM_STYLE = """
QFrame#metric { border: 2px solid transparent; border-radius: 8px; }
QFrame#metric[focused="true"] { border: 2px solid palette(highlight); }
QPushButton[answer="true"] {
    padding: 0.3em 0.7em; border: 1px solid palette(mid); border-radius: 5px;
    background: palette(button); color: palette(button-text);
}
QPushButton[answer="true"]:checked {
    background: palette(highlight); color: palette(highlighted-text); border-color: palette(highlight);
}
QPushButton[answer="true"][role="pass"]:checked { background: #2e7d32; color: white; border-color: #2e7d32; }
QPushButton[answer="true"][role="fail"]:checked { background: #c62828; color: white; border-color: #c62828; }
QPushButton[answer="true"][role="cj"]:checked { background: palette(dark); color: palette(bright-text); }
QPushButton[answer="true"]:disabled { color: palette(mid); }
"""


def relative_font(widget: QWidget, factor: float = 1.0, *, bold: bool = False) -> QFont:
    """The widget's font scaled relative to the system font (never a pixel size)."""
    f = QFont(widget.font())
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * factor)
    f.setBold(bold)
    return f


def humanise(option: str) -> str:
    return option.replace("_", " ")
