"""Pairwise A/B voting: two outputs of the same case side by side, one key per vote.

Public API
----------
``PairView(snapshot, rater, worker, settings=None, parent=None)`` - a ``SessionView``.
    Keys (keymap context ``pair``, overridable): 1 / Left = left, 2 / Right = right,
    3 / B = both, 4 / N = neither, R / Tab = type a reason (Esc / Enter return to
    voting), Ctrl+Z = back to the previous pair (a new vote supersedes the old
    one), Ctrl+Shift+Z = forward to the first pair without a vote; + / - / Ctrl+0 /
    Ctrl+1 zoom both sides in step, M toggles an edit mask.
    ``.vote(choice) -> bool`` (False when ignored: busy, nothing shown); ``.back()``;
    ``.forward()``; ``.current() -> ServedPair | None``; ``.is_busy()``; ``.shutdown()``.
    Signals: ``voted(int vote_id, str choice)``, ``pairShown(int pair_pk)``,
    ``progressChanged(int done, int total)``, ``finished()``, ``failed(str)``.

Every database call runs on the shared ``DbWorker``. Both sides sit in equal
panes in one ``SyncGroup`` and appear together (neither is seen first); renders
of different pixel sizes are kept in step in image-normalised coordinates, so a
larger render is never shown bigger than its rival. The side each item is dealt
comes from the service (seeded and recorded there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import AlreadyAnswered
from ..services.pairing import PairSession, ServedPair
from .i18n import QT_TRANSLATE_NOOP, translate
from .image_view import SyncGroup
from .item_display import ItemDisplay, media_keys
from .session_view import SessionView, State, answered_elsewhere
from .style import relative_font, set_accessible, soft_colour

__all__ = ["CHOICES", "PairView"]

CHOICES = ("left", "right", "both", "neither")
_CHOICE_TEXT = {
    "left": QT_TRANSLATE_NOOP("PairView", "Left is better"),
    "right": QT_TRANSLATE_NOOP("PairView", "Right is better"),
    "both": QT_TRANSLATE_NOOP("PairView", "Both meet it"),
    "neither": QT_TRANSLATE_NOOP("PairView", "Neither meets it"),
}
CHOICE_TEXT = dict(_CHOICE_TEXT)  # English (tests, logs)
# Colours from the palette (light and dark themes alike); the chosen vote is also marked by a
# check mark in its text, so the choice never rests on colour alone.
CHOSEN_STYLE = (
    "QPushButton { background: palette(text); color: palette(base); "
    "border: 1px solid palette(text); border-radius: 4px; padding: 6px 10px; }"
)
BUTTON_STYLE = (
    "QPushButton { border: 1px solid palette(mid); border-radius: 4px; padding: 6px 10px; }"
)


def choice_text(choice: str) -> str:
    return translate("PairView", _CHOICE_TEXT[choice])


Fetched = tuple[ServedPair | None, Any, ServedPair | None]  # pair, progress, the pair after it


# -- worker jobs (database thread) ------------------------------------------------------
def _fetch(session: PairSession) -> Fetched:
    served = session.next()
    # The pair after this one, so its images decode while the rater looks at this one.
    return served, session.progress(), session.peek(served) if served is not None else None


def _job_open(study: Any, rater: str) -> tuple[PairSession, Fetched]:
    session = PairSession(study, rater)
    return session, _fetch(session)


def _job_vote(
    _study: Any, session: PairSession, served: ServedPair, choice: str, reason: str, time_ms: int
) -> tuple[int, str, Fetched]:
    vid = session.vote(served, choice, reason, time_ms)
    return vid, choice, _fetch(session)


def _job_back(_study: Any, session: PairSession) -> tuple[ServedPair | None, Any]:
    return session.back(), session.progress()


def _job_forward(_study: Any, session: PairSession) -> Fetched:
    return _fetch(session)


def _pair_keys(served: ServedPair) -> list[str]:
    return list(
        dict.fromkeys(
            [*media_keys(served.left, inputs=False), *media_keys(served.right, inputs=False)]
        )
    )


class PairView(SessionView):
    voted = Signal(int, str)
    pairShown = Signal(int)  # noqa: N815 - Qt signal naming
    progressChanged = Signal(int, int)  # noqa: N815
    finished = Signal()
    failed = Signal(str)
    context = "pair"

    def __init__(
        self,
        snapshot: Any,
        rater: str,
        worker: Any,
        settings: Any = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(snapshot, rater, worker, settings, parent, capacity=16)
        self.setObjectName("PairView")
        self._session: PairSession | None = None
        self._served: ServedPair | None = None
        self._last_vote: tuple[str, str, int] | None = None
        self._carried: tuple | None = None
        self.errorOccurred.connect(self.failed)
        self._build()
        self.message.setText(translate("PairView", "Opening the pair queue…"))
        self.open()

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(6)
        self.question = QLabel()
        self.question.setObjectName("pairQuestion")
        self.question.setFont(relative_font(self.question, 1.15, bold=True))
        self.question.setWordWrap(True)
        self.prompt = QLabel()
        self.criteria = QLabel()
        for lab in (self.prompt, self.criteria):
            lab.setWordWrap(True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.criteria.setStyleSheet(f"color: {soft_colour(self.palette())};")
        set_accessible(
            self.question,
            translate("PairView", "Question"),
            translate("PairView", "What to compare"),
        )
        set_accessible(
            self.prompt,
            translate("PairView", "Prompt"),
            translate("PairView", "What both outputs were asked to be"),
        )
        set_accessible(
            self.criteria,
            translate("PairView", "Criteria"),
            translate("PairView", "What both outputs are judged against"),
        )
        for lab in (self.question, self.prompt, self.criteria):
            lab.setProperty("content", True)  # the study's words
        for w in (self.question, self.prompt, self.criteria):
            outer.addWidget(w)

        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        page = QWidget()
        sides = QHBoxLayout(page)
        sides.setContentsMargins(0, 0, 0, 0)
        self.sync = SyncGroup(parent=self)
        self.left_side = self._side(translate("PairView", "Left"), sides)
        self.right_side = self._side(translate("PairView", "Right"), sides)
        self.stack.addWidget(page)
        self.done_page = QLabel()
        self.done_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_page.setWordWrap(True)
        self.done_page.setFont(relative_font(self.done_page, 1.15))
        self.stack.addWidget(self.done_page)

        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for choice in ("left", "both", "neither", "right"):
            text = f"{choice_text(choice)}  [{self.keymap.hints('vote_' + choice)}]"
            text = {"left": "\u2190 " + text, "right": text + " \u2192"}.get(choice, text)
            b = QPushButton(text)
            b.setProperty("plain", text)
            set_accessible(
                b,
                choice_text(choice),
                translate("PairView", "Vote: {choice} (keys {keys})").format(
                    choice=choice_text(choice), keys=self.keymap.hints("vote_" + choice)
                ),
            )
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.setStyleSheet(BUTTON_STYLE)
            b.clicked.connect(lambda _=False, c=choice: self.vote(c))
            self.buttons[choice] = b
            row.addWidget(b, 1)
        outer.addLayout(row)

        foot = QHBoxLayout()
        self.reason = QLineEdit()
        self.reason.setObjectName("pairReason")
        k = self.keymap.hints
        self.reason.setPlaceholderText(
            translate(
                "PairView", "Reason (optional): press {write} to type, {leave} to go back to voting"
            ).format(write=k("pair_reason", " / "), leave=k("pair_reason_done", " / "))
        )
        set_accessible(
            self.reason,
            translate("PairView", "Reason"),
            translate("PairView", "Why you voted as you did (optional)"),
        )
        self.reason.setClearButtonEnabled(True)
        self.reason_keys(self.reason, {"pair_reason_done": self.back_to_keys})
        foot.addWidget(self.reason, 1)
        self.progress = QLabel()
        self.progress.setObjectName("pairProgress")
        self.progress.setMinimumWidth(110)
        self.progress.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        set_accessible(
            self.progress,
            translate("PairView", "Progress"),
            translate("PairView", "Pairs voted so far"),
        )
        set_accessible(
            self.done_page,
            translate("PairView", "All done"),
            translate("PairView", "Every pair in your queue has a vote"),
        )
        foot.addWidget(self.progress)
        outer.addLayout(foot)
        self.message.setStyleSheet(f"color: {soft_colour(self.palette())};")
        outer.addWidget(self.message)

    def _side(self, title: str, row: QHBoxLayout) -> ItemDisplay:
        frame = QFrame()
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        row.addWidget(frame, 1)
        lay = QVBoxLayout(frame)
        lay.setContentsMargins(6, 6, 6, 6)
        display = ItemDisplay(self.keymap, title=title, show_inputs=False, sync=self.sync)
        lay.addWidget(display)
        return display

    def _key_hint(self) -> str:
        k = self.keymap.hint
        return translate(
            "PairView",
            "{back}: back to the previous pair  ·  {zin} / {zout} / {fit}: zoom both "
            "images (drag to pan)  ·  {reason}: reason",
        ).format(
            back=k("back"),
            zin=k("zoom_in"),
            zout=k("zoom_out"),
            fit=k("zoom_fit"),
            reason=k("pair_reason"),
        )

    # -- results (UI thread) -------------------------------------------------------
    def _open_job(self, study: Any) -> tuple[PairSession, Fetched]:
        return _job_open(study, self.rater)

    def _opened(self, result: tuple[PairSession, Fetched]) -> None:
        self._session, fetched = result
        asked = self.snapshot.setting("pair_question")
        default = "Which output better meets the prompt and criteria?"
        # The study's own question is the study's text; the default one is the app's (translated).
        self.question.setText(
            translate("PairView", "Which output better meets the prompt and criteria?")
            if not asked or asked == default
            else asked
        )
        self._show(*fetched)

    def _on_voted(self, result: tuple[int, str, Fetched]) -> None:
        vid, choice, fetched = result
        self.voted.emit(vid, choice)
        self._show(*fetched)

    def _on_back(self, result: tuple[ServedPair | None, Any]) -> None:
        served, progress = result
        if served is None:
            self._set_state(State.READY if self._served is not None else State.DONE)
            self.message.setText(
                translate(
                    "PairView",
                    "This is the first pair of the session: there is nothing to go back to.",
                )
            )
            return
        self._show(served, progress, None)

    def _already_answered(self, exc: AlreadyAnswered) -> None:
        self._set_state(State.BUSY)
        if exc.current is not None and self._served is not None and self._last_vote is not None:
            # Keep this vote as a correction of the one stored from the other window.
            served = replace(self._served, previous_vote=exc.current)
            self._job(_job_vote, self._session, served, *self._last_vote, on_done=self._on_voted)
            return

        def moved_on(fetched: Fetched) -> None:
            self._show(*fetched)
            self.message.setText(answered_elsewhere(self.keymap.hint("back")))

        self._job(_job_forward, self._session, on_done=moved_on)

    def _show(self, served: ServedPair | None, progress: Any, following: ServedPair | None) -> None:
        self._served = served
        if progress is not None:
            self.progress.setText(
                translate("PairView", "{done} / {total} done").format(
                    done=progress.done, total=progress.total
                )
            )
            self.progressChanged.emit(progress.done, progress.total)
        if served is None:
            for side in (self.left_side, self.right_side):
                side.clear()
            self.prompt.clear()
            self.criteria.clear()
            self.done_page.setText(
                translate(
                    "PairView",
                    "Every pair in your queue has a vote. Thank you!\n\n{key} goes "
                    "back to change your last vote.",
                ).format(key=self.keymap.hint("back"))
            )
            self.stack.setCurrentIndex(1)
            self._mark_choice(None)
            self._set_state(State.DONE)
            self.message.setText("")
            self.finished.emit()
            return
        self.stack.setCurrentIndex(0)
        self.prompt.setText(served.left.prompt)
        self.criteria.setText(
            translate("PairView", "Criteria: {text}").format(text=served.left.criteria)
            if served.left.criteria
            else ""
        )
        self.criteria.setVisible(bool(served.left.criteria))
        self.reason.setText(served.previous_reason or "")
        self._mark_choice(served.previous_choice)
        if served.previous_choice:
            self.message.setText(
                translate(
                    "PairView",
                    "Going back: your vote was “{choice}”. A new vote replaces it; "
                    "{key} returns without changing it.",
                ).format(
                    choice=choice_text(served.previous_choice), key=self.keymap.hint("forward")
                )
            )
        else:
            self.message.setText(self._key_hint())
        waiting = self._await_images(_pair_keys(served))
        if following is not None:
            self.prefetcher.prefetch(_pair_keys(following))
        self._set_state(State.BUSY)
        self._not_exposed()
        if waiting:
            for side in (self.left_side, self.right_side):
                side.clear()
            self.message.setText(translate("PairView", "Loading images…"))
        else:
            self._present()

    def _image_ready(self, key: str, _img: QImage) -> None:
        if self._image_arrived(key):
            self._present()

    def _image_failed(self, key: str, message: str) -> None:
        self._image_ready(key, QImage())

    def _present(self) -> None:
        """Both sides appear together, so neither is seen first."""
        s = self._served
        if s is None:
            return
        images = {k: self.prefetcher.get(k) for k in _pair_keys(s)}
        for side, item in ((self.left_side, s.left), (self.right_side, s.right)):
            side.show_item(item, images)
            for k in media_keys(item, inputs=False):
                if self.prefetcher.error(k):
                    side.image_failed(k)
        self.sync.fit()
        if self.message.text() == translate("PairView", "Loading images…"):
            self.message.setText(self._key_hint())
        refused = self._refusals_note()
        if refused:
            self.message.setText(refused)
        self._mark_exposed()  # both pictures are set: the pair is seen from now
        self._set_state(State.READY)
        if not self.reason.hasFocus():
            self.setFocus()
        self.pairShown.emit(s.pair_pk)
        carried, self._carried = self._carried, None
        if carried is not None and carried[1] == s.pair_pk and s.previous_vote is None:
            _, _, choice, reason, ms = carried
            self._last_vote = (choice, reason, ms)
            self._mark_choice(choice)
            self._begin_write()
            self._job(_job_vote, self._session, s, *self._last_vote, on_done=self._on_voted)
        elif carried is not None:
            self._carried = carried  # not this pair: wait for it

    def _mark_choice(self, choice: str | None) -> None:
        for c, b in self.buttons.items():
            chosen = c == choice
            b.setStyleSheet(CHOSEN_STYLE if chosen else BUTTON_STYLE)
            plain = b.property("plain") or b.text()
            b.setText(f"\u2713 {plain}" if chosen else plain)  # a mark, not only a colour

    # -- actions -------------------------------------------------------------------
    def key_actions(self) -> dict[str, Callable[[], Any]]:
        table: dict[str, Callable[[], Any]] = {f"vote_{c}": partial(self.vote, c) for c in CHOICES}
        table |= {
            "pair_reason": lambda: self.reason.setFocus(Qt.FocusReason.ShortcutFocusReason),
            "back": self.back,
            "forward": self.forward,
            **self.sync.key_actions(),
            "toggle_mask": lambda: [
                side.toggle_mask() for side in (self.left_side, self.right_side) if side.has_mask
            ],
        }
        return table

    def pending_answer(self) -> tuple[str, int, str, str, int] | None:
        """The vote whose save is in doubt: ("vote", pair pk, choice, reason, ms)."""
        if self._state is State.BUSY and self._served is not None and self._last_vote is not None:
            return ("vote", self._served.pair_pk, *self._last_vote)
        return None

    def carry(self, pending: Any) -> None:
        """A vote given on the server whose save is in doubt: cast here (the local package,
        where pairs keep their keys) when its pair comes up."""
        self._carried = tuple(pending) if pending and pending[0] == "vote" else None

    def vote(self, choice: str) -> bool:
        if choice not in CHOICES:
            raise ValueError(f"choice must be one of {CHOICES}")
        if self._state is State.BUSY and self._served is not None:
            # the last vote is still being saved: refused, and said (never dropped in silence;
            # a vote is the pair's whole answer, so it is not kept for a pair not yet seen)
            return self._refuse_while_saving()
        if self._state is not State.READY or self._served is None:
            return False
        if self._too_fast():
            return False
        self._last_vote = (choice, self.reason.text(), self.exposure_ms() or 0)
        self._mark_choice(choice)
        self._begin_write()
        self._job(_job_vote, self._session, self._served, *self._last_vote, on_done=self._on_voted)
        self.setFocus()
        return True

    def back(self) -> bool:
        if self._session is None or self._state not in (State.READY, State.DONE):
            return False
        self._set_state(State.BUSY)
        self._job(_job_back, self._session, on_done=self._on_back)
        return True

    def forward(self) -> bool:
        if (
            self._state is not State.READY
            or self._served is None
            or self._served.previous_vote is None
        ):
            return False
        self._set_state(State.BUSY)
        self._job(_job_forward, self._session, on_done=lambda r: self._show(*r))
        return True

    def _failed(self, exc: BaseException) -> None:
        super()._failed(exc)
        if self._state is State.READY and self._served is not None:
            self._mark_choice(self._served.previous_choice)  # the vote did not land

    def current(self) -> ServedPair | None:
        return self._served
