"""The mapping file shared by the Label Studio, Potato and Prodigy importers.
(Over 500 lines on purpose: the mapping format, its one-line validation and `--init-map` share one
vocabulary.)

A team's labels were made under *their* names (a Label Studio `from_name`, a
Potato scheme, a Prodigy `label`) with *their* label texts ("Yes", "4 stars").
A mapping file (TOML) says, once and reviewably, which of those names feeds
which metric of the study's rubric and which label text means which of our
values; the importers never guess. `--init-map` writes a starting file from
what an export actually holds, leaving a `# TODO` where it could not decide.

    tool = "label-studio"        # label-studio | potato | prodigy
    rubric = "ui_mockup"         # checked against the study's rubric
    partial = false              # accept judgements that skip a required metric
    ignore = ["bbox"]            # the tool's names to leave out on purpose

    [item]                       # where our item fields sit: a dotted path from the task/line root
    item_id = "data.item_id"

    [metrics.instruction_following]
    from = "if_choice"           # the tool's control / scheme name
    values = { "Yes" = "PASS", "No" = "FAIL" }   # their label -> our value (default: the same text)

    [pairs]
    from = "preference"          # the pairwise control / scheme
    left = "data.item_left"      # paths to the item_ids shown on each side
    right = "data.item_right"

    [raters]                     # their user id -> our rater name (default: the id, see each tool)
    "10" = "alice"
    [judges]                     # their model_version -> our judge name (default: the same)
    "model 1" = "gpt-judge"

Tested in tests/unit/test_interop_label_studio.py, tests/unit/test_interop_potato.py and tests/unit/test_interop_prodigy.py.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, overload

from ..domain import time_spent
from ..domain.errors import InputError
from ..domain.kinds import CANNOT_JUDGE, norm_label
from ..domain.rubric import Metric, Rubric
from ..domain.text import check_name, check_text
from .manifest import ParsedItems
from .readers import read_text
from .tables import CHOICES, JudgeRow, RatingGroup

ITEM_FIELDS = (
    "item_id",
    "case_id",
    "prompt",
    "criteria",
    "generator",
    "images",
    "text",
    "inputs",
    "mask",
    "slice",
    "seed",
    "task_type",
)
_TOP = {
    "tool",
    "rubric",
    "partial",
    "ignore",
    "item",
    "metrics",
    "pairs",
    "raters",
    "judges",
    "instances",
    "instance_id",
}
_METRIC = {"from", "values", "label"}
_PAIRS = {"from", "tie_from", "values", "left", "right", "item_a", "item_b", "pair_id"}


@dataclass(frozen=True)
class MetricMap:
    metric: Metric
    source: str  # the tool's control / scheme / field name
    values: dict[str, str]  # their label -> our value text
    label: str | None = None  # Prodigy: only tasks whose `label` is this feed the metric


@dataclass(frozen=True)
class PairMap:
    source: str | None
    tie_source: str | None
    values: dict[str, str]  # their label -> left | right | both | neither
    left: str | None
    right: str | None
    item_a: str | None  # Prodigy: paths to the item_ids of outputs A and B
    item_b: str | None
    pair_id: str | None


@dataclass(frozen=True)
class Mapping:
    tool: str
    path: str
    item: dict[str, Any]  # our item field -> path (images, inputs: a list of paths)
    metrics: tuple[MetricMap, ...]
    pairs: PairMap | None
    ignore: frozenset[str]
    raters: dict[str, str]
    judges: dict[str, str]
    partial: bool = False
    instances: Path | None = None  # Potato: the instance data file, joined on `instance_id`
    instance_id: str = "id"

    def pair_map(self, where: str) -> PairMap:
        """The [pairs] table, for a pair task: one line when the mapping has none."""
        if self.pairs is None:
            raise InputError(
                "this is a pair task, and the mapping has no [pairs] table; add one (--init-map "
                "writes it from the file)",
                source=where,
                field="pairs",
            )
        return self.pairs

    def by_source(self) -> dict[str, list[MetricMap]]:
        out: dict[str, list[MetricMap]] = {}
        for m in self.metrics:
            out.setdefault(m.source, []).append(m)
        return out

    def rater(self, raw: Any, default: str, where: str) -> str:
        key = str(raw)
        name = self.raters.get(key, default)
        return check_name(name, "the rater's name", source=where, field="rater")

    def judge(self, raw: Any, where: str) -> str:
        key = str(raw)
        return check_name(
            self.judges.get(key, key), "the judge's name", source=where, field="judge"
        )


# ---- loading ----------------------------------------------------------------------------------


def _strings(raw: Any, what: str, src: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise InputError(
            f'{what} must be a table of "their label" = "our value" strings', source=src, field=what
        )
    return {str(k): v for k, v in raw.items()}


def _path(raw: Any, what: str, src: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise InputError(
            f'{what} must be a dotted path such as "data.item_id"', source=src, field=what
        )
    return raw.strip()


def _unknown(raw: dict, known: set[str], where: str, src: str) -> None:
    extra = sorted(set(raw) - known)
    if extra:
        raise InputError(
            f"unknown key '{extra[0]}' in {where}; known: {', '.join(sorted(known))}",
            source=src,
            field=extra[0],
        )


def load_mapping(path: str | Path, tool: str, rubric: Rubric) -> Mapping:
    """Read and check a mapping file against the tool and the study's rubric (one line per fault)."""
    p = Path(path)
    src = str(p)
    try:
        data = tomllib.loads(read_text(p, src, what="mapping file"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", source=src) from None
    except RecursionError:  # tomllib recurses once per level of [[[...]]] or {a = {b = ...}}
        raise InputError(
            "the mapping nests arrays or tables too deep to read; a mapping is flat tables of "
            "strings (see --init-map)",
            source=src,
        ) from None
    _unknown(data, _TOP, "the mapping", src)
    given = data.get("tool", tool)
    if given != tool:
        raise InputError(
            f"this mapping is for '{given}', not '{tool}'; use the {tool} mapping or "
            f"`annotator import {given}`",
            source=src,
            field="tool",
        )
    rid = data.get("rubric")
    if rid is not None and rid != rubric.id:
        raise InputError(
            f"this mapping was written for rubric '{rid}' but the study's rubric is '{rubric.id}'; "
            "write one for this study with --init-map",
            source=src,
            field="rubric",
        )
    item = data.get("item", {})
    if not isinstance(item, dict):
        raise InputError("[item] must be a table", source=src, field="item")
    _unknown(item, set(ITEM_FIELDS), "[item]", src)
    todo = [k for k, v in item.items() if v == TODO]
    if todo:
        raise InputError(
            f"[item] {', '.join(todo)} still TODO; write the dotted path of each (see the comment "
            "beside it), or delete those lines if the study holds every item already",
            source=src,
            field=f"item.{todo[0]}",
        )
    for key, raw in item.items():
        for one in raw if isinstance(raw, list) and key in ("images", "inputs") else [raw]:
            _path(one, f"item.{key}", src)
    metrics = []
    raw_metrics = data.get("metrics", {})
    if not isinstance(raw_metrics, dict):
        raise InputError(
            "[metrics] must hold one table per metric, e.g. [metrics.quality]",
            source=src,
            field="metrics",
        )
    for key, raw in raw_metrics.items():
        if not rubric.has(key):
            raise InputError(
                f"metric '{key}' is not in rubric '{rubric.id}' (its metrics: "
                f"{', '.join(m.key for m in rubric.metrics)})",
                source=src,
                field=f"metrics.{key}",
            )
        if not isinstance(raw, dict):
            raise InputError(f"[metrics.{key}] must be a table", source=src, field=f"metrics.{key}")
        _unknown(raw, _METRIC, f"[metrics.{key}]", src)
        source = _path(raw.get("from"), f"metrics.{key}.from", src)
        if source is None:
            raise InputError(
                f'[metrics.{key}] needs from = "<their name>"; map it, or delete the table if the tool '
                "holds no such answer",
                source=src,
                field=f"metrics.{key}.from",
            )
        values = _strings(raw.get("values"), f"metrics.{key}.values", src)
        metric = rubric.metric(key)
        for (
            theirs,
            ours,
        ) in values.items():  # a typo in the mapping is found now, not halfway through an import
            convert(metric, [ours], {}, f'{src} [metrics.{key}.values] "{theirs}"')
        label = raw.get("label")
        if label is not None and not isinstance(label, str):
            raise InputError(
                f"metrics.{key}.label must be a string", source=src, field=f"metrics.{key}.label"
            )
        metrics.append(MetricMap(metric, source, values, label))
    pairs = None
    if "pairs" in data:
        raw = data["pairs"]
        if not isinstance(raw, dict):
            raise InputError("[pairs] must be a table", source=src, field="pairs")
        _unknown(raw, _PAIRS, "[pairs]", src)
        values = _strings(raw.get("values"), "pairs.values", src)
        bad = sorted(v for v in values.values() if v not in CHOICES)
        if bad:
            raise InputError(
                f"pairs.values: '{bad[0]}' is not one of {', '.join(CHOICES)}",
                source=src,
                field="pairs.values",
            )
        at = {
            k: _path(raw.get(k), f"pairs.{k}", src)
            for k in ("from", "tie_from", "left", "right", "item_a", "item_b", "pair_id")
        }
        pairs = PairMap(
            at["from"],
            at["tie_from"],
            values,
            at["left"],
            at["right"],
            at["item_a"],
            at["item_b"],
            at["pair_id"],
        )
    ignore = data.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(x, str) for x in ignore):
        raise InputError("ignore must be a list of names", source=src, field="ignore")
    partial = data.get("partial", False)
    if not isinstance(partial, bool):
        raise InputError("partial must be true or false", source=src, field="partial")
    instances = data.get("instances")
    if instances is not None and not isinstance(instances, str):
        raise InputError(
            "instances must be the path of the instance data file", source=src, field="instances"
        )
    return Mapping(
        tool=tool,
        path=src,
        item=item,
        metrics=tuple(metrics),
        pairs=pairs,
        ignore=frozenset(ignore),
        raters=_strings(data.get("raters"), "raters", src),
        judges=_strings(data.get("judges"), "judges", src),
        partial=partial,
        instances=(p.parent / instances) if instances else None,
        instance_id=str(data.get("instance_id", "id")),
    )


# ---- reading the tools' records ------------------------------------------------------------------

_MISSING = object()


def get_path(obj: Any, path: str) -> Any:
    """The value at a dotted path ("data.item_id", "meta.annotator.seed"), or None when absent."""
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return None
    return cur


@overload
def text_at(
    obj: Any, path: str | None, what: str, where: str, *, required: Literal[True]
) -> str: ...
@overload
def text_at(
    obj: Any, path: str | None, what: str, where: str, *, required: bool = False
) -> str | None: ...
def text_at(
    obj: Any, path: str | None, what: str, where: str, *, required: bool = False
) -> str | None:
    """A name-like value (an id) at `path`: numbers are taken as their text, anything else is refused."""
    if path is None:
        if required:
            raise InputError(
                f"the mapping says nowhere where {what} is; add it to the mapping", source=where
            )
        return None
    v = get_path(obj, path)
    if v is None or v == "":
        if required:
            raise InputError(
                f"{what} is missing (nothing at '{path}'); fix the mapping or the file",
                source=where,
                field=path,
            )
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise InputError(
            f"{what} at '{path}' must be a string, not {type(v).__name__}", source=where, field=path
        )
    return check_name(str(v), what, source=where, field=path)


def when(raw: Any, where: str, what: str = "created_at") -> datetime | None:
    """An ISO 8601 time (or a Unix epoch number) as the store keeps times: naive UTC."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return datetime.fromtimestamp(raw, UTC).replace(tzinfo=None)
    if not isinstance(raw, str):
        raise InputError(f"{what} must be an ISO 8601 time", source=where, field=what)
    try:
        t = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{what} '{raw[:40]}' is not an ISO 8601 time", source=where, field=what
        ) from None
    return t if t.tzinfo is None else t.astimezone(UTC).replace(tzinfo=None)


def label_text(v: Any) -> str:
    """Their label as text: 4.0 -> "4" so a rating of 4 and a label "4" are the same key."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def convert(
    metric: Metric, labels: list[str], values: dict[str, str], where: str, *, judge: bool = False
) -> Any:
    """Their labels for one metric -> our typed value, through the mapping's values table and the
    metric kind's own parser; an unknown label is one line naming where to add it."""
    from .tables import parse_judge_value

    ours = [values.get(lab, lab) for lab in labels]
    sep = metric.spec.label_separator  # several labels make one answer (tags, text)
    if sep is None and len(ours) != 1:
        raise InputError(
            f"{len(ours)} labels ({', '.join(labels)}) for '{metric.key}', which takes one",
            source=where,
            field=metric.key,
        )
    raw = ours[0] if sep is None else sep.join(ours)
    if not metric.judgeable:
        return check_text(raw, f"the text of '{metric.key}'", source=where, field=metric.key)
    if raw.strip() == "" and not metric.spec.multi and metric.accepts_cannot_judge:
        raise InputError(
            f"an empty label for '{metric.key}'; map it to a value (\"{CANNOT_JUDGE}\" for no answer)",
            source=where,
            field=metric.key,
        )
    try:
        if judge:
            return parse_judge_value(metric, raw, where, None)
        return metric.spec.parse_value(metric, raw, source=where)
    except InputError as exc:
        known = (
            f"{metric.min}..{metric.max}"
            if metric.spec.ordered
            else ", ".join(str(v) for v in metric.values())
        )
        raise InputError(
            f"{exc.message} (labels {', '.join(labels)}; our values: {known}); map their label "
            f"to one of ours in [metrics.{metric.key}.values]",
            source=where,
            field=metric.key,
        ) from None


