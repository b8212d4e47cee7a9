"""Metric kinds: one `KindSpec` per kind, the one place that says what a kind is.
(Over 500 lines on purpose: one KindSpec per kind is the registry: splitting the kinds apart would
scatter the one place a new kind is declared.)

A kind decides how a rubric declares the metric (its extra TOML fields), how an
answer is parsed from a CSV cell, checked from the app and written back, its
level of measurement, whether "cannot judge" applies, how an answer meets
an anchor's reference, how another tool's labels become an answer (import
mappings), how its answers sit in another tool's choice control (Label Studio),
how a dataset card lists its values, and what the judge is asked and how its
reply is checked (its part of the judge's JSON schema). Everything else looks
the kind up here instead of branching on its name.

Adding a kind = one `KindSpec` subclass registered in `KINDS` + its row class in
`ui/metric_rows.ROWS` (the one UI table by kind); tests/unit/test_kinds.py finds
every part of every kind. The statistics read only `level`, `values()` and `multi`.
(Over 500 lines on purpose: each kind is one class, whatever it touches.)

The anchor rule, decided once (docs/statistics.md, "Anchors, one rule"): an anchor answer
of "cannot judge" where the reference has an answer counts as NOT met (for
calibration and for anchor accuracy alike: the anchor was chosen because it can
be judged), and is left out of the drift deviation series (it has no
direction). A reference of "cannot judge" scores nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import InputError

if TYPE_CHECKING:  # the Metric dataclass lives in rubric.py, which imports this module
    from .rubric import Metric

PASS, FAIL = "PASS", "FAIL"
CANNOT_JUDGE = "cannot_judge"
# A scale's width bounds what every statistic allocates per metric; 101 levels
# (0..100) is the widest scale any published rating protocol we know of uses.
MAX_SCALE_LEVELS = 101
MAX_OPTIONS = 64


class BadReply(ValueError):
    """A judge's reply value that is not an answer of the metric's kind (the message names it)."""


def norm_label(s: str) -> str:
    """Another tool's label as compared with ours: lower case, runs of other characters as _."""
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def json_type_name(v: Any) -> str:
    """What a JSON value is, for a message ("a string", "a list")."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "an object"


def _shown(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def is_missing(value: Any) -> bool:
    """No answer: None, NaN, an empty string or "cannot judge"."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in ("", CANNOT_JUDGE)


@dataclass(frozen=True)
class AnchorMatch:
    """How one answer meets an anchor's reference."""

    met: bool  # by the kind's rule (scales: within one point)
    exact: bool


def _err(msg: str, source: str, line: int | None, field: str = "value") -> InputError:
    return InputError(msg, source=source, line=line, field=field)


