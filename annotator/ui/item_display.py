"""The one widget that shows an item: its pictures (inputs beside outputs, zoom and pan
in step, the edit mask outlined) or its text output. Used by the label, pair and
calibration views alike.

Shows only what an ``ItemView`` holds: never a generator, file name or path.

Public API: ``media_keys(view, *, inputs=True) -> list[str]`` (every decode key an
item needs, the mask as its overlay key); ``ItemDisplay(keymap=None, *, title="",
show_inputs=True, sync=None, parent=None)`` with ``show_item(view, images)``
(``images``: key -> QImage or None for what is decoded already),
``image_arrived(key, image)``, ``image_failed(key)``, ``waiting_for() -> set[str]``,
``views()``, ``has_mask``, ``toggle_mask()``, ``clear()``; attributes ``sync``,
``tiles``, ``text``, ``code``, ``note``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from ..domain.records import ItemView
from .decode import overlay_key
from .i18n import QT_TRANSLATE_NOOP, translate
from .image_view import ImageView, SyncGroup
from .keymap import Keymap
from .style import relative_font, set_accessible

NO_OUTPUT = QT_TRANSLATE_NOOP("ItemDisplay", "This item has no output to show.")
IMAGE_FAILED = QT_TRANSLATE_NOOP(
    "ItemDisplay",
    "An image of this output could not be shown: answer from what you "
    "can see, or say you cannot judge.",
)


def media_keys(view: ItemView, *, inputs: bool = True) -> list[str]:
    """Every decode key an item shows, in the order the display lays them out."""
    keys = [*(view.inputs if inputs else ()), *view.outputs]
    if view.mask:
        keys.append(overlay_key(view.mask))
    return list(dict.fromkeys(keys))


def _captioned(shas: Sequence[str], one: str, numbered: str) -> list[tuple[str, str]]:
    """Each image with its caption: `one` when it is the only one of its kind, else `numbered`
    ("Output {n}") counted from 1."""
    if len(shas) == 1:
        return [(shas[0], one)]
    return [(sha, numbered.format(n=n)) for n, sha in enumerate(shas, start=1)]


class ImageTile(QWidget):
    """A caption above an ImageView."""

    def __init__(self, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.caption = QLabel()
        self.caption.setFont(relative_font(self.caption, 0.95, bold=True))
        self.view = ImageView(keymap=keymap)
        self.view.setFocusPolicy(
            Qt.FocusPolicy.NoFocus
        )  # keys belong to the session view (zoom keys there)
        self.view.setMinimumSize(160, 160)
        lay.addWidget(self.caption)
        lay.addWidget(self.view, 1)


class ItemDisplay(QWidget):
    def __init__(
        self,
        keymap: Keymap | None = None,
        *,
        title: str = "",
        show_inputs: bool = True,
        sync: SyncGroup | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.keymap = keymap or Keymap()
        self.show_inputs = show_inputs
        self.sync = sync if sync is not None else SyncGroup(parent=self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        head = QHBoxLayout()
        self.title = QLabel(title)
        self.title.setFont(relative_font(self.title, 1.0, bold=True))
        self.code = QLabel()
        self.code.setFont(relative_font(self.code, 0.9))
        self.code.setProperty("content", True)
        set_accessible(
            self.code,
            translate("ItemDisplay", "Item code"),
            translate("ItemDisplay", "The item's opaque code (it names nothing)"),
        )
        set_accessible(
            self.title,
            title or translate("ItemDisplay", "Item"),
            translate("ItemDisplay", "Which side"),
        )
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.code)
        self._head = QWidget()
        self._head.setLayout(head)
        head.setContentsMargins(0, 0, 0, 0)
        self._head.setVisible(bool(title))
        self._titled = bool(title)
        outer.addWidget(self._head)
        grid_holder = QWidget()
        self._grid = QGridLayout(grid_holder)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(8)
        outer.addWidget(grid_holder, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        set_accessible(
            self.note,
            translate("ItemDisplay", "Note"),
            translate("ItemDisplay", "About the images"),
        )
        self.note.hide()
        outer.addWidget(self.note)
        self.tiles: list[ImageTile] = []
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setProperty("content", True)  # the output being judged
        set_accessible(
            self.text,
            translate("ItemDisplay", "Text output"),
            translate("ItemDisplay", "The output to judge, as text"),
        )
        # Selectable by mouse only: arrows, digits and letters stay answer keys.
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.text.hide()
        self.empty = QLabel(translate("ItemDisplay", NO_OUTPUT))
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()
        self._shas: list[str] = []
        self._captions: list[str] = []
        self._overlay: str | None = None
        self._overlay_image: QImage | None = None
        self._failed: set[str] = set()
        self._has_text = False
        self._stacked: bool | None = None
        self._mask_visible = True

    def _tile(self, i: int) -> ImageTile:
        while len(self.tiles) <= i:
            t = ImageTile(self.keymap, self)
            self.tiles.append(t)
            self.sync.add(t.view)
        return self.tiles[i]

    # -- content -------------------------------------------------------------------
    def show_item(self, view: ItemView, images: Mapping[str, QImage | None]) -> None:
        entries: list[tuple[str, str]] = []
        if self.show_inputs:
            entries += _captioned(
                view.inputs,
                translate("ItemDisplay", "Input"),
                translate("ItemDisplay", "Input {n}"),
            )
        entries += _captioned(
            view.outputs, translate("ItemDisplay", "Output"), translate("ItemDisplay", "Output {n}")
        )
        if self._titled:
            self.code.setText(
                view.display_code
            )  # (the label view shows the code in its own header)
        self._shas = [sha for sha, _ in entries]
        self._captions = [caption for _, caption in entries]
        self._overlay = overlay_key(view.mask) if view.mask else None
        self._overlay_image = images.get(self._overlay) if self._overlay else None
        self._failed = set()
        self._has_text = view.text is not None
        for i, (sha, caption) in enumerate(entries):
            t = self._tile(i)
            t.caption.setText(self._caption(caption))
            set_accessible(
                t.view,
                caption,
                translate(
                    "ItemDisplay", "An image to judge; zoom with {zin} / {zout}, fit with {fit}"
                ).format(
                    zin=self.keymap.hint("zoom_in"),
                    zout=self.keymap.hint("zoom_out"),
                    fit=self.keymap.hint("zoom_fit"),
                ),
            )
            set_accessible(
                t.caption, caption, translate("ItemDisplay", "Caption of the image below")
            )
            t.view.set_image(images.get(sha), overlay=self._overlay_image)
            t.view.set_mask_visible(self._mask_visible)
        for t in self.tiles[len(entries) :]:
            t.view.set_image(None)
        self.text.setPlainText(view.text or "")
        self.note.hide()
        self._stacked = None
        self._place()

    def clear(self) -> None:
        for t in self.tiles:
            t.view.set_image(None)
        self.text.clear()
        self.code.clear()
        self.note.hide()

    def image_arrived(self, key: str, image: QImage) -> None:
        if key == self._overlay:
            self._overlay_image = image
            for v in self.views():
                if v.image() is not None:
                    v.set_overlay(image)
                    v.set_mask_visible(self._mask_visible)
        for i, s in enumerate(self._shas):
            v = self.tiles[i].view
            if s == key and v.image() is None:
                v.set_image(image, overlay=self._overlay_image)
                v.set_mask_visible(self._mask_visible)
        if key in self._shas:
            self._place()

    def image_failed(self, key: str) -> None:
        if key == self._overlay:
            self._failed.add(key)  # no longer waited for: the item is shown without it
        if key in self._shas:
            self._failed.add(key)
            self.note.setText(translate("ItemDisplay", IMAGE_FAILED))
            self.note.show()

    def waiting_for(self) -> set[str]:
        out = {
            s
            for i, s in enumerate(self._shas)
            if self.tiles[i].view.image() is None and s not in self._failed
        }
        if self._overlay and self._overlay_image is None and self._overlay not in self._failed:
            out.add(self._overlay)
        return out

    def views(self) -> list[ImageView]:
        return [self.tiles[i].view for i in range(len(self._shas))]

    # -- the mask ------------------------------------------------------------------
    @property
    def has_mask(self) -> bool:
        return self._overlay is not None

    def _caption(self, base: str) -> str:
        if self._overlay is None:
            return base
        text = (
            translate("ItemDisplay", "{caption}  ·  edit mask shown ({key})")
            if self._mask_visible
            else translate("ItemDisplay", "{caption}  ·  edit mask hidden ({key})")
        )
        return text.format(caption=base, key=self.keymap.hint("toggle_mask"))

    def toggle_mask(self) -> bool:
        self._mask_visible = not self._mask_visible
        for i, v in enumerate(self.views()):
            v.set_mask_visible(self._mask_visible)
            self.tiles[i].caption.setText(self._caption(self._captions[i]))
        return self._mask_visible

    # -- layout --------------------------------------------------------------------
    def _place(self) -> None:
        """Lay the tiles out in a row, or in a column when that shows them larger."""
        n = len(self._shas)
        stacked = self._stack_vertically([self.tiles[i].view.image() for i in range(n)])
        if stacked == self._stacked:
            return
        self._stacked = stacked
        while self._grid.count():
            self._grid.takeAt(0)
        for r in range(self._grid.rowCount()):
            self._grid.setRowStretch(r, 0)
        for c in range(self._grid.columnCount()):
            self._grid.setColumnStretch(c, 0)
        for i in range(n):
            t = self.tiles[i]
            if stacked:
                self._grid.addWidget(t, i, 0)
                self._grid.setRowStretch(i, 1)
            else:
                self._grid.addWidget(t, 0, i)
                self._grid.setColumnStretch(i, 1)
            t.show()
        for t in self.tiles[n:]:
            t.hide()
        col = 1 if stacked else n
        if self._has_text:
            self._grid.addWidget(self.text, 0, col, max(1, n if stacked else 1), 1)
            self._grid.setColumnStretch(col, 1)
            self.text.show()
        else:
            self.text.hide()
        if n == 0 and not self._has_text:
            self._grid.addWidget(self.empty, 0, 0)
            self.empty.show()
        else:
            self.empty.hide()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        if self._shas:
            self._place()

    def _stack_vertically(self, images: list[QImage | None]) -> bool:
        """Wide pictures (a logo, a banner) go one above the other when that shows them larger."""
        known = [im for im in images if im is not None and not im.isNull()]
        n = len(images)
        if n < 2 or self._has_text or len(known) < n:
            return False
        w, h = max(self.width(), 1), max(self.height(), 1)
        iw = max(im.width() for im in known)
        ih = max(im.height() for im in known)
        return min(w / iw, h / n / ih) > min(w / n / iw, h / ih) * 1.1
