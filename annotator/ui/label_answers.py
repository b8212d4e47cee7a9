"""The label view's answer flow: from an answer key to an answer stored, and back.

The database jobs of a label session (open, submit then read the next item, next, back: run on
the ``DbWorker``, no Qt in them) and the guard around them: a form key while a save is in flight
is refused and said, never kept for an item the rater has not seen; an answer key or Enter before
the item has been on screen the study's minimum exposure is refused; Enter submits only a complete
form (else "Still to answer ..." and the first missing metric takes the keys), once: the view is
busy until the commit, and the next item is shown from the same job. An answer stored from
another window becomes a correction of it; an answer whose save is in doubt (a server gone) is
kept to be stored again under the same UUID. An unfinished answer is written to the rater's draft
a moment after the last key, and dropped once the answer is stored.

A mixin of ``LabelView``: the flow keeps the view's state, form and message line, so ``self``
stays the view.
Tested in tests/gui/test_label_session.py, tests/gui/test_exposure.py,
tests/gui/test_drafts.py, tests/gui/test_faults.py and tests/gui/test_first_hour.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from ..domain.errors import AlreadyAnswered
from ..domain.records import Progress, ServedItem
from .drafts import DraftStore
from .i18n import translate
from .session_view import ANSWER_KEYS, State, answered_elsewhere
from .settings import location_key

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from .label_layout import LabelLayout as _View
else:
    _View = object

__all__ = ["DRAFT_AFTER_MS", "AnswerFlow", "Step"]

DRAFT_AFTER_MS = 300  # an unfinished answer is written this long after the last key


# -- worker jobs (database thread; no Qt in here) ---------------------------------------
@dataclass
class Step:
    """What a job hands back: the item to show next (None: every item is answered), progress."""

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


def _job_next(_study: Any, session: Any) -> Step:
    return Step(session.next(), session.progress())


def _job_back(_study: Any, session: Any) -> Step | None:
    served = session.back()
    return None if served is None else Step(served, session.progress())


class AnswerFlow(_View):
    """The answer state guard, submit, back and drafts of ``LabelView`` (see the module
    docstring)."""

    if TYPE_CHECKING:  # what the flow reads of its view (LabelView sets or defines each)
        session: Any
        _served: ServedItem | None
        submitted: SignalInstance

        def _step(self, step: Step) -> None: ...
        def _check_drift_when_warm(self) -> None: ...
        def package_file(self) -> Path | None: ...

    def _init_answers(self, settings: Any, snapshot: Any, rater: str) -> None:
        """The flow's state: nothing in flight, no carried answer, the rater's draft store."""
        self._last_submit: tuple[dict, int] | None = None
        self._pending: tuple[int, dict, int] | None = (
            None  # (item pk, answers, ms) while its save is in doubt
        )
        self._carried: tuple[Any, ...] | None = None
        self._missing_said = ""
        self._drafts = _draft_store(settings, snapshot, rater)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_AFTER_MS)
        self._draft_timer.timeout.connect(self._keep_draft)

    def _open_job(self, study: Any) -> tuple[Any, Step]:
        return _job_open(study, self.rater)

    def _submitted(self, step: Step) -> None:
        if step.judgement is not None:
            self.submitted.emit(step.judgement)
        if self._drafts is not None and self._pending is not None:
            self._drafts.clear(self._pending[0])  # stored: the draft has done its work
        self._pending = None
        if step.alert:  # taken from the session once: shown even when the next item is re-read
            self.banner.show_alert(step.alert, self.rubric)
        if step.stale:  # stored; the next item is read again (a read: safe to repeat)
            self._job(_job_next, self.session, on_done=self._step)
        else:
            self._step(step)
        if step.drift_due:
            self._check_drift_when_warm()

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

    def _submit_carried(self, served: ServedItem) -> bool:
        """Store the carried answer if `served` is its item, unanswered here (True: submitted)."""
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
            return True
        return False

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


def _draft_store(settings: Any, snapshot: Any, rater: str) -> DraftStore | None:
    """Where this rater's draft in this study lives: beside the app's settings file."""
    path = getattr(settings, "path", None)
    if path is None:
        return None
    where = getattr(snapshot, "where", "") or str(getattr(snapshot, "folder", "") or "")
    if not where:
        return None
    return DraftStore(Path(path).parent / "drafts", location_key(where), rater)
