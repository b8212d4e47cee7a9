"""The label view: one item at a time, answered by keyboard.

Shows only what an ``ItemView`` holds (display code, prompt, criteria, output
images or text, input images and mask): never a generator, file name or path.
Anchors look exactly like every other item.

All database work runs on the ``DbWorker``: a submit commits durably before the
next item is shown, and the next item's images are decoded ahead of time by the
``ImagePrefetcher`` so it appears within a frame. While a submit is in flight
every key is ignored (no double submissions), and key auto-repeat never answers.

Public API: ``LabelView(study, rater, worker, settings, parent=None, *, prefetcher=None,
prefetch_ahead=3)`` with ``apply_action(name) -> bool`` (what a key press does),
``submit_answers(answers) -> bool``, ``current_item -> ServedItem | None``,
``busy -> bool``, ``state -> str`` ("opening", "ready", "busy", "done", "error"),
``form -> RubricForm | None``, ``item_panel -> ItemPanel``, ``shutdown()``;
signals ``submitted(int)`` (judgement id, after the commit), ``itemShown()``,
``finished()`` (every item answered), ``recalibrationRequested()``,
``errorOccurred(str)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import InputError
from ..domain.records import ItemView, Progress, ServedItem
from ..domain.rubric import Rubric
from .image_view import ImageView, SyncGroup
from .keymap import Keymap
from .rubric_form import RubricForm, relative_font
from .worker import DbWorker, ImagePrefetcher

PREFETCH_AHEAD = 3
CALM_MS = 4000
MIN_FOR_PACE = 3
PEEK_DELAY_MS = 40  # a pace from one or two answers is noise


# -- worker jobs (run on the database thread; no Qt in here) --------------------------
@dataclass
class Step:
    served: ServedItem | None
    progress: Progress
    judgement: int | None = None
    alert: dict | None = None
    note: str = ""


@dataclass
class Opened:
    session: Any
    rubric: Rubric
    step: Step
    upcoming: list[ItemView] = field(default_factory=list)


def _job_open(study, rater: str) -> Opened:  # noqa: ANN001
    from ..services.labeling import LabelSession

    session = LabelSession(study, rater)
    served = session.next()
    return Opened(session, session.rubric, Step(served, session.progress()))


def _job_submit(session, served: ServedItem, answers: dict, time_ms: int) -> Step:  # noqa: ANN001
    jid = session.submit(served, answers, time_ms)
    alert = session.take_drift_alert()
    nxt = session.next()
    return Step(nxt, session.progress(), jid, alert)


def _job_next(session) -> Step:  # noqa: ANN001
    return Step(session.next(), session.progress())


def _job_back(session) -> Step | None:  # noqa: ANN001
    served = session.back()
    return None if served is None else Step(served, session.progress())


def _job_upcoming(session, n: int, skip: tuple[int, ...]) -> list[ItemView]:  # noqa: ANN001
    from ..services.prefetch import upcoming

    return upcoming(session, n, skip=skip)


def item_media(view: ItemView) -> list[str]:
    """Every image an item shows, in the order the panel lays them out."""
    out = [*view.inputs, *view.outputs]
    if view.mask:
        out.append(view.mask)
    return out


def format_progress(p: Progress) -> str:
    parts = [f"{p.done} / {p.total} done", f"{p.session_done} this session"]
    if p.pace_per_hour and p.session_done >= MIN_FOR_PACE:
        parts.append(f"{p.pace_per_hour:.0f} per hour")
    if p.seconds_left is not None and p.session_done >= MIN_FOR_PACE:
        mins = p.seconds_left / 60
        parts.append(f"about {mins:.0f} min left" if mins < 90 else f"about {mins / 60:.1f} h left")
    return "  ·  ".join(parts)


# -- widgets ---------------------------------------------------------------------------
class ImageTile(QWidget):
    """A caption above an ImageView."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.caption = QLabel()
        self.caption.setFont(relative_font(self.caption, 0.95, bold=True))
        self.view = ImageView()
        self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys belong to the label view
        self.view.setMinimumSize(160, 160)
        lay.addWidget(self.caption)
        lay.addWidget(self.view, 1)


