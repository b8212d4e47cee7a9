"""The study lead's review view: what needs a decision, decided by keyboard.
(Over 500 lines on purpose: the review queue's list, filters, decision form and their keys are one
screen's flow.)

Lists the review queue (``services.adjudication.review_queue``: the raters disagree,
the judge contradicts a clear consensus, a rater could not judge) in the service's
order, narrowed by metric, generator, case and rater. For the selected entry it
shows the item (the shared ``ItemDisplay``, prompt, criteria, inputs and mask),
every rater's answer and reason by name, the judge's, and the consensus rule's
outcome. The lead answers the entry's metric with the label form's keys (one key
per value), picks a reason category, writes the reason, and submits: the
adjudication is a new row (the raters' rows are never touched) and the next
undecided entry is shown. Ctrl+P promotes the item to an anchor after asking for
a rationale.

This view names raters and generators: the main window opens it only in the
lead's study (never in rater mode, never in a rater package). All database work
runs on the window's ``DbWorker``; while a write is in flight every key is
ignored (no double submit); a failure is one line in the view. The parts that show
one entry (header, answers, decision form, filters) are in ``review_panels``.

Public API: ``ReviewView(snapshot, rater, worker, settings=None, parent=None, *,
prefetcher=None)`` with ``apply_action(name) -> bool``, ``entries`` (the whole queue),
``shown`` (the filtered list), ``current() -> ReviewEntry | None``, ``select(i)``,
``set_filter(kind, value)``, ``filters`` (``FilterBar``), ``decision`` (``DecisionPanel``),
``form_row`` (the answer row of the entry's metric), ``reason_edit``, ``adjudicator_edit``,
``rationale_edit``, ``category()``, ``submit() -> bool``, ``ask_promote()``,
``confirm_promote()``, ``hide_decided``, ``state``; signals ``decided(int)`` (the adjudication id), ``promoted(str, int)``
(the anchor's item_id, the anchor set's new version), ``errorOccurred(str)``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import InputError
from ..domain.rubric import Metric, format_value
from ..services.adjudication import (
    DEFAULT_ADJUDICATOR,
    ReviewEntry,
    adjudicate,
    current_adjudication,
    entry_matches,
    promote,
    review_screen,
)
from .i18n import current_language, translate
from .item_display import ItemDisplay, media_keys
from .layouts import scrolled
from .metric_rows import MetricRow
from .review_panels import (
    FILTERS,
    DecisionPanel,
    EntryDetails,
    FilterBar,
    ItemHeader,
    shown_value,
    soft,
    typed_value,
    why_text,
)
from .session_view import FORM_KEYS, SessionView, State
from .shown import shown_text
from .style import relative_font, set_accessible
from .worker import DbWorker, ImagePrefetcher

PREFETCH_AHEAD = 2


# -- worker jobs (database thread; no Qt in here) ---------------------------------------
def _job_adjudicate(
    study: Any, entry: ReviewEntry, decision: dict[str, Any]
) -> tuple[int, dict[str, Any] | None]:
    new_id = adjudicate(study, item_id=entry.item_id, metric=entry.metric, **decision)
    return new_id, current_adjudication(study, entry.item_id, entry.metric)


def _job_promote(study: Any, item_id: str, rationale: str) -> tuple[str, int]:
    return promote(study, item_id=item_id, rationale=rationale)


class ReviewView(SessionView):
    decided = Signal(int)
    promoted = Signal(str, int)
    context = "review"

    def __init__(
        self,
        snapshot: Any,
        rater: str | None,
        worker: DbWorker,
        settings: Any = None,
        parent: QWidget | None = None,
        *,
        prefetcher: ImagePrefetcher | None = None,
    ) -> None:
        # the review answers as no rater (an adjudication names its lead in the form)
        super().__init__(snapshot, rater or "", worker, settings, parent, prefetcher=prefetcher)
        self.setObjectName("ReviewView")
        self.rubric = snapshot.rubric_in(current_language())
        self.entries: list[ReviewEntry] = []
        self.views: dict[str, Any] = {}
        self.shown: list[ReviewEntry] = []
        self.hide_decided = False
        self._pos = -1
        self._drafts: dict[tuple[str, str], tuple[Any, str, str | None]] = {}
        self.form_row: MetricRow | None = None
        self._build()
        self.open()

    # -- layout --------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 6)
        outer.setSpacing(6)
        bar = QHBoxLayout()
        self.title = QLabel(
            translate("ReviewView", "Review and adjudicate: {name}").format(name=self.snapshot.name)
        )
        self.title.setFont(relative_font(self.title, 1.4, bold=True))
        set_accessible(
            self.title,
            self.title.text(),
            translate("ReviewView", "The study lead's review of disagreements"),
        )
        bar.addWidget(self.title)
        bar.addStretch(1)
        self.counts = soft(QLabel())
        self.counts.setWordWrap(False)
        bar.addWidget(self.counts)
        outer.addLayout(bar)
        self.filters = FilterBar(self.keymap)
        self.filters.changed.connect(self._guard(lambda: self._apply_filters()))
        outer.addWidget(self.filters)
        outer.addWidget(
            soft(
                QLabel(
                    translate(
                        "ReviewView",
                        "For the study lead: this page names raters and generators. "
                        "Raters never see it.",
                    )
                )
            )
        )
        self.stack = QStackedWidget()
        self.loading = QLabel(translate("ReviewView", "Reading the review queue…"))
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.loading.setWordWrap(True)
        self.stack.addWidget(self.loading)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self._queue_side())
        split.addWidget(self._item_side())
        split.addWidget(self._decision_side())
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 4)
        split.setStretchFactor(2, 3)
        self.splitter = split
        self._sized = False
        self.stack.addWidget(split)
        outer.addWidget(self.stack, 1)
        outer.addWidget(self.message)
        k = self.keymap.hint
        self.keys_note = soft(
            QLabel(
                translate(
                    "ReviewView",
                    "Keys: {next} / {prev} entry, answer keys as in labelling ({none}: no tag), "
                    "{cat} reason category, {reason} reason, {who} who decides, {submit} decide, "
                    "{promote} promote to anchor, {decided} hide decided, {clear} clear filters, "
                    "{reload} read again.",
                ).format(
                    none=k("clear"),
                    next=k("review_next"),
                    prev=k("review_prev"),
                    cat=k("review_category"),
                    reason=k("reason"),
                    who=k("review_adjudicator"),
                    submit=k("submit"),
                    promote=k("review_promote"),
                    decided=k("review_decided"),
                    clear=k("review_clear_filters"),
                    reload=k("review_reload"),
                )
            )
        )
        outer.addWidget(self.keys_note)

    def _queue_side(self) -> QWidget:
        self.queue = QListWidget()
        self.queue.setObjectName("reviewQueue")
        self.queue.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.queue.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.queue.setWordWrap(True)
        self.queue.setAlternatingRowColors(True)
        self.queue.currentRowChanged.connect(self._guard(self._row_clicked))
        set_accessible(
            self.queue,
            translate("ReviewView", "Review queue"),
            translate("ReviewView", "What needs a decision, most important first"),
        )
        return self.queue

    def _item_side(self) -> QWidget:
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        self.header = ItemHeader()
        lay.addWidget(self.header)
        self.item_panel = ItemDisplay(self.keymap)
        lay.addWidget(self.item_panel, 1)
        return side

    def _decision_side(self) -> QWidget:
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(4, 0, 0, 0)
        self.details = EntryDetails()
        lay.addWidget(self.details)
        self.decision = d = DecisionPanel(self.keymap, self._default_adjudicator())
        lay.addWidget(d)
        lay.addStretch(1)  # the decision right below the answers it weighs
        d.submit_button.clicked.connect(lambda _=False: self.submit())
        d.promote_button.clicked.connect(lambda _=False: self.ask_promote())
        self.reason_edit, self.adjudicator_edit = d.reason_edit, d.adjudicator_edit
        self.rationale_edit = d.rationale_edit
        back = self._submit_from_reason
        self.reason_keys(self.reason_edit, {"leave_reason": self.back_to_keys, "submit": back})
        self.reason_keys(self.adjudicator_edit, {"leave_reason": self.back_to_keys, "submit": back})
        self.reason_keys(
            self.rationale_edit,
            {"leave_reason": self._cancel_promote, "submit": self.confirm_promote},
        )
        # a short window scrolls the decision vertically; its width is never squeezed
        area = scrolled(side)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setMinimumWidth(
            side.minimumSizeHint().width() + area.verticalScrollBar().sizeHint().width()
        )
        return area

    def _default_adjudicator(self) -> str:
        saved = self.settings.value("adjudicator") if self.settings is not None else None
        return str(saved) if saved else DEFAULT_ADJUDICATOR

    # -- opening -------------------------------------------------------------------
    def _open_job(self, study: Any) -> Any:  # worker thread
        return review_screen(study)

    def _opened(self, result: tuple[list[ReviewEntry], dict[str, Any]]) -> None:
        # After a reload the same entry stays; on opening, the first one still undecided.
        current = self.current() or next((e for e in result[0] if not e.adjudicated), None)
        self.entries, self.views = result
        self.filters.fill(self.entries, self.rubric)
        self.stack.setCurrentWidget(self.splitter)
        self._set_state(State.READY)
        self._apply_filters(keep=current)

    # -- the list ------------------------------------------------------------------
    def current(self) -> ReviewEntry | None:
        return self.shown[self._pos] if 0 <= self._pos < len(self.shown) else None

    def set_filter(self, kind: str, value: str | None) -> bool:
        return self.filters.set(kind, value)

    def _toggle_decided(self) -> bool:
        self.hide_decided = not self.hide_decided
        self._apply_filters()
        return True

    def _apply_filters(self, keep: ReviewEntry | None = None) -> None:
        if self._state is State.BUSY:
            return  # a save is in flight: it refilters with the filters then chosen (_decided)
        self._keep_draft()  # the entry shown may leave the list: its unsaved answer stays
        keep = keep or self.current()
        chosen = self.filters.chosen()
        self.shown = [
            e
            for e in self.entries
            if entry_matches(e, **chosen) and not (self.hide_decided and e.adjudicated)
        ]
        self.queue.blockSignals(True)
        self.queue.clear()
        for e in self.shown:
            self.queue.addItem(self._list_item(e))
        self.queue.blockSignals(False)
        at = self._index_of(keep) if keep is not None else None
        self._pos = -1
        self.select((at or 0) if self.shown else -1)

    def _index_of(self, entry: ReviewEntry) -> int | None:
        """Where an entry (or its re-read copy: same item and metric) is in the filtered list."""
        key = (entry.item_id, entry.metric)
        return next((i for i, e in enumerate(self.shown) if (e.item_id, e.metric) == key), None)

    def _list_item(self, e: ReviewEntry) -> QListWidgetItem:
        why = why_text(e)
        mark = "✓ " if e.adjudicated else ""
        item = QListWidgetItem(
            f"{mark}{shown_text(e.item_id)} · {self._metric(e).label}\n"
            f"{shown_text(e.case_id)} · {shown_text(e.generator)} · {why}"
        )
        item.setToolTip(item.text())
        return item

    def _metric(self, e: ReviewEntry) -> Metric:
        return self.rubric.metric(e.metric)

    def _row_clicked(self, row: int) -> None:
        if row != self._pos and self._state is State.READY:
            self.select(row)
        elif row != self._pos:
            self.queue.setCurrentRow(self._pos)  # a write is in flight: the entry stays

    def select(self, index: int) -> None:
        """Show entry `index` of the filtered list (its draft, if one was left, comes back)."""
        self._keep_draft()
        self._pos = index if 0 <= index < len(self.shown) else -1
        if self.queue.currentRow() != self._pos:
            self.queue.blockSignals(True)
            self.queue.setCurrentRow(self._pos)
            self.queue.blockSignals(False)
        if self._pos >= 0:
            self.queue.scrollToItem(self.queue.item(self._pos))
        self._update_counts()
        self._show_entry()

    def _move(self, step: int) -> bool:
        if not self.shown:
            return False
        self.select(max(0, min(len(self.shown) - 1, self._pos + step)))
        return True

    def _update_counts(self) -> None:
        done = sum(1 for e in self.entries if e.adjudicated)
        self.counts.setText(
            translate("ReviewView", "{open} to decide · {done} decided · {shown} listed").format(
                open=len(self.entries) - done, done=done, shown=len(self.shown)
            )
        )

    # -- one entry -----------------------------------------------------------------
    def _show_entry(self) -> None:
        e = self.current()
        d = self.decision
        for w in (d.submit_button, d.promote_button, d.reason_edit):
            w.setEnabled(e is not None)
        if e is None:
            self.item_panel.clear()
            self.header.clear()
            self.details.clear(
                translate("ReviewView", "Nothing needs a decision here.")
                if self.entries
                else translate("ReviewView", "Nothing needs a decision in this study.")
            )
            return
        m = self._metric(e)
        view = self.views.get(e.item_id)
        self.header.show_entry(e, view, m)
        if view is not None:
            keys = media_keys(view)
            self.item_panel.show_item(view, {k: self.prefetcher.get(k) for k in keys})
            missing = self.item_panel.waiting_for()
            if missing:
                self.prefetcher.prefetch(sorted(missing))
        ahead = self.shown[self._pos + 1 : self._pos + 1 + PREFETCH_AHEAD]
        self.prefetcher.prefetch(
            [k for n in ahead if (v := self.views.get(n.item_id)) for k in media_keys(v)]
        )
        self.details.show_entry(e, m)
        draft = self._drafts.pop((e.item_id, e.metric), None)
        if draft is not None:
            d.fill(m, *draft)
        elif e.adjudicated:
            a = e.adjudicated
            d.fill(m, typed_value(m, a["value"]), "", a["category"])
        else:
            d.fill(m, None, "", None)
        self.form_row = d.row

    def _keep_draft(self) -> None:
        e = self.current()
        if e is None or self.form_row is None or self._state is State.BUSY:
            return
        if self.decision.touched():
            d = self.decision
            self._drafts[(e.item_id, e.metric)] = (
                d.value(),
                d.reason_edit.toPlainText(),
                d.category(),
            )

    def category(self) -> str | None:
        return self.decision.category()

    # -- deciding ------------------------------------------------------------------
    def _answer(self, action: str) -> bool:
        if self.form_row is None or self.current() is None:
            return False
        before = self.form_row.value()
        done = self.form_row.apply(action)
        return done or self.form_row.value() != before or action == "clear"

    def submit(self) -> bool:
        """Record the decision on the entry's metric; the next undecided entry follows."""
        e, row = self.current(), self.form_row
        if self._state is not State.READY or e is None or row is None:
            return False
        value = self.decision.value()
        if value is None:
            self._say(translate("ReviewView", "Give the resolved answer first (the answer keys)."))
            return False
        reason = self.decision.reason()
        if not reason:
            self._say(
                translate("ReviewView", "Write the reason first ({key}): what decided it.").format(
                    key=self.keymap.hint("reason")
                )
            )
            return False
        decision = {
            "value": format_value(value),
            "reason": reason,
            "by": self.decision.adjudicator(),
            "category": self.category(),
        }
        self._begin_write()
        self._job(_job_adjudicate, e, decision, on_done=lambda r: self._decided(e, r))
        return True

    def _decided(self, entry: ReviewEntry, result: tuple[int, dict]) -> None:
        new_id, state = result
        entry.adjudicated = state
        # The decision is stored: what the form holds is no draft to bring back.
        self._drafts.pop((entry.item_id, entry.metric), None)
        if self.form_row is not None:
            self.decision.fill(self._metric(entry), None, "", None)
        if self.settings is not None and state:
            self.settings.set_value("adjudicator", state["by"])
        self._set_state(State.READY)
        self._say(
            translate("ReviewView", "Decided {item} · {metric}: {value}.").format(
                item=entry.item_id,
                metric=self._metric(entry).label,
                value=shown_value(self._metric(entry), state["value"] if state else None),
            )
        )
        at = self._index_of(entry)
        at = self._pos if at is None else at
        later = [i for i in range(at + 1, len(self.shown)) if not self.shown[i].adjudicated]
        target = self.shown[later[0]] if later else entry
        self._apply_filters(keep=target)
        if target is entry:
            self._say(translate("ReviewView", "Nothing undecided follows in this list."))
        self.decided.emit(new_id)

    # -- promoting -----------------------------------------------------------------
    def ask_promote(self) -> bool:
        if self._state is not State.READY or self.current() is None:
            return False
        self.decision.promote_box.show()
        self.rationale_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True

    def confirm_promote(self) -> bool:
        e = self.current()
        if self._state is not State.READY or e is None or not self.decision.promote_box.isVisible():
            return False
        rationale = self.rationale_edit.text().strip()
        self.decision.promote_box.hide()
        self.back_to_keys()
        self._begin_write()
        self._job(_job_promote, e.item_id, rationale, on_done=self._promoted)
        return True

    def _promoted(self, result: tuple[str, int]) -> None:
        anchor, version = result
        self.rationale_edit.clear()
        self._set_state(State.READY)
        self._say(
            translate(
                "ReviewView", "Promoted: anchor {anchor}, anchor set version {version}."
            ).format(anchor=anchor, version=version)
        )
        self.promoted.emit(anchor, version)

    def _cancel_promote(self) -> None:
        self.decision.promote_box.hide()
        self.back_to_keys()

    # -- keys, messages, images ------------------------------------------------------
    def key_actions(self) -> dict[str, Callable[[], Any]]:
        panel = self.item_panel
        table: dict[str, Callable[[], Any]] = {
            "submit": self.submit,
            "reason": lambda: self._focus(self.reason_edit),
            "review_adjudicator": lambda: self._focus(self.adjudicator_edit),
            "review_category": self.decision.next_category,
            "review_next": lambda: self._move(1),
            "review_prev": lambda: self._move(-1),
            "review_promote": self.ask_promote,
            "review_decided": self._toggle_decided,
            "review_clear_filters": self.filters.clear,
            "review_reload": self._reload,
            **panel.sync.key_actions(),
            "toggle_mask": lambda: panel.has_mask and panel.toggle_mask(),
            **{f"review_filter_{f}": partial(self.filters.cycle, f) for f in FILTERS},
            **{
                name: partial(self._answer, name)
                for name in FORM_KEYS
                if name not in ("next_metric", "prev_metric")
            },
        }
        return {k: self.when_ready(fn) for k, fn in table.items()}

    def _focus(self, edit: QWidget) -> bool:
        if self.current() is None:
            return False
        edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True

    def _reload(self) -> bool:
        self._keep_draft()  # open() reads the queue again before it refilters
        self.open()
        return True

    def _failed(self, exc: BaseException) -> None:
        # A refusal names the CLI flag it came from (--by, --item): here the words alone.
        if isinstance(exc, InputError) and (exc.field or "").startswith("--"):
            exc = InputError(exc.message, source=exc.source, line=exc.line)
        super()._failed(exc)

    def _say(self, text: str) -> None:
        self.message.setText(text)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized and self.width() > 0:
            # The picture gets the most room; the list and the answers what their text needs.
            w = self.splitter.width() or self.width()
            self.splitter.setSizes([int(w * 0.23), int(w * 0.4), int(w * 0.37)])
            self._sized = True

    def _image_ready(self, key: str, image: QImage) -> None:
        e = self.current()
        view = self.views.get(e.item_id) if e is not None else None
        if view is not None and key in media_keys(view):
            self.item_panel.image_arrived(key, image)

    def _image_failed(self, key: str, message: str) -> None:
        e = self.current()
        view = self.views.get(e.item_id) if e is not None else None
        if view is not None and key in media_keys(view):
            self.item_panel.image_failed(key)


__all__ = ["ReviewView"]
