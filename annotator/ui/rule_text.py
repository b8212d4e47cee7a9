"""Verdict rules as sentences in the app's language ("“Instruction following” is PASS",
"“Layout hierarchy” is at least 3"), never as the rubric file's code: a rater reads the rules
in the instructions, and PASS reads APROBADO in Spanish.

``rule_sentences(rubric) -> list[str]``, one per rule, read from the parsed rules (the same
parse the verdict uses, so a sentence says exactly what the rule checks).
"""

from __future__ import annotations

from typing import Any

from ..domain.rubric import FAIL, PASS, Rubric
from ..domain.verdict import _Bool, _Cmp, _Not, compile_rules
from .i18n import QT_TRANSLATE_NOOP, translate
from .metric_rows import format_answer, gate_text

_OPS = {
    "==": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is {value}"),
    "!=": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is not {value}"),
    ">=": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is at least {value}"),
    "<=": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is at most {value}"),
    ">": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is more than {value}"),
    "<": QT_TRANSLATE_NOOP("VerdictRules", "{metric} is less than {value}"),
    "has": QT_TRANSLATE_NOOP("VerdictRules", "{metric} includes {value}"),
}


def _value(rubric: Rubric, key: str, value: Any) -> str:
    metric = rubric.metric(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # a threshold: the number, not one level's label
    return format_answer(metric, [value] if metric.spec.multi else value)


def _sentence(rubric: Rubric, node: Any, nested: bool = False) -> str:
    if isinstance(node, _Cmp):
        return translate("VerdictRules", _OPS[node.op]).format(
            metric=f"“{rubric.metric(node.key).label}”", value=_value(rubric, node.key, node.value)
        )
    if isinstance(node, _Not):
        return translate("VerdictRules", "not ({rule})").format(
            rule=_sentence(rubric, node.inner, True)
        )
    if isinstance(node, _Bool):
        word = (
            translate("VerdictRules", " and ")
            if node.op == "and"
            else translate("VerdictRules", " or ")
        )
        text = word.join(_sentence(rubric, p, True) for p in node.parts)
        return f"({text})" if nested else text
    return str(node)


def rule_sentences(rubric: Rubric) -> list[str]:
    """Each verdict rule of `rubric` as a sentence in the app's language."""
    return [_sentence(rubric, n) for n in compile_rules(rubric)._nodes]


def rules_intro() -> str:
    return translate(
        "VerdictRules",
        "The verdict is {pass} when every rule below holds, {fail} when one does not, and open "
        "while a metric it needs is unanswered or cannot be judged.",
    ).format(**{"pass": gate_text(PASS), "fail": gate_text(FAIL)})


__all__ = ["rule_sentences", "rules_intro"]
