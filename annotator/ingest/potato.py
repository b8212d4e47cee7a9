"""Potato annotation output in, through a mapping file (ingest/mapping.py).

The format, from Potato's own writer and docs (https://potato-annotation.readthedocs.io,
source `potato/flask_server.py` and docs/annotation-types/comparison/pairwise_annotation.md
in github.com/davidjurgens/potato): one folder per annotator,
`annotation_output/<user>/annotated_instances.jsonl`, one line per instance:

    {"id": "...", "displayed_text": "...",
     "label_annotations": {"<scheme name>": {"<label name>": "<value>", ...}, ...},
     "span_annotations": [...], "behavioral_data": {"time_string": "Time spent: 0d 0h 0m 5s "}}

By scheme type: `radio` {"<the label>": ...}; `multiselect` {"<label>": ..., "<label>": ...};
`likert` {"<point>": "<point>"} (older versions name the point "scale_<n>"); `text`
{"text_box": "<the text>"}; `pairwise` {"selection": "A" | "B" | "tie"} (A is the first,
left item) or, in scale mode, {"scale_value": "-2"} (negative: A preferred, 0: equal).

The answer is read by the *metric's* kind: a choice or tags metric takes the label names,
a scale the point (its name, else its value), a text metric the values. The rater is the
line's `user_id` (or `user`, `annotator`), else the `<user>` folder. Potato's lines carry
no item fields beyond `id`: when a pair's item ids are not in the line, name the instance
data file in the mapping (`instances = "data.jsonl"`, joined on `instance_id`, default "id").
Tested in tests/unit/test_interop_potato.py, tests/unit/test_interop_peers.py and, against a
running Potato, tests/peers/test_potato.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..domain import time_spent
from ..domain.answers import reason_of
from ..domain.errors import InputError
from ..domain.rubric import Metric, Rubric
from .mapping import (
    Mapping,
    Survey,
    ToolImport,
    ToolJudgement,
    ToolVote,
    add_empty_tag_sets,
    convert,
    initial_mapping,
    label_text,
    text_at,
    when,
)
from .readers import parse_json, read_jsonl, read_text

OUTPUT_NAME = "annotated_instances.jsonl"  # Potato 1.x, one line per instance
STATE_NAME = "user_state.json"  # Potato 2.x: the user's current answers
HISTORY_NAME = "annotation_history.jsonl"  # Potato 2.x: every save, in order
PAIR_DEFAULTS = {"A": "left", "B": "right", "tie": "both"}
_TIME = re.compile(r"(\d+)d\s*(\d+)h\s*(\d+)m\s*(\d+)s")
_POINT = re.compile(r"^(?:scale_)?(-?\d+)$")
LAYOUTS = {
    OUTPUT_NAME: "Potato 1 annotated_instances.jsonl",
    STATE_NAME: "Potato 2 user_state.json",
    HISTORY_NAME: "Potato 2 annotation_history.jsonl",
    "export": "Potato export (python -m potato.export --format jsonl)",
}


def files_of(path: Path) -> list[Path]:
    """A folder: each user's `user_state.json` (Potato 2), else its `annotation_history.jsonl`,
    else its `annotated_instances.jsonl` (Potato 1); a file: itself."""
    if not path.is_dir():
        return [path]
    found: list[Path] = []
    folders = sorted(
        {f.parent for name in (OUTPUT_NAME, STATE_NAME, HISTORY_NAME) for f in path.rglob(name)}
    )
    for d in folders:
        for name in (STATE_NAME, HISTORY_NAME, OUTPUT_NAME):  # the current state first
            if (d / name).is_file():
                found.append(d / name)
                break
    if not found:
        raise InputError(
            f"no {STATE_NAME}, {HISTORY_NAME} or {OUTPUT_NAME} under this folder; give Potato's "
            "annotation_output folder, one user's file or Potato's jsonl export",
            source=str(path),
        )
    return found


def layout_of(f: Path, lines: list[tuple[int, Any]]) -> str:
    if f.name in LAYOUTS:
        return LAYOUTS[f.name]
    if any(isinstance(x, dict) and x.get("_export") for _, x in lines):
        return LAYOUTS["export"]
    return LAYOUTS[OUTPUT_NAME]


def _state_lines(f: Path) -> list[tuple[int, Any]]:
    """Potato 2's user_state.json as lines of the legacy shape: {id, user_id,
    label_annotations: {scheme: {label: value}}}; the times come from the history beside it."""
    src = str(f)
    data = parse_json(read_text(f, src, what="Potato user state"), src)
    if not isinstance(data, dict) or not isinstance(
        data.get("instance_id_to_label_to_value", {}), dict
    ):
        raise InputError(
            "not a Potato user_state.json (no instance_id_to_label_to_value object)",
            source=src,
            field="instance_id_to_label_to_value",
        )
    user = data.get("user_id") if isinstance(data.get("user_id"), str) else f.parent.name
    times = _history_times(f.parent / HISTORY_NAME)
    out = []
    for n, (iid, pairs) in enumerate(data.get("instance_id_to_label_to_value", {}).items(), 1):
        where = f"{src} instance '{iid}'"
        la: dict[str, dict[str, Any]] = {}
        for entry in pairs if isinstance(pairs, list) else [None]:
            if (
                not isinstance(entry, list)
                or len(entry) != 2
                or not isinstance(entry[0], dict)
                or not isinstance(entry[0].get("schema"), str)
            ):
                raise InputError(
                    'a label must be [{"schema": ..., "name": ...}, value]', source=where
                )
            la.setdefault(entry[0]["schema"], {})[str(entry[0].get("name"))] = entry[1]
        line = {"id": iid, "user_id": user, "label_annotations": la}
        if iid in times:
            line["_time"] = times[iid]
        out.append((n, line))
    return out


def _history(f: Path) -> list[tuple[int, dict]]:
    if not f.is_file():
        return []
    return [(n, a) for n, a in read_jsonl(f) if isinstance(a, dict)]


def _history_times(f: Path) -> dict[str, Any]:
    """instance id -> the time of its last save (server time, UTC)."""
    out: dict[str, Any] = {}
    for n, a in _history(f):
        if a.get("instance_id") is not None and a.get("timestamp"):
            out[str(a["instance_id"])] = when(a["timestamp"], f"{f}:{n}", "timestamp")
    return out


def _history_lines(f: Path) -> list[tuple[int, Any]]:
    """Potato 2's annotation_history.jsonl replayed: each save (one instance, one client time)
    replaces the labels of the schemes it names, as Potato's server does; delete_label removes."""
    state: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    last: dict[tuple[str, str], tuple[int, Any]] = {}
    group: tuple | None = None
    named: set[str] = set()
    for n, a in _history(f):
        kind = a.get("action_type")
        if kind not in ("add_label", "update_label", "delete_label"):
            continue  # spans, links: no metric reads them
        user = str(a.get("user_id") or f.parent.name)
        key = (user, str(a.get("instance_id")))
        g = (key, a.get("session_id"), a.get("client_timestamp"))
        if g != group:
            group, named = g, set()
        la = state.setdefault(key, {})
        scheme, label = str(a.get("schema_name")), str(a.get("label_name"))
        if kind == "delete_label":
            la.get(scheme, {}).pop(label, None)
        else:
            if scheme not in named:
                la[scheme] = {}
                named.add(scheme)
            la[scheme][label] = a.get("new_value")
        last[key] = (n, when(a.get("timestamp"), f"{f}:{n}", "timestamp"))
    return [
        (
            last[k][0],
            {"id": k[1], "user_id": k[0], "label_annotations": {s: d for s, d in la.items() if d}}
            | ({"_time": last[k][1]} if last[k][1] else {}),
        )
        for k, la in state.items()
    ]