class ItemPanel(QWidget):
    """The item's pictures (inputs beside outputs, zoom and pan in step) and text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sync = SyncGroup(parent=self)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(8)
        self.tiles: list[ImageTile] = []
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.text.hide()
        self.empty = QLabel("This item has no output to show.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()
        self._shas: list[str | None] = []
        self._captions: list[str] = []
        self._has_text = False
        self._stacked: bool | None = None
        self._mask: str | None = None
        self._mask_image: QImage | None = None
        self._mask_visible = True

    def _tile(self, i: int) -> ImageTile:
        while len(self.tiles) <= i:
            t = ImageTile(self)
            self.tiles.append(t)
            self.sync.add(t.view)
        return self.tiles[i]

    def show_item(self, view: ItemView, images: dict[str, QImage | None], mask: QImage | None) -> None:
        entries: list[tuple[str, str]] = []
        for n, sha in enumerate(view.inputs, start=1):
            entries.append((sha, "Input" if len(view.inputs) == 1 else f"Input {n}"))
        for n, sha in enumerate(view.outputs, start=1):
            entries.append((sha, "Output" if len(view.outputs) == 1 else f"Output {n}"))
        self._shas = [sha for sha, _ in entries]
        self._mask = view.mask
        self._mask_image = mask
        self._captions = [caption for _, caption in entries]
        self._has_text = view.text is not None
        for i, (sha, caption) in enumerate(entries):
            t = self._tile(i)
            t.caption.setText(self._caption(caption))
            t.view.set_image(images.get(sha), mask=mask)
            t.view.set_mask_visible(self._mask_visible)
        for t in self.tiles[len(entries):]:
            t.view.set_image(None)
        if view.text is not None:
            self.text.setPlainText(view.text)
        else:
            self.text.clear()
        self._stacked = None
        self._place()

    def _place(self) -> None:
        """Lay the tiles out in a row, or in a column when that shows them larger."""
        n = len(self._shas)
        stacked = self._stack_vertically([self.tiles[i].view.image() for i in range(n)], self._has_text)
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

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        if self._shas:
            self._place()

    def _stack_vertically(self, images: list[QImage | None], has_text: bool) -> bool:
        """Wide pictures (a logo, a banner) go one above the other when that shows them larger."""
        known = [im for im in images if im is not None and not im.isNull()]
        n = len(images)
        if n < 2 or has_text or len(known) < n:
            return False
        w, h = max(self.width(), 1), max(self.height(), 1)
        iw = max(im.width() for im in known)
        ih = max(im.height() for im in known)
        in_row = min(w / n / iw, h / ih)
        in_column = min(w / iw, h / n / ih)
        return in_column > in_row * 1.1

    def _caption(self, base: str) -> str:
        if self._mask is None:
            return base
        return f"{base}  ·  edit mask {'shown' if self._mask_visible else 'hidden'} (M)"

    def image_arrived(self, sha: str, image: QImage) -> None:
        if sha == self._mask:
            self._mask_image = image
            for i, _ in enumerate(self._shas):
                v = self.tiles[i].view
                v.set_mask(image)
                v.set_mask_visible(self._mask_visible)
        for i, s in enumerate(self._shas):
            if s == sha and self.tiles[i].view.image() is None:
                self.tiles[i].view.set_image(image, mask=self._mask_image)
                self.tiles[i].view.set_mask_visible(self._mask_visible)
        if self._shas:
            self._place()

    def waiting_for(self) -> set[str]:
        out = {s for i, s in enumerate(self._shas) if s and self.tiles[i].view.image() is None}
        if self._mask and self._mask_image is None:
            out.add(self._mask)
        return out

    def views(self) -> list[ImageView]:
        return [self.tiles[i].view for i in range(len(self._shas))]

    @property
    def has_mask(self) -> bool:
        return self._mask is not None

    def toggle_mask(self) -> bool:
        self._mask_visible = not self._mask_visible
        for i, v in enumerate(self.views()):
            v.set_mask_visible(self._mask_visible)
            self.tiles[i].caption.setText(self._caption(self._captions[i]))
        return self._mask_visible


class InstructionsDialog(QDialog):
    """Rubric instructions, metric help and the keys; F1 or Esc closes it."""

    def __init__(self, rubric: Rubric, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Instructions: {rubric.title}")
        self.setModal(False)
        lay = QVBoxLayout(self)
        browser = QTextBrowser()
        browser.setOpenLinks(False)
        browser.setHtml(self._html(rubric, keymap))
        lay.addWidget(browser)
        close = QPushButton("Close (F1 or Esc)")
        close.clicked.connect(self.hide)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        self.keymap = keymap
        cw = self.fontMetrics().averageCharWidth()
        self.resize(cw * 90, self.fontMetrics().lineSpacing() * 36)

    @staticmethod
    def _html(rubric: Rubric, keymap: Keymap) -> str:
        from html import escape

        parts = [f"<h2>{escape(rubric.title)}</h2>", f"<p>{escape(rubric.instructions).replace(chr(10), ' ')}</p>"]
        parts.append("<h3>Metrics</h3><ul>")
        for m in rubric.metrics:
            line = f"<li><b>{escape(m.label)}</b>"
            if m.help:
                line += f": {escape(m.help)}"
            if m.levels:
                line += "<br>" + "; ".join(f"{k} = {escape(v)}" for k, v in sorted(m.levels.items(), reverse=True))
            parts.append(line + "</li>")
        parts.append("</ul>")
        if rubric.rules:
            parts.append("<h3>Verdict rules</h3><ul>")
            parts.extend(f"<li><code>{escape(r)}</code></li>" for r in rubric.rules)
            parts.append("</ul>")
        parts.append("<h3>Keys</h3><table cellspacing='0' cellpadding='3'>")
        for _group, label, keys in keymap.help_rows():
            parts.append(f"<tr><td><b>{escape(keys)}</b></td><td>{escape(label)}</td></tr>")
        parts.append("</table>")
        return "".join(parts)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_F1, Qt.Key.Key_Escape, Qt.Key.Key_Question):
            self.hide()
            return
        super().keyPressEvent(event)


class Banner(QFrame):
    """A calm notice with optional buttons, above the item."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        self.text = QLabel()
        self.text.setWordWrap(True)
        lay.addWidget(self.text, 1)
        self.action = QPushButton("Recalibrate now")
        self.action.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.dismiss = QPushButton("Continue labelling")
        self.dismiss.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.dismiss.clicked.connect(self.hide)
        lay.addWidget(self.action)
        lay.addWidget(self.dismiss)
        self.hide()