def add_empty_tag_sets(
    metrics: Sequence[MetricMap], answers: dict[str, Any], present: Any, where: str
) -> None:
    """A tool writes nothing for a multiple-choice control left unticked: on an item the rater
    answered, that is the empty tag set, as our own raters give it. Adds it to `answers` for
    each tags metric that has no answer and whose control (`source`) is not in `present`."""
    for mm in metrics:
        if mm.metric.spec.multi and mm.metric.key not in answers and mm.source not in present:
            answers[mm.metric.key] = convert(mm.metric, [], mm.values, where)


# ---- what the importers hand to the service ---------------------------------------------------


@dataclass
class ToolJudgement(RatingGroup):
    """One rater's answers on one item as another tool recorded them; several for one
    (item, rater) in a file are relabels, landed in `order` as a supersede chain."""

    time_ms: int | None = None
    where: str = ""
    order: tuple = ()


@dataclass(frozen=True)
class ToolVote:
    pair_id: str | None
    item_left: str
    item_right: str
    rater: str  # the judge's name for a judge vote
    choice: str
    created_at: datetime | None
    time_ms: int | None
    where: str
    order: tuple = ()
    is_judge: bool = False


@dataclass
class ToolImport:
    source: str
    items: ParsedItems = field(default_factory=ParsedItems)
    judgements: list[ToolJudgement] = field(default_factory=list)
    judge_rows: list[JudgeRow] = field(default_factory=list)
    votes: list[ToolVote] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    layout: str = ""  # which of a tool's file layouts was read (said in the summary)

    def check_pair_items(self, known: set[str], hint: str = "import the items first") -> None:
        """Every item a vote names is in the study (or made by this file)."""
        for v in self.votes:
            for side in (v.item_left, v.item_right):
                if side not in known:
                    raise InputError(
                        f"the pair names item '{side}', which the study does not hold; {hint}",
                        source=v.where,
                    )

    def check_complete(self, rubric: Rubric, mapping: Mapping) -> None:
        """A judgement that skips a required metric would pass silently into agreement: refused
        unless the mapping says `partial = true`."""
        if mapping.partial:
            return
        from ..domain.answers import missing_metrics

        for j in self.judgements:
            missing = missing_metrics(rubric, j.answers)
            if missing:
                raise InputError(
                    f"{j.rater} on '{j.item_id}' answers no '{missing[0]}' (required); map the "
                    "control that holds it, or set partial = true in the mapping",
                    source=j.where,
                    field=missing[0],
                )