def read_lines(path: Path) -> list[tuple[int, Any]]:
    """JSON Lines, or a JSON array (Potato's "json" output); Potato 2's user state and history
    and Potato's export read as lines of the same shape."""
    if path.name == STATE_NAME:
        return _state_lines(path)
    if path.name == HISTORY_NAME:
        return _history_lines(path)
    text = read_text(path, str(path), what="Potato output")
    if text.lstrip().startswith("["):
        data = parse_json(text, str(path))
        lines = list(enumerate(data, start=1))
    else:
        lines = read_jsonl(path)
    for _, x in lines:
        # `python -m potato.export --format jsonl`: {instance_id, user_id, labels}
        if (
            isinstance(x, dict)
            and "label_annotations" not in x
            and isinstance(x.get("labels"), dict)
        ):
            x["label_annotations"] = x.pop("labels")
            x["_export"] = True
            if "id" not in x and x.get("instance_id") is not None:
                x["id"] = x["instance_id"]
    return lines


def _instances(mapping: Mapping) -> dict[str, Any]:
    if mapping.instances is None:
        return {}
    out = {}
    for _n, row in read_lines(mapping.instances):
        if isinstance(row, dict) and row.get(mapping.instance_id) is not None:
            out[str(row[mapping.instance_id])] = row
    return out


