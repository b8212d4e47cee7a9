"""The report's view-model of sections (``reports/sections.py``: tables, notes, lists, item
cards, charts, tiles, named by ``services.dashboard``) as Qt widgets, knowing no figure: whatever
a section holds is laid out the same way.

A table is read-only and sized to show every row whole (the page scrolls, not the table), its
widest columns narrowed to the page's width so their text wraps instead of being clipped; a
chart is a picture decoded beforehand (a ``QImage``, drawn at ``CHART_RATIO`` times its CSS
size), per-rater charts two a row when they fit; a flagged row, chart or tile says so in a
symbol too, not only by its colour. A list is a column of bulleted lines; an item card is the
item's picture (when it has one) beside its title, flag, lines and answers, and a section builds
at most ``MAX_CARDS`` of them (each is a dozen widgets: thousands would stall the page), saying
how many it leaves to the HTML report. ``section_page`` lays out a page of sections, each under a
heading widget named ``section:KEY`` (what a view jumps between).

The words inside are the report's own (English, as the HTML report; marked with the widget
property ``content``); the texts of this module's own keep the dashboard's translation
context.
Tested in tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Collection

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QImage, QPalette, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..services.dashboard import Block, Bullets, Chart, ItemCard, Note, Section, Table, Tile
from .decode import decode_image
from .i18n import translate
from .shown import shown_text
from .style import FLAG, flag_background, relative_font, set_accessible, soft_colour, warning_colour

__all__ = [
    "CHART_RATIO",
    "MAX_CARDS",
    "add_blocks",
    "bullets_widget",
    "card_widget",
    "chart_widget",
    "fit_columns",
    "note_label",
    "opened_folds",
    "section_head",
    "section_page",
    "show_tiles",
    "table_widget",
    "tile_widget",
    "wrap_header",
]

MAX_COLUMN = 340  # wider text wraps inside its cell (never clipped)
COLUMN_SLACK = 12
MIN_COLUMN = 110
CHART_RATIO = 1.5  # charts are drawn at 1.5x their CSS size for sharp text
MAX_CARDS = 50  # item cards a section builds; the HTML report shows every one
THUMB_WIDTH = 160  # an item card's picture, in device-independent pixels (as the HTML report)


def _palette() -> QPalette:
    return QApplication.palette()


# a `command` span of the report's text: the HTML report sets it as code, the app as plain words
_CODE_SPAN = re.compile(r"`([^`]+)`")


def note_label(text: str, *, content: bool = True) -> QLabel:
    """A wrapped line of soft text, shown as plain text; `content`: the report's words, not the
    page's own."""
    lab = QLabel(_CODE_SPAN.sub(r"\1", text))
    lab.setTextFormat(Qt.TextFormat.PlainText)
    lab.setWordWrap(True)
    lab.setStyleSheet(f"color: {soft_colour(_palette())};")
    lab.setProperty("content", content)  # the report's text (English, as the HTML report)
    return lab


def fit_columns(header: QHeaderView, n: int, width: int) -> None:
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


def wrap_header(w: QTableWidget, n: int) -> None:
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


def table_widget(t: Table, width: int = 0) -> QTableWidget:
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
        fit_columns(header, len(t.headers), width - 2 * w.frameWidth() - 2)
        wrap_header(w, len(t.headers))
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


FOLD = "fold:"  # a fold button's object name: this prefix and its table's name


def fold_button(text: str, folded: QWidget, fill: Callable[[], None] | None = None) -> QToolButton:
    """A button that shows and hides `folded` (hidden at first): a section's long detail table,
    opened by a click or by Space when the button has the focus. `fill`, when given, puts the
    content into `folded` the first time it is opened."""
    b = QToolButton()
    b.setText(text)
    b.setCheckable(True)
    b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    b.setArrowType(Qt.ArrowType.RightArrow)
    b.setAutoRaise(True)
    b.setProperty("content", True)
    folded.setVisible(False)

    pending = [fill] if fill is not None else []

    def toggle(shown: bool) -> None:
        if shown and pending:
            pending.pop()()
        folded.setVisible(shown)
        b.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    b.toggled.connect(toggle)
    return b