class KindSpec:
    """The behaviour of one metric kind. Subclasses override what differs."""

    name: ClassVar[str]
    level: ClassVar[str | None] = "nominal"  # Krippendorff level; None: not judged (free text)
    accepts_cannot_judge: ClassVar[bool] = True
    multi: ClassVar[bool] = False  # several options at once (each is its own yes/no question)
    fields: ClassVar[tuple[str, ...]] = ()  # kind-specific rubric fields
    match_rule: ClassVar[str] = "exact"
    qualification_rule: ClassVar[str] = "gate_exact"  # key of the study's qualification setting
    required_default: ClassVar[bool] = True
    # import mappings: the separator of several labels making one answer (None: one label only),
    # other tools' words for our values (normalised by norm_label; a kind with words guesses
    # by them alone), and the other tools' control types that may hold an answer of this kind
    # when no control is named after the metric
    label_separator: ClassVar[str | None] = None
    label_words: ClassVar[dict[str, str]] = {}
    tool_controls: ClassVar[frozenset[str]] = frozenset()

    @property
    def judged(self) -> bool:
        return self.level is not None

    @property
    def ordered(self) -> bool:
        return self.level == "ordinal"

    # -- rubric fields ------------------------------------------------------------
    def parse_fields(self, raw: dict[str, Any], where: str, src: str) -> dict[str, Any]:
        """Metric keyword arguments from the kind's TOML fields (validated)."""
        return {}

    def canonical(self, m: Metric) -> dict[str, Any]:
        """The kind's fields in the canonical form hashed into the rubric version."""
        return {}

    def values(self, m: Metric) -> tuple[Any, ...]:
        """Every possible single answer, in order (for ordinal kinds, low to high)."""
        return ()

    def value_label(self, m: Metric, value: Any) -> str:
        """What a rater reads for a value."""
        return str(value)

    # -- answers ------------------------------------------------------------------
    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        """A non-empty, stripped cell that is not "cannot judge" -> typed value."""
        raise NotImplementedError

    def parse_value(self, m: Metric, raw: str, *, source: str = "", line: int | None = None) -> Any:
        s = raw.strip()
        if s == "" or s.lower() == CANNOT_JUDGE:
            if not self.accepts_cannot_judge:
                return self.empty_answer()
            return CANNOT_JUDGE
        return self.parse(m, s, source, line)

    def empty_answer(self) -> Any:
        return CANNOT_JUDGE

    def parse_judge_value(
        self, m: Metric, raw: str, *, source: str = "", line: int | None = None
    ) -> Any:
        """A judge's cell -> typed value: the raters' rule (`parse_value`), so a judge's value
        off the metric is refused with the raters' message, unless the metric declares how its
        judges score otherwise (`judge_scale`, ordinal kinds)."""
        try:
            return self.parse_value(m, raw, source=source, line=line)
        except InputError as exc:
            if self.ordered:
                raise InputError(
                    f"{exc.message} (a judge scoring between the points: declare "
                    'judge_scale = "interval" on the metric in the rubric; on a scale of its '
                    'own: judge_scale = "own")',
                    source=exc.source,
                    line=exc.line,
                    field=exc.field,
                ) from None
            raise

    def validate(self, m: Metric, value: Any) -> Any:
        """A typed answer from the app or a service -> the stored form."""
        return self.parse_value(m, str(value))

    def format(self, value: Any) -> str:
        return "" if value is None else str(value)

    def is_answered(self, m: Metric, value: Any) -> bool:
        return value is not None

    def to_json(self, value: Any) -> Any:
        return value

    def from_json(self, value: Any) -> Any:
        return value

    # -- the team server's check -------------------------------------------------
    def server_check(self) -> tuple[str, str]:
        """What the team server's trigger refuses of a value a rater's role stores by hand: a
        PL/pgSQL condition on `v` (the value, jsonb) and `m` (the metric's entry of the
        canonical rubric, jsonb), true exactly where `domain/answers.check_stored` refuses the
        value, and the message (% stands for the metric's key). store/roles.py builds the
        trigger from every kind's; a kind without one cannot be served."""
        raise NotImplementedError(f"kind '{self.name}' has no server check")

    # -- anchors ------------------------------------------------------------------
    def same(self, m: Metric, answer: Any, reference: Any) -> bool:
        return answer == reference

    def anchor_match(self, m: Metric, answer: Any, reference: Any) -> AnchorMatch | None:
        """None when the reference scores nothing; "cannot judge" against a reference is not met."""
        if is_missing(reference):
            return None
        if is_missing(answer):
            return AnchorMatch(False, False)
        same = self.same(m, answer, reference)
        return AnchorMatch(same, same)

    def deviation(self, m: Metric, answer: Any, reference: Any) -> float | None:
        """Signed distance from the reference for drift charts; None: no direction."""
        return None

    # -- verdict rules --------------------------------------------------------------
    def rule_operand(self, m: Metric, op: str, raw: str) -> Any:
        """The typed right-hand side of `key op raw` in a verdict rule; ValueError names the fix."""
        raise ValueError(f"{self.name} metric '{m.key}' cannot be used in a rule")

    # -- other tools: import mappings, Label Studio, dataset cards ---------------------
    def value_of_label(self, m: Metric, label: str) -> str | None:
        """Our value (as text) that another tool's label reads like, or None."""
        key = norm_label(label)
        return next((str(v) for v in self.values(m) if norm_label(str(v)) == key), None)

    def choices(self, m: Metric) -> list[tuple[str, str]]:
        """The values as another tool's choice control offers them, in order: (the text our
        parser reads back, a hint shown beside it or "")."""
        return [(str(v), "") for v in self.values(m)]

    def choice_texts(self, m: Metric, value: Any) -> list[str]:
        """One answer (JSON form) as the texts of `choices` it ticks."""
        if isinstance(value, list):
            return [str(v) for v in value]
        return [str(value)]  # repr-exact for a judge's float (0.73 -> "0.73")

    def describe_values(self, m: Metric, cell: Callable[[str], str] = str) -> str:
        """The values as a dataset card lists them; `cell` escapes a rubric's text."""
        return ", ".join(cell(self.value_label(m, v)) for v in self.values(m))

    # -- the judge's reply (judge/schema.py assembles the schema and the prompt) -------
    def reply_schema(self, m: Metric, desc: str) -> dict[str, Any]:
        """This metric's property in the judge's strict JSON schema."""
        raise NotImplementedError(f"the judge is not asked {self.name} metrics")

    def reply_value(self, m: Metric, v: Any) -> Any:
        """A reply's value for this metric, typed as parse_value; BadReply says what is wrong."""
        raise NotImplementedError(f"the judge is not asked {self.name} metrics")

    def reply_how(self, m: Metric) -> str:
        """How the judge's instructions say what to answer."""
        raise NotImplementedError(f"the judge is not asked {self.name} metrics")


