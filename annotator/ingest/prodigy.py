"""Prodigy JSONL (`prodigy db-out`) in, through a mapping file (ingest/mapping.py).

The format, from Prodigy's docs (https://prodi.gy/docs/api-interfaces, "Annotated tasks
contain an additional "answer" key mapping to either "accept", "reject" or "ignore"";
https://prodi.gy/docs/api-web-app) and its recipes (github.com/explosion/prodigy-recipes:
compare.py and ner/ner_eval_ab.py): one task a line, with `answer`, the annotator in
`_annotator_id` / `_session_id` ("<dataset>-<session name>" in multi-user sessions) and the
time in `_timestamp` (Unix seconds). A `choice` task lists `options` (each with an `id`)
and the ids picked in `accept`. An A/B evaluation stores which system was shown where in
`mapping`: a `compare` task ({"input", "accept", "reject", "mapping": {"A": "accept", "B":
"reject"}}) shows the output in `accept` first and the one in `reject` second, and answer
`accept` prefers the first; a `choice` A/B task lists options "A" and "B" in the order shown
(its `mapping` keys' order) and `accept` holds the one picked.

What this importer decides:
- a metric reads the value at its `from` path: `answer` (accept -> PASS, reject -> FAIL for
  a gate unless mapped otherwise) or `accept` (the options picked, by id) or any field;
  `label = "X"` limits it to tasks whose `label` is X (binary tasks, one label each);
- `answer: ignore` is skipped and counted; `answer: reject` feeds only `from = "answer"`
  metrics (a rejected choice task picked nothing);
- a rater's tasks on one item make one judgement; a metric answered again later with
  another value is a relabel, kept as a correction;
- an A/B task (it has a `mapping`) is a pair vote with the real sides: the first-shown
  output is the left item. The item of system A is at `[pairs] item_a`, of B at `item_b`.

Tested in tests/unit/test_interop_prodigy.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

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
    get_path,
    initial_mapping,
    label_text,
    text_at,
    when,
)
from .readers import read_jsonl

ANSWERS = ("accept", "reject", "ignore")
# The Unix seconds a time of the store can be (1970 to the end of year 9999); 1e20, -1e15 or
# NaN would otherwise overflow the conversion with a raw OverflowError / ValueError.
LATEST_EPOCH = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def _timestamp(raw: object, where: str) -> datetime | None:
    """`_timestamp` (Unix seconds, as Prodigy writes it) as the store keeps times."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if not 0 <= raw <= LATEST_EPOCH:  # NaN compares false: refused too
            raise InputError(
                f"_timestamp {raw!r} is not a time: Prodigy writes Unix seconds (1970 to 9999)",
                source=where,
                field="_timestamp",
            )
    return when(raw, where, "_timestamp")


def _rater(line: dict, mapping: Mapping, where: str) -> tuple[str, str | None]:
    session = line.get("_session_id")
    who = line.get("_annotator_id") or session
    if who is None or who == "":
        if "" not in mapping.raters:
            raise InputError(
                "the task names no annotator (_annotator_id or _session_id); Prodigy adds them in named "
                'sessions (?session=NAME): name the rater with [raters] "" = "name"',
                source=where,
                field="_annotator_id",
            )
        who = ""
    return mapping.rater(who, str(who), where), (str(session) if session else None)


def _labels_at(line: dict, path: str) -> list[str]:
    v = get_path(line, path)
    if v is None:
        return []
    return [label_text(x) for x in v] if isinstance(v, list) else [label_text(v)]


def _pair(line: dict, mapping: Mapping, answer: str, where: str) -> tuple[str, str, str] | None:
    """(left item, right item, choice) of an A/B task, or None when it was not decided."""
    pm = mapping.pair_map(where)
    m = line["mapping"]
    if not isinstance(m, dict) or set(m) - {"A", "B"} or set(m.values()) - {"accept", "reject"}:
        raise InputError(
            "'mapping' must say which of A and B was shown as accept / reject",
            source=where,
            field="mapping",
        )
    items = {
        "A": text_at(line, pm.item_a, "the item_id of output A", where, required=True),
        "B": text_at(line, pm.item_b, "the item_id of output B", where, required=True),
    }
    if isinstance(line.get("options"), list):  # the choice interface: options in the order shown
        # "" for an option that is not an object: it is not A or B either
        ids = [str(o.get("id")) if isinstance(o, dict) else "" for o in line["options"]]
        if len(ids) != 2 or set(ids) != {"A", "B"}:
            raise InputError(
                "an A/B choice task must list the options A and B", source=where, field="options"
            )
        picked = _labels_at(line, "accept")
        if answer != "accept" or len(picked) != 1:
            return None
        return items[ids[0]], items[ids[1]], "left" if picked[0] == ids[0] else "right"
    shown = {slot: sys for sys, slot in m.items()}  # compare: the `accept` output is shown first
    if answer not in ("accept", "reject"):
        return None
    return items[shown["accept"]], items[shown["reject"]], "left" if answer == "accept" else "right"


