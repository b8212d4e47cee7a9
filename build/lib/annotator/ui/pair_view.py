"""Pairwise A/B voting: two outputs of the same case side by side, one key per vote.

Public API
----------
``PairView(study, rater, worker, settings=None, parent=None)`` - a ``QWidget``.
    Keys: Left or 1 = left, Right or 2 = right, B or 3 = both, N or 4 = neither,
    R or Tab = type a reason (Esc / Enter return to voting), Ctrl+Z = back to the
    previous pair (a new vote on it supersedes the old one), Ctrl+Shift+Z =
    forward to the first pair without a vote; +, -, 0 zoom both images in step.
    ``.vote(choice: str) -> bool``   cast a vote as if its key was pressed
                                     (False when ignored: busy, nothing shown).
    ``.back() -> bool``; ``.forward() -> bool``
    ``.current() -> ServedPair | None``; ``.is_busy() -> bool``
    ``.stop() -> None`` / ``.shutdown()``  stop the image decoder (also on close).
    Signals: ``voted(int vote_id, str choice)``, ``pairShown(int pair_pk)``,
    ``progressChanged(int done, int total)``, ``finished()`` (no pair left),
    ``failed(str message)``.

Every database call runs on the shared ``DbWorker``; the UI thread only paints.
Both sides sit in equal panes in one ``SyncGroup``: renders of the same size are
shown at the same scale and zoom / pan together; renders of different pixel sizes
are kept in step in image-normalised coordinates, so a larger render is never
shown bigger than its rival (that would bias the vote).
The side each item is dealt comes from the service (seeded and recorded there);
this view shows ``served.left`` on the left and nothing that names a generator
or a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.records import ItemView
from ..services.pairing import PairSession, ServedPair
from .image_view import ImageView, SyncGroup
from .view_lifecycle import PrefetchingView
from .worker import ImagePrefetcher

__all__ = ["CHOICE_KEYS", "PairView"]

# Choice -> the keys that cast it. Digits first in each list is what the buttons show.
CHOICE_KEYS: dict[str, tuple[str, ...]] = {
    "left": ("1", "Left"),
    "right": ("2", "Right"),
    "both": ("3", "B"),
    "neither": ("4", "N"),
}
CHOICE_TEXT = {
    "left": "Left is better",
    "right": "Right is better",
    "both": "Both meet it",
    "neither": "Neither meets it",
}
MUTED = "#6b7280"
KEY_HINT = ("Ctrl+Z: back to the previous pair  \u00b7  + / \u2212 / 0: zoom both images (drag to pan)"
            "  \u00b7  R: reason")
CHOSEN_STYLE = "QPushButton { background: #dbe7f3; border: 1px solid #5b7fa6; border-radius: 4px; padding: 6px 10px; }"
BUTTON_STYLE = "QPushButton { border: 1px solid #c5c9d0; border-radius: 4px; padding: 6px 10px; }"


class _Side(QFrame):
    """One side of the pair: its output images (zoom-synced) or its text output."""

    def __init__(self, title: str, group: SyncGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._group = group
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        head = QHBoxLayout()
        self.title = QLabel(f"<b>{title}</b>")
        self.code = QLabel()
        self.code.setStyleSheet(f"color: {MUTED};")
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.code)
        lay.addLayout(head)
        self._images = QVBoxLayout()
        self._images.setSpacing(4)
        lay.addLayout(self._images, 1)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        # Selectable by mouse only: arrow keys stay vote keys.
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.text.hide()
        lay.addWidget(self.text, 1)
        self.note = QLabel()
        self.note.setStyleSheet(f"color: {MUTED};")
        self.note.setWordWrap(True)
        self.note.hide()
        lay.addWidget(self.note)
        self.views: list[ImageView] = []

    def _ensure_views(self, n: int) -> None:
        while len(self.views) < n:
            v = ImageView()
            v.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys belong to the pair view
            v.setMinimumSize(160, 160)
            v.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
            self._images.addWidget(v, 1)
            self._group.add(v)
            self.views.append(v)
        for i, v in enumerate(self.views):
            v.setVisible(i < n)

    def show_item(self, view: ItemView, images: dict[str, QImage | None], mask: QImage | None) -> None:
        self.code.setText(view.display_code)
        self._ensure_views(len(view.outputs))
        missing = 0
        for v, sha in zip(self.views, view.outputs, strict=False):
            img = images.get(sha)
            missing += img is None
            v.set_image(img, mask=mask if img is not None else None)
        has_text = bool(view.text)
        self.text.setVisible(has_text)
        self.text.setPlainText(view.text or "")
        if missing:
            self.note.setText("One image of this output could not be shown. Vote on what you can "
                              "see, or choose Neither and say why.")
        self.note.setVisible(bool(missing))
        if not view.outputs and not has_text:
            self.note.setText("This output has no image or text.")
            self.note.show()

    def clear(self) -> None:
        for v in self.views:
            v.set_image(None)


class PairView(PrefetchingView, QWidget):
    voted = Signal(int, str)
    pairShown = Signal(int)  # noqa: N815 - Qt signal naming
    progressChanged = Signal(int, int)  # noqa: N815
    finished = Signal()
    failed = Signal(str)

    def __init__(self, study: Any, rater: str, worker: Any, settings: Any = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.study = study
        self.rater = rater
        self.worker = worker
        self.settings = settings
        self.setObjectName("PairView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._session: PairSession | None = None
        self._served: ServedPair | None = None
        self._busy = True  # until the first pair is on screen
        self._shown_at: float | None = None
        self._waiting: set[str] = set()  # image keys the current pair still needs
        self._failed_keys: set[str] = set()
        self._stopped = False
        self._allow_back_only = False
        self._prefetcher = ImagePrefetcher(study.media.read, max_threads=2, capacity=16, parent=self)
        self._prefetcher.ready.connect(self._on_image)
        self._prefetcher.failed.connect(self._on_image_failed)
        self._build()
        self._bind_keys()
        self._set_status("Opening the pair queue...")
        self._submit(self._open_job, self._on_loaded)

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(6)
        self.question = QLabel()
        self.question.setObjectName("pairQuestion")
        self.question.setStyleSheet("font-size: 15px; font-weight: 600;")
        self.question.setWordWrap(True)
        self.prompt = QLabel()
        self.prompt.setWordWrap(True)
        self.prompt.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.criteria = QLabel()
        self.criteria.setWordWrap(True)
        self.criteria.setStyleSheet(f"color: {MUTED};")
        self.criteria.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.question)
        outer.addWidget(self.prompt)
        outer.addWidget(self.criteria)

        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        page = QWidget()
        sides = QHBoxLayout(page)
        sides.setContentsMargins(0, 0, 0, 0)
        self.sync = SyncGroup(parent=self)
        self.left_side = _Side("Left", self.sync)
        self.right_side = _Side("Right", self.sync)
        sides.addWidget(self.left_side, 1)
        sides.addWidget(self.right_side, 1)
        self.stack.addWidget(page)
        self.done_page = QLabel()
        self.done_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_page.setWordWrap(True)
        self.done_page.setStyleSheet("font-size: 15px;")
        self.stack.addWidget(self.done_page)

        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for choice in ("left", "both", "neither", "right"):
            keys = CHOICE_KEYS[choice]
            text = f"{CHOICE_TEXT[choice]}  [{keys[0]} / {keys[1]}]"
            if choice == "left":
                text = "\u2190 " + text
            elif choice == "right":
                text += " \u2192"
            b = QPushButton(text)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.setStyleSheet(BUTTON_STYLE)
            b.clicked.connect(lambda _=False, c=choice: self.vote(c))
            self.buttons[choice] = b
            row.addWidget(b, 1)
        outer.addLayout(row)

        foot = QHBoxLayout()
        self.reason = QLineEdit()
        self.reason.setObjectName("pairReason")
        self.reason.setPlaceholderText("Reason (optional): press R or Tab to type, Esc or Enter to go back to voting")
        self.reason.setClearButtonEnabled(True)
        self.reason.returnPressed.connect(self.setFocus)
        foot.addWidget(self.reason, 1)
        self.progress = QLabel()
        self.progress.setObjectName("pairProgress")
        self.progress.setMinimumWidth(110)
        self.progress.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        foot.addWidget(self.progress)
        outer.addLayout(foot)
        self.status = QLabel()
        self.status.setObjectName("pairStatus")
        self.status.setStyleSheet(f"color: {MUTED};")
        outer.addWidget(self.status)
        self.setTabOrder(self, self.reason)

    def _bind_keys(self) -> None:
        self._shortcuts: list[QShortcut] = []

        def bind(seq: str | QKeySequence, fn: Callable[[], object]) -> None:
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.setAutoRepeat(False)  # a held key casts one vote, not a stream
            sc.activated.connect(fn)
            self._shortcuts.append(sc)

        for choice, keys in CHOICE_KEYS.items():
            for k in keys:
                bind(k, lambda c=choice: self.vote(c))
        bind("R", self._focus_reason)
        bind(QKeySequence.StandardKey.Undo, self.back)
        bind("Ctrl+Shift+Z", self.forward)
        for k in ("+", "="):
            bind(k, self.sync.zoom_in)
        bind("-", self.sync.zoom_out)
        bind("0", self.sync.fit)
        esc = QShortcut(QKeySequence("Esc"), self.reason)
        esc.setContext(Qt.ShortcutContext.WidgetShortcut)
        esc.setAutoRepeat(False)
        esc.activated.connect(self.setFocus)
        self._shortcuts.append(esc)

    # -- worker plumbing -----------------------------------------------------------
    # These run on the worker thread: database only, no widgets.
    def _open_job(self) -> tuple[str, ServedPair | None, Any, ServedPair | None]:
        self._session = PairSession(self.study, self.rater)
        return self._session.question, *self._fetch_next()

    def _fetch_next(self) -> tuple[ServedPair | None, Any, ServedPair | None]:
        assert self._session is not None
        served = self._session.next()
        return served, self._session.progress(), self._peek(served)

    def _peek(self, served: ServedPair | None) -> ServedPair | None:
        # The pair after this one, so its images decode while the rater looks at this one.
        # Needs PairSession.peek(served) (asked of the services owner); without it the
        # next pair's images are decoded the moment the pair arrives.
        peek = getattr(self._session, "peek", None)
        if served is None or peek is None:
            return None
        return peek(served)

    def _vote_job(self, served: ServedPair, choice: str, reason: str, time_ms: int
                  ) -> tuple[int, str, ServedPair | None, Any, ServedPair | None]:
        assert self._session is not None
        vid = self._session.vote(served, choice, reason, time_ms)
        return vid, choice, *self._fetch_next()

    def _back_job(self) -> tuple[ServedPair | None, Any]:
        assert self._session is not None
        return self._session.back(), self._session.progress()

    def _forward_job(self) -> tuple[ServedPair | None, Any, ServedPair | None]:
        return self._fetch_next()

    # -- results (UI thread) -------------------------------------------------------
    def _on_loaded(self, result: tuple) -> None:
        question, served, progress, following = result
        self.question.setText(question or "Which output better meets the prompt and criteria?")
        self._show(served, progress, following)

    def _on_voted(self, result: tuple) -> None:
        vid, choice, served, progress, following = result
        self.voted.emit(vid, choice)
        self._show(served, progress, following)

    def _on_back(self, result: tuple) -> None:
        served, progress = result
        if served is None:
            self._busy = False
            self._set_status("This is the first pair of the session: there is nothing to go back to.")
            return
        self._show(served, progress, None)

    def _on_error(self, exc: BaseException) -> None:
        if type(exc).__name__ == "AlreadyAnswered" and self._session is not None:
            # This pair already has a vote (another window?): the first one counts; move on.
            self._submit(self._forward_job, lambda r: self._show(*r))
            return
        self._busy = False if self._served is not None else self._busy
        msg = str(exc) or type(exc).__name__
        self._set_status(f"Could not complete that: {msg}")
        self.failed.emit(msg)

    def _show(self, served: ServedPair | None, progress: Any, following: ServedPair | None) -> None:
        self._served = served
        if progress is not None:
            self.progress.setText(f"{progress.done} / {progress.total} done")
            self.progressChanged.emit(progress.done, progress.total)
        if served is None:
            self._busy = True  # nothing to vote on; Ctrl+Z still works through back()
            self._allow_back_only = True
            self.left_side.clear()
            self.right_side.clear()
            self.prompt.clear()
            self.criteria.clear()
            self.done_page.setText("Every pair in your queue has a vote. Thank you!\n\n"
                                   "Ctrl+Z goes back to change your last vote.")
            self.stack.setCurrentIndex(1)
            self._mark_choice(None)
            self._set_status("")
            self.finished.emit()
            return
        self._allow_back_only = False
        self.stack.setCurrentIndex(0)
        self.prompt.setText(served.left.prompt)
        self.criteria.setText(f"Criteria: {served.left.criteria}" if served.left.criteria else "")
        self.criteria.setVisible(bool(served.left.criteria))
        self.reason.setText(served.previous_reason or "")
        self._mark_choice(served.previous_choice)
        if served.previous_choice:
            self._set_status(f"Going back: your vote was '{CHOICE_TEXT[served.previous_choice]}'. "
                             "A new vote replaces it; Ctrl+Shift+Z returns without changing it.")
        else:
            self._set_status("")
        keys = self._image_keys(served)
        self._failed_keys -= set(keys)
        self._waiting = {k for k in keys if not self._prefetcher.contains(k)}
        self._prefetcher.prefetch(keys)
        if following is not None:
            self._prefetcher.prefetch(self._image_keys(following))
        self._busy = True
        if not self._waiting:
            self._present()
        else:
            self.left_side.clear()
            self.right_side.clear()
            self._set_status("Loading images...")

    @staticmethod
    def _image_keys(served: ServedPair) -> list[str]:
        keys: list[str] = []
        for v in (served.left, served.right):
            keys.extend(v.outputs)
            if v.mask:
                keys.append(v.mask)
        return list(dict.fromkeys(keys))

    def _on_image(self, key: str, _img: QImage) -> None:
        if key in self._waiting:
            self._waiting.discard(key)
            if not self._waiting:
                self._present()

    def _on_image_failed(self, key: str, _message: str) -> None:
        self._failed_keys.add(key)
        self._on_image(key, QImage())

    def _present(self) -> None:
        """Both sides appear together, so neither is seen first."""
        s = self._served
        if s is None:
            return
        images = {k: self._prefetcher.get(k) for k in self._image_keys(s)}
        for side, item in ((self.left_side, s.left), (self.right_side, s.right)):
            mask = images.get(item.mask) if item.mask else None
            side.show_item(item, images, mask)
        self.sync.fit()
        if self.status.text() in ("Loading images...", "Saving..."):
            self._set_status("")
        self._shown_at = time.monotonic()
        self._busy = False
        if not self.reason.hasFocus():
            self.setFocus()
        self.pairShown.emit(s.pair_pk)

    def _mark_choice(self, choice: str | None) -> None:
        for c, b in self.buttons.items():
            b.setStyleSheet(CHOSEN_STYLE if c == choice else BUTTON_STYLE)

    def _set_status(self, text: str) -> None:
        self.status.setText(text or KEY_HINT)

    # -- actions -------------------------------------------------------------------
    def vote(self, choice: str) -> bool:
        if choice not in CHOICE_KEYS:
            raise ValueError(f"choice must be one of {tuple(CHOICE_KEYS)}")
        if self._busy or self._served is None or self._stopped:
            return False
        self._busy = True  # one vote in flight; further keys are ignored until it lands
        served = self._served
        elapsed = int((time.monotonic() - (self._shown_at or time.monotonic())) * 1000)
        self._mark_choice(choice)
        self._set_status("Saving...")
        self._submit(self._vote_job, self._on_voted, served, choice, self.reason.text(), elapsed)
        self.setFocus()
        return True

    def back(self) -> bool:
        if self._stopped or self._session is None:
            return False
        if self._busy and not getattr(self, "_allow_back_only", False):
            return False
        self._busy = True
        self._submit(self._back_job, self._on_back)
        return True

    def forward(self) -> bool:
        if self._busy or self._stopped or self._served is None or self._served.previous_vote is None:
            return False
        self._busy = True
        self._submit(self._forward_job, lambda r: self._show(*r))
        return True

    def _focus_reason(self) -> None:
        self.reason.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- queries and lifecycle -----------------------------------------------------
    def current(self) -> ServedPair | None:
        return self._served