class _OneOfReply(KindSpec):
    """A judge answers one string of a fixed list, or cannot_judge."""

    def reply_allowed(self, m: Metric) -> list[str]:
        return [str(v) for v in self.values(m)]

    def reply_schema(self, m: Metric, desc: str) -> dict[str, Any]:
        return {
            "type": "string",
            "enum": [*self.reply_allowed(m), CANNOT_JUDGE],
            "description": desc,
        }

    def reply_value(self, m: Metric, v: Any) -> Any:
        allowed = self.reply_allowed(m)
        if not isinstance(v, str) or v not in (*allowed, CANNOT_JUDGE):
            raise BadReply(f"{_shown(v)} is not one of {', '.join([*allowed, CANNOT_JUDGE])}")
        return v


_GATE_WORDS = {
    "pass": PASS,
    "yes": PASS,
    "true": PASS,
    "accept": PASS,
    "good": PASS,
    "ok": PASS,
    "fail": FAIL,
    "no": FAIL,
    "false": FAIL,
    "reject": FAIL,
    "bad": FAIL,
}


class GateKind(_OneOfReply):
    name = "gate"
    label_words = _GATE_WORDS

    def values(self, m: Metric) -> tuple[Any, ...]:
        return (FAIL, PASS)

    def reply_allowed(self, m: Metric) -> list[str]:
        return [PASS, FAIL]

    def reply_how(self, m: Metric) -> str:
        return "gate: PASS, FAIL or cannot_judge"

    def server_check(self) -> tuple[str, str]:
        return f"""v NOT IN ('"{PASS}"'::jsonb, '"{FAIL}"'::jsonb)""", "% is not PASS or FAIL"

    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        up = s.upper()
        if up not in (PASS, FAIL):
            raise _err(f"'{s}' is not PASS or FAIL for gate '{m.key}'", source, line)
        return up

    def same(self, m: Metric, answer: Any, reference: Any) -> bool:
        return str(answer).strip().upper() == str(reference).strip().upper()

    def deviation(self, m: Metric, answer: Any, reference: Any) -> float | None:
        if is_missing(answer) or is_missing(reference):
            return None
        return float(str(answer).upper() == PASS) - float(str(reference).upper() == PASS)

    def rule_operand(self, m: Metric, op: str, raw: str) -> Any:
        if op not in ("==", "!=") or raw not in (PASS, FAIL):
            raise ValueError(f"gate '{m.key}' can only be compared with == or != to PASS or FAIL")
        return raw


def _bounds(m: Metric) -> tuple[int, int]:
    """An ordinal metric's range (always set for scale and likert: parse_fields fills it)."""
    assert m.min is not None and m.max is not None, f"{m.key} has no range"
    return m.min, m.max


JUDGE_SCALES = ("points", "interval", "own")


def _judge_scale(raw: dict[str, Any], where: str, src: str) -> dict[str, str]:
    """`judge_scale`: how a judge's numbers are read.
    - "points" (the default): on the metric's points, as raters answer;
    - "interval": in the metric's units at any value between its ends (a judge on a 0-1 grid
      in steps of 0.1 against raters on 0 / 0.5 / 1): the figures of an interval scale are
      computed with it (interval alpha with the judge as a rater, its differences);
    - "own": a scale of its own (a probability against a 1-5 scale, a CLIPScore): only the
      correlations with the human mean apply."""
    v = raw.get("judge_scale", "points")
    if v not in JUDGE_SCALES:
        raise InputError(
            f'{where}: judge_scale must be "points", "interval" or "own"',
            source=src,
            field="judge_scale",
        )
    return {"judge_scale": v}


