"""Rubric files (docs/design.md 5.1): parsing, validation, canonical version hash.

A rubric's version is the SHA-256 of its canonical JSON form, so two files that
differ only in comments, key order or whitespace are the same version, and any
change to a metric, a level text or a rule is a new one.

Per-language texts (``label_es``, ``help_es``, ``levels_es``, ``points_es``,
``options_es``; ``title_es``, ``instructions_es`` at the top) translate what the
app shows, and are NOT part of the version: a translation must not change what
a metric means, so adding or fixing one keeps every study's rubric version and
its answers comparable. They are stored with the rubric (``canonical_text``
carries them beside the hashed content) and applied by ``Rubric.localized(lang)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any

from . import kinds
from .errors import InputError
from .text import check_text

PASS, FAIL, CANNOT_JUDGE = kinds.PASS, kinds.FAIL, kinds.CANNOT_JUDGE
KINDS = tuple(kinds.KINDS)
_KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_LANG_RE = re.compile(r"^(title|instructions|label|help|levels|points|options)_([a-z]{2})$")
RUBRIC_TEXTS = ("title", "instructions")
METRIC_TEXTS = ("label", "help", "levels", "points", "options")


@dataclass(frozen=True)
class Metric:
    key: str
    kind: str
    label: str
    help: str = ""
    min: int | None = None
    max: int | None = None
    levels: dict[Any, str] = field(default_factory=dict)  # point (int, or float on a step) -> text
    options: tuple[str, ...] = ()
    required: bool = True
    # how a judge's numbers are read on an ordinal kind (domain/kinds.py JUDGE_SCALES)
    judge_scale: str = "points"
    # a scale whose points are not whole numbers: 0 / 0.5 / 1 is min 0, max 1, step 0.5
    step: float | None = None
    # lang -> {"label", "help", "levels" {value: text}, "options" {option: text}}; display only,
    # never part of the version (see the module doc)
    translations: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)
    option_labels: dict[str, str] = field(
        default_factory=dict, compare=False
    )  # shown for an option key

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

    def scale_values(self) -> list[Any]:
        assert self.min is not None and self.max is not None, f"{self.key} is not a scale"
        return list(self.values())

    def level_text(self, value: Any) -> str:
        """The description of `value` (empty when the rubric gives none)."""
        return self.levels.get(value, "")

    def option_text(self, option: str) -> str:
        """An option as shown: its translation when the rubric gives one (the English one where no
        language was chosen: reports are in English), else the key in words."""
        english = (self.translations.get("en") or {}).get("options") or {}
        return self.option_labels.get(option) or english.get(option) or option.replace("_", " ")

    def localized(self, lang: str) -> Metric:
        """This metric with its texts in `lang` where the rubric gives them (same meaning)."""
        t = self.translations.get(lang)
        if not t:
            return self
        levels = {**self.levels, **t.get("levels", {})}
        return replace(
            self,
            label=t.get("label") or self.label,
            help=t.get("help") or self.help,
            levels=levels,
            option_labels=dict(t.get("options", {})),
        )


@dataclass(frozen=True)
class Rubric:
    id: str
    title: str
    instructions: str
    metrics: tuple[Metric, ...]
    rules: tuple[str, ...]
    version: str
    source: str = ""
    translations: dict[str, dict[str, str]] = field(
        default_factory=dict, compare=False
    )  # lang -> title, instructions

    def metric(self, key: str) -> Metric:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(key)

    def has(self, key: str) -> bool:
        return any(m.key == key for m in self.metrics)

    def key_label(self, key: str) -> str:
        """A report key as the reader knows it, the one rule for the report, the dashboard and
        every table: the metric's label, and "label: option" (the option's own label) for a tag;
        a key the rubric does not name is shown in words."""
        base, _, option = key.partition(":")
        if not self.has(base):
            return key.replace("_", " ")
        metric = self.metric(base)
        return f"{metric.label}: {metric.option_text(option)}" if option else metric.label

    @property
    def judged_metrics(self) -> tuple[Metric, ...]:
        return tuple(m for m in self.metrics if m.judgeable)

    def canonical(self) -> dict[str, Any]:
        return canonical_dict(self)

    def canonical_text(self) -> str:
        """What a study stores: the canonical content (hashed) plus the translations (not hashed)."""
        data = self.canonical()
        texts = self.texts()
        if texts:
            data["translations"] = texts
        return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def texts(self) -> dict[str, Any]:
        """Every translation: {lang: {"title", "instructions", "metrics": {key: {...}}}}."""
        langs = set(self.translations) | {lang for m in self.metrics for lang in m.translations}
        out: dict[str, Any] = {}
        for lang in sorted(langs):
            entry: dict[str, Any] = dict(self.translations.get(lang, {}))
            metrics = {
                m.key: _jsonable(m.translations[lang])
                for m in self.metrics
                if lang in m.translations
            }
            if metrics:
                entry["metrics"] = metrics
            out[lang] = entry
        return out

    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self.texts()))

    def localized(self, lang: str) -> Rubric:
        """The same rubric (same version) with its texts in `lang` where it has them."""
        if lang not in self.languages():
            return self
        t = self.translations.get(lang, {})
        return replace(
            self,
            title=t.get("title") or self.title,
            instructions=t.get("instructions") or self.instructions,
            metrics=tuple(m.localized(lang) for m in self.metrics),
        )

    def with_texts(self, texts: dict[str, Any]) -> Rubric:
        """This rubric carrying `texts` (as ``texts()`` gives them), e.g. the shipped file's for an
        older study that stored none. The version is unchanged by construction."""
        return _apply_texts(self, texts)


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


def _jsonable(t: dict[str, Any]) -> dict[str, Any]:
    out = dict(t)
    if "levels" in out:
        out["levels"] = {str(k): v for k, v in out["levels"].items()}
    return out


def _apply_texts(r: Rubric, texts: dict[str, Any]) -> Rubric:
    rubric_t: dict[str, dict[str, str]] = {}
    metric_t: dict[str, dict[str, dict[str, Any]]] = {}
    for lang, entry in (texts or {}).items():
        rubric_t[lang] = {k: entry[k] for k in RUBRIC_TEXTS if k in entry}
        for key, mt in (entry.get("metrics") or {}).items():
            mt = dict(mt)
            if "levels" in mt:
                mt["levels"] = {int(k): v for k, v in mt["levels"].items()}
            metric_t.setdefault(key, {})[lang] = mt
    metrics = tuple(replace(m, translations=metric_t.get(m.key, {})) for m in r.metrics)
    return replace(r, metrics=metrics, translations={k: v for k, v in rubric_t.items() if v})


def _parse_texts(
    raw: dict, where: str, src: str, metric: Metric | None = None
) -> dict[str, dict[str, Any]]:
    """The `<field>_<lang>` keys of a rubric (metric None) or of one metric, checked."""
    out: dict[str, dict[str, Any]] = {}
    for k, v in raw.items():
        m = _LANG_RE.match(k)
        if m is None:
            continue
        name, lang = m.groups()
        if (metric is None) != (name in RUBRIC_TEXTS):
            raise InputError(f"{where}: '{k}' does not belong here", source=src, field=k)
        entry = out.setdefault(lang, {})
        if name in ("title", "instructions", "label", "help"):
            if not isinstance(v, str) or not v.strip():
                raise InputError(f"{where}: '{k}' must be a non-empty string", source=src, field=k)
            check_text(v, f"{where} {k}", source=src, multiline=name in ("help", "instructions"))
            entry[name] = v
        elif name == "levels":
            levels = metric.levels if metric is not None else {}
            if not isinstance(v, dict) or not all(
                isinstance(t, str) and t.strip() for t in v.values()
            ):
                raise InputError(f"{where}: '{k}' must map levels to texts", source=src, field=k)
            parsed = {}
            for lk, text in v.items():
                level = kinds.point_key(str(lk))
                if level is None:
                    raise InputError(
                        f"{where}: '{k}' key '{lk}' is not a level", source=src, field=k
                    )
                if level not in levels:
                    raise InputError(
                        f"{where}: '{k}' translates level {level}, which has no text in the rubric",
                        source=src,
                        field=k,
                    )
                parsed[level] = text
            entry.setdefault("levels", {}).update(parsed)
        elif name == "points":
            n = len(metric.levels) if metric is not None and metric.kind == "likert" else -1
            if (
                not isinstance(v, list)
                or len(v) != n
                or not all(isinstance(t, str) and t.strip() for t in v)
            ):
                raise InputError(
                    f"{where}: '{k}' must list one text per point ({max(n, 0)})",
                    source=src,
                    field=k,
                )
            entry.setdefault("levels", {}).update({i + 1: t for i, t in enumerate(v)})
        else:  # options
            known = set(metric.options) if metric is not None else set()
            if not isinstance(v, dict) or not all(
                isinstance(t, str) and t.strip() for t in v.values()
            ):
                raise InputError(f"{where}: '{k}' must map options to texts", source=src, field=k)
            unknown = sorted(set(v) - known)
            if unknown:
                raise InputError(
                    f"{where}: '{k}' names '{unknown[0]}', which is not an option",
                    source=src,
                    field=k,
                )
            entry["options"] = dict(v)
    return out


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
            f"{where}: unknown kind '{kind}'; use one of {', '.join(kinds.KINDS)}",
            source=src,
            field="kind",
        )
    spec = kinds.KINDS[kind]
    label = _str(raw, "label", src, where, default=key.replace("_", " ").capitalize())
    help_text = _str(raw, "help", src, where, default="")
    required = raw.get("required", spec.required_default)
    if not isinstance(required, bool):
        raise InputError(f"{where}: 'required' must be true or false", source=src, field="required")
    every = {f for k in kinds.KINDS.values() for f in k.fields}  # some kind's field
    known = {"key", "kind", "label", "help", "required", *spec.fields}
    extra = sorted(k for k in set(raw) - known if not _LANG_RE.match(k))
    if extra:
        what = f"does not apply to a {kind}" if extra[0] in every else "is not a metric field"
        raise InputError(f"{where}: '{extra[0]}' {what}", source=src, field=extra[0])
    for name, text in (("label", label), ("help", help_text)):
        check_text(text, f"{where} {name}", source=src, multiline=name == "help")
    metric = Metric(
        key, kind, label, help_text, required=required, **spec.parse_fields(raw, where, src)
    )
    texts = _parse_texts(raw, where, src, metric)
    return replace(metric, translations=texts) if texts else metric


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
        raise InputError(
            "a rubric needs at least one [[metrics]] entry", source=source, field="metrics"
        )
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
        raise InputError(
            "verdict.rules must be a list of strings", source=source, field="verdict.rules"
        )
    extra = sorted(
        k
        for k in set(data) - {"id", "title", "instructions", "metrics", "verdict"}
        if not _LANG_RE.match(k)
    )
    if extra:
        raise InputError(f"unknown top-level key '{extra[0]}'", source=source, field=extra[0])
    texts = _parse_texts(data, "the rubric", source)
    draft = Rubric(
        rid,
        title,
        instructions,
        metrics,
        tuple(rules),
        version="",
        source=source,
        translations=texts,
    )
    from .verdict import compile_rules  # local: verdict imports Rubric types

    compile_rules(draft)  # validates every rule against the metrics
    return replace(draft, version=_version(canonical_dict(draft)))


def rubric_from_canonical(text: str) -> Rubric:
    """Rebuild a Rubric from the canonical JSON stored with a study."""
    d = json.loads(text)
    metrics = tuple(
        Metric(
            key=m["key"],
            kind=m["kind"],
            label=m["label"],
            help=m.get("help", ""),
            required=m.get("required", True),
            **kinds.KINDS[m["kind"]].parse_fields(
                {k: v for k, v in m.items() if k in kinds.KINDS[m["kind"]].fields},
                m["key"],
                "<stored rubric>",
            ),
        )
        for m in d["metrics"]
    )
    r = Rubric(d["id"], d["title"], d["instructions"], metrics, tuple(d["verdict"]["rules"]), "")
    r = _apply_texts(r, d.get("translations") or {})
    return replace(r, version=_version(canonical_dict(r)))


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
            raise InputError(
                f"metric '{metric.key}' does not accept cannot judge", field=metric.key
            )
        return value
    return metric.spec.validate(metric, value)