def seconds_to_ms(raw: Any, where: str, what: str = "lead_time") -> int | None:
    """A tool's time spent in seconds -> ms as stored (domain/time_spent.py: capped at a day)."""
    return time_spent.from_seconds(raw, where, what)


# ---- a starting mapping from what a file holds --------------------------------------------------


@dataclass
class Seen:
    """What one control/scheme of the tool held across a file."""

    kinds: Counter = field(default_factory=Counter)  # result types (choices, rating, pairwise, ...)
    labels: Counter = field(default_factory=Counter)


@dataclass
class Survey:
    tool: str
    source: str
    controls: dict[str, Seen] = field(default_factory=dict)
    paths: Counter = field(
        default_factory=Counter
    )  # dotted paths of scalar fields in tasks / lines
    users: Counter = field(default_factory=Counter)
    models: Counter = field(default_factory=Counter)
    fields: dict[str, str] = field(default_factory=dict)  # Prodigy: a text task's field_id by label

    def seen(self, name: str, kind: str, labels: Sequence[str] = ()) -> None:
        s = self.controls.setdefault(name, Seen())
        s.kinds[kind] += 1
        s.labels.update(labels)

    def walk(self, obj: Any, prefix: str = "", depth: int = 0) -> None:
        """Record the dotted paths of the fields a task holds (for guessing [item])."""
        if not isinstance(obj, dict) or depth > 3:
            return
        for k, v in obj.items():
            p = f"{prefix}{k}"
            if isinstance(v, dict):
                self.walk(v, p + ".", depth + 1)
            else:
                self.paths[p] += 1