def _judge_scale_canonical(m: Metric) -> dict[str, str]:
    # the default is left out, so rubrics written before the field keep their version
    return {"judge_scale": m.judge_scale} if m.judge_scale != "points" else {}


def _int(v: Any, key: str, where: str, src: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(f"'{key}' in {where} must be an integer", source=src, field=key)
    return v


def as_point(x: float | Decimal) -> int | float:
    """A scale point as stored: a whole number as an int (4, never 4.0), else the float."""
    f = float(x)
    return int(f) if f.is_integer() else f


@lru_cache(maxsize=256)
def scale_points(lo: int, hi: int, step: float | None) -> tuple[int | float, ...]:
    """A scale's points from its ends and step (whole numbers without one). Counted in
    decimals, so 0..1 in steps of 0.1 is eleven points exactly (0.30000000000000004 is not
    one of them)."""
    if step is None:
        return tuple(range(lo, hi + 1))
    st = Decimal(str(step))
    n = int((Decimal(hi) - Decimal(lo)) / st)
    return tuple(as_point(Decimal(lo) + i * st) for i in range(n + 1))


def point_key(text: str) -> int | float | None:
    """A level's key as written in a rubric ("4", "0.5") -> the point, None if not a number."""
    try:
        f = float(text)
    except ValueError:
        return None
    return as_point(f) if math.isfinite(f) else None


def describe_scale(m: Metric) -> str:
    """0..5, or 0..1 in steps of 0.5."""
    return f"{m.min}..{m.max}" + (f" in steps of {m.step:g}" if m.step is not None else "")


def describe_values_of(m: Metric) -> str:
    return ", ".join(str(p) for p in grid_points(m))


def grid_points(m: Metric) -> tuple[int | float, ...]:
    lo, hi = _bounds(m)
    return scale_points(lo, hi, m.step)


def on_grid(m: Metric, f: float) -> int | float | None:
    """The point of `m` equal to `f` (within rounding of the decimal written), else None."""
    lo, hi = _bounds(m)
    if m.step is None:
        return int(f) if f.is_integer() and lo <= f <= hi else None
    k = (f - lo) / m.step
    i = round(k)
    pts = grid_points(m)
    return pts[i] if abs(k - i) < 1e-9 and 0 <= i < len(pts) else None


def _step(raw: dict[str, Any], lo: int, hi: int, where: str, src: str) -> float | None:
    """`step`: a scale whose points are not whole numbers (0 / 0.5 / 1: step = 0.5). It must
    divide max - min exactly."""
    v = raw.get("step")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise InputError(f"{where}: 'step' must be a positive number", source=src, field="step")
    try:
        n = (Decimal(hi) - Decimal(lo)) / Decimal(str(v))
    except InvalidOperation:
        n = Decimal("0.5")
    if n != n.to_integral_value() or n < 1:
        raise InputError(
            f"{where}: step {v:g} does not divide {lo}..{hi} into equal points (e.g. min = 0, "
            "max = 1, step = 0.5)",
            source=src,
            field="step",
        )
    return None if float(v) == 1 else float(v)


class ScaleKind(KindSpec):
    name = "scale"
    level = "ordinal"
    fields: ClassVar[tuple[str, ...]] = ("min", "max", "step", "levels", "judge_scale")
    match_rule = "within one point"
    qualification_rule = "scale_within_one"
    tool_controls = frozenset({"rating", "number", "likert"})

    def parse_fields(self, raw: dict[str, Any], where: str, src: str) -> dict[str, Any]:
        lo = _int(raw.get("min", 0), "min", where, src)
        hi = _int(raw.get("max", 5), "max", where, src)
        if lo >= hi:
            raise InputError(
                f"{where}: min ({lo}) must be below max ({hi})", source=src, field="min"
            )
        step = _step(raw, lo, hi, where, src)
        # counted before the points are listed: a scale of 0..1e9 is refused, not built
        n_points = int((Decimal(hi) - Decimal(lo)) / Decimal(str(step or 1))) + 1
        if n_points > MAX_SCALE_LEVELS:
            raise InputError(
                f"{where}: {n_points} levels ({lo}..{hi}); a scale may have at most "
                f"{MAX_SCALE_LEVELS} (e.g. 0..100): rescale it",
                source=src,
                field="step" if step is not None else "max",
            )
        points = scale_points(lo, hi, step)
        raw_levels = raw.get("levels", {})
        if not isinstance(raw_levels, dict):
            raise InputError(f"{where}: 'levels' must be a table", source=src, field="levels")
        levels: dict[float, str] = {}
        for k, v in raw_levels.items():
            lv = point_key(str(k))
            if lv is None:
                raise InputError(
                    f"{where}: level '{k}' is not a number", source=src, field="levels"
                )
            if lv not in points:
                what = f"{lo}..{hi}" if step is None else f"the points of {lo}..{hi} by {step:g}"
                raise InputError(
                    f"{where}: level {lv} is outside {what}", source=src, field="levels"
                )
            if not isinstance(v, str):
                raise InputError(
                    f"{where}: level {lv} text must be a string", source=src, field="levels"
                )
            levels[lv] = v
        out: dict[str, Any] = {"min": lo, "max": hi, "levels": levels}
        if step is not None:
            out["step"] = step
        return {**out, **_judge_scale(raw, where, src)}

    def canonical(self, m: Metric) -> dict[str, Any]:
        return {
            "min": m.min,
            "max": m.max,
            **({"step": m.step} if m.step is not None else {}),
            "levels": {str(k): v for k, v in sorted(m.levels.items())},
            **_judge_scale_canonical(m),
        }

    def values(self, m: Metric) -> tuple[Any, ...]:
        return grid_points(m)

    def value_label(self, m: Metric, value: Any) -> str:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        text = m.levels.get(value, "") if is_number else ""
        return f"{value} ({text})" if text else str(value)

    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        try:
            f = float(s)
        except ValueError:
            raise _err(f"'{s}' is not a number for {self.name} '{m.key}'", source, line) from None
        point = on_grid(m, f) if math.isfinite(f) else None
        if point is None:
            raise _err(f"{s} is outside {m.key}'s {self.name} {describe_scale(m)}", source, line)
        return point

    def validate(self, m: Metric, value: Any) -> Any:
        if isinstance(value, bool):
            raise InputError(f"'{value}' is not a number for {self.name} '{m.key}'", field=m.key)
        return self.parse_value(m, str(value))

    def parse_judge_value(
        self, m: Metric, raw: str, *, source: str = "", line: int | None = None
    ) -> Any:
        if m.judge_scale == "points":
            return super().parse_judge_value(m, raw, source=source, line=line)
        s = raw.strip()
        if s == "" or s.lower() == CANNOT_JUDGE:
            return CANNOT_JUDGE
        try:
            f = float(s)
        except ValueError:
            raise _err(f"'{s}' is not a number for {self.name} '{m.key}'", source, line) from None
        if not math.isfinite(f):
            raise _err(f"'{s}' is not a finite number for {self.name} '{m.key}'", source, line)
        lo, hi = _bounds(m)
        if m.judge_scale == "interval" and not lo <= f <= hi:
            raise _err(
                f"{s} is outside {m.key}'s {self.name} {lo}..{hi}: a judge on "
                f'judge_scale = "interval" scores in the metric\'s units (declare '
                'judge_scale = "own" for a judge on a scale of its own)',
                source,
                line,
            )
        return int(f) if f.is_integer() and lo <= f <= hi else f

    def anchor_match(self, m: Metric, answer: Any, reference: Any) -> AnchorMatch | None:
        if is_missing(reference):
            return None
        if is_missing(answer):
            return AnchorMatch(False, False)
        try:
            diff = abs(float(answer) - float(reference))
        except (TypeError, ValueError):
            return AnchorMatch(False, False)
        # "within one point": one step of the scale's grid
        point = m.step if m.step is not None else 1
        return AnchorMatch(diff <= point + 1e-9, diff < 1e-9)

    def deviation(self, m: Metric, answer: Any, reference: Any) -> float | None:
        if is_missing(answer) or is_missing(reference):
            return None
        try:
            return float(answer) - float(reference)
        except (TypeError, ValueError):
            return None

    def rule_operand(self, m: Metric, op: str, raw: str) -> Any:
        number = "a number" if m.step is not None else "an integer"
        if m.step is None:
            try:
                value: int | float = int(raw)
            except ValueError:
                raise ValueError(f"{self.name} '{m.key}' must be compared with {number}") from None
        else:
            found = point_key(raw)
            if found is None:
                raise ValueError(f"{self.name} '{m.key}' must be compared with {number}")
            value = found
        if op == "has":
            raise ValueError(f"{self.name} '{m.key}' must be compared with {number}")
        if on_grid(m, float(value)) is None:
            raise ValueError(f"{value} is outside {m.key}'s {self.name} {describe_scale(m)}")
        return value

    def choices(self, m: Metric) -> list[tuple[str, str]]:
        return [(str(v), m.level_text(v)) for v in self.values(m)]

    def describe_values(self, m: Metric, cell: Callable[[str], str] = str) -> str:
        if m.step is not None:
            return ", ".join(str(p) for p in grid_points(m))
        return f"{m.min}..{m.max}"

    def reply_schema(self, m: Metric, desc: str) -> dict[str, Any]:
        number: dict[str, Any] = (
            {"type": "number", "enum": list(grid_points(m))}
            if m.step is not None
            else {"type": "integer", "minimum": m.min, "maximum": m.max}
        )
        return {
            "anyOf": [number, {"type": "string", "enum": [CANNOT_JUDGE]}],
            "description": desc,
        }

    def reply_value(self, m: Metric, v: Any) -> Any:
        """An integer in range (a point of the grid on a scale with a step), or the string
        "cannot_judge" (DESIGN 5.1)."""
        if v == CANNOT_JUDGE:
            return v
        if m.step is not None:
            point = (
                on_grid(m, float(v))
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                else None
            )
            if point is None:
                raise BadReply(
                    f'{_shown(v)} is not one of {describe_values_of(m)} or "{CANNOT_JUDGE}"'
                )
            return point
        # JSON Schema counts 4.0 as an integer; a boolean is not a number here
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or (isinstance(v, float) and not v.is_integer())
        ):
            raise BadReply(f'{_shown(v)} is not an integer {m.min}..{m.max} or "{CANNOT_JUDGE}"')
        iv = int(v)
        lo, hi = _bounds(m)
        if not lo <= iv <= hi:
            raise BadReply(f"{iv} is outside {m.min}..{m.max}")
        return iv

    def reply_how(self, m: Metric) -> str:
        if m.step is not None:
            return f"{self.name}: one of {describe_values_of(m)}, or cannot_judge"
        return f"{self.name}: an integer from {m.min} to {m.max}, or cannot_judge"

    # the range in the canonical rubric (`canonical`)
    _server_bounds: ClassVar[tuple[str, str]] = ("(m->>'min')::numeric", "(m->>'max')::numeric")

    def server_check(self) -> tuple[str, str]:
        lo, hi = self._server_bounds
        # A point written as stored: a whole number without a decimal point (4.0 is not the
        # scale's 4: check_stored refuses it too), and with a step, a multiple of the step from
        # min (numeric arithmetic is decimal: 0.3 is a multiple of 0.1 there).
        return (
            "CASE WHEN jsonb_typeof(v) <> 'number' THEN true "
            "WHEN v::numeric = trunc(v::numeric) AND strpos(v::text, '.') > 0 THEN true "
            f"WHEN v::numeric < {lo} OR v::numeric > {hi} THEN true "
            "WHEN m ? 'step' THEN mod(v::numeric - "
            f"{lo}, (m->>'step')::numeric) <> 0 "
            "ELSE strpos(v::text, '.') > 0 END",
            "% is off its scale",
        )


