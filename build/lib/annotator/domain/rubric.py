"""Rubric files (DESIGN.md 5.1): parsing, validation, canonical version hash.

A rubric's version is the SHA-256 of its canonical JSON form, so two files that
differ only in comments, key order or whitespace are the same version, and any
change to a metric, a level text or a rule is a new one.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import kinds
from .errors import InputError
from .text import check_text

PASS, FAIL, CANNOT_JUDGE = kinds.PASS, kinds.FAIL, kinds.CANNOT_JUDGE
KINDS = tuple(kinds.KINDS)
_KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Metric:
    key: str
    kind: str
    label: str
    help: str = ""
    min: int | None = None
    max: int | None = None
    levels: dict[int, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    required: bool = True

    @property
    def spec(self) -> kinds.KindSpec:
        """What this metric's kind means (domain/kinds.py)."""
        return kinds.KINDS[self.kind]

    @property
    def judgeable(self) -> bool:
        """Metrics that take part in agreement (text is free prose)."""
        return self.spec.judged

    @property
    def accepts_cannot_judge(self) -> bool:
        return self.spec.accepts_cannot_judge

    @property
    def level(self) -> str | None:
        """Krippendorff level of measurement this kind implies (None: not judged)."""
        return self.spec.level

    def values(self) -> tuple[Any, ...]:
        """Every possible single answer, in order."""
        return self.spec.values(self)

    def scale_values(self) -> list[int]:
        assert self.min is not None and self.max is not None, f"{self.key} is not a scale"
        return list(range(self.min, self.max + 1))

    def level_text(self, value: int) -> str:
        """The description of `value` (empty when the rubric gives none)."""
        return self.levels.get(value, "")