_FIELD_NAMES = {
    "item_id": ("item_id", "itemid", "uid", "item"),
    "case_id": ("case_id", "case", "caseid"),
    "prompt": ("prompt", "instruction", "question"),
    "criteria": ("criteria",),
    "generator": ("generator", "model"),
    "images": ("image", "images", "img", "image_url"),
    "text": ("text", "output", "response"),
    "inputs": ("inputs",),
    "mask": ("mask",),
    "slice": ("slice",),
    "seed": ("seed",),
    "task_type": ("task_type",),
}


def _guess_value(metric: Metric, label: str) -> str | None:
    words = metric.spec.label_words
    if words:  # a kind with words for its values (a gate's yes, accept, ok) guesses by them alone
        return words.get(norm_label(label))
    try:
        convert(metric, [label], {}, "")
        return None  # already one of ours: no line needed
    except InputError:
        pass
    return metric.spec.value_of_label(metric, label) or "TODO"


def _number(label: str) -> float | None:
    try:
        x = float(label)
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def _range_note(metric: Metric, labels: list[str]) -> str | None:
    """'their points 1..6, ours 0..5' when a scale's labels seen in the file leave our range."""
    if not metric.spec.ordered or metric.min is None or metric.max is None:
        return None
    lo, hi = metric.min, metric.max
    nums = [x for x in map(_number, labels) if x is not None]
    if not nums or all(lo <= x <= hi for x in nums):
        return None
    return f"their points {label_text(min(nums))}..{label_text(max(nums))}, ours {lo}..{hi}"


