"""The answer form generated from a rubric.

Gates are PASS / FAIL toggles, scales a row of numbered buttons with the level
descriptions beside them, tags checkable chips, choices one-of-N buttons, text a
reason box. Every gate/scale/choice offers "cannot judge". Each control shows
its key; one metric at a time has the keyboard focus (highlighted) and the
answer keys act on it. The verdict the rubric's rules imply is shown live.

Public API: ``RubricForm(rubric, keymap, parent=None)`` with ``answers() -> dict``,
``set_answers(answers | None)``, ``missing() -> list[str]`` (metric keys),
``verdict() -> str | None``, ``focused_key() -> str | None``, ``focus_metric(key)``,
``next_metric()``, ``prev_metric()``, ``apply(action) -> bool`` (keymap action
names), ``reason_edit() -> QPlainTextEdit | None``; signal ``changed()``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..domain.answers import missing_metrics
from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric, Rubric
from ..domain.verdict import compile_rules
from .keymap import Keymap
from .layouts import FlowLayout

STYLE = """
QFrame#metric { border: 2px solid transparent; border-radius: 8px; }
QFrame#metric[focused="true"] { border: 2px solid palette(highlight); }
QPushButton[answer="true"] {
    padding: 0.3em 0.7em; border: 1px solid palette(mid); border-radius: 5px;
    background: palette(button); color: palette(button-text);
}
QPushButton[answer="true"]:checked {
    background: palette(highlight); color: palette(highlighted-text); border-color: palette(highlight);
}
QPushButton[answer="true"][role="pass"]:checked { background: #2e7d32; color: white; border-color: #2e7d32; }
QPushButton[answer="true"][role="fail"]:checked { background: #c62828; color: white; border-color: #c62828; }
QPushButton[answer="true"][role="cj"]:checked { background: palette(dark); color: palette(bright-text); }
QPushButton[answer="true"]:disabled { color: palette(mid); }
"""


def relative_font(widget: QWidget, factor: float = 1.0, *, bold: bool = False) -> QFont:
    """The widget's font scaled relative to the system font (never a pixel size)."""
    f = QFont(widget.font())
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * factor)
    f.setBold(bold)
    return f


def humanise(option: str) -> str:
    return option.replace("_", " ")


class _AnswerButton(QPushButton):
    def __init__(self, text: str, role: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setCheckable(True)
        self.setProperty("answer", True)
        if role:
            self.setProperty("role", role)
        # The form is driven by keys on the label view; buttons never take focus.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)


class MetricRow(QFrame):
    """One metric: title, help, controls. Subclasses hold the value."""

    changed = Signal()
    clicked = Signal()

    def __init__(self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = metric
        self.keymap = keymap
        self.setObjectName("metric")
        self.setProperty("focused", False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.setSpacing(4)
        title = QLabel(f"{number}. {metric.label}" + ("" if metric.required or metric.kind == "tags" else "  (optional)"))
        title.setFont(relative_font(title, 1.05, bold=True))
        title.setWordWrap(True)
        lay.addWidget(title)
        self.title = title
        if metric.help:
            h = QLabel(metric.help)
            h.setWordWrap(True)
            h.setFont(relative_font(h, 0.92))
            lay.addWidget(h)
        self.controls = QVBoxLayout()
        self.controls.setSpacing(4)
        lay.addLayout(self.controls)
        self._cj: _AnswerButton | None = None
        if metric.accepts_cannot_judge:
            self._cj = _AnswerButton(f"Can't judge ({keymap.hint('cannot_judge')})", "cj")
            self._cj.setToolTip("The output does not let you decide (for example it failed to load)")
            self._cj.clicked.connect(lambda: self._click_cj())

    def set_focused(self, on: bool) -> None:
        if bool(self.property("focused")) == on:
            return  # re-polishing a style sheet is costly: only on a real change
        self.setProperty("focused", on)
        self.style().unpolish(self)
        self.style().polish(self)

    def mousePressEvent(self, event) -> None:  # noqa: N802, ANN001
        self.clicked.emit()
        super().mousePressEvent(event)

    def _click_cj(self) -> None:
        self.set_value(CANNOT_JUDGE if self.value() != CANNOT_JUDGE else None)
        self.clicked.emit()
        self.changed.emit()

    # value protocol
    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

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
        return False


class _OneValueRow(MetricRow):
    """A row holding one value that a second click on the same button takes back."""

    _value: Any = None

    def _click(self, v: Any) -> None:
        self.set_value(None if self._value == v else v)
        self.clicked.emit()
        self.changed.emit()

    def value(self) -> Any:
        return self._value


class GateRow(_OneValueRow):
    def __init__(self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(metric, number, keymap, parent)
        row = QHBoxLayout()
        self.pass_btn = _AnswerButton(f"PASS ({keymap.hint('pass')})", "pass")
        self.fail_btn = _AnswerButton(f"FAIL ({keymap.hint('fail')})", "fail")
        for b, v in ((self.pass_btn, PASS), (self.fail_btn, FAIL)):
            b.clicked.connect(lambda _=False, v=v: self._click(v))
            row.addWidget(b)
        if self._cj is not None:
            row.addWidget(self._cj)
        row.addStretch(1)
        self.controls.addLayout(row)
        self._value: str | None = None

    def set_value(self, value: Any) -> None:
        self._value = value
        self.pass_btn.setChecked(value == PASS)
        self.fail_btn.setChecked(value == FAIL)
        if self._cj is not None:
            self._cj.setChecked(value == CANNOT_JUDGE)

    def apply(self, action: str) -> bool:
        if action in ("pass", "fail"):
            self.set_value(PASS if action == "pass" else FAIL)
            self.changed.emit()
            return True
        return super().apply(action)


class ScaleRow(_OneValueRow):
    def __init__(self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(metric, number, keymap, parent)
        row = QHBoxLayout()
        self.buttons: dict[int, _AnswerButton] = {}
        for v in metric.scale_values():
            b = _AnswerButton(str(v))
            b.setToolTip(metric.level_text(v) or f"{v}")
            b.setMinimumWidth(b.fontMetrics().horizontalAdvance("00") * 2)
            b.clicked.connect(lambda _=False, v=v: self._click(v))
            row.addWidget(b)
            self.buttons[v] = b
        if self._cj is not None:
            row.addSpacing(8)
            row.addWidget(self._cj)
        row.addStretch(1)
        self.controls.addLayout(row)
        # Every described level stays visible: raters anchor on the words, not the numbers.
        self.level_labels: dict[int, QLabel] = {}
        levels = sorted(metric.levels, reverse=True)
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(1)
        # Two columns once there are many levels: all stay visible without a long list.
        rows = (len(levels) + 1) // 2 if len(levels) > 3 else len(levels)
        for n, v in enumerate(levels):
            lab = QLabel(f"{v}  {metric.levels[v]}")
            lab.setWordWrap(True)
            lab.setFont(relative_font(lab, 0.92))
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
            grid.addWidget(lab, n % rows, n // rows)
            self.level_labels[v] = lab
        if levels:
            grid.setColumnStretch(0, 1)
            grid.setColumnStretch(1, 1)
            self.controls.addLayout(grid)
        self._value: Any = None

    def set_value(self, value: Any) -> None:
        self._value = value
        for v, b in self.buttons.items():
            b.setChecked(value == v)
        for v, lab in self.level_labels.items():
            if lab.font().bold() != (value == v):
                lab.setFont(relative_font(self, 0.92, bold=value == v))
        if self._cj is not None:
            self._cj.setChecked(value == CANNOT_JUDGE)

    def apply(self, action: str) -> bool:
        if action.startswith("value_"):
            d = int(action.split("_")[1])
            if d in self.buttons:
                self.set_value(d)
                self.changed.emit()
                return True
            return False
        return super().apply(action)


class OptionsRow(MetricRow):
    """Tags (any number, toggled) or choice (exactly one): numbered chips."""

    def __init__(self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(metric, number, keymap, parent)
        self.multi = metric.kind == "tags"
        holder = QWidget()
        flow = FlowLayout(holder, spacing=6)
        self.buttons: dict[str, _AnswerButton] = {}
        for i, opt in enumerate(metric.options, start=1):
            hint = str(i % 10) if i <= 10 else ""
            b = _AnswerButton(f"{hint}  {humanise(opt)}" if hint else humanise(opt))
            b.clicked.connect(lambda _=False, o=opt: self._click(o))
            flow.addWidget(b)
            self.buttons[opt] = b
        if self._cj is not None:
            flow.addWidget(self._cj)
        self.controls.addWidget(holder)
        self._value: Any = [] if self.multi else None

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
            return [o for o in self.spec.options if o in (self._value or [])]
        return self._value

    def set_value(self, value: Any) -> None:
        if self.multi:
            value = list(value or [])
        self._value = value
        for opt, b in self.buttons.items():
            b.setChecked(opt in value if self.multi else value == opt)
        if self._cj is not None:
            self._cj.setChecked(value == CANNOT_JUDGE)

    def apply(self, action: str) -> bool:
        if action.startswith("value_"):
            d = int(action.split("_")[1])
            idx = (d or 10) - 1
            if idx < len(self.spec.options):
                self._toggle(self.spec.options[idx])
                self.changed.emit()
                return not self.multi  # tags stay focused: several may apply
            return False
        if action == "clear" and self.multi:
            self.set_value([])
            self.changed.emit()
            return False
        return super().apply(action)


class TextRow(MetricRow):
    def __init__(self, metric: Metric, number: int, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(metric, number, keymap, parent)
        self.edit = QPlainTextEdit()
        self.edit.setPlaceholderText(
            f"Press {keymap.hint('reason')} to write, Esc to return to the keys"
        )
        self.edit.setTabChangesFocus(True)
        lines = 3
        self.edit.setFixedHeight(self.edit.fontMetrics().lineSpacing() * lines + 16)
        self.edit.textChanged.connect(self.changed.emit)
        self.controls.addWidget(self.edit)

    def value(self) -> Any:
        return self.edit.toPlainText()

    def set_value(self, value: Any) -> None:
        self.edit.blockSignals(True)
        self.edit.setPlainText(value or "")
        self.edit.blockSignals(False)


_ROWS = {"gate": GateRow, "scale": ScaleRow, "tags": OptionsRow, "choice": OptionsRow, "text": TextRow}


class RubricForm(QWidget):
    changed = Signal()

    def __init__(self, rubric: Rubric, keymap: Keymap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rubric = rubric
        self.keymap = keymap
        self._rules = compile_rules(rubric)
        self.setStyleSheet(STYLE)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.rows: list[MetricRow] = []
        for i, m in enumerate(rubric.metrics, start=1):
            row = _ROWS[m.kind](m, i, keymap)
            row.changed.connect(self._on_changed)
            row.clicked.connect(lambda r=row: self._focus_row(r))
            lay.addWidget(row)
            self.rows.append(row)
        self.verdict_label = QLabel()
        self.verdict_label.setFont(relative_font(self.verdict_label, 1.05, bold=True))
        self.verdict_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        lay.addWidget(self.verdict_label)
        lay.addStretch(1)
        self._focus = -1
        self._answerable = [i for i, r in enumerate(self.rows) if r.spec.kind != "text"]
        self.set_answers(None)

    # -- answers -------------------------------------------------------------------
    def answers(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in self.rows:
            v = r.value()
            if r.spec.kind == "text":
                if (v or "").strip():
                    out[r.spec.key] = v.strip()
            elif v is not None:
                out[r.spec.key] = v
        return out

    def set_answers(self, answers: dict[str, Any] | None) -> None:
        answers = answers or {}
        for r in self.rows:
            r.set_value(answers.get(r.spec.key))
        first = self._first_missing()
        self._set_focus(first if first is not None else (self._answerable[0] if self._answerable else -1))
        self._update_verdict()

    def missing(self) -> list[str]:
        return missing_metrics(self.rubric, self.answers())

    def verdict(self) -> str | None:
        return self._rules.evaluate(self.answers())

    def missing_labels(self) -> list[str]:
        return [self.rubric.metric(k).label for k in self.missing()]

    def reason_edit(self) -> QPlainTextEdit | None:
        for r in self.rows:
            if isinstance(r, TextRow):
                return r.edit
        return None

    # -- focus ---------------------------------------------------------------------
    def focused_key(self) -> str | None:
        return self.rows[self._focus].spec.key if 0 <= self._focus < len(self.rows) else None

    def focused_row(self) -> MetricRow | None:
        return self.rows[self._focus] if 0 <= self._focus < len(self.rows) else None

    def focus_metric(self, key: str) -> None:
        for i, r in enumerate(self.rows):
            if r.spec.key == key:
                self._set_focus(i)
                return

    def _focus_row(self, row: MetricRow) -> None:
        if row in self.rows and row.spec.kind != "text":
            self._set_focus(self.rows.index(row))

    def _set_focus(self, index: int) -> None:
        self._focus = index
        for i, r in enumerate(self.rows):
            r.set_focused(i == index)

    def _first_missing(self) -> int | None:
        missing = set(self.missing())
        for i, r in enumerate(self.rows):
            if r.spec.key in missing:
                return i
        return None

    def next_metric(self) -> None:
        if not self._answerable:
            return
        later = [i for i in self._answerable if i > self._focus]
        self._set_focus(later[0] if later else self._answerable[0])

    def prev_metric(self) -> None:
        if not self._answerable:
            return
        earlier = [i for i in self._answerable if i < self._focus]
        self._set_focus(earlier[-1] if earlier else self._answerable[-1])

    def _advance(self) -> None:
        """After an answer: the next unanswered metric below, else stay."""
        missing = set(self.missing())
        later = [i for i in self._answerable if i > self._focus and self.rows[i].spec.key in missing]
        if later:
            self._set_focus(later[0])
        else:
            nxt = [i for i in self._answerable if i > self._focus]
            if nxt and self.rows[nxt[0]].spec.kind == "tags":
                self._set_focus(nxt[0])  # tags are optional: visit them on the way

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
        if v is None:
            self.verdict_label.setText("Verdict by the rubric's rules: not decided yet")
        else:
            self.verdict_label.setText(f"Verdict by the rubric's rules: {v}")