@dataclass(frozen=True)
class Rubric:
    id: str
    title: str
    instructions: str
    metrics: tuple[Metric, ...]
    rules: tuple[str, ...]
    version: str
    source: str = ""

    def metric(self, key: str) -> Metric:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(key)

    def has(self, key: str) -> bool:
        return any(m.key == key for m in self.metrics)

    @property
    def judged_metrics(self) -> tuple[Metric, ...]:
        return tuple(m for m in self.metrics if m.judgeable)

    def canonical(self) -> dict[str, Any]:
        return canonical_dict(self)

    def canonical_text(self) -> str:
        return json.dumps(self.canonical(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_dict(r: Rubric) -> dict[str, Any]:
    metrics = []
    for m in r.metrics:
        d: dict[str, Any] = {"key": m.key, "kind": m.kind, "label": m.label, "help": m.help}
        d.update(m.spec.canonical(m))
        d["required"] = m.required
        metrics.append(d)
    return {
        "id": r.id,
        "title": r.title,
        "instructions": r.instructions,
        "metrics": metrics,
        "verdict": {"rules": list(r.rules)},
    }


def _version(data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _str(d: dict, key: str, src: str, where: str, default: str | None = None) -> str:
    v = d.get(key, default)
    if v is None:
        raise InputError(f"missing '{key}' in {where}", source=src, field=key)
    if not isinstance(v, str):
        raise InputError(f"'{key}' in {where} must be a string", source=src, field=key)
    return v


def _int(v: Any, src: str, key: str, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(f"'{key}' in {where} must be an integer", source=src, field=key)
    return v


def _parse_metric(raw: Any, index: int, src: str) -> Metric:
    where = f"metrics[{index}]"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be a table", source=src, field="metrics")
    key = _str(raw, "key", src, where)
    where = f"metric '{key}'"
    if not _KEY_RE.match(key):
        raise InputError(f"{where}: key must match [a-z][a-z0-9_]*", source=src, field="key")
    kind = _str(raw, "kind", src, where)
    if kind not in kinds.KINDS:
        raise InputError(
            f"{where}: unknown kind '{kind}'; use one of {', '.join(kinds.KINDS)}", source=src, field="kind"
        )
    spec = kinds.KINDS[kind]
    label = _str(raw, "label", src, where, default=key.replace("_", " ").capitalize())
    help_text = _str(raw, "help", src, where, default="")
    required = raw.get("required", kind != "text")
    if not isinstance(required, bool):
        raise InputError(f"{where}: 'required' must be true or false", source=src, field="required")
    every = {"min", "max", "levels", "options", "points"}
    known = {"key", "kind", "label", "help", "required", *spec.fields}
    extra = sorted(set(raw) - known)
    if extra:
        what = f"does not apply to a {kind}" if extra[0] in every else "is not a metric field"
        raise InputError(f"{where}: '{extra[0]}' {what}", source=src, field=extra[0])
    for name, text in (("label", label), ("help", help_text)):
        check_text(text, f"{where} {name}", source=src, multiline=name == "help")
    return Metric(key, kind, label, help_text, required=required, **spec.parse_fields(raw, where, src))


def parse_rubric(text: str, source: str = "<rubric>") -> Rubric:
    """Parse and validate rubric TOML; raises InputError naming the key at fault."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", source=source) from None
    rid = _str(data, "id", source, "the rubric")
    if not _KEY_RE.match(rid):
        raise InputError("rubric id must match [a-z][a-z0-9_]*", source=source, field="id")
    title = _str(data, "title", source, "the rubric", default=rid)
    instructions = _str(data, "instructions", source, "the rubric", default="")
    raw_metrics = data.get("metrics")
    if not isinstance(raw_metrics, list) or not raw_metrics:
        raise InputError("a rubric needs at least one [[metrics]] entry", source=source, field="metrics")
    metrics = tuple(_parse_metric(m, i, source) for i, m in enumerate(raw_metrics))
    seen: set[str] = set()
    for m in metrics:
        if m.key in seen:
            raise InputError(f"duplicate metric key '{m.key}'", source=source, field="key")
        seen.add(m.key)
    verdict = data.get("verdict", {})
    if not isinstance(verdict, dict):
        raise InputError("[verdict] must be a table", source=source, field="verdict")
    rules = verdict.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise InputError("verdict.rules must be a list of strings", source=source, field="verdict.rules")
    extra = sorted(set(data) - {"id", "title", "instructions", "metrics", "verdict"})
    if extra:
        raise InputError(f"unknown top-level key '{extra[0]}'", source=source, field=extra[0])
    draft = Rubric(rid, title, instructions, metrics, tuple(rules), version="", source=source)
    from .verdict import compile_rules  # local: verdict imports Rubric types

    compile_rules(draft)  # validates every rule against the metrics
    return Rubric(rid, title, instructions, metrics, tuple(rules), _version(canonical_dict(draft)), source)


def load_rubric(path: str | Path) -> Rubric:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError("rubric file not found", source=str(p)) from None
    except IsADirectoryError:
        raise InputError("the rubric path is a folder; give the .toml file", source=str(p)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"rubric file cannot be read ({getattr(exc, 'strerror', None) or exc})", source=str(p)) from None
    try:
        text = raw.decode("utf-8-sig")  # an editor's BOM is not part of the TOML
    except UnicodeDecodeError:
        raise InputError("rubric file is not UTF-8 text; save it as UTF-8", source=str(p)) from None
    return parse_rubric(text, source=str(p))


def rubric_from_canonical(text: str) -> Rubric:
    """Rebuild a Rubric from the canonical JSON stored with a study."""
    d = json.loads(text)
    metrics = tuple(
        Metric(
            key=m["key"], kind=m["kind"], label=m["label"], help=m.get("help", ""),
            required=m.get("required", True),
            **kinds.KINDS[m["kind"]].parse_fields(
                {k: v for k, v in m.items() if k in kinds.KINDS[m["kind"]].fields}, m["key"], "<stored rubric>"),
        )
        for m in d["metrics"]
    )
    r = Rubric(d["id"], d["title"], d["instructions"], metrics, tuple(d["verdict"]["rules"]), "")
    return Rubric(r.id, r.title, r.instructions, r.metrics, r.rules, _version(canonical_dict(r)))


# ---- answer values -------------------------------------------------------------


def parse_value(metric: Metric, raw: str, *, source: str = "", line: int | None = None) -> Any:
    """Turn a CSV/text cell into the typed answer value of `metric` (5.3).

    gate -> "PASS"/"FAIL"; scale, likert -> int; choice -> option; tags -> tuple of
    options (sorted); text -> str; empty or "cannot_judge" -> CANNOT_JUDGE.
    """
    return metric.spec.parse_value(metric, raw, source=source, line=line)


def format_value(value: Any) -> str:
    """Inverse of parse_value for CSV output."""
    if isinstance(value, (tuple, list)):
        return ";".join(value)
    return "" if value is None else str(value)


def validate_answer(metric: Metric, value: Any) -> Any:
    """Check a typed answer from the UI/service; returns the normalised value."""
    if value is None:
        if metric.required and metric.kind != "text" and not metric.spec.multi:
            raise InputError(f"metric '{metric.key}' has no answer", field=metric.key)
        return metric.spec.validate(metric, value) if metric.spec.multi else None
    if value == CANNOT_JUDGE:
        if not metric.accepts_cannot_judge:
            raise InputError(f"metric '{metric.key}' does not accept cannot judge", field=metric.key)
        return value
    return metric.spec.validate(metric, value)
