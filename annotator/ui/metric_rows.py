"""One row of the answer form per metric: title, help, the controls and their keys.
(Over 500 lines on purpose: one row class per kind and the ROWS table that picks them: the UI's
registry of kinds.)

Row classes never look at a metric's kind name: the form picks the class from
``ROWS`` (at the end, the UI's one table by kind) and a row reads only what the
metric says (its values, levels, options, ``spec.multi``, ``accepts_cannot_judge``).

Every row: ``value()`` (what goes into the answers; None leaves the metric out),
``set_value(v)``, ``apply(action) -> bool`` (True when the metric is now answered
and the focus may move on), ``set_focused(on)``; signals ``changed()``, ``clicked()``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric
from .i18n import translate
from .keymap import Keymap
from .layouts import FlowLayout
from .style import relative_font, set_accessible


def gate_text(value: str) -> str:
    """PASS / FAIL as the rater reads them (the stored values never change)."""
    return translate("MetricRow", "PASS") if value == PASS else translate("MetricRow", "FAIL")


def format_answer(metric: Metric, value: Any) -> str:
    """An answer or a reference as the rater reads it."""
    if value is None:
        return translate("MetricRow", "no answer")
    if value == CANNOT_JUDGE:
        return translate("MetricRow", "can't judge")
    if metric.spec.multi:
        items = [metric.option_text(str(v)) for v in (value or [])]
        return ", ".join(items) if items else translate("MetricRow", "none")
    if value in (PASS, FAIL):
        return gate_text(value)
    if metric.options and value in metric.options:
        return metric.option_text(value)
    return metric.spec.value_label(metric, value)


def digit_of(action: str) -> int | None:
    """value_4 -> 4; anything else -> None."""
    if action.startswith("value_"):
        return int(action.split("_")[1])
    return None


class AnswerButton(QPushButton):
    def __init__(
        self,
        text: str,
        role: str = "",
        parent: QWidget | None = None,
        *,
        name: str = "",
        description: str = "",
    ) -> None:
        super().__init__(text, parent)
        set_accessible(self, name or text, description)
        self.setCheckable(True)
        self.setProperty("answer", True)
        if role:
            self.setProperty("role", role)
        # The form is driven by keys on the view; buttons never take focus.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)


class MetricRow(QFrame):
    """One metric: title, help, controls. Subclasses hold the value."""

    changed = Signal()
    clicked = Signal()
    answerable = True  # moved to by the metric keys (free text is reached with R instead)

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.rubric_metric = metric
        self.keymap = keymap
        self.setObjectName("metric")
        self.setProperty("focused", False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.setSpacing(4)
        optional = not metric.required and self.marks_optional(metric)
        title = QLabel(
            f"{number}. {metric.label}"
            + (translate("MetricRow", "  (optional)") if optional else "")
        )
        title.setProperty("content", True)  # the rubric's words (translated in the rubric file)
        set_accessible(self, metric.label, metric.help or metric.label)
        title.setFont(relative_font(title, 1.05, bold=True))
        title.setWordWrap(True)
        lay.addWidget(title)
        self.title = title
        if metric.help:
            h = QLabel(metric.help)
            h.setProperty("content", True)
            h.setWordWrap(True)
            h.setFont(relative_font(h, 0.92))
            lay.addWidget(h)
        self.controls = QVBoxLayout()
        self.controls.setSpacing(4)
        lay.addLayout(self.controls)
        self._cj: AnswerButton | None = None
        if metric.accepts_cannot_judge:
            self._cj = AnswerButton(
                translate("MetricRow", "Can't judge ({key})").format(
                    key=keymap.hint("cannot_judge")
                ),
                "cj",
                name=translate("MetricRow", "Can't judge"),
                description=translate(
                    "MetricRow", "{metric}: the output does not let you decide (key {key})"
                ).format(metric=metric.label, key=keymap.hint("cannot_judge")),
            )
            self._cj.setToolTip(
                translate(
                    "MetricRow",
                    "The output does not let you decide (for example it failed to load)",
                )
            )
            self._cj.clicked.connect(self._click_cj)

    @classmethod
    def marks_optional(cls, metric: Metric) -> bool:
        """Whether "(optional)" is said when the rubric does not require the metric."""
        return True

    def set_focused(self, on: bool) -> None:
        if bool(self.property("focused")) == on:
            return  # re-polishing a style sheet is costly: only on a real change
        self.setProperty("focused", on)
        self.style().unpolish(self)
        self.style().polish(self)
        # A re-polish restyles but schedules no paint: without this the frame stays
        # on the old metric while the keys already act on the new one.
        self.update()

    def mousePressEvent(self, event) -> None:  # noqa: N802, ANN001
        self.clicked.emit()
        super().mousePressEvent(event)

    def _click_cj(self) -> None:
        self.set_value(CANNOT_JUDGE if self.value() != CANNOT_JUDGE else None)
        self.clicked.emit()
        self.changed.emit()

    def _check_cj(self, value: Any) -> None:
        if self._cj is not None:
            self._cj.setChecked(value == CANNOT_JUDGE)

    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    def own_keys(self) -> list[str]:
        """The answer keys of this metric's values, as the keyboard labels them (override)."""
        return []

    def keys_text(self) -> str:
        """Every key that answers this metric, for the line a refused key reads."""
        keys = self.own_keys()
        if self._cj is not None:
            keys.append(self.keymap.hint("cannot_judge"))
        return ", ".join(keys)

    def apply(self, action: str) -> bool:
        """Handle an answer key; True when the metric is now answered (focus may advance)."""
        if action == "cannot_judge" and self._cj is not None:
            self.set_value(CANNOT_JUDGE)
            self.changed.emit()
            return True
        if action == "clear":
            self.set_value(None)
            self.changed.emit()
        return False


