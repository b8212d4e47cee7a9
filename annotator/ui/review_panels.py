"""The parts of the review view that show one entry: where the item comes from (prompt and
criteria), every answer on the entry's metric, and the lead's decision form.

``ItemHeader``: ``show_entry(entry, view, metric)``, ``clear()``. ``EntryDetails``: ``show_entry(entry,
metric)``, ``clear(text)``. ``DecisionPanel(keymap, adjudicator)``: ``fill(metric, value,
reason, category)``, ``value()``, ``reason()``, ``category()``, ``next_category()``,
``adjudicator()``, ``row`` (the answer row: ``metric_rows``, one key per value),
``reason_edit``, ``adjudicator_edit``, ``rationale_edit``, ``promote_box``,
``submit_button``, ``promote_button``. Answers arrive in the ratings CSV form
(``shown_value`` puts them in the app's words).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..domain.errors import InputError
from ..domain.rubric import Metric, format_value
from ..services.adjudication import CATEGORIES, ReviewEntry
from .i18n import QT_TRANSLATE_NOOP, translate
from .keymap import Keymap
from .metric_rows import ROWS, MetricRow, format_answer
from .shown import is_blank, shown_text
from .style import form_style, relative_font, set_accessible, soft_colour

CATEGORY_CYCLE: tuple[str | None, ...] = (None, *CATEGORIES)
_CATEGORY_TEXT = {
    None: QT_TRANSLATE_NOOP("ReviewView", "no category"),
    "rubric_unclear": QT_TRANSLATE_NOOP("ReviewView", "the rubric text was unclear"),
    "rater_error": QT_TRANSLATE_NOOP("ReviewView", "a rater erred"),
    "judge_error": QT_TRANSLATE_NOOP("ReviewView", "the judge erred"),
    "ambiguous_item": QT_TRANSLATE_NOOP("ReviewView", "the item is ambiguous"),
    "other": QT_TRANSLATE_NOOP("ReviewView", "other"),
}
_WHY_TEXT = {
    "humans_disagree": QT_TRANSLATE_NOOP("ReviewView", "the raters disagree"),
    "judge_contradicts": QT_TRANSLATE_NOOP("ReviewView", "the judge contradicts the raters"),
    "cannot_judge": QT_TRANSLATE_NOOP("ReviewView", "a rater could not judge"),
}
_ALL_TEXT = {
    "metric": QT_TRANSLATE_NOOP("ReviewView", "All metrics"),
    "generator": QT_TRANSLATE_NOOP("ReviewView", "All generators"),
    "case": QT_TRANSLATE_NOOP("ReviewView", "All cases"),
    "rater": QT_TRANSLATE_NOOP("ReviewView", "All raters"),
}
FILTERS = tuple(_ALL_TEXT)
MAX_ANSWER_ROWS = 8  # more raters than this: the answers table scrolls


def shown_value(metric: Metric, raw: str | None) -> str:
    """An answer as the queue holds it (the ratings CSV form) in the app's words."""
    if is_blank(raw):
        return translate("ReviewView", "no clear answer")
    typed = typed_value(metric, raw)
    return shown_text(raw) if typed is None else format_answer(metric, typed)


def typed_value(metric: Metric, raw: Any) -> Any:
    """The ratings CSV form -> what an answer row holds (tags as a list); None if unreadable
    or missing."""
    if is_blank(raw):
        return None
    try:
        typed = metric.spec.parse_value(metric, shown_text(raw))
    except InputError:
        return None
    return list(typed) if isinstance(typed, tuple) else typed


def category_text(category: str | None) -> str:
    return translate("ReviewView", _CATEGORY_TEXT.get(category, category or ""))


def why_text(entry: ReviewEntry) -> str:
    return ", ".join(translate("ReviewView", _WHY_TEXT.get(r, r)) for r in entry.reasons)


def soft(label: QLabel) -> QLabel:
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {soft_colour(label.palette())};")
    return label


