"""A calibration session: answer each anchor, see the reference and why, get a verdict.

Three screens, all keyboard-first:

1. *answer* - the anchor's image(s), prompt and criteria beside the rubric form
   (the same ``RubricForm``, item display and keys as the label view); Enter submits.
2. *feedback* - per metric the rater's answer beside the reference with its
   rationale and a calm met / not met mark; Enter or Space continues.
3. *verdict* - per metric the share of anchors met against the qualification
   rule, the qualify / not-yet verdict, and the rater's calibration history;
   Enter or Esc is done (``closeRequested``: the main window goes back to the start page).

The session (``services.calibration.CalibrationSession``) runs on the shared
``DbWorker``; each answer is stored the moment it is submitted.

Public API
----------
``CalibrationView(snapshot, rater, worker, settings=None, parent=None, *, anchor_set=None)``
    ``.submit() -> bool``; ``.advance() -> bool`` (leave the feedback screen);
    ``.stage() -> str`` ("loading" | "answer" | "feedback" | "verdict" | "error");
    ``.form``, ``.result() -> dict | None``, ``.is_busy()``, ``.shutdown()``.
    Signals: ``submitted(int index)``, ``completed(dict result)``, ``closeRequested()``, ``failed(str)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QHBoxLayout,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.records import ServedItem
from ..services.calibration import CalibrationSession
from .calibration_pages import FeedbackPanel, VerdictPage, _label
from .i18n import current_language, translate
from .item_display import ItemDisplay, media_keys
from .layouts import scrolled
from .rubric_form import FormScroll, RubricForm
from .session_view import ANSWER_KEYS, SessionView, State
from .style import set_accessible

__all__ = ["CalibrationView"]


def _job_open(
    study: Any, rater: str, anchor_set: str | None
) -> tuple[CalibrationSession, int, ServedItem | None]:
    session = CalibrationSession(study, rater, anchor_set)
    return session, session.total, session.next()


def _job_submit(
    _study: Any, session: CalibrationSession, served: ServedItem, answers: dict, time_ms: int
) -> tuple[list, ServedItem | None, int]:
    fb = session.submit(served, answers, time_ms)
    return fb, session.next(), session.index


def _job_finish(_study: Any, session: CalibrationSession) -> tuple[dict, list]:
    return session.finish(), session.history()


class CalibrationView(SessionView):
    submitted = Signal(int)
    completed = Signal(dict)
    closeRequested = Signal()  # noqa: N815 - Qt signal naming; Enter / Esc on the verdict screen
    failed = Signal(str)

    def __init__(
        self,
        snapshot: Any,
        rater: str,
        worker: Any,
        settings: Any = None,
        parent: QWidget | None = None,
        *,
        anchor_set: str | None = None,
    ) -> None:
        super().__init__(snapshot, rater, worker, settings, parent, capacity=16)
        self.anchor_set = anchor_set
        self.setObjectName("CalibrationView")
        self._rubric = snapshot.rubric_in(
            current_language()
        )  # texts in the app's language, same version
        self._session: CalibrationSession | None = None
        self._served: ServedItem | None = None
        self._next: ServedItem | None = None
        self._page = "loading"
        self._result: dict | None = None
        self._total = 0
        self.errorOccurred.connect(self.failed)
        self._build()
        self.open()

    @property
    def context(self) -> str:  # type: ignore[override]  # the keys follow the screen
        return "feedback" if self._page in ("feedback", "verdict") else "label"

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        head = QHBoxLayout()
        self.heading = _label(
            translate("Calibration", "Calibration"), size=1.3, bold=True, wrap=False
        )
        self.counter = _label("", soft=True, wrap=False)
        self.counter.setObjectName("calibrationCounter")
        set_accessible(
            self.counter,
            translate("Calibration", "Progress"),
            translate("Calibration", "Which anchor of how many"),
        )
        head.addWidget(self.heading)
        head.addStretch(1)
        head.addWidget(self.counter)
        outer.addLayout(head)
        self.pages = QStackedWidget()
        outer.addWidget(self.pages, 1)

        work = QSplitter(Qt.Orientation.Horizontal)
        work.setChildrenCollapsible(False)  # the answer side is never dragged under its buttons
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.prompt = _label("")
        self.criteria = _label("", soft=True)
        set_accessible(
            self.prompt,
            translate("Calibration", "Prompt"),
            translate("Calibration", "What the output was asked to be"),
        )
        set_accessible(
            self.criteria,
            translate("Calibration", "Criteria"),
            translate("Calibration", "What the output is judged against"),
        )
        for lab in (self.prompt, self.criteria):
            lab.setProperty("content", True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            ll.addWidget(lab)
        self.display = ItemDisplay(self.keymap)
        self.sync = self.display.sync
        ll.addWidget(self.display, 1)
        work.addWidget(left)

        self.side = QStackedWidget()
        self.form = RubricForm(self._rubric, self.keymap)
        holder = QWidget()
        hl = QVBoxLayout(holder)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(self.form)
        self.form_hint = _label(
            translate("Calibration", "{key}: submit and see the reference").format(
                key=self.keymap.hint("submit")
            ),
            soft=True,
        )
        set_accessible(
            self.form,
            translate("Calibration", "Answer form"),
            translate(
                "Calibration", "One row per metric of the rubric; the framed one takes the keys"
            ),
        )
        hl.addWidget(self.form_hint)
        self.form_scroll = FormScroll()
        self.form_scroll.setWidget(holder)
        self.form_scroll.follow(self.form)
        self.side.addWidget(self.form_scroll)
        self.feedback = FeedbackPanel()
        self.side.addWidget(scrolled(self.feedback))
        # scrolled only vertically: as wide as the widest row of answer buttons
        self.side.setMinimumWidth(
            max(
                380,
                self.form.minimumSizeHint().width()
                + self.form_scroll.verticalScrollBar().sizeHint().width(),
            )
        )
        work.addWidget(self.side)
        work.setStretchFactor(0, 3)
        work.setStretchFactor(1, 2)
        self.splitter = work
        self._split_done = False
        self.pages.addWidget(work)
        self.verdict_page = VerdictPage()
        self.pages.addWidget(scrolled(self.verdict_page))
        self.opening = _label(
            translate("Calibration", "Opening the calibration session…"), soft=True
        )
        self.opening.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages.addWidget(self.opening)
        self.pages.setCurrentWidget(self.opening)
        self.message.setObjectName("calibrationStatus")
        outer.addWidget(self.message)
        self.status = self.message
        edit = self.form.reason_edit()
        if edit is not None:
            self.reason_keys(
                edit, {"submit": self._submit_from_reason, "leave_reason": self.back_to_keys}
            )

    # -- worker results ------------------------------------------------------------
    def _open_job(self, study: Any) -> tuple[CalibrationSession, int, ServedItem | None]:
        return _job_open(study, self.rater, self.anchor_set)

    def _opened(self, result: tuple[CalibrationSession, int, ServedItem | None]) -> None:
        self._session, self._total, served = result
        self._show_item(served)

    def _failed(self, exc: BaseException) -> None:
        super()._failed(exc)
        if self._state is State.ERROR:
            self._page = "error"
            self.opening.setText(
                translate("Calibration", "Calibration cannot start: {why}").format(
                    why=self.message.text()
                )
            )
            self.pages.setCurrentWidget(self.opening)

    def _show_item(self, served: ServedItem | None) -> None:
        self._served = served
        if served is None:  # every anchor answered: work out the verdict
            self._page = "loading"
            self._set_state(State.BUSY)
            self.message.setText(translate("Calibration", "Working out your result…"))
            self._job(_job_finish, self._session, on_done=self._on_finished)
            return
        v = served.view
        self.counter.setText(
            translate("Calibration", "Anchor {index} of {total}").format(
                index=(served.queue_position or 0) + 1, total=self._total
            )
        )
        self.prompt.setText(v.prompt)
        self.criteria.setText(
            translate("Calibration", "Criteria: {text}").format(text=v.criteria)
            if v.criteria
            else ""
        )
        self.criteria.setVisible(bool(v.criteria))
        self.form.set_answers(None)
        self.side.setCurrentIndex(0)
        self.pages.setCurrentIndex(0)
        self._page = "answer"
        self._set_state(State.BUSY)
        self._not_exposed()
        if self._await_images(media_keys(v)):
            self.message.setText(translate("Calibration", "Loading images…"))
        else:
            self._present()

    def _image_ready(self, key: str, _img: QImage) -> None:
        if self._image_arrived(key) and self._page == "answer":
            self._present()

    def _image_failed(self, key: str, message: str) -> None:
        self._image_ready(key, QImage())

    def _present(self) -> None:
        s = self._served
        if s is None:
            return
        keys = media_keys(s.view)
        self.display.show_item(s.view, {k: self.prefetcher.get(k) for k in keys})
        for k in keys:
            if self.prefetcher.error(k):
                self.display.image_failed(k)
        self.sync.fit()
        self.message.setText(self._key_hint())
        self._mark_exposed()
        self._set_state(State.READY)
        self.setFocus()

    def _on_submitted(self, result: tuple[list, ServedItem | None, int]) -> None:
        feedback, nxt, index = result
        self._next = nxt
        self.feedback.show_feedback(
            self._rubric,
            feedback,
            index,
            self._total,
            last=nxt is None,
            keys=self.keymap.hints("continue", " / "),
        )
        self.side.setCurrentIndex(1)
        self._page = "feedback"
        self._set_state(State.READY)
        self.message.setText("")
        if nxt is not None:  # decode the next anchor while the rater reads
            self.prefetcher.prefetch(media_keys(nxt.view))
        self.setFocus()
        self.submitted.emit(index)

    def _on_finished(self, result: tuple[dict, list]) -> None:
        res, history = result
        self._result = res
        self.verdict_page.show_result(
            self._rubric,
            res,
            history,
            keys=f"{self.keymap.hint('continue')} / {self.keymap.hint('finish')}",
        )
        self.pages.setCurrentIndex(1)
        n = res.get("n_anchors", self._total)
        self.counter.setText(  # two strings: lupdate marks a plural only for a literal count
            translate("Calibration", "1 anchor answered")
            if n == 1
            else translate("Calibration", "{n} anchors answered").format(n=n)
        )
        self._page = "verdict"
        self._set_state(State.DONE)
        self.message.setText("")
        self.setFocus()
        self.completed.emit(res)

    def _key_hint(self) -> str:
        k = self.keymap.hint
        return translate(
            "Calibration",
            "Keys: {p} / {f} gates, digits for scales, points and tags, {x} can't judge, "
            "{next} / {prev} next / previous metric, {r} reason, {enter} submit.",
        ).format(
            p=k("pass"),
            f=k("fail"),
            x=k("cannot_judge"),
            next=k("next_metric"),
            prev=k("prev_metric"),
            r=k("reason"),
            enter=k("submit"),
        )

    # -- actions -------------------------------------------------------------------
    def key_actions(self) -> dict[str, Callable[[], Any]]:
        if self._page == "feedback":
            return {"continue": self.advance}
        if self._page == "verdict":
            return {"continue": self.closeRequested.emit, "finish": self.closeRequested.emit}
        if self._page != "answer":
            return {}
        table: dict[str, Callable[[], Any]] = {
            "submit": self.submit,
            "reason": self._focus_reason,
            **self.sync.key_actions(),
            "toggle_mask": self.display.toggle_mask,
        }
        return {name: self.when_ready(fn) for name, fn in table.items()} | self.form_actions(
            lambda fn, name: self.when_ready(self.when_exposed(fn) if name in ANSWER_KEYS else fn)
        )

    def submit(self) -> bool:
        if self._page != "answer" or self._state is not State.READY or self._served is None:
            return False
        missing = self.form.missing()
        if missing:
            labels = ", ".join(self._rubric.metric(k).label for k in missing)
            self.message.setText(
                translate(
                    "Calibration", "Answer {metrics} first (or press {key} if you cannot judge it)."
                ).format(metrics=labels, key=self.keymap.hint("cannot_judge"))
            )
            self.form.focus_metric(missing[0])
            return False
        if self._too_fast():
            return False
        elapsed = self.exposure_ms() or 0
        self._begin_write()
        self._job(
            _job_submit,
            self._session,
            self._served,
            self.form.answers(),
            elapsed,
            on_done=self._on_submitted,
        )
        return True

    def advance(self) -> bool:
        if self._page != "feedback" or self._state is not State.READY:
            return False
        self._show_item(self._next)
        return True

    # -- queries -------------------------------------------------------------------
    def stage(self) -> str:
        return "error" if self._state is State.ERROR else self._page

    def result(self) -> dict | None:
        return self._result

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if not self._split_done and self.width() > 600:
            # The item gets the larger share: the form and the feedback read fine narrower.
            w = self.splitter.width() or self.width()
            self.splitter.setSizes([int(w * 0.55), int(w * 0.45)])
            self._split_done = True