class LikertKind(ScaleKind):
    """A scale whose every point has a label: `points = ["Poor", ..., "Excellent"]`.

    Stored as the point's number (1..N), so it is ordinal like a scale; a CSV cell
    may hold the number or the exact label.
    """

    name = "likert"
    fields = ("points", "judge_scale")
    _server_bounds = ("1", "jsonb_array_length(m->'points')")

    def parse_fields(self, raw: dict[str, Any], where: str, src: str) -> dict[str, Any]:
        points = raw.get("points")
        if (
            not isinstance(points, list)
            or len(points) < 2
            or not all(isinstance(p, str) and p.strip() for p in points)
        ):
            raise InputError(
                f"{where}: 'points' must list at least two labels", source=src, field="points"
            )
        if len(points) > MAX_SCALE_LEVELS:
            raise InputError(
                f"{where}: at most {MAX_SCALE_LEVELS} points", source=src, field="points"
            )
        if len(set(points)) != len(points):
            raise InputError(f"{where}: duplicate point label", source=src, field="points")
        return {
            "min": 1,
            "max": len(points),
            "levels": {i + 1: p for i, p in enumerate(points)},
            **_judge_scale(raw, where, src),
        }

    def canonical(self, m: Metric) -> dict[str, Any]:
        return {
            "points": [m.levels[i] for i in range(1, _bounds(m)[1] + 1)],
            **_judge_scale_canonical(m),
        }

    def value_label(self, m: Metric, value: Any) -> str:
        return m.levels.get(int(value), str(value)) if isinstance(value, int) else str(value)

    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        for n, text in m.levels.items():
            if s == text:
                return n
        return super().parse(m, s, source, line)

    def value_of_label(self, m: Metric, label: str) -> str | None:
        key = norm_label(label)
        return next(
            (
                str(v)
                for v in self.values(m)
                if key in (norm_label(str(v)), norm_label(m.levels.get(v, "")))
            ),
            None,
        )

    def choices(self, m: Metric) -> list[tuple[str, str]]:
        """The points' labels: another tool's control shows them, and our parser reads them."""
        return [(m.levels[v], "") for v in self.values(m)]

    def choice_texts(self, m: Metric, value: Any) -> list[str]:
        if isinstance(value, int) and value in m.levels:
            return [m.levels[value]]
        return super().choice_texts(m, value)

    def describe_values(self, m: Metric, cell: Callable[[str], str] = str) -> str:
        return KindSpec.describe_values(self, m, cell)  # the points' labels, not the range


