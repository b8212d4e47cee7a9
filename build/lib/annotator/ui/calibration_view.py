"""A calibration session: answer each anchor, see the reference and why, get a verdict.

Three screens, all keyboard-first:

1. *answer* - the anchor's image(s), prompt and criteria beside the rubric form
   (the same ``RubricForm`` and keymap as the label view: P / F, digits, X,
   Up / Down, R for the reason); Enter submits.
2. *feedback* - per metric the rater's answer beside the reference with its
   rationale and a calm met / not met mark; Enter or Space continues.
3. *verdict* - per metric the share of anchors met against the qualification
   rule, the qualify / not-yet verdict, and the rater's calibration history
   (this session beside the one before, per metric, and every session).

The session (``services.calibration.CalibrationSession``) runs on the shared
``DbWorker``; each answer is stored the moment it is submitted.

Public API
----------
``CalibrationView(study, rater, worker, settings=None, parent=None, *, anchor_set=None)``
    ``.submit() -> bool``            submit the form (False: busy or incomplete).
    ``.advance() -> bool``           leave the feedback screen.
    ``.stage() -> str``              "loading" | "answer" | "feedback" | "verdict" | "error".
    ``.form`` (RubricForm), ``.result() -> dict | None`` (the finish() record),
    ``.is_busy() -> bool``, ``.stop()`` / ``.shutdown()``.
    Signals: ``submitted(int index)``, ``completed(dict result)``, ``closeRequested()`` (Enter or
    Esc on the verdict screen), ``failed(str)``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.records import ServedItem
from ..domain.rubric import CANNOT_JUDGE, Metric, Rubric
from ..services.calibration import CalibrationSession
from .image_view import ImageView, SyncGroup
from .keymap import Keymap
from .rubric_form import RubricForm
from .view_lifecycle import PrefetchingView
from .worker import ImagePrefetcher

__all__ = ["CalibrationView", "format_answer"]

INK = "#1f2430"
SOFT = "#5b6270"
LINE = "#e3e6eb"
# Calm marks: a soft green for met, a warm sand for not met (never an alarm red).
MET_BG, MET_INK = "#e9f5ee", "#1e6b45"
MISS_BG, MISS_INK = "#fbf1e2", "#8a5a16"
NONE_BG, NONE_INK = "#f1f2f4", SOFT


def format_answer(metric: Metric, value: Any) -> str:
    """An answer or reference as the rater reads it."""
    if value is None:
        return "no answer"
    if value == CANNOT_JUDGE:
        return "can't judge"
    if metric.kind == "scale":
        try:
            text = metric.level_text(int(value))
        except (TypeError, ValueError):
            text = ""
        return f"{value} \u2013 {text}" if text else str(value)
    if metric.kind == "tags":
        items = [str(v).replace("_", " ") for v in (value or [])]
        return ", ".join(items) if items else "none"
    return str(value).replace("_", " ")


def _label(text: str = "", *, soft: bool = False, wrap: bool = True, size: int | None = None,
           bold: bool = False) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(wrap)
    style = [f"color: {SOFT if soft else INK};"]
    if size:
        style.append(f"font-size: {size}px;")
    if bold:
        style.append("font-weight: 650;")
    lab.setStyleSheet(" ".join(style))
    return lab


def _clear_layout(lay: Any) -> None:
    while lay.count():
        item = lay.takeAt(0)
        w = item.widget()
        if w is not None:
            w.deleteLater()
        elif item.layout() is not None:
            _clear_layout(item.layout())


class _FeedbackPanel(QWidget):
    """Per metric: your answer | reference | met mark, the rationale underneath."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.title = _label("", size=16, bold=True)
        self.summary = _label("", soft=True)
        outer.addWidget(self.title)
        outer.addWidget(self.summary)
        self.rows = QVBoxLayout()
        self.rows.setSpacing(8)
        outer.addLayout(self.rows)
        outer.addStretch(1)
        self.hint = _label("Enter or Space: continue", soft=True)
        outer.addWidget(self.hint)
        self.cards: list[QFrame] = []

    def show_feedback(self, rubric: Rubric, feedback: Sequence[Any], index: int, total: int,
                      last: bool) -> None:
        _clear_layout(self.rows)
        self.cards = []
        scored = [f for f in feedback if f.match is not None]
        met = sum(1 for f in scored if f.match)
        self.title.setText(f"How your answer compares (anchor {index} of {total})")
        self.summary.setText(f"You met the reference on {met} of {len(scored)} scored metrics. "
                             "Read the rationale where you differ; it is the reasoning the reference follows.")
        for f in feedback:
            metric = rubric.metric(f.key)
            card = QFrame()
            card.setObjectName("feedbackCard")
            bg, ink, mark = ((MET_BG, MET_INK, "\u2713 met") if f.match else
                             (NONE_BG, NONE_INK, "not scored") if f.match is None else
                             (MISS_BG, MISS_INK, "\u25cb not met"))
            card.setStyleSheet(f"QFrame#feedbackCard {{ background: {bg}; border-radius: 8px; }}")
            card.setProperty("met", f.match)
            g = QGridLayout(card)
            g.setContentsMargins(12, 8, 12, 8)
            g.setHorizontalSpacing(14)
            g.setVerticalSpacing(3)
            head = QHBoxLayout()
            head.addWidget(_label(f.label or metric.label, bold=True), 1)
            mark_lab = QLabel(mark)
            mark_lab.setObjectName("mark")
            mark_lab.setStyleSheet(f"color: {ink}; font-weight: 650;")
            head.addWidget(mark_lab)
            g.addLayout(head, 0, 0, 1, 2)
            yours = _label(f"Your answer: <b>{_esc(format_answer(metric, f.answer))}</b>")
            ref = _label(f"Reference: <b>{_esc(format_answer(metric, f.reference))}</b>")
            yours.setObjectName("yours")
            ref.setObjectName("reference")
            g.addWidget(yours, 1, 0)
            g.addWidget(ref, 1, 1)
            if metric.kind == "scale":
                rule = "within one point counts as met"
            elif metric.kind == "tags":
                rule = "the same set of tags counts as met"
            else:
                rule = "an exact match counts as met"
            if f.rationale:
                why = _label(f.rationale)
                why.setObjectName("rationale")
                why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                g.addWidget(why, 2, 0, 1, 2)
            g.addWidget(_label(rule, soft=True), 3, 0, 1, 2)
            g.setColumnStretch(0, 1)
            g.setColumnStretch(1, 1)
            self.rows.addWidget(card)
            self.cards.append(card)
        self.hint.setText("Enter or Space: see your result" if last else "Enter or Space: next anchor")


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _VerdictPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(8)
        self.verdict = QLabel()
        self.verdict.setObjectName("verdict")
        self.explain = _label("", soft=True)
        outer.addWidget(self.verdict)
        outer.addWidget(self.explain)
        outer.addWidget(_label("Result per metric", size=15, bold=True))
        self.table = QGridLayout()
        self.table.setHorizontalSpacing(18)
        self.table.setVerticalSpacing(4)
        outer.addLayout(self.table)
        outer.addSpacing(10)
        outer.addWidget(_label("Your calibration history", size=15, bold=True))
        self.history_note = _label("", soft=True)
        outer.addWidget(self.history_note)
        self.history = QGridLayout()
        self.history.setHorizontalSpacing(18)
        self.history.setVerticalSpacing(4)
        outer.addLayout(self.history)
        outer.addSpacing(6)
        outer.addWidget(_label("Every session, oldest first", soft=True, bold=True))
        self.sessions = QGridLayout()
        self.sessions.setHorizontalSpacing(18)
        self.sessions.setVerticalSpacing(4)
        outer.addLayout(self.sessions)
        outer.addStretch(1)
        self.hint = _label("This result is stored. Enter: done.", soft=True)
        outer.addWidget(self.hint)

    @staticmethod
    def _cell(grid: QGridLayout, r: int, c: int, text: str, *, head: bool = False, colour: str | None = None,
              name: str = "") -> QLabel:
        lab = QLabel(text)
        lab.setObjectName(name)
        style = f"color: {colour or (SOFT if head else INK)};"
        if head:
            style += " font-weight: 650;"
        lab.setStyleSheet(style)
        grid.addWidget(lab, r, c)
        return lab

    def show_result(self, rubric: Rubric, result: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> None:
        ok = bool(result.get("qualified"))
        colour = MET_INK if ok else MISS_INK
        self.verdict.setText("Qualified" if ok else "Not yet qualified")
        self.verdict.setStyleSheet(f"font-size: 24px; font-weight: 700; color: {colour};")
        self.verdict.setProperty("qualified", ok)
        metrics = result.get("metrics") or {}
        if ok:
            self.explain.setText(f"You met every qualification rule over {result.get('n_anchors', '?')} anchors.")
        else:
            short = [rubric.metric(k).label for k, m in metrics.items() if not m.get("passed") and rubric.has(k)]
            self.explain.setText(
                "Not yet: " + ", ".join(short) + " fell short of the rule. Review the rationales and run "
                "another calibration session when you are ready." if short else
                "Not yet: no metric could be scored.")
        _clear_layout(self.table)
        heads = ("metric", "rule", "met", "share", "needed", "")
        for c, h in enumerate(heads):
            self._cell(self.table, 0, c, h, head=True)
        for r, (key, m) in enumerate(metrics.items(), start=1):
            label = rubric.metric(key).label if rubric.has(key) else key
            share = m.get("share")
            passed = bool(m.get("passed"))
            self._cell(self.table, r, 0, label)
            self._cell(self.table, r, 1, str(m.get("rule") or ""))
            self._cell(self.table, r, 2, f"{m.get('met', 0)} of {m.get('n', 0)}")
            self._cell(self.table, r, 3, "—" if share is None else f"{share:.0%}")
            self._cell(self.table, r, 4, f"{float(m.get('threshold') or 0):.0%}")
            self._cell(self.table, r, 5, "\u2713 passed" if passed else "\u25cb not yet",
                       colour=MET_INK if passed else MISS_INK, name=f"passed:{key}")
        self.table.setColumnStretch(6, 1)
        self._history(rubric, result, history)

    def _history(self, rubric: Rubric, result: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> None:
        _clear_layout(self.history)
        this_id = result.get("id")
        earlier = [h for h in history if h.get("id") != this_id]
        keys = list((result.get("metrics") or {}).keys())
        if earlier:
            prev = earlier[-1]
            self.history_note.setText(
                f"Before: your previous session ({prev.get('created_at', '')[:16].replace('T', ' ')}, "
                f"{'qualified' if prev.get('qualified') else 'not yet'}).  After: this session.")
        else:
            self.history_note.setText("This is your first calibration session; later sessions are shown beside it.")
        for c, h in enumerate(("metric", "before", "after", "change")):
            self._cell(self.history, 0, c, h, head=True)
        prev_metrics = (earlier[-1].get("result") or {}).get("metrics", {}) if earlier else {}
        now_metrics = result.get("metrics") or {}
        for r, key in enumerate(keys, start=1):
            label = rubric.metric(key).label if rubric.has(key) else key
            before = (prev_metrics.get(key) or {}).get("share")
            after = (now_metrics.get(key) or {}).get("share")
            self._cell(self.history, r, 0, label)
            self._cell(self.history, r, 1, "—" if before is None else f"{before:.0%}", name=f"before:{key}")
            self._cell(self.history, r, 2, "—" if after is None else f"{after:.0%}", name=f"after:{key}")
            if before is not None and after is not None:
                diff = round((after - before) * 100)
                text = "no change" if diff == 0 else f"{diff:+d} points"
            else:
                text = ""
            self._cell(self.history, r, 3, text, colour=SOFT)
        self.history.setColumnStretch(4, 1)
        _clear_layout(self.sessions)
        labels = [rubric.metric(k).label if rubric.has(k) else k for k in keys]
        for c, h in enumerate(("when", "verdict", *labels)):
            self._cell(self.sessions, 0, c, h, head=True)
        for i, h in enumerate(history, start=1):
            res = h.get("result") or {}
            ms = res.get("metrics") or {}
            self._cell(self.sessions, i, 0, str(h.get("created_at", ""))[:16].replace("T", " "))
            ok = bool(h.get("qualified"))
            self._cell(self.sessions, i, 1, "qualified" if ok else "not yet", colour=MET_INK if ok else MISS_INK)
            for c, k in enumerate(keys, start=2):
                share = (ms.get(k) or {}).get("share")
                self._cell(self.sessions, i, c, "—" if share is None else f"{share:.0%}")
        self.sessions.setColumnStretch(len(keys) + 2, 1)


class CalibrationView(PrefetchingView, QWidget):
    submitted = Signal(int)
    completed = Signal(dict)
    closeRequested = Signal()  # noqa: N815 - Qt signal naming; Enter on the verdict screen
    failed = Signal(str)

    def __init__(self, study: Any, rater: str, worker: Any, settings: Any = None,
                 parent: QWidget | None = None, *, anchor_set: str | None = None) -> None:
        super().__init__(parent)
        self.study = study
        self.rater = rater
        self.worker = worker
        self.settings = settings
        self.anchor_set = anchor_set
        self.setObjectName("CalibrationView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.keymap = Keymap.from_settings(settings) if hasattr(settings, "key_overrides") else Keymap()
        self._session: CalibrationSession | None = None
        self._served: ServedItem | None = None
        self._next: ServedItem | None = None
        self._stage = "loading"
        self._busy = True
        self._stopped = False
        self._shown_at: float | None = None
        self._waiting: set[str] = set()
        self._result: dict | None = None
        self._total = 0
        self._rubric = study.rubric  # read once here; the session reads the same version
        self._prefetcher = ImagePrefetcher(study.media.read, max_threads=2, capacity=16, parent=self)
        self._prefetcher.ready.connect(self._on_image)
        self._prefetcher.failed.connect(lambda k, _m: self._on_image(k, QImage()))
        self._build()
        edit = self.form.reason_edit()
        if edit is not None:
            edit.installEventFilter(self)
        self._submit(self._open_job, self._on_opened)

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        head = QHBoxLayout()
        self.heading = _label("Calibration", size=17, bold=True, wrap=False)
        self.counter = _label("", soft=True, wrap=False)
        self.counter.setObjectName("calibrationCounter")
        head.addWidget(self.heading)
        head.addStretch(1)
        head.addWidget(self.counter)
        outer.addLayout(head)
        self.pages = QStackedWidget()
        outer.addWidget(self.pages, 1)

        # work page: item on the left, form / feedback on the right
        work = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.prompt = _label("")
        self.prompt.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.criteria = _label("", soft=True)
        self.criteria.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        ll.addWidget(self.prompt)
        ll.addWidget(self.criteria)
        self.sync = SyncGroup(parent=self)
        self._images = QHBoxLayout()
        ll.addLayout(self._images, 1)
        self.views: list[ImageView] = []
        self.text_output = _label("")
        self.text_output.setTextFormat(Qt.TextFormat.PlainText)
        self.text_output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_output.hide()
        ll.addWidget(self.text_output)
        work.addWidget(left)

        self.side = QStackedWidget()
        self.form = RubricForm(self._rubric, self.keymap)
        form_scroll = QScrollArea()
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        form_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        holder = QWidget()
        hl = QVBoxLayout(holder)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(self.form)
        self.form_hint = _label(f"{self.keymap.hint('submit')}: submit and see the reference", soft=True)
        hl.addWidget(self.form_hint)
        form_scroll.setWidget(holder)
        self.side.addWidget(form_scroll)
        self.feedback = _FeedbackPanel()
        fb_scroll = QScrollArea()
        fb_scroll.setWidgetResizable(True)
        fb_scroll.setFrameShape(QFrame.Shape.NoFrame)
        fb_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        fb_scroll.setWidget(self.feedback)
        self.side.addWidget(fb_scroll)
        self.side.setMinimumWidth(380)
        work.addWidget(self.side)
        work.setStretchFactor(0, 3)
        work.setStretchFactor(1, 2)
        self.splitter = work
        self._split_done = False
        self.pages.addWidget(work)

        self.verdict_page = _VerdictPage()
        vscroll = QScrollArea()
        vscroll.setWidgetResizable(True)
        vscroll.setFrameShape(QFrame.Shape.NoFrame)
        vscroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        vscroll.setWidget(self.verdict_page)
        self.pages.addWidget(vscroll)
        self.message = _label("Opening the calibration session...", soft=True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages.addWidget(self.message)
        self.pages.setCurrentWidget(self.message)
        self.status = _label("", soft=True)
        self.status.setObjectName("calibrationStatus")
        outer.addWidget(self.status)

    def _ensure_views(self, n: int) -> None:
        while len(self.views) < n:
            v = ImageView()
            v.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # digits answer scales, they do not zoom
            v.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
            v.setMinimumSize(200, 200)
            self._images.addWidget(v, 1)
            self.sync.add(v)
            self.views.append(v)
        for i, v in enumerate(self.views):
            v.setVisible(i < n)

    # -- worker plumbing -----------------------------------------------------------
    # worker thread
    def _open_job(self) -> tuple[int, ServedItem | None]:
        self._session = CalibrationSession(self.study, self.rater, self.anchor_set)
        return self._session.total, self._session.next()

    def _submit_job(self, served: ServedItem, answers: dict, time_ms: int) -> tuple[list, ServedItem | None, int]:
        assert self._session is not None
        fb = self._session.submit(served, answers, time_ms)
        return fb, self._session.next(), self._session.index

    def _finish_job(self) -> tuple[dict, list]:
        assert self._session is not None
        return self._session.finish(), self._session.history()

    # UI thread
    def _on_opened(self, result: tuple[int, ServedItem | None]) -> None:
        self._total, served = result
        self._show_item(served)

    def _on_error(self, exc: BaseException) -> None:
        msg = str(exc) or type(exc).__name__
        if self._session is None:
            self._stage = "error"
            self.message.setText(f"Calibration cannot start: {msg}")
            self.pages.setCurrentWidget(self.message)
        else:
            self._busy = False
            self.status.setText(f"Could not complete that: {msg}")
        self.failed.emit(msg)

    def _show_item(self, served: ServedItem | None) -> None:
        self._served = served
        if served is None:  # every anchor answered: compute the verdict
            self._stage = "loading"
            self._busy = True
            self.status.setText("Working out your result...")
            self._submit(self._finish_job, self._on_finished)
            return
        v = served.view
        self.counter.setText(f"Anchor {served.queue_position + 1} of {self._total}")
        self.prompt.setText(v.prompt)
        self.criteria.setText(f"Criteria: {v.criteria}" if v.criteria else "")
        self.criteria.setVisible(bool(v.criteria))
        self.text_output.setText(v.text or "")
        self.text_output.setVisible(bool(v.text))
        self.form.set_answers(None)
        self.side.setCurrentIndex(0)
        self.pages.setCurrentIndex(0)
        self._stage = "answer"
        self._busy = True
        keys = self._keys(served)
        self._waiting = {k for k in keys if not self._prefetcher.contains(k)}
        self._prefetcher.prefetch(keys)
        if self._waiting:
            self.status.setText("Loading images...")
        else:
            self._present()

    @staticmethod
    def _keys(served: ServedItem) -> list[str]:
        v = served.view
        return list(dict.fromkeys([*v.inputs, *v.outputs, *([v.mask] if v.mask else [])]))

    def _on_image(self, key: str, _img: QImage) -> None:
        if key in self._waiting:
            self._waiting.discard(key)
            if not self._waiting and self._stage == "answer":
                self._present()

    def _present(self) -> None:
        s = self._served
        if s is None:
            return
        v = s.view
        shas = [*v.inputs, *v.outputs]
        self._ensure_views(len(shas))
        mask = self._prefetcher.get(v.mask) if v.mask else None
        for view, sha in zip(self.views, shas, strict=False):
            img = self._prefetcher.get(sha)
            view.set_image(img, mask=mask if sha in v.outputs and img is not None else None)
            view.setToolTip("input" if sha in v.inputs and sha not in v.outputs else "")
        self.sync.fit()
        self.status.setText(self._key_hint())
        self._shown_at = time.monotonic()
        self._busy = False
        self.setFocus()

    def _on_submitted(self, result: tuple[list, ServedItem | None, int]) -> None:
        feedback, nxt, index = result
        self._next = nxt
        self.feedback.show_feedback(self._rubric, feedback, index, self._total, last=nxt is None)
        self.side.setCurrentIndex(1)
        self._stage = "feedback"
        self._busy = False
        self.status.setText("")
        if nxt is not None:  # decode the next anchor while the rater reads
            self._prefetcher.prefetch(self._keys(nxt))
        self.setFocus()
        self.submitted.emit(index)

    def _on_finished(self, result: tuple[dict, list]) -> None:
        res, history = result
        self._result = res
        self.verdict_page.show_result(self._rubric, res, history)
        self.pages.setCurrentIndex(1)
        self.counter.setText(f"{res.get('n_anchors', self._total)} anchors answered")
        self._stage = "verdict"
        self._busy = False
        self.status.setText("")
        self.setFocus()
        self.completed.emit(res)

    def _key_hint(self) -> str:
        k = self.keymap.hint
        return (f"Keys: {k('pass')} / {k('fail')} gates, digits for scales and tags, {k('cannot_judge')} "
                f"can't judge, {k('next_metric')} / {k('prev_metric')} next / previous metric, "
                f"{k('reason')} reason, {k('submit')} submit.")

    # -- actions -------------------------------------------------------------------
    def submit(self) -> bool:
        if self._stage != "answer" or self._busy or self._served is None:
            return False
        missing = self.form.missing()
        if missing:
            labels = ", ".join(self._rubric.metric(k).label for k in missing)
            self.status.setText(f"Answer {labels} first (or press {self.keymap.hint('cannot_judge')} "
                                "if you cannot judge it).")
            self.form.focus_metric(missing[0])
            return False
        self._busy = True
        elapsed = int((time.monotonic() - (self._shown_at or time.monotonic())) * 1000)
        self.status.setText("Saving...")
        self._submit(self._submit_job, self._on_submitted, self._served, self.form.answers(), elapsed)
        return True

    def advance(self) -> bool:
        if self._stage != "feedback" or self._busy:
            return False
        self._show_item(self._next)
        return True

    # -- keys ----------------------------------------------------------------------
    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802, A002 - Qt override
        # Tab / Shift+Tab move between metrics (as in the label view), not between widgets.
        if self.hasFocus() and self._stage == "answer":
            self.form.apply("next_metric" if next else "prev_metric")
            return True
        return super().focusNextPrevChild(next)

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:  # noqa: N802 - Qt override
        # In the reason box: Esc returns to the keys, Enter submits (Shift+Enter is a new line),
        # as in the label view.
        if obj is self.form.reason_edit() and e.type() == QEvent.Type.KeyPress:
            if e.key() == Qt.Key.Key_Escape:
                self.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return True
            if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                    not e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                if not e.isAutoRepeat():
                    self.setFocus(Qt.FocusReason.ShortcutFocusReason)
                    self.submit()
                return True
        return super().eventFilter(obj, e)

    def keyPressEvent(self, e: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if e.isAutoRepeat():
            e.accept()
            return
        reason = self.form.reason_edit()
        if reason is not None and reason.hasFocus():
            super().keyPressEvent(e)
            return
        if self._stage == "feedback":
            if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
                self.advance()
                e.accept()
                return
        elif self._stage == "verdict":
            if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape):
                self.closeRequested.emit()
                e.accept()
                return
        elif self._stage == "answer" and not self._busy:
            action = self.keymap.action_for(e)
            if action == "submit":
                self.submit()
                e.accept()
                return
            if action == "reason" and reason is not None:
                reason.setFocus(Qt.FocusReason.ShortcutFocusReason)
                e.accept()
                return
            if action in ("zoom_in", "zoom_out", "zoom_fit", "zoom_actual", "toggle_mask"):
                {"zoom_in": self.sync.zoom_in, "zoom_out": self.sync.zoom_out, "zoom_fit": self.sync.fit,
                 "zoom_actual": self.sync.actual_size, "toggle_mask": self.sync.toggle_mask}[action]()
                e.accept()
                return
            if action is not None and self.form.apply(action):
                self.status.setText(self._key_hint())
                e.accept()
                return
        super().keyPressEvent(e)

    # -- queries and lifecycle -----------------------------------------------------
    def stage(self) -> str:
        return self._stage

    def result(self) -> dict | None:
        return self._result


    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if not self._split_done and self.width() > 600:
            # The item gets the larger share: the form and the feedback read fine narrower.
            w = self.splitter.width() or self.width()
            self.splitter.setSizes([int(w * 0.55), int(w * 0.45)])
            self._split_done = True