def _user(line: dict, path: Path, where: str) -> str:
    for key in ("user_id", "user", "annotator"):
        if isinstance(line.get(key), (str, int)) and str(line[key]).strip():
            return str(line[key])
    if path.name in (OUTPUT_NAME, STATE_NAME, HISTORY_NAME):
        return path.parent.name
    raise InputError(
        "the line names no user (user_id) and the file is not <user>/annotated_instances.jsonl; import "
        "Potato's annotation_output folder",
        source=where,
        field="user_id",
    )


def time_ms(line: dict, where: str = "") -> int | None:
    """Potato's 'Time spent: 0d 0h 1m 5s' as milliseconds, capped as every stored time is
    (domain/time_spent.py)."""
    bd = line.get("behavioral_data")
    m = _TIME.search(str(bd.get("time_string", ""))) if isinstance(bd, dict) else None
    if not m:
        return None
    if any(len(x) > 9 for x in m.groups()):  # more digits than a day holds in any unit
        return time_spent.MAX_TIME_MS
    d, h, mi, s = (int(x) for x in m.groups())
    return time_spent.capped((((d * 24 + h) * 60 + mi) * 60 + s) * 1000)


def _labels(metric: Metric, scheme: dict[str, Any], values: dict[str, str]) -> list[str]:
    if metric.spec.ordered:
        out = []
        for name, value in scheme.items():
            m = _POINT.match(str(name))
            # a point's name ("4", "scale_4"); a named point the mapping knows; else its value (a slider)
            out.append(m.group(1) if m else str(name) if str(name) in values else label_text(value))
        return out
    if not metric.judgeable:  # free text: the text itself
        return [str(v) for v in scheme.values()]
    return [str(k) for k in scheme]


def _pair_choice(scheme: dict[str, Any], values: dict[str, str], where: str) -> str | None:
    if "selection" in scheme:
        lab = str(scheme["selection"])
    elif "scale_value" in scheme:
        try:
            x = float(scheme["scale_value"])
        except (TypeError, ValueError):
            raise InputError(
                f"scale_value '{scheme['scale_value']}' is not a number", source=where
            ) from None
        lab = "A" if x < 0 else "B" if x > 0 else "tie"
    else:
        return None
    choice = values.get(lab, PAIR_DEFAULTS.get(lab, lab))
    if choice not in ("left", "right", "both", "neither"):
        raise InputError(
            f"pair selection '{lab}' is not A, B or tie; map it in [pairs.values]", source=where
        )
    return choice


