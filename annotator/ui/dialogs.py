"""The instructions dialog: the rubric's instructions, metric help, verdict rules and keys.

Non-modal; the key that opened it (F1 / ?) or Esc closes it, both from the keymap.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..domain.rubric import Rubric
from .i18n import translate
from .keyed import KeyedWidget
from .keymap import Keymap
from .style import set_accessible


class InstructionsDialog(KeyedWidget, QDialog):
    key_contexts = ("dialog", "label")

    def __init__(
        self,
        rubric: Rubric | None,
        keymap: Keymap,
        parent: QWidget | None = None,
        context: str = "label",
    ) -> None:
        super().__init__(parent)
        self.keymap = keymap
        self.setObjectName("instructionsDialog")
        self.setWindowTitle(
            translate("InstructionsDialog", "Instructions: {title}").format(title=rubric.title)
            if rubric is not None
            else translate("InstructionsDialog", "Keys")
        )
        self.setModal(False)
        lay = QVBoxLayout(self)
        browser = QTextBrowser()
        browser.setOpenLinks(False)
        browser.setHtml(self._html(rubric, keymap, context))
        browser.setProperty(
            "content", True
        )  # the rubric's own words, translated in the rubric file
        set_accessible(
            browser,
            translate("InstructionsDialog", "Instructions"),
            translate(
                "InstructionsDialog",
                "The rubric's instructions, its metrics, verdict rules and keys",
            ),
        )
        self.browser = browser
        lay.addWidget(browser)
        close = QPushButton(
            translate("InstructionsDialog", "Close ({key} or {other})").format(
                key=keymap.hint("instructions"), other=keymap.hint("close_dialog")
            )
        )
        set_accessible(
            close,
            translate("InstructionsDialog", "Close"),
            translate("InstructionsDialog", "Closes the instructions"),
        )
        close.clicked.connect(self.hide)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        cw = self.fontMetrics().averageCharWidth()
        self.resize(cw * 90, self.fontMetrics().lineSpacing() * 36)

    @staticmethod
    def _html(rubric: Rubric | None, keymap: Keymap, context: str) -> str:
        keys_head = translate("InstructionsDialog", "Keys")
        parts = [] if rubric is None else InstructionsDialog._rubric_html(rubric)
        parts.append(f"<h3>{escape(keys_head)}</h3><table cellspacing='0' cellpadding='3'>")
        for keys, label in keymap.help_rows(context):
            parts.append(f"<tr><td><b>{escape(keys)}</b></td><td>{escape(label)}</td></tr>")
        parts.append("</table>")
        if context != "global":
            everywhere = translate("InstructionsDialog", "Keys everywhere in the app")
            parts.append(f"<h3>{escape(everywhere)}</h3><table cellspacing='0' cellpadding='3'>")
            for keys, label in keymap.help_rows("global"):
                parts.append(f"<tr><td><b>{escape(keys)}</b></td><td>{escape(label)}</td></tr>")
            parts.append("</table>")
        return "".join(parts)

    @staticmethod
    def _rubric_html(rubric: Rubric) -> list[str]:
        metrics_head = translate("InstructionsDialog", "Metrics")
        rules_head = translate("InstructionsDialog", "Verdict rules")
        parts = [
            f"<h2>{escape(rubric.title)}</h2>",
            f"<p>{escape(rubric.instructions).replace(chr(10), ' ')}</p>",
            f"<h3>{escape(metrics_head)}</h3><ul>",
        ]
        for m in rubric.metrics:
            line = f"<li><b>{escape(m.label)}</b>"
            if m.help:
                line += f": {escape(m.help)}"
            if m.levels:
                line += "<br>" + "; ".join(
                    f"{k} = {escape(v)}" for k, v in sorted(m.levels.items(), reverse=True)
                )
            parts.append(line + "</li>")
        parts.append("</ul>")
        if rubric.rules:
            from .rule_text import rule_sentences, rules_intro

            parts.append(f"<h3>{escape(rules_head)}</h3><p>{escape(rules_intro())}</p><ul>")
            parts.extend(f"<li>{escape(r)}</li>" for r in rule_sentences(rubric))
            parts.append("</ul>")
        return parts

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        # Without a window manager a new window does not get the keyboard by itself: keys
        # would reach the form behind it.
        self.activateWindow()
        self.browser.setFocus(Qt.FocusReason.ActiveWindowFocusReason)

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        # the key that opened the instructions closes them too
        return {"close_dialog": self.hide, "instructions": self.hide}