class _OptionsKind(_OneOfReply):
    fields = ("options",)

    def parse_fields(self, raw: dict[str, Any], where: str, src: str) -> dict[str, Any]:
        opts = raw.get("options")
        if (
            not isinstance(opts, list)
            or not opts
            or not all(isinstance(o, str) and o for o in opts)
        ):
            raise InputError(
                f"{where}: 'options' must be a non-empty list of strings",
                source=src,
                field="options",
            )
        if len(opts) > MAX_OPTIONS:
            raise InputError(f"{where}: at most {MAX_OPTIONS} options", source=src, field="options")
        if len(set(opts)) != len(opts):
            raise InputError(f"{where}: duplicate option", source=src, field="options")
        bad = [o for o in opts if o == CANNOT_JUDGE or ";" in o or o != o.strip()]
        if bad:
            raise InputError(
                f"{where}: option '{bad[0]}' is reserved, contains ';' or has outer spaces",
                source=src,
                field="options",
            )
        return {"options": tuple(opts)}

    def canonical(self, m: Metric) -> dict[str, Any]:
        return {"options": list(m.options)}

    def values(self, m: Metric) -> tuple[Any, ...]:
        return tuple(m.options)


class ChoiceKind(_OptionsKind):
    name = "choice"

    def reply_how(self, m: Metric) -> str:
        return f"choice: one of {', '.join(m.options)}, or cannot_judge"

    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        if s not in m.options:
            raise _err(f"'{s}' is not an option of '{m.key}'", source, line)
        return s

    def server_check(self) -> tuple[str, str]:
        return (
            "CASE WHEN jsonb_typeof(v) <> 'string' THEN true "
            "ELSE NOT (m->'options') ? (v #>> '{}') END",
            "% is not one of its options",
        )

    def rule_operand(self, m: Metric, op: str, raw: str) -> Any:
        if op not in ("==", "!=") or raw not in m.options:
            raise ValueError(
                f"choice '{m.key}' must be compared with == or != to one of its options"
            )
        return raw