def _q(s: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(s, ensure_ascii=False)


def _key(k: str) -> str:
    """A TOML key: bare when it can be, quoted otherwise."""
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) and not k.isdigit() else _q(k)


ANSWER_KINDS = {
    "choices",
    "taxonomy",
    "rating",
    "number",
    "textarea",
    "pairwise",
    "labels",
    "likert",
    "text",
    "choice",
    "answer",
}


def _match(rubric: Rubric, survey: Survey, taken: set[str]) -> dict[str, str | None]:
    """Metric -> their control: by name first, then (text and scales only) the one control of a
    fitting kind left over."""
    free = [n for n, s in survey.controls.items() if n not in taken and set(s.kinds) & ANSWER_KINDS]
    out: dict[str, str | None] = {}
    for m in rubric.metrics:
        out[m.key] = next(
            (n for n in free if norm_label(n) in (norm_label(m.key), norm_label(m.label))), None
        )
    used = {v for v in out.values() if v}
    for m in rubric.metrics:
        controls = m.spec.tool_controls  # the kinds of their controls that may hold it
        if out[m.key] is None and controls:
            fits = [n for n in free if n not in used and set(survey.controls[n].kinds) & controls]
            rivals = [
                k for k in rubric.metrics if out[k.key] is None and k.spec.tool_controls == controls
            ]
            required = [k for k in rivals if k.required]
            if len(fits) == 1 and (
                rivals == [m] or required == [m]
            ):  # the one control for the one (required) metric
                out[m.key] = fits[0]
                used.add(fits[0])
    return out


TODO = "TODO"


def _data_keys(survey: Survey) -> str:
    keys = [p for p, _ in survey.paths.most_common() if p.startswith("data.")][:6]
    return ", ".join(keys) or "none"


