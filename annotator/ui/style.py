"""Fonts, colours and the few style sheets the views share.

Text is sized relative to the system font (never in pixels) and coloured from
the palette, so the platform's light or dark theme and the user's font size
hold. The few colours that carry meaning (met / not met, a flag, PASS / FAIL)
are derived from the palette here and made readable against it: every
``readable(fg, bg)`` colour keeps a contrast ratio of at least 4.5:1 (WCAG AA),
in light and dark palettes alike. A meaning is never carried by colour alone:
the views put a symbol and a word beside it (``MET``, ``NOT_MET``, ``FLAG``).

Public API: ``form_style(palette)``, ``relative_font(widget, factor, bold=)``,
``contrast(a, b)``, ``readable(fg, bg, minimum=4.75)``, ``mix(a, b, t)``,
``soft_colour(palette)``, ``warning_colour(palette)``, ``met_colours(palette, met)``,
``flag_background(palette)``, ``is_dark(palette)``, ``dark_palette()``,
``set_accessible(widget, name, description="")``; symbols ``MET``, ``NOT_MET``, ``FLAG``.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QLabel, QWidget

MET = "\u2713"  # ✓
NOT_MET = "\u25cb"  # ○
FLAG = "\u26a0"  # ⚠
AA = 4.5
MARGIN = 0.25  # above AA: a colour's rendered pixels round, and must still pass

_FORM_STYLE = """
QFrame#metric { border: 2px solid transparent; border-radius: 8px; }
QFrame#metric[focused="true"] { border: 2px solid palette(highlight); }
QPushButton[answer="true"] {
    padding: 0.3em 0.7em; border: 1px solid palette(mid); border-radius: 5px;
    background: palette(button); color: palette(button-text);
}
QPushButton[answer="true"]:checked { background: CHOSEN; color: CHOSEN_INK; border-color: CHOSEN; }
QPushButton[answer="true"][role="pass"]:checked { background: #2e7d32; color: white; border-color: #2e7d32; }
QPushButton[answer="true"][role="fail"]:checked { background: #c62828; color: white; border-color: #c62828; }
QPushButton[answer="true"][role="cj"]:checked { background: palette(text); color: palette(base); }
QPushButton[answer="true"]:disabled { color: palette(mid); }
"""


def form_style(palette: QPalette) -> str:
    """The answer form's style: a chosen answer on the highlight colour, darkened (or lightened)
    just enough that its text stays AA-readable (platform highlights often are not)."""
    ink = palette.color(QPalette.ColorRole.HighlightedText)
    chosen = readable(palette.color(QPalette.ColorRole.Highlight), ink)
    return _FORM_STYLE.replace("CHOSEN_INK", ink.name()).replace("CHOSEN", chosen.name())


def relative_font(widget: QWidget, factor: float = 1.0, *, bold: bool = False) -> QFont:
    """The widget's font scaled relative to the system font (never a pixel size)."""
    f = QFont(widget.font())
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * factor)
    elif f.pixelSize() > 0:
        f.setPixelSize(max(1, round(f.pixelSize() * factor)))
    f.setBold(bold)
    return f


# -- colour ---------------------------------------------------------------------------
def _luminance(c: QColor) -> float:
    def ch(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = _luminance(a), _luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """`a` moved a fraction `t` of the way to `b`."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


def readable(fg: QColor, bg: QColor, minimum: float = AA + MARGIN) -> QColor:
    """`fg`, darkened or lightened just enough to read on `bg` (contrast >= `minimum`)."""
    target = QColor("black") if _luminance(bg) > 0.18 else QColor("white")
    c = QColor(fg)
    for step in range(21):
        c = mix(fg, target, step / 20)
        if contrast(c, bg) >= minimum:
            return c
    return target


def readable_placeholders(palette: QPalette) -> QPalette:
    """`palette` with its placeholder text at AA contrast on the text boxes' base. Qt's default
    placeholder is the text colour at half opacity (#7f7f7f on white, 4.0:1): below the 4.5:1
    every other text meets."""
    out = QPalette(palette)
    role = QPalette.ColorRole
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        base = palette.color(group, role.Base)
        ph = palette.color(group, role.PlaceholderText)
        seen = mix(base, QColor(ph.red(), ph.green(), ph.blue()), ph.alphaF())  # as drawn
        if contrast(seen, base) < AA + MARGIN:
            out.setColor(group, role.PlaceholderText, readable(seen, base))
    return out


def is_dark(palette: QPalette) -> bool:
    return _luminance(palette.color(QPalette.ColorRole.Window)) < 0.18


def soft_colour(palette: QPalette) -> str:
    """Secondary text: the text colour eased toward the background, still AA on it."""
    bg = palette.color(QPalette.ColorRole.Window)
    return readable(mix(palette.color(QPalette.ColorRole.WindowText), bg, 0.35), bg).name()


def warning_colour(palette: QPalette) -> str:
    """A calm amber (never an alarm red), readable on the window."""
    bg = palette.color(QPalette.ColorRole.Window)
    return readable(QColor("#b54708") if not is_dark(palette) else QColor("#f5b45c"), bg).name()


def flag_background(palette: QPalette) -> QColor:
    """A row that needs the lead's eye: the base tinted amber (its text stays the palette's)."""
    base = palette.color(QPalette.ColorRole.Base)
    return mix(base, QColor("#f79009"), 0.12 if not is_dark(palette) else 0.22)


def met_colours(palette: QPalette, met: bool | None) -> tuple[str, str]:
    """(card background, mark ink) for met / not met / not scored, from the palette."""
    base = palette.color(QPalette.ColorRole.Base)
    hue = {
        True: QColor("#1e8a55"),
        False: QColor("#c27a12"),
        None: palette.color(QPalette.ColorRole.Mid),
    }[met]
    bg = mix(base, hue, 0.12 if not is_dark(palette) else 0.25)
    ink = readable(hue, bg)
    return bg.name(), ink.name()


def dark_palette() -> QPalette:
    """A dark palette like the platforms' dark themes (tests and screenshots use it)."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, c in (
        (role.Window, "#1e1f22"),
        (role.WindowText, "#e6e6e6"),
        (role.Base, "#16171a"),
        (role.AlternateBase, "#26282c"),
        (role.Text, "#e6e6e6"),
        (role.Button, "#2b2d31"),
        (role.ButtonText, "#e6e6e6"),
        (role.BrightText, "#ffffff"),
        (role.Highlight, "#3d6fb6"),
        (role.HighlightedText, "#ffffff"),
        (role.ToolTipBase, "#2b2d31"),
        (role.ToolTipText, "#e6e6e6"),
        (role.PlaceholderText, "#a0a0a0"),
        (role.Mid, "#4a4d52"),
        (role.Dark, "#0f1012"),
        (role.Light, "#3a3c40"),
        (role.Midlight, "#33353a"),
        (role.Shadow, "#000000"),
        (role.Link, "#7fb0ff"),
    ):
        p.setColor(r, QColor(c))
    for group in (QPalette.ColorGroup.Disabled,):
        p.setColor(group, role.WindowText, QColor("#8a8a8a"))
        p.setColor(group, role.Text, QColor("#8a8a8a"))
        p.setColor(group, role.ButtonText, QColor("#8a8a8a"))
    return p


def set_accessible(widget: QWidget, name: str, description: str = "") -> QWidget:
    """What a screen reader says for a control: its name and, when it helps, what it does."""
    widget.setAccessibleName(name)
    if description:
        widget.setAccessibleDescription(description)
    return widget


def fit_to_text(label: QLabel) -> None:
    """A status bar label as wide as its text (the bar would squeeze it behind the messages)."""
    label.setMinimumWidth(
        label.fontMetrics().horizontalAdvance(label.text()) + 12 if label.text() else 0
    )
