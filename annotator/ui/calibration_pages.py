"""The calibration view's two result screens: per-anchor feedback and the verdict.

``FeedbackPanel.show_feedback(rubric, feedback, index, total, last, keys)``: per
metric the rater's answer beside the reference with its rationale and a calm
met / not met mark. ``VerdictPage.show_result(rubric, result, history, keys)``: per
metric the share of anchors met against the rule, the qualify / not-yet verdict,
and the rater's calibration history. Neither names a metric kind: answers are
formatted by ``metric_rows.format_answer`` and the matching rule comes from the
metric's ``KindSpec``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ..domain.rubric import Metric, Rubric
from .i18n import translate
from .metric_rows import format_answer
from .style import MET, NOT_MET, met_colours, relative_font, set_accessible, soft_colour

__all__ = ["FeedbackPanel", "VerdictPage", "match_rule"]


def _palette() -> QPalette:
    return QApplication.palette()


def _ink(met: bool | None) -> str:
    """A calm mark colour readable on the window: green for met, sand for not met (never an alarm red)."""
    return met_colours(_palette(), met)[1]


def _grid() -> QGridLayout:
    """A results table's grid: columns well apart, rows close (the verdict page's three tables)."""
    grid = QGridLayout()
    grid.setHorizontalSpacing(18)
    grid.setVerticalSpacing(4)
    return grid


def _marked(ok: bool, yes: str, no: str) -> str:
    """A verdict word with its symbol (style.MET / NOT_MET), so it reads without its colour."""
    return f"{MET} {yes}" if ok else f"{NOT_MET} {no}"


def _metric_label(rubric: Rubric, key: str) -> str:
    """A metric's label, or its key when the rubric in use no longer has it (an older result)."""
    return rubric.metric(key).label if rubric.has(key) else key


def match_rule(metric: Metric) -> str:
    """How an answer meets the reference, in words (from the kind's spec)."""
    spec = metric.spec
    if spec.multi:
        return translate("Calibration", "the same set of options counts as met")
    if spec.match_rule == "exact":
        return translate("Calibration", "an exact match counts as met")
    if spec.match_rule == "within one point":
        return translate("Calibration", "within one point counts as met")
    return translate("Calibration", "{rule} counts as met").format(rule=spec.match_rule)


def _label(
    text: str = "",
    *,
    soft: bool = False,
    wrap: bool = True,
    size: float | None = None,
    bold: bool = False,
) -> QLabel:
    """A label in the palette's colours; `size` scales the system font (never pixels)."""
    lab = QLabel(text)
    lab.setWordWrap(wrap)
    if soft:
        lab.setStyleSheet(f"color: {soft_colour(_palette())};")
    if size or bold:
        lab.setFont(relative_font(lab, size or 1.0, bold=bold))
    return lab


def _clear_layout(lay: Any) -> None:
    while lay.count():
        item = lay.takeAt(0)
        w = item.widget()
        if w is not None:
            w.deleteLater()
        elif item.layout() is not None:
            _clear_layout(item.layout())