def parse(path: str | Path, rubric: Rubric, mapping: Mapping, known: set[str]) -> ToolImport:
    p = Path(path)
    out = ToolImport(str(p))
    by_source = mapping.by_source()
    pm = mapping.pairs
    inst = _instances(mapping)
    layouts: set[str] = set()
    for fi, f in enumerate(files_of(p)):
        lines = read_lines(f)
        layouts.add(layout_of(f, lines))
        for n, line in lines:
            where = f"{f}:{n}"
            if not isinstance(line, dict):
                raise InputError("line is not a JSON object", source=where)
            iid = line.get(mapping.instance_id)
            row = {**inst.get(str(iid), {}), **line} if iid is not None else line
            rater = mapping.rater(_user(line, f, where), _user(line, f, where), where)
            la = line.get("label_annotations")
            if la is None:
                out.skipped["lines with no label_annotations"] += 1
                continue
            if not isinstance(la, dict):
                raise InputError(
                    "label_annotations must be an object", source=where, field="label_annotations"
                )
            answers: dict[str, Any] = {}
            voted = False
            for scheme, got in la.items():
                if scheme in mapping.ignore:
                    continue
                if not isinstance(got, dict):
                    raise InputError(
                        f"scheme '{scheme}' must hold an object of label: value",
                        source=where,
                        field=scheme,
                    )
                if pm is not None and scheme == pm.source:
                    choice = _pair_choice(got, pm.values, where)
                    if choice is not None:
                        left = text_at(row, pm.left, "the left item_id", where, required=True)
                        right = text_at(row, pm.right, "the right item_id", where, required=True)
                        out.votes.append(
                            ToolVote(
                                text_at(row, pm.pair_id, "the pair_id", where),
                                left,
                                right,
                                rater,
                                choice,
                                None,
                                time_ms(line, where),
                                where,
                                (fi, n),
                            )
                        )
                        voted = True
                    continue
                if scheme not in by_source:
                    raise InputError(
                        f"scheme '{scheme}' is not in the mapping {mapping.path}; map it to a metric "
                        f'([metrics.<key>] from = "{scheme}") or list it in ignore',
                        source=where,
                        field=scheme,
                    )
                for mm in by_source[scheme]:
                    if not got and not mm.metric.spec.multi:
                        continue  # nothing picked: no answer, except for tags, where none ticked is one
                    answers[mm.metric.key] = convert(
                        mm.metric,
                        _labels(mm.metric, got, mm.values),
                        mm.values,
                        f"{where} scheme '{scheme}'",
                    )
            if not answers:
                if not voted:
                    out.skipped["lines with no mapped answer"] += 1
                continue
            add_empty_tag_sets(mapping.metrics, answers, la, where)
            item_id = text_at(
                row,
                mapping.item.get("item_id", mapping.instance_id),
                "the item_id",
                where,
                required=True,
            )
            if item_id not in known:
                raise InputError(
                    f"unknown item_id '{item_id}'; import the items first (Potato's output holds no "
                    "item content)",
                    source=where,
                    field="id",
                )
            out.judgements.append(
                ToolJudgement(
                    item_id,
                    rater,
                    answers,
                    reason_of(rubric, answers),
                    line.get("_time"),
                    None,
                    time_ms(line, where),
                    where,
                    (fi, n),
                )
            )
    out.check_pair_items(known)
    out.layout = ", ".join(sorted(layouts))
    return out


def survey(path: str | Path) -> Survey:
    p = Path(path)
    s = Survey("potato", str(p))
    for f in files_of(p):
        for n, line in read_lines(f):
            if not isinstance(line, dict):
                continue
            s.walk(
                {
                    k: v
                    for k, v in line.items()
                    if k not in ("label_annotations", "span_annotations") and not k.startswith("_")
                }
            )
            try:
                s.users[_user(line, f, f"{f}:{n}")] += 1
            except InputError:
                pass
            for scheme, got in (line.get("label_annotations") or {}).items():
                if not isinstance(got, dict):
                    continue
                if {"selection", "scale_value"} & set(got):
                    s.seen(scheme, "pairwise")
                elif got and set(got) <= {"text_box"}:
                    s.seen(scheme, "text")
                elif got and all(_POINT.match(str(k)) for k in got):
                    s.seen(
                        scheme, "likert", [pt.group(1) for k in got if (pt := _POINT.match(str(k)))]
                    )
                else:
                    s.seen(scheme, "labels", [str(k) for k in got])
    return s


def initial(path: str | Path, rubric: Rubric) -> str:
    s = survey(path)
    schemes = [n for n, seen in s.controls.items() if "pairwise" in seen.kinds]
    # Potato's lines hold no item ids for the two sides: they come from the instance data file
    pairs = {"from": schemes[0], "left": "item_left", "right": "item_right"} if schemes else None
    top = (
        (
            "# instances = \"data/instances.jsonl\"  # TODO for pairs: Potato's input data, naming each pair's items",
        )
        if pairs
        else ()
    )
    return initial_mapping(
        s,
        rubric,
        item_fields=("item_id",),
        item_defaults={"item_id": "id"},
        pair_defaults=pairs,
        top=top,
    )