class FilterBar(QWidget):
    """One list per filter (metric, generator, case, rater), each stepped through by its key;
    the values are those of the queue read."""

    changed = Signal()

    def __init__(self, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.boxes: dict[str, QComboBox] = {}
        for f in FILTERS:
            key = keymap.hint(f"review_filter_{f}")
            box = QComboBox()
            box.setObjectName(f"filter:{f}")
            box.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the view keeps the keys
            box.currentIndexChanged.connect(lambda _i: self.changed.emit())
            set_accessible(
                box,
                translate("ReviewView", _ALL_TEXT[f]),
                translate("ReviewView", "Narrows the list (key {key})").format(key=key),
            )
            lay.addWidget(QLabel(f"{key}:"))
            lay.addWidget(box, 1)
            self.boxes[f] = box

    def fill(self, entries: list[ReviewEntry], rubric: Any) -> None:
        """The values found in `entries`; a value chosen before stays chosen if still there."""
        for f, box in self.boxes.items():
            keep = box.currentData()
            box.blockSignals(True)
            box.clear()
            box.addItem(translate("ReviewView", _ALL_TEXT[f]), None)
            for value, text in self._values(f, entries, rubric):
                box.addItem(shown_text(text), value)
            box.setCurrentIndex(max(0, box.findData(keep)) if keep is not None else 0)
            box.blockSignals(False)

    @staticmethod
    def _values(kind: str, entries: list[ReviewEntry], rubric: Any) -> list[tuple[str, str]]:
        if kind == "metric":
            present = {e.metric for e in entries}
            return [(m.key, m.label) for m in rubric.judged_metrics if m.key in present]
        found = {
            v
            for e in entries
            for v in (
                [shown_text(h["rater"]) for h in e.humans]
                if kind == "rater"
                else [shown_text(e.generator if kind == "generator" else e.case_id)]
            )
        }
        return [(v, v) for v in sorted(found)]

    def chosen(self) -> dict[str, str | None]:
        return {f: box.currentData() for f, box in self.boxes.items()}

    def set(self, kind: str, value: str | None) -> bool:  # noqa: A003
        box = self.boxes[kind]
        i = box.findData(value) if value is not None else 0
        if i < 0:
            return False
        box.setCurrentIndex(i)
        return True

    def cycle(self, kind: str) -> bool:
        box = self.boxes[kind]
        if box.count() < 2:
            return False
        box.setCurrentIndex((box.currentIndex() + 1) % box.count())
        return True

    def clear(self) -> bool:
        for box in self.boxes.values():
            box.blockSignals(True)
            box.setCurrentIndex(0)
            box.blockSignals(False)
        self.changed.emit()
        return True


class ItemHeader(QFrame):
    """Item, case, generator and metric (the lead's view names them), prompt and criteria."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 4, 8, 4)
        self.where_label = QLabel()
        self.where_label.setFont(relative_font(self.where_label, 1.0, bold=True))
        self.prompt_label = QLabel()
        self.criteria_label = QLabel()
        titles = (translate("ReviewView", "Prompt"), translate("ReviewView", "Criteria"))
        for lab in (self.where_label, self.prompt_label, self.criteria_label):
            lab.setWordWrap(True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setProperty("content", True)  # the study's words
        grid.addWidget(self.where_label, 0, 0, 1, 2)
        for r, (text, lab) in enumerate(
            zip(titles, (self.prompt_label, self.criteria_label), strict=True)
        ):
            set_accessible(lab, text, text)
            t = QLabel(text)
            t.setFont(relative_font(t, 1.0, bold=True))
            grid.addWidget(t, r + 1, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(lab, r + 1, 1)
        grid.setColumnStretch(1, 1)

    def show_entry(self, entry: ReviewEntry, view: Any, metric: Metric) -> None:
        self.where_label.setText(
            translate("ReviewView", "{item} · case {case} · {generator} · {metric}").format(
                item=shown_text(entry.item_id),
                case=shown_text(entry.case_id),
                generator=shown_text(entry.generator),
                metric=metric.label,
            )
        )
        self.prompt_label.setText(shown_text(view.prompt) if view is not None else "")
        self.criteria_label.setText(
            shown_text(view.criteria if view is not None else None, "—") or "—"
        )

    def clear(self) -> None:
        for lab in (self.where_label, self.prompt_label, self.criteria_label):
            lab.setText("")


class EntryDetails(QWidget):
    """Why the entry is here, every rater's answer and reason by name, the judge's, the
    consensus rule's outcome and the decision in force."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.why_label = QLabel()
        self.why_label.setWordWrap(True)
        self.why_label.setFont(relative_font(self.why_label, 1.0, bold=True))
        lay.addWidget(self.why_label)
        self.answers = QTableWidget(0, 3)
        self.answers.setObjectName("reviewAnswers")
        self.answers.setHorizontalHeaderLabels(
            [
                translate("ReviewView", "Who"),
                translate("ReviewView", "Answer"),
                translate("ReviewView", "Reason"),
            ]
        )
        self.answers.setProperty("content", True)  # names and reasons are the study's
        self.answers.verticalHeader().setVisible(False)
        self.answers.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.answers.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.answers.setWordWrap(True)
        self.answers.setAlternatingRowColors(True)
        header = self.answers.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        set_accessible(
            self.answers,
            translate("ReviewView", "Answers"),
            translate("ReviewView", "Every rater's answer and reason, then the judge's"),
        )
        lay.addWidget(self.answers)
        self.consensus_label = QLabel()
        self.consensus_label.setWordWrap(True)
        # The rule's own words are the report's (English, as the report); a reason is the lead's.
        self.consensus_label.setProperty("content", True)
        lay.addWidget(self.consensus_label)
        self.previous_label = soft(QLabel())
        self.previous_label.setProperty("content", True)
        lay.addWidget(self.previous_label)

    def show_entry(self, e: ReviewEntry, m: Metric) -> None:
        self.why_label.setText(
            translate("ReviewView", "Why it is here: {why}").format(why=why_text(e))
        )
        rows = [(h["rater"], h["value"], h["reason"]) for h in e.humans]
        rows += [
            (
                translate("ReviewView", "{judge} (judge)").format(judge=shown_text(j["judge"])),
                j["value"],
                j["reason"],
            )
            for j in e.judges
        ]
        self.answers.setRowCount(len(rows))
        for r, (who, value, reason) in enumerate(rows):
            for c, text in enumerate((shown_text(who), shown_value(m, value), shown_text(reason))):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if r >= len(e.humans):  # the judge's row reads apart from the raters'
                    f = item.font()
                    f.setItalic(True)
                    item.setFont(f)
                self.answers.setItem(r, c, item)
        self.answers.resizeRowsToContents()
        # As tall as its rows (up to a few): the decision form stays close below.
        shown = sum(self.answers.rowHeight(r) for r in range(min(len(rows), MAX_ANSWER_ROWS)))
        self.answers.setFixedHeight(
            self.answers.horizontalHeader().sizeHint().height()
            + shown
            + 2 * self.answers.frameWidth()
            + 2
        )
        cons = e.consensus
        self.consensus_label.setText(
            translate("ReviewView", "Consensus rule: {rule} → {outcome}").format(
                rule=cons.rule,
                outcome=shown_value(m, format_value(cons.value) if cons.clear else None),
            )
        )
        a = e.adjudicated
        self.previous_label.setText(
            ""
            if not a
            else translate(
                "ReviewView",
                "Decided: {value} by {by} ({category}): {reason}. A new decision replaces it "
                "(the earlier one is kept).",
            ).format(
                value=shown_value(m, a["value"]),
                by=shown_text(a["by"]),
                category=category_text(None if is_blank(a["category"]) else a["category"]),
                reason=shown_text(a["reason"]),
            )
        )

    def clear(self, text: str) -> None:
        self.why_label.setText(text)
        self.answers.setRowCount(0)
        self.consensus_label.setText("")
        self.previous_label.setText("")


class DecisionPanel(QGroupBox):
    """The lead's answer on the entry's metric (the label form's row for it), the reason
    category, the reason, who decides; the submit and promote buttons and the rationale box."""

    def __init__(self, keymap: Keymap, adjudicator: str, parent: QWidget | None = None) -> None:
        super().__init__(translate("ReviewView", "Your decision"), parent)
        self.keymap = keymap
        k = keymap.hint
        lay = QVBoxLayout(self)
        # Only the entry's row is shown (a stacked widget would be as tall as the tallest row).
        self.row_holder = QWidget()
        self.row_holder.setStyleSheet(form_style(self.palette()))  # the label form's look
        self._row_lay = QVBoxLayout(self.row_holder)
        self._row_lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.row_holder)
        self._rows: dict[str, MetricRow] = {}
        self.row: MetricRow | None = None
        self._category = 0
        self._answered = False
        self.category_label = QLabel()
        lay.addWidget(self.category_label)
        self.reason_edit = QPlainTextEdit()
        self.reason_edit.setObjectName("adjudicationReason")
        self.reason_edit.setPlaceholderText(
            translate(
                "ReviewView", "Why this answer ({write} to write, {leave} back to the keys)"
            ).format(write=k("reason"), leave=k("leave_reason"))
        )
        self.reason_edit.setTabChangesFocus(True)
        self.reason_edit.setFixedHeight(self.reason_edit.fontMetrics().lineSpacing() * 3 + 16)
        set_accessible(
            self.reason_edit, translate("ReviewView", "Reason"), self.reason_edit.placeholderText()
        )
        lay.addWidget(self.reason_edit)
        who = QHBoxLayout()
        who.addWidget(
            QLabel(
                translate("ReviewView", "Decided by ({key}):").format(key=k("review_adjudicator"))
            )
        )
        self.adjudicator_edit = QLineEdit(adjudicator)
        self.adjudicator_edit.setProperty("content", True)  # a name, stored as given ("lead")
        set_accessible(
            self.adjudicator_edit,
            translate("ReviewView", "Adjudicator"),
            translate("ReviewView", "Who decides: recorded with the decision"),
        )
        who.addWidget(self.adjudicator_edit, 1)
        lay.addLayout(who)
        buttons = QHBoxLayout()
        self.submit_button = QPushButton(
            translate("ReviewView", "Decide and go on ({key})").format(key=k("submit"))
        )
        self.promote_button = QPushButton(
            translate("ReviewView", "Promote to anchor… ({key})").format(key=k("review_promote"))
        )
        for b in (self.submit_button, self.promote_button):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the view
            buttons.addWidget(b)
        lay.addLayout(buttons)
        self.promote_box = QWidget()
        pl = QHBoxLayout(self.promote_box)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.addWidget(QLabel(translate("ReviewView", "Rationale:")))
        self.rationale_edit = QLineEdit()
        self.rationale_edit.setPlaceholderText(
            translate(
                "ReviewView", "What the anchor teaches ({submit} promotes, {leave} cancels)"
            ).format(submit=k("submit"), leave=k("leave_reason"))
        )
        set_accessible(
            self.rationale_edit,
            translate("ReviewView", "Rationale"),
            self.rationale_edit.placeholderText(),
        )
        pl.addWidget(self.rationale_edit, 1)
        self.promote_box.hide()
        lay.addWidget(self.promote_box)
        self._show_category()

    def fill(self, metric: Metric, value: Any, reason: str, category: str | None) -> None:
        """The form for `metric`, filled (a draft, the decision in force, or empty)."""
        row = self._rows.get(metric.key)
        if row is None:
            row = ROWS[metric.kind](metric, 1, self.keymap)
            row.set_focused(True)  # the one metric answered here: always framed
            row.changed.connect(self._given)
            self._row_lay.addWidget(row)
            self._rows[metric.key] = row
        for other in self._rows.values():
            other.setVisible(other is row)
        self.row = row
        row.set_value(value)
        # An untouched tags row holds "no tag": a decision only once given (Backspace: none).
        self._answered = value is not None
        self.reason_edit.setPlainText(reason)
        self._category = CATEGORY_CYCLE.index(category) if category in CATEGORY_CYCLE else 0
        self._show_category()
        self.promote_box.hide()

    def _given(self) -> None:
        self._answered = True

    def value(self) -> Any:
        """The answer given (None until one is)."""
        if self.row is None or not self._answered:
            return None
        return self.row.value()

    def reason(self) -> str:
        return self.reason_edit.toPlainText().strip()

    def adjudicator(self) -> str | None:
        return self.adjudicator_edit.text().strip() or None

    def category(self) -> str | None:
        return CATEGORY_CYCLE[self._category]

    def next_category(self) -> bool:
        self._category = (self._category + 1) % len(CATEGORY_CYCLE)
        self._show_category()
        return True

    def _show_category(self) -> None:
        self.category_label.setText(
            translate("ReviewView", "Reason category ({key}): {category}").format(
                key=self.keymap.hint("review_category"), category=category_text(self.category())
            )
        )

    def touched(self) -> bool:
        """Something was given that is worth keeping as a draft."""
        return bool(
            self.reason_edit.toPlainText().strip() or self._category
        ) or self.value() not in (
            None,
            [],
        )


__all__ = [
    "CATEGORY_CYCLE",
    "FILTERS",
    "DecisionPanel",
    "FilterBar",
    "EntryDetails",
    "ItemHeader",
    "category_text",
    "shown_value",
    "typed_value",
    "why_text",
]
