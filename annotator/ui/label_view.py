"""The label view: one item at a time, answered by keyboard.

Shows only what an ``ItemView`` holds (display code, prompt, criteria, output
images or text, input images and mask): never a generator, file name or path.
Anchors look exactly like every other item.

All database work runs on the ``DbWorker``: a submit commits durably before the
next item is shown, and the next items' images (and mask overlays) are decoded
ahead of time by the ``ImagePrefetcher`` so the next item appears within a
frame. While a submit is in flight every key is ignored (no double submission),
and key auto-repeat never answers. A failed submit keeps the answer in the form.

Public API: ``LabelView(snapshot, rater, worker, settings=None, parent=None, *, prefetcher=None,
prefetch_ahead=3)`` with ``apply_action(name) -> bool`` (what a key press does),
``submit_answers(answers) -> bool``, ``current_item -> ServedItem | None``,
``busy``, ``state`` (``State``), ``form``, ``item_panel`` (``ItemDisplay``), ``shutdown()``;
signals ``submitted(int)`` (judgement id, after the commit), ``itemShown()``,
``finished()`` (every item answered), ``recalibrationRequested()``, ``errorOccurred(str)``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QImage, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import AlreadyAnswered
from ..domain.records import ItemView, Progress, ServedItem
from .dialogs import InstructionsDialog
from .drafts import DraftStore
from .i18n import current_language, translate
from .item_display import ItemDisplay, media_keys
from .rubric_form import FormScroll, RubricForm
from .session_view import ANSWER_KEYS, FORM_KEYS, SessionView, State, answered_elsewhere
from .settings import location_key
from .style import relative_font, set_accessible
from .worker import DbWorker, ImagePrefetcher

log = logging.getLogger(__name__)

PREFETCH_AHEAD = 3
CALM_MS = 4000
MIN_FOR_PACE = 3  # a pace from one or two answers is noise
PEEK_DELAY_MS = 40
WARM_AFTER_MS = 1500  # the statistics stack is imported once the first item has painted
DRAFT_AFTER_MS = 300  # an unfinished answer is written this long after the last key
DRIFT_RETRY_MS = 200  # how often a due drift check looks whether that import is done


# -- worker jobs (database thread; no Qt in here) ---------------------------------------
@dataclass
class Step:
    served: ServedItem | None
    progress: Progress | None
    judgement: int | None = None
    alert: dict | None = None
    stale: bool = False  # the answer is stored, but what comes next could not be read yet
    drift_due: bool = False  # an anchor was answered: its drift check is a job of its own


def _job_open(study: Any, rater: str) -> tuple[Any, Step]:
    from ..services.labeling import LabelSession

    session = LabelSession(study, rater)
    return session, Step(session.next(), session.progress())


def _job_submit(
    _study: Any,
    session: Any,
    served: ServedItem,
    answers: dict,
    time_ms: int,
    uuid: str | None = None,
) -> Step:
    from ..services.snapshot import ConnectionLost

    jid = session.submit(served, answers, time_ms, uuid)
    alert = session.take_drift_alert()
    try:
        return Step(session.next(), session.progress(), jid, alert, drift_due=session.drift_due)
    except ConnectionLost:
        # Stored: only the next item is missing. Never re-run the submit for it (the view
        # fetches the next item again instead).
        return Step(None, None, jid, alert, stale=True, drift_due=session.drift_due)


def _job_drift(_study: Any, session: Any) -> None:
    """The drift check of the anchor just answered: queued after the next item is shown, so the
    save itself never waits for it (a flag is shown after the next live answer, as before)."""
    session.check_drift()


def _job_next(_study: Any, session: Any) -> Step:
    return Step(session.next(), session.progress())


def _job_back(_study: Any, session: Any) -> Step | None:
    served = session.back()
    return None if served is None else Step(served, session.progress())


def _job_upcoming(_study: Any, session: Any, n: int, skip: tuple[int, ...]) -> list[ItemView]:
    from ..services.prefetch import upcoming

    return upcoming(session, n, skip=skip)


def format_progress(p: Progress) -> str:
    parts = [
        translate("LabelView", "{done} / {total} done").format(done=p.done, total=p.total),
        translate("LabelView", "{n} this session").format(n=p.session_done),
    ]
    if p.pace_per_hour and p.session_done >= MIN_FOR_PACE:
        parts.append(translate("LabelView", "{n} per hour").format(n=f"{p.pace_per_hour:.0f}"))
    if p.seconds_left is not None and p.session_done >= MIN_FOR_PACE:
        mins = p.seconds_left / 60
        parts.append(
            translate("LabelView", "less than a minute left")
            if mins < 0.5  # "about 0 min left" read as if nothing were left
            else translate("LabelView", "about {n} min left").format(n=f"{mins:.0f}")
            if mins < 90
            else translate("LabelView", "about {n} h left").format(n=f"{mins / 60:.1f}")
        )
    return "  ·  ".join(parts)


class Banner(QFrame):
    """A calm notice with a button, above the item (the drift alert)."""

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
        self.action = QPushButton()
        self.dismiss = QPushButton()
        for b in (self.action, self.dismiss):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            lay.addWidget(b)
        self.dismiss.clicked.connect(self.hide)
        self.hide()


# -- the view --------------------------------------------------------------------------
class LabelView(SessionView):
    submitted = Signal(int)
    itemShown = Signal()  # noqa: N815 - Qt signal naming
    finished = Signal()
    recalibrationRequested = Signal()  # noqa: N815
    context = "label"

    def __init__(
        self,
        snapshot: Any,
        rater: str,
        worker: DbWorker,
        settings: Any = None,
        parent: QWidget | None = None,
        *,
        prefetcher: ImagePrefetcher | None = None,
        prefetch_ahead: int = PREFETCH_AHEAD,
    ) -> None:
        super().__init__(snapshot, rater, worker, settings, parent, prefetcher=prefetcher)
        self.prefetch_ahead = prefetch_ahead
        self.rubric = snapshot.rubric_in(
            current_language()
        )  # its texts in the app's language, same version
        self.session: Any = None
        self._served: ServedItem | None = None
        self._instructions: InstructionsDialog | None = None
        self._last_submit: tuple[dict, int] | None = None
        self._pending: tuple[int, dict, int] | None = (
            None  # (item pk, answers, ms) while its save is in doubt
        )
        self._carried: tuple[Any, ...] | None = None
        self._missing_said = ""
        self._peeking = False
        self._drafts = _draft_store(settings, snapshot, rater)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_AFTER_MS)
        self._draft_timer.timeout.connect(self._keep_draft)
        self._drift_timer = QTimer(self)
        self._drift_timer.setInterval(DRIFT_RETRY_MS)
        self._drift_timer.timeout.connect(self._drift_tick)
        self._build()
        self.open()

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 6)
        outer.setSpacing(6)
        self.banner = Banner(self)
        self.banner.action.setText(
            translate("LabelView", "Recalibrate now ({key})").format(
                key=self.keymap.hint("mode_calibration")
            )
        )
        self.banner.dismiss.setText(
            translate("LabelView", "Continue labelling ({key})").format(
                key=self.keymap.hint("dismiss")
            )
        )
        set_accessible(
            self.banner.action,
            translate("LabelView", "Recalibrate now"),
            translate("LabelView", "Opens a short session that brings your answers back in line"),
        )
        set_accessible(
            self.banner.dismiss,
            translate("LabelView", "Continue labelling"),
            translate("LabelView", "Closes the drift notice"),
        )
        set_accessible(
            self.banner.text,
            translate("LabelView", "Drift notice"),
            translate("LabelView", "A notice about your recent answers"),
        )
        self.banner.action.clicked.connect(self._recalibrate)
        outer.addWidget(self.banner)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.loading = QLabel(translate("LabelView", "Opening the label session…"))
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.loading.setWordWrap(True)
        self.stack.addWidget(self.loading)

        work = QWidget()
        wl = QVBoxLayout(work)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(6)
        wl.addWidget(self._header())
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        self.item_panel = ItemDisplay(self.keymap)
        split.addWidget(self.item_panel)
        split.addWidget(self._form_side())
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.splitter = split
        self._sized = False
        wl.addWidget(split, 1)
        self.stack.addWidget(work)
        self.work = work

        self.done_page = QWidget()
        dl = QVBoxLayout(self.done_page)
        dl.addStretch(1)
        self.done_label = QLabel()
        self.done_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_label.setWordWrap(True)
        self.done_label.setFont(relative_font(self.done_label, 1.3))
        dl.addWidget(self.done_label)
        # A package's work goes back to the lead as the same file: where it is, and its folder.
        self.send_back_label = QLabel()
        self.send_back_label.setObjectName("sendBack")
        self.send_back_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.send_back_label.setWordWrap(True)
        self.send_back_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        dl.addWidget(self.send_back_label)
        self.open_folder_btn = QPushButton(
            translate("LabelView", "Open the folder that holds it ({key})").format(
                key=self.keymap.hint("submit")
            )
        )
        self.open_folder_btn.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its key: Enter, here
        self.open_folder_btn.setObjectName("openPackageFolder")
        set_accessible(
            self.open_folder_btn,
            translate("LabelView", "Open the folder that holds it"),
            translate("LabelView", "Shows the package file in the file manager, to send it back"),
        )
        self.open_folder_btn.clicked.connect(self.open_package_folder)
        dl.addWidget(self.open_folder_btn, 0, Qt.AlignmentFlag.AlignHCenter)
        dl.addStretch(1)
        is_package = bool(getattr(self.snapshot, "is_package", False))
        self.send_back_label.setVisible(is_package)
        self.open_folder_btn.setVisible(is_package)
        self.stack.addWidget(self.done_page)

        self.progress_label = QLabel()
        self.progress_label.setFont(relative_font(self.progress_label, 0.95))
        k = self.keymap.hint
        self.zoom_hint = QLabel(
            translate(
                "LabelView",
                "Zoom {zin} / {zout}, fit {fit}, 100 % {actual}, wheel and drag on the image",
            ).format(
                zin=k("zoom_in"), zout=k("zoom_out"), fit=k("zoom_fit"), actual=k("zoom_actual")
            )
        )
        set_accessible(
            self.progress_label,
            translate("LabelView", "Progress"),
            translate("LabelView", "Items done, this session, pace and time left"),
        )
        set_accessible(self.zoom_hint, translate("LabelView", "Zoom keys"), self.zoom_hint.text())
        set_accessible(
            self.done_label,
            translate("LabelView", "All done"),
            translate("LabelView", "Every item in your queue is answered"),
        )
        set_accessible(
            self.loading,
            translate("LabelView", "Opening"),
            translate("LabelView", "The label session is opening"),
        )
        self.zoom_hint.setFont(relative_font(self.zoom_hint, 0.9))
        status = QHBoxLayout()
        status.addWidget(self.progress_label, 1)
        status.addWidget(self.zoom_hint)
        outer.addLayout(status)
        self._calm = QTimer(self)
        self._calm.setSingleShot(True)
        self._calm.timeout.connect(lambda: self.message.setText(""))

    def _header(self) -> QFrame:
        """Prompt and criteria stay visible: the rubric is judged against them."""
        head = QFrame()
        head.setFrameShape(QFrame.Shape.StyledPanel)
        hl = QGridLayout(head)
        hl.setContentsMargins(10, 6, 10, 6)
        hl.setHorizontalSpacing(10)
        hl.setVerticalSpacing(3)
        self.code_label = QLabel()
        self.code_label.setFont(relative_font(self.code_label, 0.9))
        self.code_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        titles = []
        for text in (translate("LabelView", "Prompt"), translate("LabelView", "Criteria")):
            title = QLabel(text)
            title.setFont(relative_font(title, 1.0, bold=True))
            titles.append(title)
        self.prompt_label = QLabel()
        self.criteria_label = QLabel()
        set_accessible(
            self.prompt_label,
            titles[0].text(),
            translate("LabelView", "What the output was asked to be"),
        )
        set_accessible(
            self.criteria_label,
            titles[1].text(),
            translate("LabelView", "What the output is judged against"),
        )
        set_accessible(
            self.code_label,
            translate("LabelView", "Item code"),
            translate("LabelView", "The item's opaque code (it names nothing)"),
        )
        for lab in (self.prompt_label, self.criteria_label, self.code_label):
            lab.setProperty("content", True)  # the study's text, not the app's
        for lab in (self.prompt_label, self.criteria_label):
            lab.setWordWrap(True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.prompt_label.setFont(relative_font(self.prompt_label, 1.08))
        hl.addWidget(titles[0], 0, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.prompt_label, 0, 1)
        hl.addWidget(self.code_label, 0, 2)
        hl.addWidget(titles[1], 1, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.criteria_label, 1, 1, 1, 2)
        hl.setColumnStretch(1, 1)
        # A plain frame (no scroll area): prompt and criteria are never hidden behind a scroll.
        head.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.head = head
        return head

    def _form_side(self) -> QWidget:
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(6, 0, 0, 0)
        rl.setSpacing(6)
        self.form = RubricForm(self.rubric, self.keymap)
        set_accessible(
            self.form,
            translate("LabelView", "Answer form"),
            translate(
                "LabelView", "One row per metric of the rubric; the framed one takes the keys"
            ),
        )
        self.form.changed.connect(self._form_changed)
        self.form_scroll = FormScroll()
        self.form_scroll.setWidget(self.form)
        self.form_scroll.follow(self.form)
        rl.addWidget(self.form_scroll, 1)
        rl.addWidget(
            self.form.verdict_label
        )  # stays in view beside the buttons, whatever the scroll
        rl.addWidget(self.message)
        edit = self.form.reason_edit()
        if edit is not None:
            self.reason_keys(
                edit,
                {
                    "submit": self._submit_from_reason,
                    "leave_reason": self.back_to_keys,
                    "instructions": self._toggle_instructions,
                },
            )
        buttons = QHBoxLayout()
        k = self.keymap.hint
        self.help_btn = QPushButton(
            translate("LabelView", "Instructions ({key})").format(key=k("instructions"))
        )
        self.back_btn = QPushButton(translate("LabelView", "Back ({key})").format(key=k("back")))
        self.submit_btn = QPushButton(
            translate("LabelView", "Submit ({key})").format(key=k("submit"))
        )
        for b, action, name in (
            (self.help_btn, "instructions", translate("LabelView", "Instructions")),
            (self.back_btn, "back", translate("LabelView", "Back")),
            (self.submit_btn, "submit", translate("LabelView", "Submit")),
        ):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(lambda _=False, a=action: self.apply_action(a))
            set_accessible(b, name, f"{self.keymap.label(action)} ({k(action)})")
        self.submit_btn.setDefault(True)
        buttons.addWidget(self.help_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.back_btn)
        buttons.addWidget(self.submit_btn)
        rl.addLayout(buttons)
        # The scroll area scrolls only vertically, so it must be as wide as the widest row of
        # answer buttons, and the side as wide as its own row of buttons: at the window's
        # minimum size every control stays whole.
        margins = rl.contentsMargins()
        right.setMinimumWidth(
            max(
                self.fontMetrics().averageCharWidth() * 46,
                self.form.minimumSizeHint().width()
                + self.form_scroll.verticalScrollBar().sizeHint().width(),
                buttons.minimumSize().width(),
            )
            + margins.left()
            + margins.right()
        )
        return right

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized:
            # Pictures get the larger share; the form keeps a readable width.
            self._sized = True
            total = max(self.width(), 800)
            side = self.splitter.widget(1)
            form_w = max(side.minimumWidth() if side is not None else 0, int(total * 0.4))
            self.splitter.setSizes([total - form_w, form_w])

    # -- state ---------------------------------------------------------------------
    @property
    def current_item(self) -> ServedItem | None:
        return self._served

    def _say(self, text: str, *, calm: bool = True) -> None:
        self.message.setText(text)
        if calm:
            self._calm.start(CALM_MS)

    # -- worker results (UI thread) ------------------------------------------------
    def _open_job(self, study: Any) -> tuple[Any, Step]:
        return _job_open(study, self.rater)

    def _opened(self, result: tuple[Any, Step]) -> None:
        self.session, step = result
        self._step(step)
        if self.session.checks_drift:
            # The first anchor's drift check would otherwise import pandas and scipy on the
            # database worker (seconds on a loaded machine) while the rater waits to go on:
            # imported in the background once the first item has painted; the check waits.
            self.session.defer_drift = True
            QTimer.singleShot(WARM_AFTER_MS, _warm_in_background)

    def _submitted(self, step: Step) -> None:
        if step.judgement is not None:
            self.submitted.emit(step.judgement)
        if self._drafts is not None and self._pending is not None:
            self._drafts.clear(self._pending[0])  # stored: the draft has done its work
        self._pending = None
        if step.alert:  # taken from the session once: shown even when the next item is re-read
            self._show_drift(step.alert)
        if step.stale:  # stored; the next item is read again (a read: safe to repeat)
            self._job(_job_next, self.session, on_done=self._step)
        else:
            self._step(step)
        if step.drift_due:
            self._check_drift_when_warm()

    @property
    def drift_check_waiting(self) -> bool:
        """An anchor's drift check waits for the statistics import (tests wait on this as a
        rater's seconds per item would)."""
        return self._drift_timer.isActive()

    def _drift_tick(self) -> None:
        from ..services.labeling import drift_check_ready

        if drift_check_ready():
            self._check_drift_when_warm()

    def _check_drift_when_warm(self) -> None:
        """The drift check as a job of its own, once it no longer has to import anything (a
        flag may then come an item or two later, never in the way of a save)."""
        from ..services.labeling import drift_check_ready

        if self._closed or self.session is None:
            return
        if not drift_check_ready():
            _warm_in_background()
            self._drift_timer.start()  # looks again every DRIFT_RETRY_MS
            return
        self._drift_timer.stop()
        self.worker.run(_job_drift, self.session, on_error=self._guard(_drift_failed))

    def _step(self, step: Step) -> None:
        if step.progress is not None:
            self.progress_label.setText(format_progress(step.progress))
        self._served = step.served
        if step.served is None:
            self._set_state(State.DONE)
            p = step.progress
            self.done_label.setText(
                translate(
                    "LabelView",
                    "Every item is answered: {done} of {total}.\nThank you. "
                    "{key} goes back to the last answer.",
                ).format(
                    done=p.done if p else "?",
                    total=p.total if p else "?",
                    key=self.keymap.hint("back"),
                )
            )
            if self.package_file() is not None:
                self.send_back_label.setText(
                    translate(
                        "LabelView",
                        "Send this file back to the study lead (by e-mail or a shared folder): "
                        "it holds your answers.\n{path}",
                    ).format(path=str(self.package_file()))
                )
            self.stack.setCurrentWidget(self.done_page)
            self.finished.emit()
            return
        self._show(step.served)

    def package_file(self) -> Path | None:
        """The rater package this work is in (None in a study folder or on a server)."""
        snap = self.snapshot
        if not getattr(snap, "is_package", False) or not snap.where:
            return None
        return Path(snap.where)

    def open_package_folder(self) -> bool:
        """The file manager on the package's folder (the file is sent back as it is)."""
        path = self.package_file()
        if path is None:
            return False
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))

    def pending_answer(self) -> tuple[int, dict, int, str | None] | None:
        """(item, answers, ms, the UUID its failed write used): stored offline under the same
        UUID, so an answer the server committed before the connection went is not doubled."""
        if self._pending is None:
            return None
        return (*self._pending, getattr(self.session, "in_doubt", None))

    def carry(self, pending: Any) -> None:
        """An answer given on the server whose save is in doubt: stored here (the local package)
        when its item comes up, as the rater gave it."""
        self._carried = tuple(pending) if pending else None

    def _show(self, served: ServedItem) -> None:
        if (
            self._carried is not None
            and served.item_pk == self._carried[0]
            and served.previous_judgement is None
        ):
            _, answers, ms, *kept = self._carried
            self._carried = None
            self._served = served
            self._last_submit = (answers, ms)
            self._pending = (served.item_pk, answers, ms)
            self._begin_write()
            self._job(
                _job_submit,
                self.session,
                served,
                answers,
                ms,
                kept[0] if kept else None,
                on_done=self._submitted,
            )
            return
        v = served.view
        keys = media_keys(v)
        self.item_panel.show_item(v, {k: self.prefetcher.get(k) for k in keys})
        missing = self.item_panel.waiting_for()
        if missing:
            self.prefetcher.prefetch(sorted(missing))
        self.code_label.setText(translate("LabelView", "Item {code}").format(code=v.display_code))
        self.prompt_label.setText(v.prompt)
        self.criteria_label.setText(v.criteria or "—")
        answers = dict(served.previous or {})
        edit_row = next(
            (r for r in self.form.rows if r.rubric_metric.key not in answers and not r.answerable),
            None,
        )
        if served.previous_reason and edit_row is not None:
            answers[edit_row.rubric_metric.key] = served.previous_reason
        draft = self._drafts.load(served.item_pk) if self._drafts is not None else None
        self.form.set_answers(draft or answers)
        self.form_scroll.ensureVisible(0, 0)
        if served.previous_judgement is not None:
            self._say(
                translate(
                    "LabelView",
                    "Correcting an earlier answer: submit to replace it (the old one is "
                    "kept in the log).",
                ),
                calm=False,
            )
        else:
            self.message.setText("")
        refused = self._refusals_note()
        if refused:
            self._say(refused, calm=False)
        elif draft:
            self._say(
                translate(
                    "LabelView",
                    "Your unfinished answer to this item was kept from last time: check it, "
                    "then submit.",
                ),
                calm=False,
            )
        self.stack.setCurrentWidget(self.work)
        self._set_state(State.READY)
        if missing:
            self._not_exposed()  # its exposure starts when the last picture is on screen
        else:
            self._mark_exposed()
        if self.focusWidget() is None or not self.isAncestorOf(self.focusWidget()):
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.itemShown.emit()
        if self.prefetch_ahead > 0 and self.session is not None:
            # After the new item has painted: the peek must not compete with that frame.
            self._peeking = True
            QTimer.singleShot(PEEK_DELAY_MS, self._guard(lambda pk=served.item_pk: self._peek(pk)))

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

    def _already_answered(self, exc: AlreadyAnswered) -> None:
        self._set_state(State.BUSY)
        if exc.current is not None and self._served is not None and self._last_submit is not None:
            # Keep this answer as a correction of the one stored from the other window.
            served = replace(self._served, previous_judgement=exc.current)
            self._job(
                _job_submit, self.session, served, *self._last_submit, on_done=self._submitted
            )
            return

        def moved_on(step: Step) -> None:
            self._step(step)
            self._say(answered_elsewhere(self.keymap.hint("back")), calm=False)

        self._job(_job_next, self.session, on_done=moved_on)

    def _failed(self, exc: BaseException) -> None:
        super()._failed(exc)
        if self._state is State.ERROR:
            self.loading.setText(self.message.text())
            self.stack.setCurrentWidget(self.loading)

    def _form_changed(self) -> None:
        if self._missing_said and self.message.text() == self._missing_said:
            self.message.setText("")
        if self._drafts is not None and self._state is State.READY:
            self._draft_timer.start()  # one write after a burst of keys, not one per key

    def _keep_draft(self) -> None:
        """Write the form of the item on screen to the draft (or drop a draft left empty)."""
        self._draft_timer.stop()
        if self._drafts is None or self._served is None or self._pending is not None:
            return
        answers = self.form.answers()
        if any(v not in (None, "", []) for v in answers.values()):
            self._drafts.save(self._served.item_pk, answers)
        else:
            self._drafts.clear(self._served.item_pk)

    def _show_drift(self, alert: dict) -> None:
        metric = alert.get("metric")
        label = self.rubric.metric(metric).label if metric and self.rubric.has(metric) else metric
        text = {
            "up": translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted above the reference "
                "answers. A short recalibration session brings them back in line.",
            ),
            "down": translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted below the reference "
                "answers. A short recalibration session brings them back in line.",
            ),
        }.get(
            alert.get("direction") or "",
            translate(
                "LabelView",
                "Your recent answers on “{metric}” have drifted away from the reference answers. "
                "A short recalibration session brings them back in line.",
            ),
        )
        self.banner.text.setText(text.format(metric=label))
        self.banner.show()

    def _recalibrate(self) -> None:
        self.banner.hide()
        self.recalibrationRequested.emit()

    # -- actions (keys and buttons land here) --------------------------------------
    def key_actions(self) -> dict[str, Callable[[], Any]]:
        table: dict[str, Callable[[], Any]] = {
            "instructions": self._toggle_instructions,
            "dismiss": self._dismiss_banner,
            "back": self._back,
            "submit": self._submit,
            "reason": self._focus_reason,
            **{
                name: self.when_ready(fn) for name, fn in self.item_panel.sync.key_actions().items()
            },
            "toggle_mask": self.when_ready(
                lambda: self.item_panel.has_mask and self.item_panel.toggle_mask()
            ),
        }
        return table | {name: self._answer_key(name) for name in FORM_KEYS}

    def _saving_answer(self) -> bool:
        return self._state is State.BUSY and self._pending is not None

    def _answer_key(self, name: str) -> Callable[[], Any]:
        """A form key: acts on the item on screen once it has been seen for the study's minimum
        exposure (an answer key before that is refused in words); while a save is in flight it is
        refused in words, never kept for an item the rater has not seen."""

        def apply() -> bool:
            return self.apply_form_key(name)

        ready = self.when_ready(self.when_exposed(apply) if name in ANSWER_KEYS else apply)

        def run() -> Any:
            if self._saving_answer():
                return self._refuse_while_saving()
            return ready()

        return run

    def _still_saving(self) -> str:
        """What Enter pressed during a save reads (it starts with "Saving…": cleared with it)."""
        return translate(
            "LabelView", "Saving… Press {key} again once the next item is shown."
        ).format(key=self.keymap.hint("submit"))

    def is_ready(self) -> bool:
        """Only while an item is on screen and nothing is in flight."""
        return self._state is State.READY and self._served is not None

    def submit_answers(self, answers: dict[str, Any]) -> bool:
        """Fill the form and submit, exactly as the keys would."""
        if self._state is not State.READY:
            return False
        self.form.set_answers(answers)
        return self._submit()

    def _submit(self) -> bool:
        if self._state is State.DONE and self.package_file() is not None:
            return self.open_package_folder()  # the done page's one action
        if self._saving_answer():
            self.message.setText(self._still_saving())  # refused, and said: never silent
            return False
        if self._state is not State.READY or self._served is None:
            return False
        if self._too_fast():
            return False
        missing = self.form.missing_labels()
        if missing:
            self.form.focus_metric(self.form.missing()[0])
            more = len(missing) - 1
            if more:
                # (lupdate marks a plural only for a literal count, so the two forms are two strings)
                text = translate("LabelView", "Still to answer: {metric} (and {n} more).").replace(
                    "{n}", str(more)
                )
            else:
                text = translate("LabelView", "Still to answer: {metric}.")
            self._missing_said = text.format(metric=missing[0])
            self._say(self._missing_said)
            return False
        self._last_submit = (self.form.answers(), self.exposure_ms() or 0)
        self._pending = (self._served.item_pk, *self._last_submit)
        self._begin_write()
        self._job(
            _job_submit, self.session, self._served, *self._last_submit, on_done=self._submitted
        )
        return True

    def _back(self) -> bool:
        if self._saving_answer():
            self.message.setText(self._still_saving())
            return False
        if self.session is None or self._state not in (State.READY, State.DONE):
            return False
        was = self._state
        self._set_state(State.BUSY)

        def done(step: Step | None) -> None:
            if step is None:
                self._set_state(was)
                self._say(translate("LabelView", "Nothing earlier to go back to in this session."))
                return
            self._step(step)

        self._job(_job_back, self.session, on_done=done)
        return True

    def _dismiss_banner(self) -> bool:
        """Esc on a shown banner hides it (and takes the key); otherwise the key goes on."""
        if not self.banner.isVisible():
            return False
        self.banner.hide()
        return True

    def _toggle_instructions(self) -> bool:
        if self._instructions is None:
            self._instructions = InstructionsDialog(self.rubric, self.keymap, self)
        if self._instructions.isVisible():
            self._instructions.hide()
            self.setFocus()
        else:
            self._instructions.show()
            self._instructions.raise_()
        return True

    def shutdown(self) -> None:
        if self._draft_timer.isActive():
            self._keep_draft()  # closed within the moment after a key: that key is kept too
        self._drift_timer.stop()
        if self._instructions is not None:
            self._instructions.close()
        super().shutdown()


def _draft_store(settings: Any, snapshot: Any, rater: str) -> DraftStore | None:
    """Where this rater's draft in this study lives: beside the app's settings file."""
    path = getattr(settings, "path", None)
    if path is None:
        return None
    where = getattr(snapshot, "where", "") or str(getattr(snapshot, "folder", "") or "")
    if not where:
        return None
    return DraftStore(Path(path).parent / "drafts", location_key(where), rater)


def _warm_in_background() -> None:
    from ..services.labeling import warm_drift_check

    warm_drift_check()


def _drift_failed(exc: BaseException) -> None:
    # only a check: the answers are stored; the next anchor's check tries again
    log.warning("drift check failed: %s", exc)