def chart_widget(chart: Chart, image: QImage | None) -> QWidget:
    """A chart under its caption (`image`: decoded beforehand; None or null: said in words)."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    if chart.caption:
        cap = QLabel(f"{FLAG} {chart.caption}" if chart.flagged else chart.caption)
        cap.setStyleSheet(
            f"color: {warning_colour(_palette()) if chart.flagged else soft_colour(_palette())};"
        )
        cap.setFont(relative_font(cap, 1.0, bold=True))
        cap.setWordWrap(True)  # a caption can be a sentence: it never widens the page
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


def bullets_widget(b: Bullets) -> QWidget:
    """A list: each point on its own wrapped line after a bullet."""
    box = QWidget()
    box.setObjectName("bullets")
    lay = QVBoxLayout(box)
    lay.setContentsMargins(8, 0, 0, 0)
    lay.setSpacing(2)
    for text in b.items:
        lay.addWidget(note_label(f"\u2022 {text}"))
    return box


def _card_image(image: bytes | str | None) -> QImage | None:
    """An item card's picture decoded (PNG or JPEG bytes, or a data: URI of them); None when
    there is none or it does not decode (the card then shows no picture)."""
    if isinstance(image, str):
        head, _, data = image.partition(",")
        if not head.startswith("data:image/") or not head.endswith(";base64"):
            return None
        try:
            image = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None
    if not image:
        return None
    try:
        return decode_image(bytes(image))
    except ValueError:
        return None


def card_widget(c: ItemCard) -> QFrame:
    """An item card: its picture (when it has one) beside its title, the flag in words and a
    symbol, its lines, then each answer (who, the answer, the reason) and its small print."""
    f = QFrame()
    f.setObjectName("itemCard")
    f.setStyleSheet("QFrame#itemCard { border: 1px solid palette(mid); border-radius: 8px; }")
    f.setProperty("content", True)
    set_accessible(f, c.title, " · ".join((c.flag, *c.meta)) if c.flag or c.meta else "")
    row = QHBoxLayout(f)
    row.setContentsMargins(12, 8, 12, 8)
    row.setSpacing(12)
    image = _card_image(c.image)
    if image is not None and not image.isNull():
        pic = QLabel()
        pic.setObjectName("itemCardImage")
        scaled = QPixmap.fromImage(image)
        ratio = scaled.width() / THUMB_WIDTH if scaled.width() > THUMB_WIDTH else 1.0
        scaled.setDevicePixelRatio(ratio)  # shown 160 px wide, sharp on a dense screen
        pic.setPixmap(scaled)
        pic.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        set_accessible(pic, c.image_alt or c.title)
        pic.setToolTip(c.image_alt)
        row.addWidget(pic, 0, Qt.AlignmentFlag.AlignTop)
    body = QVBoxLayout()
    body.setSpacing(4)
    title = QLabel(c.title)
    title.setFont(relative_font(title, 1.1, bold=True))
    title.setWordWrap(True)
    title.setProperty("content", True)
    body.addWidget(title)
    if c.flag:
        flag = QLabel(f"{FLAG} {c.flag}")  # a symbol too, not only amber
        flag.setStyleSheet(f"color: {warning_colour(_palette())};")
        flag.setProperty("content", True)
        body.addWidget(flag)
    for line in c.meta:
        body.addWidget(note_label(line))
    if c.answers:
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        for r, a in enumerate(c.answers):
            who = QLabel(a.who)
            who.setStyleSheet(f"color: {soft_colour(_palette())};")
            answer = QLabel(a.answer)
            # the pooled and the judge's answers stand apart from the raters' lines above
            answer.setFont(relative_font(answer, 1.0, bold=True))
            reason = QLabel(a.reason)
            reason.setWordWrap(True)
            reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if a.role:
                who.setText(f"{a.who} ({'pooled' if a.role == 'pooled' else 'judge'})")
            for c_, w in enumerate((who, answer, reason)):
                w.setTextFormat(Qt.TextFormat.PlainText)  # a rater's reason is text, never markup
                w.setProperty("content", True)
                grid.addWidget(w, r, c_, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(2, 1)
        body.addLayout(grid)
    for line in c.foot:
        body.addWidget(note_label(line))
    row.addLayout(body, 1)
    return f


def tile_widget(t: Tile) -> QFrame:
    """A count in large type over what it counts."""
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
    lay.addWidget(note_label(t.label))
    set_accessible(f, f"{t.value} {t.label}", t.label)
    return f


def show_tiles(row: QHBoxLayout, tiles: tuple[Tile, ...]) -> None:
    """Put `tiles` in `row` in place of the ones it holds."""
    while row.count():
        item = row.takeAt(0)
        gone = item.widget() if item is not None else None
        if gone is not None:
            gone.deleteLater()
    for t in tiles:
        row.addWidget(tile_widget(t))
    row.addStretch(1)


def section_head(s: Section) -> QWidget:
    """A section's title and subtitle, named ``section:KEY``."""
    head = QWidget()
    head.setObjectName(f"section:{s.key}")
    hl = QVBoxLayout(head)
    hl.setContentsMargins(0, 14, 0, 2)
    h = QLabel(s.title)
    h.setFont(relative_font(h, 1.3, bold=True))
    h.setProperty("content", True)
    hl.addWidget(h)
    if s.subtitle:
        hl.addWidget(note_label(s.subtitle))
    return head


