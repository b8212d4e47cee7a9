"""What the label, pair and calibration views share: a typed answer state, worker jobs
(Over 500 lines on purpose: the answer-state guard, retries, exposure clock and key dispatch every
session view shares.)
whose results are dropped once the view is gone, one way to report a failure, a
visible "saving…", key dispatch through the keymap, and the reason-box key filter.

State (like Anki's reviewer): ``opening`` until the first item is on screen,
``ready`` (keys act), ``busy`` (a write or a fetch is in flight: every key but
the help is ignored, so nothing is submitted twice), ``done`` (nothing left),
``error`` (the session could not open: the one line says why, Enter tries again).

A failed write never loses the answer: the view goes back to ``ready`` with the
form as it was and one line saying what happened (``one_line``); the rater can
submit again. ``AlreadyAnswered`` (a double first answer) is the one typed
refusal a view reacts to by moving on.

A lost server connection (``ConnectionLost``) is different: the view stays
``busy``, says "saving failed, your answer is kept; reconnecting", and re-runs
the same job after 1, 2, 4, 8... s (``RETRY_MS``). The session keeps the
answer's UUID across the retries, so a write that did land before the cut is
stored once. After ``OFFLINE_AFTER`` failures in a row it emits
``serverUnreachable(pending)`` (the answer not yet saved, or None): the window
may then move the rater to the local package and stop these retries.

Exposure (what the rater saw): an answer key, a vote or a submit counts only once its item's
pictures have been on screen for the study's ``min_exposure_ms`` (default 250 ms). The clock
starts when the last picture is set on screen (``_mark_exposed``), not when the item was fetched;
a key before that is refused with a line ("too fast"), never applied to another item, and the
``time_ms`` stored with an answer is measured from that same moment, so it is the exposure time.

Subclasses set ``context`` (keymap context), build their widgets, give
``key_actions() -> dict[action, handler]`` (the declarative key table), and
implement ``_open_job(study)`` (worker thread) and ``_opened(result)``.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QKeyEvent
from PySide6.QtWidgets import QLabel, QWidget

from ..domain.errors import AlreadyAnswered, InputError
from ..services.snapshot import ConnectionLost
from .decode import CAPACITY
from .i18n import QT_TRANSLATE_NOOP, translate
from .keyed import KeyedWidget
from .keymap import Keymap, types_text
from .worker import DbWorker, ImagePrefetcher

if TYPE_CHECKING:
    from .rubric_form import RubricForm

log = logging.getLogger(__name__)
SAVING_AFTER_MS = 250  # a commit normally lands within a frame; past this the rater sees "Saving…"
_SAVING = QT_TRANSLATE_NOOP("SessionView", "Saving…")
_SAVING_LONG = QT_TRANSLATE_NOOP(
    "SessionView",
    "Saving… (still waiting for the study: another program may be "
    "writing to it; your answer is kept)",
)
SAVING_LONG_AFTER_MS = 1500
_ANSWERED_ELSEWHERE = QT_TRANSLATE_NOOP(
    "SessionView",
    "That one had just been answered in another window: the answer given there was kept, "
    "this one was not stored. {back} goes back to it.",
)
_RECONNECTING = QT_TRANSLATE_NOOP(
    "SessionView", "Saving failed, your answer is kept; reconnecting (try {n})…"
)
RETRY_MS = (1000, 2000, 4000, 8000, 15000, 30000)  # backoff; the last repeats
OFFLINE_AFTER = 3  # failures in a row before the window may move the rater to the local package


_TOO_FAST = QT_TRANSLATE_NOOP(
    "SessionView",
    "Too fast: the image was not shown yet. That key was not applied; look, then answer.",
)
_KEY_WHILE_SAVING = QT_TRANSLATE_NOOP(
    "SessionView",
    "Saving… That key was not applied: answer once the next item is shown.",
)
_KEYS_NOT_APPLIED = QT_TRANSLATE_NOOP(
    "SessionView",
    "Keys typed while the last answer was saving were not applied here: {n}. "
    "This item is blank until you answer it.",
)
ANSWER_KEYS = frozenset(
    {"pass", "fail", "cannot_judge", "clear", "submit", *(f"value_{d}" for d in range(10))}
)


def saving_text() -> str:
    return translate("SessionView", _SAVING)


def answered_elsewhere(back: str) -> str:
    return translate("SessionView", _ANSWERED_ELSEWHERE).format(back=back)


FORM_KEYS = (
    "pass",
    "fail",
    "cannot_judge",
    "clear",
    "next_metric",
    "prev_metric",
    *(f"value_{d}" for d in range(10)),
)


class State(enum.StrEnum):
    OPENING = "opening"
    READY = "ready"
    BUSY = "busy"
    DONE = "done"
    ERROR = "error"


def alive(obj: object) -> bool:
    """False once Qt has deleted the C++ side (a result may arrive after the view is gone)."""
    return shiboken6.isValid(obj)


def one_line(exc: BaseException) -> str:
    """What the rater reads about a failure: the typed one-line message, never a raw SQL error."""
    if isinstance(exc, InputError):
        return str(exc)
    log.error("unexpected failure in a worker job", exc_info=exc)
    return translate(
        "SessionView",
        "The study could not be read or written ({error}); nothing was half-saved. "
        "Try again; if it keeps failing, check that the study folder is there and "
        "writable.",
    ).format(error=type(exc).__name__)


class ReasonKeys(QObject):
    """The one key filter of every reason box: keys that type text are text; the few
    actions given (submit, leave the box, help) act even while the box has the focus."""

    def __init__(
        self, edit: QWidget, keymap: Keymap, context: str, actions: dict[str, Callable[[], Any]]
    ) -> None:
        super().__init__(edit)
        self.keymap, self.context, self.actions = keymap, context, actions
        edit.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if types_text(event):
            return False
        # The box's own keys first (Esc leaves it), then the view's (Enter submits, F1 helps).
        found = (self.keymap.action_for(event, ctx) for ctx in ("reason", self.context))
        handler = next((self.actions[a] for a in found if a in self.actions), None)
        if handler is None:
            return False
        if not event.isAutoRepeat():  # a held Enter never submits twice
            handler()
        return True


class ShutsDownOnce:
    """stop() and closing the window both end in the view's idempotent shutdown()."""

    def shutdown(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.shutdown()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)  # type: ignore[misc]