REQUIRED_ITEM = {
    "item_id": lambda s: (
        'where each task names its item; "id" (the tool\'s own task id) if nothing else does '
        f"(the tasks hold {_data_keys(s)})"
    ),
    "case_id": lambda s: (
        "which tasks are one case (the same prompt judged for several generators); "
        f'"data.prompt" makes one case per prompt (the tasks hold {_data_keys(s)})'
    ),
    "prompt": lambda s: f"where each task holds its prompt (the tasks hold {_data_keys(s)})",
    "generator": lambda s: (
        f"which model made each output (the tasks hold {_data_keys(s)}); an import cannot "
        "compare generators without it"
    ),
}


def initial_mapping(
    survey: Survey,
    rubric: Rubric,
    *,
    item_fields: tuple[str, ...] = ITEM_FIELDS,
    item_defaults: dict[str, Any] | None = None,
    pair_defaults: dict[str, str] | None = None,
    top: tuple[str, ...] = (),
    source_lines: Any = None,
) -> str:
    """A starting mapping (TOML text) from what the file held: controls matched to metrics by
    name (or, for text and scales, by being the only one of that kind), labels to our values
    where the match is certain, `# TODO` where it is not. `source_lines(name)` gives the lines
    that read a matched control (default: from = "<name>")."""
    pair_controls = [n for n, s in survey.controls.items() if "pairwise" in s.kinds]
    pd_ = dict(pair_defaults or {})
    if pair_controls and "from" not in pd_:
        pd_["from"] = pair_controls[0]
    last_names: dict[str, str] = {}
    for p, _ in survey.paths.most_common():
        last_names.setdefault(norm_label(p.rsplit(".", 1)[-1]), p)
    if pair_controls:
        # a tie control beside the pairwise one (`export label-studio` writes "<pair>_tie":
        # both / neither), and the paths of each side's item, as our pair tasks hold them
        ties = [
            n
            for n, seen in survey.controls.items()
            if n not in pair_controls
            and (n == f"{pd_['from']}_tie" or (seen.labels and set(seen.labels) <= set(CHOICES)))
        ]
        if ties and "tie_from" not in pd_:
            pd_["tie_from"] = ties[0]
        for key, names in (
            ("left", ("item_left", "left_item", "left_uid", "left_id")),
            ("right", ("item_right", "right_item", "right_uid", "right_id")),
            ("pair_id", ("pair_id",)),
        ):
            hit = next((last_names[n] for n in names if n in last_names), None)
            if hit and key not in pd_:
                pd_[key] = hit
    tie = pd_.get("tie_from")
    taken = set(pair_controls) | ({tie} if tie is not None else set())
    matches = _match(rubric, survey, taken)
    only_pairs = bool(pair_controls) and set(survey.controls) <= taken
    used = {n for n in matches.values() if n} | {pd_.get("from"), pd_.get("tie_from")}
    regions = sorted(n for n, seen in survey.controls.items() if not set(seen.kinds) & ANSWER_KINDS)
    rest = sorted(set(survey.controls) - used - set(regions))
    # top-level keys first: in TOML a key after a [table] header belongs to that table
    lines = [
        f"# annotator mapping: {survey.tool} -> rubric '{rubric.id}', written by --init-map from",
        f"# {survey.source}. Check every line, fix each TODO, then import with --map.",
        f"tool = {_q(survey.tool)}",
        f"rubric = {_q(rubric.id)}",
        "partial = false",
        *top,
    ]
    if regions:
        lines.append("# controls no metric can take (regions, spans...):")
    lines.append("ignore = [" + ", ".join(_q(n) for n in regions) + "]")
    if rest:
        lines.append(
            "# TODO: not mapped yet (map each to a metric below, or add it to ignore): "
            + ", ".join(rest)
        )
    lines += ["", "[item]  # dotted paths from the root of each task / line"]
    guessed = dict(item_defaults or {})
    paths: dict[str, str] = {}
    for p, _ in survey.paths.most_common():  # the most common path with that last name wins
        paths.setdefault(norm_label(p.rsplit(".", 1)[-1]), p)
    for fld in item_fields:
        hit = next((paths[n] for n in _FIELD_NAMES.get(fld, ()) if n in paths), None)
        if fld not in guessed and hit:
            guessed[fld] = [hit] if fld in ("images", "inputs") else hit
    for fld in ITEM_FIELDS:
        if fld in guessed:
            v = guessed[fld]
            lines.append(
                f"{fld} = "
                + ("[" + ", ".join(_q(x) for x in v) + "]" if isinstance(v, list) else _q(v))
            )
    if only_pairs:
        pass  # a pair task names its two items, not one: no [item] path is read
    elif item_fields == ITEM_FIELDS:
        # a task the study does not hold makes its item from these four: all written now, a
        # TODO (refused by the import) where the file does not say, so one edit fixes them all
        for fld, hint in REQUIRED_ITEM.items():
            if fld not in guessed:
                lines.append(
                    f'{fld} = "{TODO}"  # TODO: {hint(survey)}'
                    + (
                        "; or delete this line if the study holds the items"
                        if fld != "item_id"
                        else ""
                    )
                )
    elif "item_id" not in guessed:
        lines.append('# item_id = "data.item_id"  # TODO: where each task names our item_id')
    lines.append("")
    for m in rubric.metrics:
        match = matches[m.key]
        if only_pairs:  # a file of pair tasks answers no metric: no table to fill in
            continue
        lines.append(f"[metrics.{m.key}]  # {m.kind}: {m.label}")
        if match is None:
            lines.append(
                f'# from = ""  # TODO: which of {", ".join(rest) or "their names"} answers this metric? '
                "(delete this table if none does)"
            )
            lines.append("")
            continue
        lines += source_lines(match) if source_lines else [f"from = {_q(match)}"]
        labels = sorted(survey.controls[match].labels)
        guesses = [(lab, v) for lab in labels if (v := _guess_value(m, lab)) is not None]
        shifted = _range_note(m, labels)
        if shifted:
            # their points run over another range: a point of theirs that is also a number of
            # ours need not mean it (a 1..6 rating is not our 0..5 plus a 6), so every one is asked
            lines.append(f"# TODO: {shifted}; say which of our values each of their points is")
            guesses = [(lab, "TODO") for lab in labels if _number(lab) is not None] + [
                (lab, v) for lab, v in guesses if _number(lab) is None
            ]
        if guesses:
            lines.append(f"[metrics.{m.key}.values]")
            for lab, v in guesses:
                lines.append(
                    f"{_q(lab)} = {_q(v)}"
                    + ("  # TODO: which of our values?" if v == "TODO" else "")
                )
        lines.append("")
    if pd_:
        lines.append("[pairs]")
        lines += [f"{_key(k)} = {_q(v)}" for k, v in pd_.items()]
        lines.append("")
    if survey.users:
        lines.append("[raters]  # their user -> our rater name")
        default = "ls-user-{}" if survey.tool == "label-studio" else "{}"
        lines += [f"{_q(u)} = {_q(default.format(u))}" for u in sorted(survey.users)]
        lines.append("")
    if survey.models:
        lines.append("[judges]  # their model_version -> our judge name")
        lines += [f"{_q(u)} = {_q(u)}" for u in sorted(survey.models)]
        lines.append("")
    return "\n".join(lines)


def render_mapping(
    tool: str,
    rubric: Rubric,
    *,
    item: dict[str, Any],
    metrics: dict[str, str],
    pairs: dict[str, str] | None = None,
    raters: dict[str, str] | None = None,
    judges: dict[str, str] | None = None,
    note: str = "",
    partial: bool = False,
) -> str:
    """A complete mapping file (TOML) from plain tables: what an exporter writes beside its
    export so that the file imports back with no questions asked."""
    lines = [
        f"# annotator mapping: {note}" if note else "# annotator mapping",
        f"tool = {_q(tool)}",
        f"rubric = {_q(rubric.id)}",
    ]
    if partial:
        lines.append(
            "partial = true  # the study holds judgements that skip a required metric (imported as partial)"
        )
    lines += ["", "[item]"]
    for k, v in item.items():
        lines.append(
            f"{k} = " + ("[" + ", ".join(_q(x) for x in v) + "]" if isinstance(v, list) else _q(v))
        )
    for key, source in metrics.items():
        lines += ["", f"[metrics.{key}]", f"from = {_q(source)}"]
    for title, table in (("pairs", pairs), ("raters", raters), ("judges", judges)):
        if table:
            lines += ["", f"[{title}]", *(f"{_key(str(k))} = {_q(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"