class TagsKind(_OptionsKind):
    """Any number of options; ticking none is an answer ("no tag"), not a missing one.

    The app offers no "cannot judge" here, but an imported file may say it: it is
    stored as the string and means every tag of that answer is unknown (missing in
    the statistics), never "no tag".
    """

    name = "tags"
    multi = True
    accepts_cannot_judge = False  # the app offers no "cannot judge" for tags (contract 5.1)
    label_separator = ";"

    def parse_value(self, m: Metric, raw: str, *, source: str = "", line: int | None = None) -> Any:
        s = raw.strip()
        if s == "":
            return ()
        if s.lower() == CANNOT_JUDGE:
            return CANNOT_JUDGE
        return self.parse(m, s, source, line)

    def parse(self, m: Metric, s: str, source: str, line: int | None) -> Any:
        parts = sorted({p.strip() for p in s.split(";") if p.strip()})
        for p in parts:
            if p not in m.options:
                raise _err(f"'{p}' is not a tag of '{m.key}'", source, line)
        return tuple(parts)

    def validate(self, m: Metric, value: Any) -> Any:
        if value is None:
            return ()
        if value == CANNOT_JUDGE:
            return CANNOT_JUDGE
        if isinstance(value, str):
            return self.parse_value(m, value)
        vals = tuple(sorted(set(value)))
        for v in vals:
            if v not in m.options:
                raise InputError(f"'{v}' is not a tag of '{m.key}'", field=m.key)
        return vals

    def format(self, value: Any) -> str:
        if isinstance(value, (tuple, list)):
            return ";".join(value)
        return super().format(value)

    def is_answered(self, m: Metric, value: Any) -> bool:
        return True

    def to_json(self, value: Any) -> Any:
        return list(value) if isinstance(value, (tuple, list)) else value

    def from_json(self, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def same(self, m: Metric, answer: Any, reference: Any) -> bool:
        return set(answer) == set(reference)

    def rule_operand(self, m: Metric, op: str, raw: str) -> Any:
        if op != "has" or raw not in m.options:
            raise ValueError(f"tags '{m.key}' take 'has <tag>' with one of its options")
        return raw

    def reply_schema(self, m: Metric, desc: str) -> dict[str, Any]:
        return {
            "type": "array",
            "items": {"type": "string", "enum": list(m.options)},
            "description": desc + " An empty list when none applies.",
        }

    def reply_value(self, m: Metric, v: Any) -> Any:
        if not isinstance(v, list):
            raise BadReply(f"expected a list of tags, got {json_type_name(v)}")
        for t in v:
            if not isinstance(t, str) or t not in m.options:
                raise BadReply(f"{_shown(t)} is not a tag of '{m.key}'")
        # the same normal form as parse_value: sorted, each tag once
        return tuple(sorted(set(v)))

    def reply_how(self, m: Metric) -> str:
        return f"tags: a list of any of {', '.join(m.options)}; an empty list when none applies"

    def server_check(self) -> tuple[str, str]:
        # options of the metric, each once, in code-point order: the form `to_json` stores
        return (
            "CASE WHEN jsonb_typeof(v) <> 'array' THEN true "
            "ELSE EXISTS (SELECT 1 FROM jsonb_array_elements(v) o WHERE jsonb_typeof(o) <> "
            "'string' OR NOT (m->'options') ? (o #>> '{}')) OR v <> (SELECT "
            'coalesce(jsonb_agg(DISTINCT x COLLATE "C" ORDER BY x COLLATE "C"), \'[]\'::jsonb) '
            "FROM jsonb_array_elements_text(v) x) END",
            "% holds a tag that is not one of its options, or a tag twice",
        )


class TextKind(KindSpec):
    name = "text"
    level = None
    accepts_cannot_judge = False
    required_default = False
    label_separator = "\n"
    tool_controls = frozenset({"textarea", "text"})

    def parse_value(self, m: Metric, raw: str, *, source: str = "", line: int | None = None) -> Any:
        return raw

    def validate(self, m: Metric, value: Any) -> Any:
        return str(value)

    def is_answered(self, m: Metric, value: Any) -> bool:
        return bool((value or "").strip())

    def anchor_match(self, m: Metric, answer: Any, reference: Any) -> AnchorMatch | None:
        return None

    def describe_values(self, m: Metric, cell: Callable[[str], str] = str) -> str:
        return "free text"

    def server_check(self) -> tuple[str, str]:
        return "jsonb_typeof(v) NOT IN ('string', 'null')", "% is not text"


KINDS: dict[str, KindSpec] = {
    k.name: k for k in (GateKind(), ScaleKind(), LikertKind(), TagsKind(), ChoiceKind(), TextKind())
}


def kind_of(name: str) -> KindSpec:
    try:
        return KINDS[name]
    except KeyError:
        raise InputError(
            f"unknown metric kind '{name}'; use one of {', '.join(KINDS)}", field="kind"
        ) from None
