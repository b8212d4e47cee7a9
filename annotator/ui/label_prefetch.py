"""The label view's look ahead: the next items' pictures decoded before they are needed.

A moment after an item has painted (``PEEK_DELAY_MS``: the look must not compete with that
frame), the next ``prefetch_ahead`` items of the queue are read on the ``DbWorker`` and their
images and mask overlays handed to the view's ``ImagePrefetcher``, so the next item appears
within a frame. A picture of the item on screen arriving late is put in place, and its exposure
starts once the last one is on screen (or its failure is said instead); a failed look is only a
look: the item on screen still works.

A mixin of ``LabelView``: it reads the view's item, session and item panel, so ``self`` stays
the view.
Tested in tests/gui/test_anchor_indistinguishable.py, tests/gui/test_blinding.py and
tests/gui/test_first_hour.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage

from ..domain.records import ItemView, ServedItem
from .i18n import translate
from .item_display import media_keys

if TYPE_CHECKING:
    from .label_layout import LabelLayout as _View
else:
    _View = object

__all__ = ["PEEK_DELAY_MS", "PREFETCH_AHEAD", "LookAhead"]

PREFETCH_AHEAD = 3
PEEK_DELAY_MS = 40


def _job_upcoming(_study: Any, session: Any, n: int, skip: tuple[int, ...]) -> list[ItemView]:
    from ..services.prefetch import upcoming

    return upcoming(session, n, skip=skip)


class LookAhead(_View):
    """The prefetch of ``LabelView`` (see the module docstring)."""

    _peeking = False  # the next items are being read (their pictures are handed on after)

    if TYPE_CHECKING:  # what the look ahead reads of its view (LabelView sets each)
        session: Any
        prefetch_ahead: int
        _served: ServedItem | None

    def _look_ahead(self, item_pk: int) -> None:
        """Once the item `item_pk` has painted, read the next items and decode their pictures."""
        if self.prefetch_ahead > 0 and self.session is not None:
            # After the new item has painted: the peek must not compete with that frame.
            self._peeking = True
            QTimer.singleShot(PEEK_DELAY_MS, self._guard(lambda pk=item_pk: self._peek(pk)))

    @property
    def lookahead_done(self) -> bool:
        """The next items are known and their pictures decoded (or decoding failed)."""
        return not self._peeking and self.prefetcher.pending == 0

    def _peek(self, item_pk: int) -> None:
        if self._served is None or self._served.item_pk != item_pk:
            self._peeking = False
            return
        self._job(
            _job_upcoming,
            self.session,
            self.prefetch_ahead,
            (item_pk,),
            on_done=self._upcoming,
            on_error=self._peek_failed,
        )

    def _peek_failed(self, _exc: BaseException) -> None:
        self._peeking = False  # only a look ahead: the item itself still works

    def _upcoming(self, views: list[ItemView]) -> None:
        self._peeking = False
        self.prefetcher.prefetch([k for v in views for k in media_keys(v)])

    def _image_ready(self, key: str, image: QImage) -> None:
        if self._served is not None and key in media_keys(self._served.view):
            self.item_panel.image_arrived(key, image)
            self._exposed_if_complete()

    def _exposed_if_complete(self) -> None:
        if self._exposed_at is None and not self.item_panel.waiting_for():
            self._mark_exposed()

    def _image_failed(self, key: str, message: str) -> None:
        if self._served is not None and key in media_keys(self._served.view):
            self.item_panel.image_failed(key)
            self._exposed_if_complete()  # the line saying so is what is seen
            self._say(
                translate(
                    "LabelView",
                    "An image of this item could not be shown. If you cannot decide, "
                    "answer “cannot judge” ({key}).",
                ).format(key=self.keymap.hint("cannot_judge")),
                calm=False,
            )