class OneValueRow(MetricRow):
    """A row holding one value among buttons; a second click on the chosen one takes it back."""

    _value: Any = None

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        self.buttons: dict[Any, AnswerButton] = {}

    def _add(self, value: Any, button: AnswerButton) -> AnswerButton:
        button.clicked.connect(lambda _=False, v=value: self._click(v))
        self.buttons[value] = button
        return button

    def _click(self, v: Any) -> None:
        self.set_value(None if self._value == v else v)
        self.clicked.emit()
        self.changed.emit()

    def value(self) -> Any:
        return self._value

    def set_value(self, value: Any) -> None:
        self._value = value
        for v, b in self.buttons.items():
            b.setChecked(value == v)
        self._check_cj(value)

    def _pick(self, value: Any) -> bool:
        if value not in self.buttons:
            return False
        self.set_value(value)
        self.changed.emit()
        return True


class GateRow(OneValueRow):
    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        row = QHBoxLayout()
        self.pass_btn = self._gate_button(PASS, "pass")
        self.fail_btn = self._gate_button(FAIL, "fail")
        row.addWidget(self.pass_btn)
        row.addWidget(self.fail_btn)
        if self._cj is not None:
            row.addWidget(self._cj)
        row.addStretch(1)
        self.controls.addLayout(row)

    def _gate_button(self, answer: str, action: str) -> AnswerButton:
        """The button of one gate answer, its key (the keymap's `action`) on it and in its
        accessible description."""
        key = self.keymap.hint(action)
        return self._add(
            answer,
            AnswerButton(
                f"{gate_text(answer)} ({key})",
                action,
                name=gate_text(answer),
                description=translate("MetricRow", "{metric}: {answer} (key {key})").format(
                    metric=self.rubric_metric.label, answer=gate_text(answer), key=key
                ),
            ),
        )

    def apply(self, action: str) -> bool:
        if action in ("pass", "fail"):
            return self._pick(PASS if action == "pass" else FAIL)
        return super().apply(action)

    def own_keys(self) -> list[str]:
        return [self.keymap.hint("pass"), self.keymap.hint("fail")]


