"""Verdict rules: a tiny grammar of its own, evaluated without `eval`.

    rule    := or_expr
    or_expr := and_expr ("or" and_expr)*
    and_expr:= unary ("and" unary)*
    unary   := "not" unary | "(" or_expr ")" | compare
    compare := KEY OP VALUE | KEY "has" WORD
    OP      := == != >= <= > <
    VALUE   := PASS | FAIL | integer | "quoted" | bare word (a choice option)

The verdict is PASS when every rule holds, FAIL when one fails, and None
(undetermined) when a rule needs a metric that is unanswered or "cannot judge":
an unknown is never silently counted as a pass or a fail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InputError
from .rubric import CANNOT_JUDGE, FAIL, PASS, Rubric

_TOKEN = re.compile(
    r'\s*(?:(==|!=|>=|<=|>|<|\(|\))|("[^"]*")|([A-Za-z_][A-Za-z0-9_\-]*)|(-?\d+(?:\.\d+)?))'
)
_OPS = {"==", "!=", ">=", "<=", ">", "<"}
MAX_DEPTH = 32  # nesting of not / parentheses; deeper rules are refused, not recursed into
MAX_RULE_CHARS = 2000


class _Unknown(Exception):
    """A rule touched an unanswered metric."""


@dataclass(frozen=True)
class _Cmp:
    key: str
    op: str
    value: Any

    def eval(self, answers: Mapping[str, Any]) -> bool:
        v = answers.get(self.key)
        if v is None or v == CANNOT_JUDGE:
            raise _Unknown(self.key)
        if self.op == "has":
            return self.value in v
        a, b = v, self.value
        return {
            "==": a == b,
            "!=": a != b,
            ">=": a >= b,
            "<=": a <= b,
            ">": a > b,
            "<": a < b,
        }[self.op]


@dataclass(frozen=True)
class _Not:
    inner: Any

    def eval(self, answers: Mapping[str, Any]) -> bool:
        return not self.inner.eval(answers)


@dataclass(frozen=True)
class _Bool:
    op: str
    parts: tuple

    def eval(self, answers: Mapping[str, Any]) -> bool:
        # Kleene logic: a known False decides an 'and' even if another side is unknown.
        unknown = False
        for p in self.parts:
            try:
                r = p.eval(answers)
            except _Unknown:
                unknown = True
                continue
            if self.op == "and" and not r:
                return False
            if self.op == "or" and r:
                return True
        if unknown:
            raise _Unknown("")
        return self.op == "and"


def _tokenize(rule: str, src: str) -> list[str]:
    pos, out = 0, []
    rule = rule.rstrip()
    while pos < len(rule):
        m = _TOKEN.match(rule, pos)
        if not m or m.end() == pos:
            raise InputError(
                f"verdict rule '{rule}': cannot read '{rule[pos:].strip()}'",
                source=src,
                field="verdict.rules",
            )
        out.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, rule: str, rubric: Rubric, src: str) -> None:
        self.rule, self.rubric, self.src = rule, rubric, src
        if len(rule) > MAX_RULE_CHARS:
            raise InputError(
                f"a verdict rule is {len(rule)} characters long; at most {MAX_RULE_CHARS}",
                source=src,
                field="verdict.rules",
            )
        self.toks = _tokenize(rule, src)
        self.i = 0
        self.depth = 0

    def fail(self, msg: str) -> InputError:
        return InputError(
            f"verdict rule '{self.rule}': {msg}", source=self.src, field="verdict.rules"
        )

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        t = self.peek()
        if t is None:
            raise self.fail("ends too early")
        self.i += 1
        return t

    def parse(self):
        node = self.or_expr()
        if self.peek() is not None:
            raise self.fail(f"unexpected '{self.peek()}'")
        return node

    def or_expr(self):
        parts = [self.and_expr()]
        while self.peek() == "or":
            self.take()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else _Bool("or", tuple(parts))

    def and_expr(self):
        parts = [self.unary()]
        while self.peek() == "and":
            self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else _Bool("and", tuple(parts))

    def unary(self):
        t = self.peek()
        if t not in ("not", "("):
            return self.compare()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nests 'not' and parentheses more than {MAX_DEPTH} deep; simplify it")
        self.take()
        if t == "not":
            node = _Not(self.unary())
        else:
            node = self.or_expr()
            if self.take() != ")":
                raise self.fail("missing ')'")
        self.depth -= 1
        return node

    def compare(self):
        key = self.take()
        if not self.rubric.has(key):
            raise self.fail(f"names no metric of this rubric: '{key}'")
        metric = self.rubric.metric(key)
        op = self.take()
        if op not in _OPS and op != "has":
            raise self.fail(f"expected a comparison after '{key}', got '{op}'")
        raw = self.take()
        value: Any = raw[1:-1] if raw.startswith('"') else raw
        try:
            value = metric.spec.rule_operand(metric, op, value)
        except ValueError as exc:
            raise self.fail(str(exc)) from None
        return _Cmp(key, op, value)


@dataclass(frozen=True)
class VerdictRules:
    rules: tuple[str, ...]
    _nodes: tuple

    def evaluate(self, answers: Mapping[str, Any]) -> str | None:
        """PASS, FAIL, or None when the answers leave the verdict undetermined."""
        if not self.rules:
            return None
        try:
            return PASS if _Bool("and", self._nodes).eval(answers) else FAIL
        except _Unknown:
            return None

    def metrics_used(self) -> set[str]:
        out: set[str] = set()

        def walk(n):
            if isinstance(n, _Cmp):
                out.add(n.key)
            elif isinstance(n, _Not):
                walk(n.inner)
            else:
                for p in n.parts:
                    walk(p)

        for n in self._nodes:
            walk(n)
        return out


def compile_rules(rubric: Rubric) -> VerdictRules:
    nodes = tuple(_Parser(r, rubric, rubric.source or rubric.id).parse() for r in rubric.rules)
    return VerdictRules(tuple(rubric.rules), nodes)


def verdict(rubric: Rubric, answers: Mapping[str, Any]) -> str | None:
    return compile_rules(rubric).evaluate(answers)