# -- the view --------------------------------------------------------------------------
class LabelView(QWidget):
    submitted = Signal(int)
    itemShown = Signal()  # noqa: N815
    finished = Signal()
    recalibrationRequested = Signal()  # noqa: N815
    errorOccurred = Signal(str)  # noqa: N815

    def __init__(
        self,
        study,  # noqa: ANN001 - annotator.services.study.Study
        rater: str,
        worker: DbWorker,
        settings=None,  # noqa: ANN001 - AppSettings
        parent: QWidget | None = None,
        *,
        prefetcher: ImagePrefetcher | None = None,
        prefetch_ahead: int = PREFETCH_AHEAD,
    ) -> None:
        super().__init__(parent)
        self.study = study
        self.rater = rater
        self.worker = worker
        self.settings = settings
        self.keymap = Keymap.from_settings(settings)
        self._own_prefetcher = prefetcher is None
        self.prefetcher = prefetcher or ImagePrefetcher(study.media.read, parent=self)
        self.prefetcher.ready.connect(self._image_ready)
        self.prefetcher.failed.connect(self._image_failed)
        self.prefetch_ahead = prefetch_ahead
        self.session = None
        self.rubric: Rubric | None = None
        self.form: RubricForm | None = None
        self._served: ServedItem | None = None
        self._state = "opening"
        self._shown_at = time.monotonic()
        self._instructions: InstructionsDialog | None = None
        self._closed = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._build()
        self.worker.submit(_job_open, study, rater, on_done=self._opened, on_error=self._failed)

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 6)
        outer.setSpacing(6)
        self.banner = Banner(self)
        self.banner.action.clicked.connect(self._recalibrate)
        outer.addWidget(self.banner)

        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)

        self.loading = QLabel("Opening the label session…")
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.loading)

        work = QWidget()
        wl = QVBoxLayout(work)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(6)
        # Prompt and criteria stay visible: the rubric is judged against them.
        head = QFrame()
        head.setFrameShape(QFrame.Shape.StyledPanel)
        hl = QGridLayout(head)
        hl.setContentsMargins(10, 6, 10, 6)
        hl.setHorizontalSpacing(10)
        hl.setVerticalSpacing(3)
        self.code_label = QLabel()
        self.code_label.setFont(relative_font(self.code_label, 0.9))
        self.code_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        p_title = QLabel("Prompt")
        p_title.setFont(relative_font(p_title, 1.0, bold=True))
        c_title = QLabel("Criteria")
        c_title.setFont(relative_font(c_title, 1.0, bold=True))
        self.prompt_label = QLabel()
        self.criteria_label = QLabel()
        for lab in (self.prompt_label, self.criteria_label):
            lab.setWordWrap(True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.prompt_label.setFont(relative_font(self.prompt_label, 1.08))
        hl.addWidget(p_title, 0, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.prompt_label, 0, 1)
        hl.addWidget(self.code_label, 0, 2)
        hl.addWidget(c_title, 1, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.criteria_label, 1, 1, 1, 2)
        hl.setColumnStretch(1, 1)
        self.c_title = c_title
        # A plain frame (no scroll area): the header's shape must not depend on the
        # moment of layout, and prompt and criteria are never hidden behind a scroll.
        head.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.head = head
        wl.addWidget(head)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        self.item_panel = ItemPanel()
        split.addWidget(self.item_panel)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(6, 0, 0, 0)
        rl.setSpacing(6)
        self.right_layout = rl
        self.form_scroll = QScrollArea()
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.form_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        rl.addWidget(self.form_scroll, 1)
        self.message = QLabel()
        self.message.setWordWrap(True)
        rl.addWidget(self.message)
        buttons = QHBoxLayout()
        self.back_btn = QPushButton(f"Back ({self.keymap.hint('back')})")
        self.submit_btn = QPushButton(f"Submit ({self.keymap.hint('submit')})")
        self.help_btn = QPushButton(f"Instructions ({self.keymap.hint('instructions')})")
        for b in (self.help_btn, self.back_btn, self.submit_btn):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.submit_btn.setDefault(True)
        self.submit_btn.clicked.connect(lambda: self.apply_action("submit"))
        self.back_btn.clicked.connect(lambda: self.apply_action("back"))
        self.help_btn.clicked.connect(lambda: self.apply_action("instructions"))
        buttons.addWidget(self.help_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.back_btn)
        buttons.addWidget(self.submit_btn)
        rl.addLayout(buttons)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        cw = self.fontMetrics().averageCharWidth()
        right.setMinimumWidth(cw * 46)
        self.splitter = split
        self._sized = False
        wl.addWidget(split, 1)
        self.stack.addWidget(work)
        self.work = work

        self.done_label = QLabel()
        self.done_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_label.setWordWrap(True)
        self.done_label.setFont(relative_font(self.done_label, 1.3))
        self.stack.addWidget(self.done_label)

        self.progress_label = QLabel()
        self.progress_label.setFont(relative_font(self.progress_label, 0.95))
        self.zoom_hint = QLabel(
            f"Zoom {self.keymap.hint('zoom_in')} / {self.keymap.hint('zoom_out')}, "
            f"fit {self.keymap.hint('zoom_fit')}, 100 % {self.keymap.hint('zoom_actual')}, "
            "wheel and drag on the image"
        )
        self.zoom_hint.setFont(relative_font(self.zoom_hint, 0.9))
        status = QHBoxLayout()
        status.addWidget(self.progress_label, 1)
        status.addWidget(self.zoom_hint)
        outer.addLayout(status)
        self._calm = QTimer(self)
        self._calm.setSingleShot(True)
        self._calm.timeout.connect(lambda: self.message.setText(""))

    def showEvent(self, event) -> None:  # noqa: N802, ANN001
        super().showEvent(event)
        if not self._sized:
            # Pictures get the larger share; the form keeps a readable width.
            self._sized = True
            total = max(self.width(), 800)
            form_w = max(self.splitter.widget(1).minimumWidth(), int(total * 0.4))
            self.splitter.setSizes([total - form_w, form_w])

    # -- state ---------------------------------------------------------------------
    @property
    def state(self) -> str:
        return self._state

    @property
    def busy(self) -> bool:
        return self._state in ("opening", "busy")

    @property
    def current_item(self) -> ServedItem | None:
        return self._served

    def _say(self, text: str, *, calm: bool = True) -> None:
        self.message.setText(text)
        if calm:
            self._calm.start(CALM_MS)

    # -- worker results (UI thread) ------------------------------------------------
    def _opened(self, opened: Opened) -> None:
        if self._closed:
            return
        self.session = opened.session
        self.rubric = opened.rubric
        self.form = RubricForm(self.rubric, self.keymap)
        self.form.changed.connect(self._form_changed)
        self.form_scroll.setWidget(self.form)
        # The live verdict stays in view beside the buttons, whatever the scroll.
        self.right_layout.insertWidget(1, self.form.verdict_label)
        edit = self.form.reason_edit()
        if edit is not None:
            edit.installEventFilter(self)
        self._step(opened.step)

    def _submitted(self, step: Step) -> None:
        if self._closed:
            return
        if step.judgement is not None:
            self.submitted.emit(step.judgement)
        self._step(step)
        if step.alert:
            self._show_drift(step.alert)

    def _step(self, step: Step) -> None:
        self.progress_label.setText(format_progress(step.progress))
        self._served = step.served
        if step.served is None:
            self._state = "done"
            self.done_label.setText(
                f"Every item is answered: {step.progress.done} of {step.progress.total}.\n"
                f"Thank you. {self.keymap.hint('back')} goes back to the last answer."
            )
            self.stack.setCurrentWidget(self.done_label)
            self.finished.emit()
            return
        self._show(step.served)

    def _show(self, served: ServedItem) -> None:
        v = served.view
        images = {sha: self.prefetcher.get(sha) for sha in [*v.inputs, *v.outputs]}
        mask = self.prefetcher.get(v.mask) if v.mask else None
        self.item_panel.show_item(v, images, mask)
        missing = self.item_panel.waiting_for()
        if missing:
            self.prefetcher.prefetch(sorted(missing))
        self.code_label.setText(f"Item {v.display_code}")
        self.prompt_label.setText(v.prompt)
        self.criteria_label.setText(v.criteria or "—")
        answers = dict(served.previous or {})
        if served.previous_reason and self.rubric is not None:
            for m in self.rubric.metrics:
                if m.kind == "text" and not answers.get(m.key):
                    answers[m.key] = served.previous_reason
                    break
        assert self.form is not None
        self.form.set_answers(answers)
        self.form_scroll.ensureVisible(0, 0)
        if served.previous_judgement is not None:
            self._say("Correcting an earlier answer: submit to replace it (the old one is kept in the log).",
                      calm=False)
        else:
            self.message.setText("")
        self.stack.setCurrentWidget(self.work)
        self._state = "ready"
        self._shown_at = time.monotonic()
        if self.focusWidget() is None or not self.isAncestorOf(self.focusWidget()):
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.itemShown.emit()
        if self.prefetch_ahead > 0 and self.session is not None:
            # After the new item has painted: the peek must not compete with that frame.
            QTimer.singleShot(PEEK_DELAY_MS, lambda pk=served.item_pk: self._peek(pk))

    def _peek(self, item_pk: int) -> None:
        if self._closed or self.session is None or self._served is None or self._served.item_pk != item_pk:
            return
        self.worker.submit(_job_upcoming, self.session, self.prefetch_ahead, (item_pk,),
                           on_done=self._upcoming, on_error=lambda _e: None)

    def _upcoming(self, views: list[ItemView]) -> None:
        if self._closed:
            return
        keys: list[str] = []
        for v in views:
            keys.extend(item_media(v))
        self.prefetcher.prefetch(keys)

    def _image_ready(self, sha: str, image: QImage) -> None:
        if self._served is not None and sha in item_media(self._served.view):
            self.item_panel.image_arrived(sha, image)

    def _image_failed(self, sha: str, message: str) -> None:
        if self._served is not None and sha in item_media(self._served.view):
            self._say("An image of this item could not be shown. If you cannot decide, "
                      f"answer \"cannot judge\" ({self.keymap.hint('cannot_judge')}).", calm=False)

    def _failed(self, exc: BaseException) -> None:
        if self._closed:
            return
        if type(exc).__name__ == "AlreadyAnswered":
            # A double submission of the same first answer: the first one counts.
            self._state = "busy"
            self.worker.submit(_job_next, self.session, on_done=self._step, on_error=self._failed)
            return
        if isinstance(exc, InputError):
            self._state = "ready" if self._served is not None else "error"
            self._say(str(exc), calm=False)
            return
        self._state = "error" if self._served is None else "ready"
        text = f"Something went wrong: {type(exc).__name__}: {exc}"
        self._say(text, calm=False)
        if self._served is None:
            self.loading.setText(text)
        self.errorOccurred.emit(text)

    def _form_changed(self) -> None:
        if self.message.text().startswith("Still to answer"):
            self.message.setText("")

    def _show_drift(self, alert: dict) -> None:
        metric = alert.get("metric")
        label = metric
        if self.rubric is not None and metric and self.rubric.has(metric):
            label = self.rubric.metric(metric).label
        where = {"up": "above", "down": "below"}.get(alert.get("direction") or "", "away from")
        self.banner.text.setText(
            f"Your recent answers on “{label}” have drifted {where} the reference answers. "
            "A short recalibration session brings them back in line."
        )
        self.banner.show()

    def _recalibrate(self) -> None:
        self.banner.hide()
        self.recalibrationRequested.emit()

    # -- actions (keys and buttons land here) --------------------------------------
    def apply_action(self, name: str) -> bool:
        """Do what the key bound to `name` does; False when it does nothing now."""
        if name == "instructions":
            self._toggle_instructions()
            return True
        if self.busy or self._closed:
            return False  # a submit is in flight: nothing may change under it
        if name == "back":
            return self._back()
        if self._state != "ready" or self.form is None or self._served is None:
            return False
        if name == "submit":
            return self._submit()
        if name in ("zoom_in", "zoom_out", "zoom_fit", "zoom_actual"):
            getattr(self.item_panel.sync, {"zoom_in": "zoom_in", "zoom_out": "zoom_out",
                                           "zoom_fit": "fit", "zoom_actual": "actual_size"}[name])()
            return True
        if name == "toggle_mask":
            if not self.item_panel.has_mask:
                return False
            self.item_panel.toggle_mask()
            return True
        if name == "reason":
            edit = self.form.reason_edit()
            if edit is None:
                return False
            edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        return self.form.apply(name)

    def submit_answers(self, answers: dict[str, Any]) -> bool:
        """Fill the form and submit, exactly as the keys would."""
        if self.busy or self.form is None or self._state != "ready":
            return False
        self.form.set_answers(answers)
        return self.apply_action("submit")

    def _submit(self) -> bool:
        assert self.form is not None and self._served is not None
        missing = self.form.missing_labels()
        if missing:
            self.form.focus_metric(self.form.missing()[0])
            rest = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            self._say(f"Still to answer: {missing[0]}{rest}.")
            return False
        answers = self.form.answers()
        elapsed = int((time.monotonic() - self._shown_at) * 1000)
        self._state = "busy"
        self.worker.submit(_job_submit, self.session, self._served, answers, elapsed,
                           on_done=self._submitted, on_error=self._failed)
        return True

    def _back(self) -> bool:
        if self.session is None:
            return False
        self._state = "busy"

        def done(step: Step | None) -> None:
            if self._closed:
                return
            if step is None:
                self._state = "ready" if self._served is not None else "done"
                self._say("Nothing earlier to go back to in this session.")
                return
            self._step(step)

        self.worker.submit(_job_back, self.session, on_done=done, on_error=self._failed)
        return True

    def _toggle_instructions(self) -> None:
        if self.rubric is None:
            return
        if self._instructions is None:
            self._instructions = InstructionsDialog(self.rubric, self.keymap, self)
        if self._instructions.isVisible():
            self._instructions.hide()
            self.setFocus()
        else:
            self._instructions.show()
            self._instructions.raise_()

    # -- keys ----------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.isAutoRepeat():
            event.accept()  # a held key must never answer twice or submit twice
            return
        action = self.keymap.action_for(event)
        if action is None:
            super().keyPressEvent(event)
            return
        self.apply_action(action)
        event.accept()

    def event(self, event: QEvent) -> bool:
        # Tab / Backtab move between metrics instead of between widgets.
        if event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            self.keyPressEvent(event)
            return True
        return super().event(event)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.KeyPress and self.form is not None and obj is self.form.reason_edit():
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
                event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            ):
                if not event.isAutoRepeat():
                    self.setFocus(Qt.FocusReason.ShortcutFocusReason)
                    self.apply_action("submit")
                return True
            if key == Qt.Key.Key_F1:
                self.apply_action("instructions")
                return True
        return super().eventFilter(obj, event)

    # -- shutdown ------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop what this view started (its own prefetcher); the worker belongs to the caller."""
        self._closed = True
        if self._instructions is not None:
            self._instructions.close()
        if self._own_prefetcher:
            self.prefetcher.stop()

    def closeEvent(self, event) -> None:  # noqa: N802, ANN001
        self.shutdown()
        super().closeEvent(event)
