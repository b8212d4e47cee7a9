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

This module holds the view itself: its keys, the item on screen and the done page, the session's
opening and its drift checks. Its parts are mixins, each a module of its own, because each acts
on the same widget (its state, its form, its message line): the widgets in ``label_layout.py``,
the answer flow (guard, submit, back, drafts) in ``label_answers.py``, the look ahead in
``label_prefetch.py``; the drift notice is ``drift_notice.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QWidget

from ..domain.records import Progress, ServedItem
from .dialogs import InstructionsDialog
from .drift_notice import DriftChecks, drift_failed, job_drift, warm_in_background
from .i18n import current_language, translate
from .item_display import media_keys
from .label_answers import AnswerFlow, Step
from .label_layout import LabelLayout
from .label_prefetch import PREFETCH_AHEAD, LookAhead
from .session_view import FORM_KEYS, SessionView, State
from .worker import DbWorker, ImagePrefetcher

log = logging.getLogger(__name__)

MIN_FOR_PACE = 3  # a pace from one or two answers is noise
WARM_AFTER_MS = 1500  # the statistics stack is imported once the first item has painted


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


# -- the view --------------------------------------------------------------------------
class LabelView(LookAhead, AnswerFlow, LabelLayout, SessionView):
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
        self._init_answers(settings, snapshot, rater)
        self.drift_checks = DriftChecks(self._run_drift_check, self)
        self._build()
        self.open()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._size_once()

    # -- state ---------------------------------------------------------------------
    @property
    def current_item(self) -> ServedItem | None:
        return self._served

    # -- worker results (UI thread) ------------------------------------------------
    def _opened(self, result: tuple[Any, Step]) -> None:
        self.session, step = result
        self._step(step)
        if self.session.checks_drift:
            # The first anchor's drift check would otherwise import pandas and scipy on the
            # database worker (seconds on a loaded machine) while the rater waits to go on:
            # imported in the background once the first item has painted; the check waits.
            self.session.defer_drift = True
            QTimer.singleShot(WARM_AFTER_MS, warm_in_background)

    @property
    def drift_check_waiting(self) -> bool:
        """An anchor's drift check waits for the statistics import (tests wait on this as a
        rater's seconds per item would)."""
        return self.drift_checks.waiting

    def _check_drift_when_warm(self) -> None:
        if self._closed or self.session is None:
            return
        self.drift_checks.when_warm()

    def _run_drift_check(self) -> None:
        if self._closed or self.session is None:
            return
        self.worker.run(job_drift, self.session, on_error=self._guard(drift_failed))

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

    def _show(self, served: ServedItem) -> None:
        if self._submit_carried(served):
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
        self._look_ahead(served.item_pk)

    def _failed(self, exc: BaseException) -> None:
        super()._failed(exc)
        if self._state is State.ERROR:
            self.loading.setText(self.message.text())
            self.stack.setCurrentWidget(self.loading)

    # -- actions (keys and buttons land here) --------------------------------------
    def key_actions(self) -> dict[str, Callable[[], Any]]:
        table: dict[str, Callable[[], Any]] = {
            "instructions": self._toggle_instructions,
            "dismiss": self.banner.dismiss_if_shown,
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
        self.drift_checks.stop()
        if self._instructions is not None:
            self._instructions.close()
        super().shutdown()
