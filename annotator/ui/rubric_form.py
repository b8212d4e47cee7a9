"""The answer form generated from a rubric, and the scroll area that keeps its focus in view.

Gates are PASS / FAIL toggles, scales a row of numbered buttons with the level
descriptions beside them, likert scales their labelled points, tags checkable
chips, choices one-of-N buttons, text a reason box. Every gate/scale/likert/
choice offers "cannot judge". Each control shows its key; one metric at a time
has the keyboard focus (framed) and the answer keys act on it. The verdict the
rubric's rules imply is shown live.

``metric_rows.ROWS`` is the only place in the UI that names metric kinds: adding a kind is
one row class and one entry there (plus its ``KindSpec`` in ``domain/kinds.py``).

Public API: ``RubricForm(rubric, keymap, parent=None)`` with ``answers() -> dict``,
``set_answers(answers | None)``, ``missing() -> list[str]`` (metric keys),
``missing_labels()``, ``verdict() -> str | None``, ``focused_key()``, ``focused_row()``,
``focus_metric(key)``, ``next_metric()``, ``prev_metric()``, ``apply(action) -> bool``
(keymap action names), ``reason_edit() -> QPlainTextEdit | None``; signals
``changed()``, ``focusMoved()``. ``FormScroll(form)``: a scroll area that brings
the focused metric (or the reason box being typed in) into view.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..domain.answers import missing_metrics
from ..domain.rubric import Rubric
from ..domain.verdict import compile_rules
from .i18n import translate
from .keymap import Keymap
from .metric_rows import ROWS, MetricRow, TextRow, gate_text
from .style import form_style, relative_font, set_accessible


class RubricForm(QWidget):
    changed = Signal()
    focusMoved = Signal()  # noqa: N815 - Qt signal naming

    def __init__(self, rubric: Rubric, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rubric = rubric
        self.keymap = keymap
        self._rules = compile_rules(rubric)
        self.setStyleSheet(form_style(self.palette()))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.rows: list[MetricRow] = []
        for i, m in enumerate(rubric.metrics, start=1):
            row = ROWS[m.kind](m, i, keymap)
            row.changed.connect(self._on_changed)
            row.clicked.connect(lambda r=row: self._focus_row(r))
            lay.addWidget(row)
            self.rows.append(row)
        self.verdict_label = QLabel()
        self.verdict_label.setFont(relative_font(self.verdict_label, 1.05, bold=True))
        self.verdict_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.verdict_label.setWordWrap(True)
        set_accessible(
            self.verdict_label,
            translate("RubricForm", "Verdict"),
            translate("RubricForm", "The verdict the rubric's rules give for the answers so far"),
        )
        lay.addWidget(self.verdict_label)
        lay.addStretch(1)
        self._focus = -1
        self._answerable = [i for i, r in enumerate(self.rows) if r.answerable]
        edit = self.reason_edit()
        if edit is not None:
            # While the reason is typed, the frame is on the reason, not on the metric the keys
            # left it on ("5. Failure tags" stayed framed); back to it on leaving.
            edit.installEventFilter(self)
        self.set_answers(None)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.reason_edit():
            if event.type() == QEvent.Type.FocusIn:
                for r in self.rows:
                    r.set_focused(isinstance(r, TextRow) and r.edit is obj)
            elif event.type() == QEvent.Type.FocusOut:
                for i, r in enumerate(self.rows):
                    r.set_focused(i == self._focus)
        return super().eventFilter(obj, event)

    def typing_reason(self) -> bool:
        """The reason box has the keyboard (its row is the one framed)."""
        edit = self.reason_edit()
        return edit is not None and edit.hasFocus()

    # -- answers -------------------------------------------------------------------
    def answers(self) -> dict[str, Any]:
        out = {r.rubric_metric.key: r.value() for r in self.rows}
        return {k: v for k, v in out.items() if v is not None}

    def set_answers(self, answers: dict[str, Any] | None) -> None:
        answers = answers or {}
        for r in self.rows:
            r.set_value(answers.get(r.rubric_metric.key))
        first = self._first_missing()
        self._set_focus(
            first if first is not None else (self._answerable[0] if self._answerable else -1)
        )
        self._update_verdict()

    def missing(self) -> list[str]:
        return missing_metrics(self.rubric, self.answers())

    def verdict(self) -> str | None:
        return self._rules.evaluate(self.answers())

    def missing_labels(self) -> list[str]:
        return [self.rubric.metric(k).label for k in self.missing()]

    def reason_edit(self) -> QPlainTextEdit | None:
        return next((r.edit for r in self.rows if isinstance(r, TextRow)), None)

    # -- focus ---------------------------------------------------------------------
    def focused_key(self) -> str | None:
        row = self.focused_row()
        return row.rubric_metric.key if row is not None else None

    def focused_row(self) -> MetricRow | None:
        return self.rows[self._focus] if 0 <= self._focus < len(self.rows) else None

    def focus_metric(self, key: str) -> None:
        for i, r in enumerate(self.rows):
            if r.rubric_metric.key == key:
                self._set_focus(i)
                return

    def _focus_row(self, row: MetricRow) -> None:
        if row in self.rows and row.answerable:
            self._set_focus(self.rows.index(row))

    def _set_focus(self, index: int) -> None:
        self._focus = index
        for i, r in enumerate(self.rows):
            r.set_focused(i == index)
        self.focusMoved.emit()

    def _first_missing(self) -> int | None:
        missing = set(self.missing())
        return next((i for i, r in enumerate(self.rows) if r.rubric_metric.key in missing), None)

    def next_metric(self) -> None:
        if self._answerable:
            later = [i for i in self._answerable if i > self._focus]
            self._set_focus(later[0] if later else self._answerable[0])

    def prev_metric(self) -> None:
        if self._answerable:
            earlier = [i for i in self._answerable if i < self._focus]
            self._set_focus(earlier[-1] if earlier else self._answerable[-1])

    def _advance(self) -> None:
        """After an answer: the next metric below, answered or not, so the same keys give the
        same answers on a fresh form and on a filled one (a correction, a return with Back);
        after the last one, the first still unanswered above, if any."""
        nxt = [i for i in self._answerable if i > self._focus]
        if nxt:
            self._set_focus(nxt[0])
            return
        first = self._first_missing()
        if first is not None and self.rows[first].answerable:
            self._set_focus(first)

    def refusal(self, action: str) -> str:
        """The line an answer key that did nothing reads: which metric, and the keys it takes."""
        row = self.focused_row()
        if row is None:
            return ""
        return (
            translate("RubricForm", "{key} does not answer “{metric}”: its keys are {keys}.")
            .replace("{key}", self.keymap.hint(action))
            .replace("{metric}", row.rubric_metric.label)
            .replace("{keys}", row.keys_text())
        )

    # -- keys ----------------------------------------------------------------------
    def apply(self, action: str) -> bool:
        """An answer or navigation key; False when it does not apply here."""
        if action == "next_metric":
            self.next_metric()
            return True
        if action == "prev_metric":
            self.prev_metric()
            return True
        row = self.focused_row()
        if row is None:
            return False
        before = row.value()
        done = row.apply(action)
        handled = done or row.value() != before or action == "clear"
        if done:
            self._advance()
        return handled

    def _on_changed(self) -> None:
        self._update_verdict()
        self.changed.emit()

    def _update_verdict(self) -> None:
        v = self.verdict()
        shown = (
            translate("RubricForm", "not decided yet")
            if v is None
            else (gate_text(v) if v in ("PASS", "FAIL") else str(v))
        )
        self.verdict_label.setText(
            translate("RubricForm", "Verdict by the rubric's rules: {verdict}").format(
                verdict=shown
            )
        )


class FormScroll(QScrollArea):
    """Holds a form (or a widget around it) and keeps the focused metric fully in view."""

    MARGIN = 12

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.form: RubricForm | None = None

    def follow(self, form: RubricForm) -> None:
        self.form = form
        form.focusMoved.connect(self.show_focused)
        edit = form.reason_edit()
        if edit is not None:
            edit.installEventFilter(self)

    def show_focused(self) -> None:
        row = self.form.focused_row() if self.form is not None else None
        inner = self.widget()
        if row is not None and inner is not None:
            layout = inner.layout()
            if layout is not None:
                layout.activate()  # geometry first: the row may have just been laid out
            self.ensureWidgetVisible(row, 0, self.MARGIN)

    def show_widget(self, widget: QWidget) -> None:
        """Bring `widget` (the reason box being typed in) into view with its metric's title."""
        self.ensureWidgetVisible(widget.parentWidget() or widget, 0, self.MARGIN)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # Also on a click into the box; a window that is not active gets no focus events,
        # so the reason key brings the box into view itself (SessionView._focus_reason).
        if event.type() == QEvent.Type.FocusIn and isinstance(obj, QWidget):
            self.show_widget(obj)
        return super().eventFilter(obj, event)