def add_blocks(
    lay: QVBoxLayout,
    blocks: tuple[Block, ...],
    charts: dict[str, QImage],
    room: int,
    opened: Collection[str] = (),
) -> None:
    """Lay `blocks` out in `lay`, `room` pixels wide (`charts`: the decoded charts by name); a
    folded table named in `opened` starts open (`opened_folds` of the page it replaces)."""
    grid: QGridLayout | None = None
    n = 0
    cards = sum(isinstance(b, ItemCard) for b in blocks)
    built = 0
    for b in blocks:
        if isinstance(b, ItemCard):
            built += 1
            if built <= MAX_CARDS:
                lay.addWidget(card_widget(b))
            if built == MAX_CARDS and cards > MAX_CARDS:
                lay.addWidget(
                    note_label(
                        translate(
                            "DashboardView",
                            "The first {shown} of {n} items; the HTML report shows them all.",
                        ).format(shown=MAX_CARDS, n=cards),
                        content=False,
                    )
                )
        elif isinstance(b, Bullets):
            lay.addWidget(bullets_widget(b))
        elif isinstance(b, Table) and b.fold:
            # a long detail table: folded under its line, as the report has it, and built when
            # first opened (a million-judgement study's case-by-case table is 30,000 cells: a
            # second of the interface's thread at every refresh of the dashboard)
            holder = QWidget()
            inside = QVBoxLayout(holder)
            inside.setContentsMargins(0, 0, 0, 0)

            def fill(t: Table = b, into: QVBoxLayout = inside) -> None:
                into.addWidget(table_widget(t, room + 24))

            button = fold_button(b.fold, holder, fill)
            button.setObjectName(f"{FOLD}{b.name}")
            lay.addWidget(button)
            lay.addWidget(holder)
            if b.name in opened:
                button.setChecked(True)
        elif isinstance(b, Table):
            lay.addWidget(table_widget(b, room + 24))
        elif isinstance(b, Note):
            lab = note_label(b.text)
            if b.style == "heading":  # a part of the section, as the report's sub-heading
                lab.setFont(relative_font(lab, 1.05, bold=True))
                lab.setStyleSheet("")
            lay.addWidget(lab)
        elif b.caption:
            # per-rater charts: two a row when they fit, so the page never scrolls sideways
            image = charts.get(b.name)
            if grid is None:
                grid = QGridLayout()
                grid.setHorizontalSpacing(16)
                lay.addLayout(grid)
            widths = [im.width() / CHART_RATIO for im in charts.values()]
            cols = 2 if widths and room >= 2 * max(widths) + 16 else 1
            grid.addWidget(chart_widget(b, image), n // cols, n % cols)
            n += 1
        else:
            lay.addWidget(chart_widget(b, charts.get(b.name)))


def opened_folds(page: QWidget | None) -> frozenset[str]:
    """The folded tables the reader has opened on `page`, by name: the page that replaces it at
    the next refresh opens them again (a live dashboard refreshes every few seconds while raters
    work; a table folded again under the reader's eyes was lost)."""
    if page is None:
        return frozenset()
    return frozenset(
        b.objectName().removeprefix(FOLD)
        for b in page.findChildren(QToolButton)
        if b.objectName().startswith(FOLD) and b.isChecked()
    )


def section_page(
    sections: tuple[Section, ...],
    charts: dict[str, QImage],
    room: int,
    opened: Collection[str] = (),
) -> tuple[QWidget, list[QWidget]]:
    """A page of `sections`, `room` pixels wide, and the heading widget of each section; the
    folded tables named in `opened` open."""
    content = QWidget()
    lay = QVBoxLayout(content)
    lay.setContentsMargins(4, 0, 12, 24)
    lay.setSpacing(6)
    heads: list[QWidget] = []
    for s in sections:
        head = section_head(s)
        lay.addWidget(head)
        heads.append(head)
        add_blocks(lay, s.blocks, charts, room, opened)
    lay.addStretch(1)
    return content, heads