def parse(path: str | Path, rubric: Rubric, mapping: Mapping, known: set[str]) -> ToolImport:
    p = Path(path)
    out = ToolImport(str(p))
    lines = []
    for n, line in read_jsonl(p):
        where = f"{p}:{n}"
        if not isinstance(line, dict):
            raise InputError("line is not a JSON object", source=where)
        answer = line.get("answer")
        if answer not in ANSWERS:
            raise InputError(
                f"answer '{answer}' is not accept, reject or ignore (is this `prodigy db-out` output?)",
                source=where,
                field="answer",
            )
        if answer == "ignore":
            out.skipped["ignored tasks"] += 1
            continue
        t = _timestamp(line.get("_timestamp"), where)
        lines.append(((t or datetime.min, n), where, line, answer, t))
    labelled = {mm.label for mm in mapping.metrics if mm.label is not None}
    versions: dict[tuple[str, str], list[ToolJudgement]] = {}
    for order, where, line, answer, t in sorted(lines, key=lambda x: x[0]):
        rater, session = _rater(line, mapping, where)
        if "mapping" in line:
            if mapping.pairs is None:
                raise InputError(
                    "an A/B task (it has a 'mapping') but the mapping file has no [pairs] (item_a, item_b)",
                    source=where,
                    field="mapping",
                )
            got = _pair(line, mapping, answer, where)
            if got is None:
                out.skipped["A/B tasks with no choice"] += 1
            else:
                pid = text_at(line, mapping.pairs.pair_id, "the pair_id", where)
                out.votes.append(
                    ToolVote(pid, got[0], got[1], rater, got[2], t, None, where, order)
                )
            continue
        label = line.get("label")
        if labelled and label is not None and label not in labelled and label not in mapping.ignore:
            raise InputError(
                f"label '{label}' is not in the mapping {mapping.path}; map it to a metric ([metrics.<key>] "
                f'from = "answer", label = "{label}") or list it in ignore',
                source=where,
                field="label",
            )
        answers = {}
        for mm in mapping.metrics:
            if mm.label is not None and line.get("label") != mm.label:
                continue
            if answer == "reject" and mm.source != "answer":
                continue
            if get_path(line, mm.source) is None:  # this task does not ask this metric's question
                continue
            labels = _labels_at(line, mm.source)
            # their answer (accept / reject) is a gate's when the kind has words for its values
            values = (
                {**mm.metric.spec.label_words, **mm.values} if mm.source == "answer" else mm.values
            )
            answers[mm.metric.key] = convert(mm.metric, labels, values, f"{where} '{mm.source}'")
        if not answers:
            out.skipped[
                "rejected tasks" if answer == "reject" else "tasks with no mapped answer"
            ] += 1
            continue
        item_id = text_at(line, mapping.item.get("item_id"), "the item_id", where, required=True)
        if item_id not in known:
            raise InputError(
                f"unknown item_id '{item_id}'; import the items first",
                source=where,
                field="item_id",
            )
        chain = versions.setdefault((item_id, rater), [])
        if chain and all(chain[-1].answers.get(k, v) == v for k, v in answers.items()):
            chain[-1].answers.update(
                answers
            )  # more metrics of the same judgement (binary tasks, one label each)
            j = chain[-1]
            j.reason, j.created_at, j.order = reason_of(rubric, j.answers), t or j.created_at, order
            continue
        merged = (
            {**chain[-1].answers, **answers} if chain else answers
        )  # a relabel keeps the other metrics
        chain.append(
            ToolJudgement(
                item_id, rater, merged, reason_of(rubric, merged), t, session, None, where, order
            )
        )
    for chain in versions.values():
        out.judgements.extend(chain)
    out.check_pair_items(known)
    return out


def survey(path: str | Path) -> Survey:
    p = Path(path)
    s = Survey("prodigy", str(p))
    for _n, line in read_jsonl(p):
        if not isinstance(line, dict):
            continue
        s.walk(
            {
                k: v
                for k, v in line.items()
                if not k.startswith("_") and k not in ("answer", "accept", "options")
            }
        )
        who = line.get("_annotator_id") or line.get("_session_id")
        if who:
            s.users[str(who)] += 1
        if "mapping" in line:
            s.seen("A/B", "pairwise")
            continue
        name = str(line.get("label") or "accept")
        if isinstance(line.get("options"), list):
            s.seen(name, "choice", _labels_at(line, "accept"))
        elif isinstance(line.get("field_id"), str):
            s.seen(name, "text")
            s.fields[name] = line["field_id"]
        elif line.get("label"):
            s.seen(name, "answer", [str(line.get("answer"))])
    return s


def initial(path: str | Path, rubric: Rubric) -> str:
    s = survey(path)
    pairs = {"item_a": "meta.item_a", "item_b": "meta.item_b"} if "A/B" in s.controls else None
    s.controls.pop("A/B", None)

    def source_lines(name: str) -> list[str]:
        """A task's `label` names the question; the answer sits in `answer`, `accept` or the text field."""
        kinds = s.controls[name].kinds
        field = (
            "accept"
            if "choice" in kinds
            else s.fields.get(name, "answer")
            if "text" in kinds
            else "answer"
        )
        return [f"from = {json.dumps(field)}"] + (
            [f"label = {json.dumps(name)}"] if name != "accept" else []
        )

    return initial_mapping(
        s, rubric, item_fields=("item_id",), pair_defaults=pairs, source_lines=source_lines
    )
