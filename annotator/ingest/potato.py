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
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..domain.answers import reason_of
from ..domain.errors import InputError
from ..domain.rubric import Rubric
from .mapping import (
    Mapping,
    Survey,
    ToolImport,
    ToolJudgement,
    ToolVote,
    convert,
    initial_mapping,
    label_text,
    text_at,
)
from .readers import parse_json, read_jsonl, read_text

OUTPUT_NAME = "annotated_instances.jsonl"
PAIR_DEFAULTS = {"A": "left", "B": "right", "tie": "both"}
_TIME = re.compile(r"(\d+)d\s*(\d+)h\s*(\d+)m\s*(\d+)s")
_POINT = re.compile(r"^(?:scale_)?(-?\d+)$")


def files_of(path: Path) -> list[Path]:
    """A folder: every `<user>/annotated_instances.jsonl` under it; a file: itself."""
    if path.is_dir():
        found = sorted(path.rglob(OUTPUT_NAME))
        if not found:
            raise InputError(
                f"no {OUTPUT_NAME} under this folder; give Potato's annotation_output folder or one "
                "user's file",
                source=str(path),
            )
        return found
    return [path]


def read_lines(path: Path) -> list[tuple[int, Any]]:
    """JSON Lines, or a JSON array (Potato's "json" output)."""
    text = read_text(path, str(path), what="Potato output")
    if text.lstrip().startswith("["):
        data = parse_json(text, str(path))
        return list(enumerate(data, start=1))
    return read_jsonl(path)


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
    if path.name == OUTPUT_NAME:
        return path.parent.name
    raise InputError(
        "the line names no user (user_id) and the file is not <user>/annotated_instances.jsonl; import "
        "Potato's annotation_output folder",
        source=where,
        field="user_id",
    )


def time_ms(line: dict) -> int | None:
    """Potato's 'Time spent: 0d 0h 1m 5s' as milliseconds."""
    bd = line.get("behavioral_data")
    m = _TIME.search(str(bd.get("time_string", ""))) if isinstance(bd, dict) else None
    if not m:
        return None
    d, h, mi, s = (int(x) for x in m.groups())
    return (((d * 24 + h) * 60 + mi) * 60 + s) * 1000


def _labels(metric_kind: str, scheme: dict[str, Any], values: dict[str, str]) -> list[str]:
    if metric_kind in ("scale", "likert"):
        out = []
        for name, value in scheme.items():
            m = _POINT.match(str(name))
            # a point's name ("4", "scale_4"); a named point the mapping knows; else its value (a slider)
            out.append(m.group(1) if m else str(name) if str(name) in values else label_text(value))
        return out
    if metric_kind == "text":
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
    for fi, f in enumerate(files_of(p)):
        for n, line in read_lines(f):
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
                                time_ms(line),
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
                        _labels(mm.metric.kind, got, mm.values),
                        mm.values,
                        f"{where} scheme '{scheme}'",
                    )
            if not answers:
                if not voted:
                    out.skipped["lines with no mapped answer"] += 1
                continue
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
                    None,
                    None,
                    time_ms(line),
                    where,
                    (fi, n),
                )
            )
    out.check_pair_items(known)
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
                    if k not in ("label_annotations", "span_annotations")
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
                    s.seen(scheme, "likert", [_POINT.match(str(k)).group(1) for k in got])
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