class SessionView(KeyedWidget, ShutsDownOnce, QWidget):
    errorOccurred = Signal(str)  # noqa: N815 - Qt signal naming
    serverUnreachable = Signal(object)  # noqa: N815 - the answer not yet saved (or None)
    context = "label"
    retry_ms: tuple[int, ...] = RETRY_MS
    form: RubricForm  # the answer form of the views that have one (label, calibration)
    offline_after = OFFLINE_AFTER

    def __init__(
        self,
        snapshot: Any,
        rater: str,
        worker: DbWorker,
        settings: Any = None,
        parent: QWidget | None = None,
        *,
        prefetcher: ImagePrefetcher | None = None,
        capacity: int = CAPACITY,
    ) -> None:
        super().__init__(parent)
        self.snapshot = snapshot
        self.rater = rater
        self.worker = worker
        self.settings = settings
        self.keymap = Keymap.from_settings(settings)
        self._state = State.OPENING
        self._closed = False
        self._own_prefetcher = prefetcher is None
        self.prefetcher = prefetcher or ImagePrefetcher(
            snapshot.media, capacity=capacity, parent=self
        )
        self._waiting: set[str] = set()  # image keys the item on screen still needs
        self.prefetcher.ready.connect(self._guard(self._image_ready))
        self.prefetcher.failed.connect(self._guard(self._image_failed))
        self.message = QLabel()
        self.message.setObjectName("sessionMessage")
        self.message.setWordWrap(True)
        self.message.setAccessibleName(translate("SessionView", "Message"))
        self.message.setAccessibleDescription(
            translate("SessionView", "What just happened, in one line")
        )
        self._saving = QTimer(self)
        self._saving.setSingleShot(True)
        self._saving.timeout.connect(self._show_saving)
        self._saving_since = 0
        self._last_job: tuple[Callable[..., Any], tuple, Callable[[Any], None]] | None = None
        self._retries = 0
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.timeout.connect(self._run_again)
        self._retrying = True
        self.min_exposure_ms = self.exposure_minimum(snapshot)
        self._exposed_at: float | None = None  # when the item's pictures were all on screen
        self._refused_keys = 0  # answer keys refused during a save, said again on the next item
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    # -- state ---------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self._state

    @property
    def busy(self) -> bool:
        return self._state in (State.OPENING, State.BUSY)

    def is_busy(self) -> bool:
        return self.busy

    def _set_state(self, state: State) -> None:
        self._state = state
        if state is not State.BUSY:
            self._saving.stop()
            if self.message.text().startswith(saving_text()):
                self.message.setText("")

    def _begin_write(self) -> None:
        """A write is in flight: keys are ignored; after a moment the rater sees "Saving…"."""
        self._set_state(State.BUSY)
        self._saving_since = 0
        self._saving.start(SAVING_AFTER_MS)

    def _show_saving(self) -> None:
        if self._state is not State.BUSY or self._closed:
            return
        self._saving_since += 1
        if self._retries:
            return  # the reconnecting line stays
        self.message.setText(
            saving_text() if self._saving_since == 1 else translate("SessionView", _SAVING_LONG)
        )
        if self._saving_since == 1:
            self._saving.start(SAVING_LONG_AFTER_MS)

    # -- exposure ------------------------------------------------------------------
    clock: Callable[[], float] = staticmethod(time.monotonic)  # tests give their own

    @staticmethod
    def exposure_minimum(snapshot: Any) -> int:
        """The study's `min_exposure_ms` (0: the rule is off)."""
        return max(0, int(snapshot.setting("min_exposure_ms") or 0))

    def _mark_exposed(self) -> None:
        """The item's pictures are on screen now: its exposure clock starts."""
        self._exposed_at = self.clock()

    def _not_exposed(self) -> None:
        self._exposed_at = None

    def exposure_ms(self) -> int | None:
        """How long the item on screen has been seen (None: its pictures are not shown yet)."""
        if self._exposed_at is None:
            return None
        return round((self.clock() - self._exposed_at) * 1000)

    def _too_fast(self) -> bool:
        """True (and said on screen) when the item has not been seen for the study's minimum."""
        if self.min_exposure_ms <= 0:
            return False  # the lead turned the rule off (min_exposure_ms 0)
        seen = self.exposure_ms()
        if seen is not None and seen >= self.min_exposure_ms:
            return False
        self.message.setText(translate("SessionView", _TOO_FAST))
        return True

    def when_exposed(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """`fn` for an answer key: refused in words before the item was seen long enough."""

        def run() -> Any:
            if self.is_ready() and self._too_fast():
                return False
            return fn()

        return run

    def _refuse_while_saving(self) -> bool:
        """An answer key during a save: not kept for an item not yet seen; said, not dropped (the
        saving line goes with the save, so the next item says it again: `_refusals_note`)."""
        self._refused_keys += 1
        self.message.setText(translate("SessionView", _KEY_WHILE_SAVING))
        return False

    def _refusals_note(self) -> str:
        """What the next item says of the keys refused while its predecessor saved (once)."""
        n, self._refused_keys = self._refused_keys, 0
        return translate("SessionView", _KEYS_NOT_APPLIED).replace("{n}", str(n)) if n else ""

    # -- worker plumbing -----------------------------------------------------------
    def _guard(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Wrap a callback so it does nothing once the view is closed or deleted."""

        def call(*args: Any) -> None:
            if not self._closed and alive(self):
                fn(*args)

        return call

    def _job(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """`fn(study, *args)` on the database worker; the result reaches `on_done` while the view lives.

        A job with no handler of its own is remembered: if the server connection drops, the same
        job runs again (a look-ahead with its own handler is not: it is only a look)."""
        if on_error is None:
            self._last_job = (fn, args, on_done)

        def done(result: Any) -> None:
            self._reconnected()
            on_done(result)

        self.worker.run(
            fn, *args, on_done=self._guard(done), on_error=self._guard(on_error or self._failed)
        )

    # -- a lost server connection: keep the answer, retry with backoff --------------
    def _connection_lost(self) -> None:
        self._retries += 1
        self._set_state(State.OPENING if self._state is State.OPENING else State.BUSY)
        text = translate("SessionView", _RECONNECTING).format(n=self._retries)
        self.message.setText(text)
        self.errorOccurred.emit(text)
        if self._retries == self.offline_after:
            self.serverUnreachable.emit(self.pending_answer())
        if self._retrying and not self._closed:
            self._retry.start(self.retry_ms[min(self._retries - 1, len(self.retry_ms) - 1)])

    def _run_again(self) -> None:
        if self._closed or self._last_job is None:
            return
        fn, args, on_done = self._last_job
        self._job(fn, *args, on_done=on_done)

    def _reconnected(self) -> None:
        if self._retries:
            self._retries = 0
            self.message.setText(translate("SessionView", "Reconnected: your answer is saved."))

    def stop_retrying(self) -> None:
        """The window has taken over (the rater moves to the local package)."""
        self._retrying = False
        self._retry.stop()

    def pending_answer(self) -> Any:
        """The answer whose save is in doubt (for the local package), or None (override)."""
        return None

    def carry(self, pending: Any) -> None:
        """Store an answer carried over from a lost server once its item is shown (override)."""

    def open(self) -> None:
        self._set_state(State.OPENING)
        self._job(self._open_job, on_done=self._opened)

    def _open_job(self, study: Any) -> Any:  # worker thread
        raise NotImplementedError

    def _opened(self, result: Any) -> None:
        raise NotImplementedError

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, ConnectionLost) and self._last_job is not None:
            self._connection_lost()
            return
        if isinstance(exc, AlreadyAnswered) and self._state is State.BUSY:
            self._already_answered(exc)
            return
        text = one_line(exc)
        if self._state is State.OPENING:
            self._set_state(State.ERROR)
            text = translate("SessionView", "{error}  Press {key} to try again.").format(
                error=text, key=self.keymap.hint("submit") or "Enter"
            )
        else:
            self._set_state(State.READY)  # the answer is still in the form: submit again
        self.message.setText(text)
        self.errorOccurred.emit(text)

    def _already_answered(self, exc: AlreadyAnswered) -> None:
        """Another window stored a first answer here meanwhile. The subclass keeps this one as a
        correction of it when the store names it (``exc.current``), else moves on saying so."""
        self._set_state(State.READY)

    # -- images --------------------------------------------------------------------
    def _await_images(self, keys: list[str]) -> bool:
        """Ask for an item's pictures; whether some are still to come (then `_image_arrived`
        says when the last one is in, so the item appears whole, never picture by picture)."""
        self._waiting = {k for k in keys if not self.prefetcher.contains(k)}
        self.prefetcher.prefetch(keys)
        return bool(self._waiting)

    def _image_arrived(self, key: str) -> bool:
        """Whether `key` was the last picture `_await_images` was waiting for."""
        if key not in self._waiting:
            return False
        self._waiting.discard(key)
        return not self._waiting

    def _image_ready(self, key: str, image: QImage) -> None:
        """A decoded picture arrived (override)."""

    def _image_failed(self, key: str, message: str) -> None:
        """A picture could not be decoded (override)."""

    # -- keys ----------------------------------------------------------------------
    @property
    def key_contexts(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.context,)

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        """Action name -> handler: the view's whole key table (override)."""
        return {}

    def is_ready(self) -> bool:
        """Whether the view takes its keys now: answered on screen, nothing in flight (a view
        with something more to wait for, e.g. the label view's served item, says so)."""
        return self._state is State.READY

    def when_ready(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """`fn` guarded: it runs only while `is_ready()`, else the key does nothing (False). The
        one guard of the label, calibration and review views against a key acting on an item
        being saved or not yet shown (double submission included)."""

        def run() -> Any:
            return fn() if self.is_ready() else False

        return run

    def apply_action(self, name: str) -> bool:
        handler = self.key_actions().get(name)
        if handler is None:
            return False
        return handler() is not False

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.isAutoRepeat():
            event.accept()  # a held key never answers or submits twice
            return
        if self._state is State.ERROR and self.keymap.action_for(event, "label") == "submit":
            self.open()  # try to open the session again
            event.accept()
            return
        super().keyPressEvent(event)  # KeyedWidget: the view's actions, else Qt

    def event(self, event: QEvent) -> bool:
        # Tab / Backtab are keys of the table (next metric, reason), not focus moves.
        if isinstance(event, QKeyEvent) and event.key() in (
            Qt.Key.Key_Tab,
            Qt.Key.Key_Backtab,
        ):
            self.keyPressEvent(event)
            return True
        return super().event(event)

    def reason_keys(self, edit: QWidget, actions: dict[str, Callable[[], Any]]) -> ReasonKeys:
        return ReasonKeys(edit, self.keymap, self.context, actions)

    def back_to_keys(self) -> None:
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- views with an answer form (label, calibration) ------------------------------
    def form_actions(
        self, when: Callable[[Callable[[], Any], str], Callable[[], Any]]
    ) -> dict[str, Callable[[], Any]]:
        """The answer and metric keys of ``self.form``, each wrapped by `when(fn, name)` (the
        view's guard, which knows an answer key from a move between metrics)."""
        return {name: when(partial(self.apply_form_key, name), name) for name in FORM_KEYS}

    def apply_form_key(self, name: str) -> bool:
        """A form key on the item on screen; an answer key that does nothing says why."""
        done = self.form.apply(name)
        if not done and name in ANSWER_KEYS:
            self.message.setText(self.form.refusal(name))
        return done

    def _submit_from_reason(self) -> None:
        self.back_to_keys()
        self.apply_action("submit")

    def _focus_reason(self) -> bool:
        edit = self.form.reason_edit()
        if edit is None or self._state is not State.READY:
            return False
        edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        scroll = getattr(self, "form_scroll", None)
        if scroll is not None:
            scroll.show_widget(edit)
        return True

    # -- lifecycle -----------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop what this view started (its own decoder pool); the worker belongs to the window."""
        if self._closed:
            return
        self._closed = True
        self._saving.stop()
        self._retry.stop()
        if self._own_prefetcher:
            self.prefetcher.stop()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self.focusWidget() is None or not self.isAncestorOf(self.focusWidget()):
            self.setFocus(Qt.FocusReason.OtherFocusReason)