class ScaleRow(OneValueRow):
    """Numbered buttons; every described level stays visible (raters anchor on the words)."""

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        row = QHBoxLayout()
        # Whole-number points are picked by their own digit; points between them (a scale with
        # a step: 0 / 0.5 / 1) by their place, 1 for the first, as a likert's are.
        self.by_place = metric.step is not None
        self.points = list(metric.values())
        for n, v in enumerate(self.points, start=1):
            key = (n % 10 if n <= 10 else "") if self.by_place else (v if v <= 9 else "")
            b = self._add(
                v,
                AnswerButton(
                    # the key is shown where it is not the point itself, as on "PASS (P)"
                    f"{v} ({key})" if self.by_place and key != "" else str(v),
                    description=translate("MetricRow", "{metric}: {answer} (key {key})").format(
                        metric=metric.label,
                        answer=metric.spec.value_label(metric, v),
                        key=key,
                    ),
                ),
            )
            b.setToolTip(metric.level_text(v) or f"{v}")
            b.setMinimumWidth(b.fontMetrics().horizontalAdvance("00") * 2)
            row.addWidget(b)
        if self._cj is not None:
            row.addSpacing(8)
            row.addWidget(self._cj)
        row.addStretch(1)
        self.controls.addLayout(row)
        self.level_labels: dict[int, QLabel] = {}
        levels = sorted(metric.levels, reverse=True)
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(1)
        # Two columns once there are many levels: all stay visible without a long list.
        rows = (len(levels) + 1) // 2 if len(levels) > 3 else len(levels)
        for n, v in enumerate(levels):
            lab = QLabel(f"{v}  {metric.levels[v]}")
            lab.setProperty("content", True)
            lab.setWordWrap(True)
            lab.setFont(relative_font(lab, 0.92))
            grid.addWidget(lab, n % rows, n // rows)
            self.level_labels[v] = lab
        if levels:
            grid.setColumnStretch(0, 1)
            grid.setColumnStretch(1, 1)
            self.controls.addLayout(grid)

    def set_value(self, value: Any) -> None:
        super().set_value(value)
        for v, lab in self.level_labels.items():
            if lab.font().bold() != (value == v):
                lab.setFont(relative_font(self, 0.92, bold=value == v))

    def apply(self, action: str) -> bool:
        d = digit_of(action)
        if d is not None and self.by_place:
            place = d or 10
            return place <= len(self.points) and self._pick(self.points[place - 1])
        if d is not None:
            return self._pick(d)
        return super().apply(action)

    def own_keys(self) -> list[str]:
        if self.by_place:
            return [f"1-{min(len(self.points), 10) % 10}"]
        values = [v for v in self.buttons if isinstance(v, int) and 0 <= v <= 9]
        return [f"{min(values)}-{max(values)}"] if values else []


class LikertRow(OneValueRow):
    """Labelled points 1..N side by side ("1  Poor", ...); digit keys pick a point (0 = the tenth)."""

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        holder = QWidget()
        flow = FlowLayout(holder, spacing=6)
        for v in metric.values():
            b = self._add(
                v,
                AnswerButton(
                    f"{v}  {metric.level_text(v)}" if v <= 10 else metric.level_text(v),
                    name=metric.level_text(v),
                    description=translate("MetricRow", "{metric}: {answer} (key {key})").format(
                        metric=metric.label,
                        answer=metric.level_text(v),
                        key=v % 10 if v <= 10 else "",
                    ),
                ),
            )
            b.setProperty("content", True)
            b.setToolTip(metric.spec.value_label(metric, v))
            flow.addWidget(b)
        if self._cj is not None:
            flow.addWidget(self._cj)
        self.controls.addWidget(holder)

    def apply(self, action: str) -> bool:
        d = digit_of(action)
        if d is not None:
            return self._pick(d or 10)
        return super().apply(action)

    def own_keys(self) -> list[str]:
        n = len(self.buttons)
        return [f"1-{min(n, 9)}" + (" 0" if n >= 10 else "")] if n else []


class OptionsRow(MetricRow):
    """Numbered chips: one of N (choice) or any number toggled (``spec.multi``, tags)."""

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        self.multi = metric.spec.multi
        holder = QWidget()
        flow = FlowLayout(holder, spacing=6)
        self.buttons: dict[str, AnswerButton] = {}
        for i, opt in enumerate(metric.options, start=1):
            hint = str(i % 10) if i <= 10 else ""
            shown = metric.option_text(opt)
            b = AnswerButton(
                f"{hint}  {shown}" if hint else shown,
                name=shown,
                description=translate("MetricRow", "{metric}: {answer} (key {key})").format(
                    metric=metric.label, answer=shown, key=hint
                ),
            )
            b.setProperty("content", True)  # option texts are the rubric's
            b.clicked.connect(lambda _=False, o=opt: self._click(o))
            flow.addWidget(b)
            self.buttons[opt] = b
        if self._cj is not None:
            flow.addWidget(self._cj)
        self.controls.addWidget(holder)
        self._value: Any = [] if self.multi else None

    @classmethod
    def marks_optional(cls, metric: Metric) -> bool:
        return not metric.spec.multi  # ticking no tag is an answer: never "optional"

    def _click(self, opt: str) -> None:
        self._toggle(opt)
        self.clicked.emit()
        self.changed.emit()

    def _toggle(self, opt: str) -> None:
        if self.multi:
            cur = list(self._value or [])
            self.set_value([o for o in cur if o != opt] if opt in cur else [*cur, opt])
        else:
            self.set_value(None if self._value == opt else opt)

    def value(self) -> Any:
        if self.multi:
            return [o for o in self.rubric_metric.options if o in (self._value or [])]
        return self._value

    def set_value(self, value: Any) -> None:
        if self.multi:
            value = list(value or [])
        self._value = value
        for opt, b in self.buttons.items():
            b.setChecked(opt in value if self.multi else value == opt)
        self._check_cj(value)

    def apply(self, action: str) -> bool:
        d = digit_of(action)
        if d is not None:
            idx = (d or 10) - 1
            if idx >= len(self.rubric_metric.options):
                return False
            self._toggle(self.rubric_metric.options[idx])
            self.changed.emit()
            return not self.multi  # several tags may apply: the focus stays
        if action == "clear" and self.multi:
            self.set_value([])
            self.changed.emit()
            return False
        return super().apply(action)

    def own_keys(self) -> list[str]:
        n = min(len(self.rubric_metric.options), 10)
        return [f"1-{min(n, 9)}" + (" 0" if n == 10 else "")] if n else []


class TextRow(MetricRow):
    """Free text (the reason): reached with R, left with Esc; never a target of the metric keys."""

    answerable = False

    def __init__(
        self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None
    ) -> None:
        super().__init__(metric, number, keymap, parent)
        self.edit = QPlainTextEdit()
        self.edit.setPlaceholderText(
            translate("MetricRow", "Press {write} to write, {leave} to return to the keys").format(
                write=keymap.hint("reason"), leave=keymap.hint("leave_reason")
            )
        )
        set_accessible(self.edit, metric.label, metric.help or self.edit.placeholderText())
        self.edit.setTabChangesFocus(True)
        self.edit.setFixedHeight(self.edit.fontMetrics().lineSpacing() * 3 + 16)
        self.edit.textChanged.connect(self.changed.emit)
        self.controls.addWidget(self.edit)

    def value(self) -> Any:
        return self.edit.toPlainText().strip() or None

    def set_value(self, value: Any) -> None:
        self.edit.blockSignals(True)
        self.edit.setPlainText(value or "")
        self.edit.blockSignals(False)


# The one UI table by metric kind (domain/kinds.KINDS): a new kind's row class goes here.
ROWS: dict[str, type[MetricRow]] = {
    "gate": GateRow,
    "scale": ScaleRow,
    "likert": LikertRow,
    "choice": OptionsRow,
    "tags": OptionsRow,
    "text": TextRow,
}