class FeedbackPanel(QWidget):
    """Per metric: your answer | reference | met mark, the rationale underneath."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.title = _label("", size=1.2, bold=True)
        self.summary = _label("", soft=True)
        outer.addWidget(self.title)
        outer.addWidget(self.summary)
        self.rows = QVBoxLayout()
        self.rows.setSpacing(8)
        outer.addLayout(self.rows)
        outer.addStretch(1)
        self.hint = _label("", soft=True)
        outer.addWidget(self.hint)
        self.cards: list[QFrame] = []

    def show_feedback(
        self,
        rubric: Rubric,
        feedback: Sequence[Any],
        index: int,
        total: int,
        last: bool,
        keys: str = "Enter or Space",
    ) -> None:
        _clear_layout(self.rows)
        self.cards = []
        scored = [f for f in feedback if f.match is not None]
        met = sum(1 for f in scored if f.match)
        self.title.setText(
            translate("Calibration", "How your answer compares (anchor {index} of {total})").format(
                index=index, total=total
            )
        )
        self.summary.setText(
            translate(
                "Calibration",
                "You met the reference on {met} of {n} scored metrics. Read the "
                "rationale where you differ; it is the reasoning the reference "
                "follows.",
            ).format(met=met, n=len(scored))
        )
        for f in feedback:
            metric = rubric.metric(f.key)
            card = QFrame()
            card.setObjectName("feedbackCard")
            bg, ink = met_colours(_palette(), f.match)
            mark = (
                translate("Calibration", "not scored")
                if f.match is None
                else _marked(
                    f.match, translate("Calibration", "met"), translate("Calibration", "not met")
                )
            )
            card.setStyleSheet(f"QFrame#feedbackCard {{ background: {bg}; border-radius: 8px; }}")
            set_accessible(
                card,
                f"{f.label or metric.label}: {mark}",
                translate("Calibration", "Your answer beside the reference"),
            )
            card.setProperty("met", f.match)
            g = QGridLayout(card)
            g.setContentsMargins(12, 8, 12, 8)
            g.setHorizontalSpacing(14)
            g.setVerticalSpacing(3)
            head = QHBoxLayout()
            name = _label(f.label or metric.label, bold=True)
            name.setProperty("content", True)
            head.addWidget(name, 1)
            mark_lab = QLabel(mark)
            mark_lab.setObjectName("mark")
            mark_lab.setStyleSheet(f"color: {ink}; font-weight: 650;")
            head.addWidget(mark_lab)
            g.addLayout(head, 0, 0, 1, 2)
            yours = _label(
                translate("Calibration", "Your answer: {answer}").format(
                    answer=f"<b>{_esc(format_answer(metric, f.answer))}</b>"
                )
            )
            ref = _label(
                translate("Calibration", "Reference: {answer}").format(
                    answer=f"<b>{_esc(format_answer(metric, f.reference))}</b>"
                )
            )
            yours.setObjectName("yours")
            ref.setObjectName("reference")
            g.addWidget(yours, 1, 0)
            g.addWidget(ref, 1, 1)
            rule = match_rule(metric)
            if f.rationale:
                why = _label(f.rationale)
                why.setObjectName("rationale")
                why.setProperty("content", True)  # the anchor set's words
                why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                g.addWidget(why, 2, 0, 1, 2)
            g.addWidget(_label(rule, soft=True), 3, 0, 1, 2)
            g.setColumnStretch(0, 1)
            g.setColumnStretch(1, 1)
            self.rows.addWidget(card)
            self.cards.append(card)
        self.hint.setText(
            (
                translate("Calibration", "{keys}: see your result")
                if last
                else translate("Calibration", "{keys}: next anchor")
            ).format(keys=keys)
        )


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class VerdictPage(QWidget):
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
        outer.addWidget(_label(translate("Calibration", "Result per metric"), size=1.15, bold=True))
        self.table = _grid()
        outer.addLayout(self.table)
        outer.addSpacing(10)
        outer.addWidget(
            _label(translate("Calibration", "Your calibration history"), size=1.15, bold=True)
        )
        self.history_note = _label("", soft=True)
        outer.addWidget(self.history_note)
        self.history = _grid()
        outer.addLayout(self.history)
        outer.addSpacing(6)
        outer.addWidget(
            _label(translate("Calibration", "Every session, oldest first"), soft=True, bold=True)
        )
        self.sessions = _grid()
        outer.addLayout(self.sessions)
        outer.addStretch(1)
        self.hint = _label(translate("Calibration", "This result is stored."), soft=True)
        outer.addWidget(self.hint)

    @staticmethod
    def _cell(
        grid: QGridLayout,
        r: int,
        c: int,
        text: str,
        *,
        head: bool = False,
        colour: str | None = None,
        name: str = "",
    ) -> QLabel:
        lab = QLabel(text)
        lab.setObjectName(name)
        if colour or head:
            lab.setStyleSheet(f"color: {colour or soft_colour(_palette())};")
        if head:
            lab.setFont(relative_font(lab, 1.0, bold=True))
        grid.addWidget(lab, r, c)
        return lab

    def show_result(
        self,
        rubric: Rubric,
        result: Mapping[str, Any],
        history: Sequence[Mapping[str, Any]],
        keys: str = "Enter",
    ) -> None:
        self.hint.setText(
            translate("Calibration", "This result is stored. {keys}: done.").format(keys=keys)
        )
        ok = bool(result.get("qualified"))
        colour = _ink(ok)
        self.verdict.setText(
            _marked(
                ok,
                translate("Calibration", "Qualified"),
                translate("Calibration", "Not yet qualified"),
            )
        )
        self.verdict.setFont(relative_font(self.verdict, 1.7, bold=True))
        self.verdict.setStyleSheet(f"color: {colour};")
        set_accessible(
            self.verdict, self.verdict.text(), translate("Calibration", "Your calibration verdict")
        )
        self.verdict.setProperty("qualified", ok)
        metrics = result.get("metrics") or {}
        if ok:
            self.explain.setText(
                translate(
                    "Calibration", "You met every qualification rule over {n} anchors."
                ).format(n=result.get("n_anchors", "?"))
            )
        else:
            short = [
                rubric.metric(k).label
                for k, m in metrics.items()
                if not m.get("passed") and rubric.has(k)
            ]
            self.explain.setText(
                translate(
                    "Calibration",
                    "Not yet: {metrics} fell short of the rule. Review the rationales and run "
                    "another calibration session when you are ready.",
                ).format(metrics=", ".join(short))
                if short
                else translate("Calibration", "Not yet: no metric could be scored.")
            )
        _clear_layout(self.table)
        heads = (
            translate("Calibration", "metric"),
            translate("Calibration", "rule"),
            translate("Calibration", "met"),
            translate("Calibration", "share"),
            translate("Calibration", "needed"),
            "",
        )
        for c, h in enumerate(heads):
            self._cell(self.table, 0, c, h, head=True)
        for r, (key, m) in enumerate(metrics.items(), start=1):
            label = _metric_label(rubric, key)
            share = m.get("share")
            passed = bool(m.get("passed"))
            self._cell(self.table, r, 0, label)
            self._cell(self.table, r, 1, str(m.get("rule") or ""))
            self._cell(
                self.table,
                r,
                2,
                translate("Calibration", "{met} of {n}").format(
                    met=m.get("met", 0), n=m.get("n", 0)
                ),
            )
            self._cell(self.table, r, 3, "—" if share is None else f"{share:.0%}")
            self._cell(self.table, r, 4, f"{float(m.get('threshold') or 0):.0%}")
            self._cell(
                self.table,
                r,
                5,
                _marked(
                    passed, translate("Calibration", "passed"), translate("Calibration", "not yet")
                ),
                colour=_ink(passed),
                name=f"passed:{key}",
            )
        self.table.setColumnStretch(6, 1)
        self._history(rubric, result, history)

    def _history(
        self, rubric: Rubric, result: Mapping[str, Any], history: Sequence[Mapping[str, Any]]
    ) -> None:
        _clear_layout(self.history)
        this_id = result.get("id")
        earlier = [h for h in history if h.get("id") != this_id]
        keys = list((result.get("metrics") or {}).keys())
        if earlier:
            prev = earlier[-1]
            self.history_note.setText(
                translate(
                    "Calibration",
                    "Before: your previous session ({when}, {verdict}).  After: this session.",
                ).format(
                    when=prev.get("created_at", "")[:16].replace("T", " "),
                    verdict=translate("Calibration", "qualified")
                    if prev.get("qualified")
                    else translate("Calibration", "not yet"),
                )
            )
        else:
            self.history_note.setText(
                translate(
                    "Calibration",
                    "This is your first calibration session; later sessions are shown beside it.",
                )
            )
        for c, h in enumerate(
            (
                translate("Calibration", "metric"),
                translate("Calibration", "before"),
                translate("Calibration", "after"),
                translate("Calibration", "change"),
            )
        ):
            self._cell(self.history, 0, c, h, head=True)
        prev_metrics = (earlier[-1].get("result") or {}).get("metrics", {}) if earlier else {}
        now_metrics = result.get("metrics") or {}
        for r, key in enumerate(keys, start=1):
            label = _metric_label(rubric, key)
            before = (prev_metrics.get(key) or {}).get("share")
            after = (now_metrics.get(key) or {}).get("share")
            self._cell(self.history, r, 0, label)
            self._cell(
                self.history, r, 1, "—" if before is None else f"{before:.0%}", name=f"before:{key}"
            )
            self._cell(
                self.history, r, 2, "—" if after is None else f"{after:.0%}", name=f"after:{key}"
            )
            if before is not None and after is not None:
                diff = round((after - before) * 100)
                text = (
                    translate("Calibration", "no change")
                    if diff == 0
                    else translate("Calibration", "{diff} points").format(diff=f"{diff:+d}")
                )
            else:
                text = ""
            self._cell(self.history, r, 3, text, colour=soft_colour(_palette()))
        self.history.setColumnStretch(4, 1)
        _clear_layout(self.sessions)
        labels = [_metric_label(rubric, k) for k in keys]
        for c, head in enumerate(
            (translate("Calibration", "when"), translate("Calibration", "verdict"), *labels)
        ):
            self._cell(self.sessions, 0, c, head, head=True)
        for i, past in enumerate(history, start=1):
            res = past.get("result") or {}
            ms = res.get("metrics") or {}
            self._cell(self.sessions, i, 0, str(past.get("created_at", ""))[:16].replace("T", " "))
            ok = bool(past.get("qualified"))
            self._cell(
                self.sessions,
                i,
                1,
                _marked(
                    ok, translate("Calibration", "qualified"), translate("Calibration", "not yet")
                ),
                colour=_ink(ok),
            )
            for c, k in enumerate(keys, start=2):
                share = (ms.get(k) or {}).get("share")
                self._cell(self.sessions, i, c, "—" if share is None else f"{share:.0%}")
        self.sessions.setColumnStretch(len(keys) + 2, 1)
