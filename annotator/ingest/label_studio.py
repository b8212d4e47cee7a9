"""Label Studio JSON exports in, through a mapping file (ingest/mapping.py).
(Over 500 lines on purpose: one peer format, read and checked against its documented shape in one
place.)

The format, as Label Studio documents it (https://labelstud.io/guide/task_format and
https://labelstud.io/guide/export#Label-Studio-JSON-format-of-annotated-tasks): a JSON
array of tasks, each with `data` (what was shown), `annotations` (each with `result[]`,
`completed_by` - a user id, `lead_time` - seconds, `was_cancelled` - skipped,
`created_at`/`updated_at`) and `predictions` (each with `model_version` and `result[]`).
A result names its control in `from_name` and holds, by `type`
(https://labelstud.io/tags/): `choices` {"choices": [...]}, `taxonomy` {"taxonomy":
[[path...], ...]}, `rating` {"rating": n}, `number` {"number": x}, `textarea` {"text":
[...]}, `pairwise` {"selected": "left"|"right"}.

What this importer decides:
- an annotation is one judgement by `completed_by`; cancelled ones are skipped and counted;
  one with no mapped result is skipped and counted too;
- several annotations by one user on one task are relabels: the later one (by
  `updated_at`, else `created_at`) supersedes the earlier; a task's annotation that differs
  from what the study already holds (an updated export imported again) supersedes it;
- a task is a pair task when the mapping's `[pairs] left` path is present in it;
- predictions are judge scores (judge = `model_version`, renamed through `[judges]`);
- a task whose item the study does not hold creates it from the `[item]` paths; its images
  are resolved under `--media-root` (default: the export's folder): `/data/local-files/?d=P`
  -> ROOT/P, `/data/upload/N/F` -> ROOT/upload/N/F, a URL -> ROOT/<its path> or
  ROOT/<its file name>, `data:` URLs decoded, anything else -> ROOT/<as given>.
  Nothing is downloaded: annotator works offline.

Tested in tests/unit/test_interop_label_studio.py, tests/unit/test_interop_real_data.py
and, against a running Label Studio, tests/peers/test_label_studio.py.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..domain.answers import reason_of
from ..domain.errors import InputError
from ..domain.rubric import Rubric
from .manifest import item_from_dict
from .mapping import (
    Mapping,
    MetricMap,
    Survey,
    ToolImport,
    ToolJudgement,
    ToolVote,
    add_empty_tag_sets,
    convert,
    get_path,
    initial_mapping,
    label_text,
    seconds_to_ms,
    text_at,
    when,
)
from .media import EncodedImage, encode_image
from .readers import parse_json, read_bytes, read_text
from .tables import CHOICES, JudgeRow

RESULT_KEYS = {
    "choices": "choices",
    "taxonomy": "taxonomy",
    "rating": "rating",
    "number": "number",
    "textarea": "text",
    "pairwise": "selected",
}
LOCAL_FILES = "/data/local-files"
# the key of a result's `meta` that carries our rater and answer time through Label Studio
# (`annotator export label-studio` writes it; Label Studio keeps a result's meta as it is)
META_KEY = "annotator"


def read_tasks(path: Path) -> list[Any]:
    src = str(path)
    data = parse_json(read_text(path, src, what="Label Studio export"), src)
    if isinstance(data, dict):  # a single task exported on its own
        data = [data]
    if not isinstance(data, list):
        raise InputError(
            "not a Label Studio JSON export (expected a list of tasks); export the project as JSON",
            source=src,
        )
    return data


def _task_where(src: str, task: Any, n: int) -> str:
    tid = task.get("id") if isinstance(task, dict) else None
    return f"{src} task {tid if tid is not None else f'#{n}'}"


def _check_task(task: Any, where: str) -> dict:
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise InputError(
            "not a Label Studio task (no 'data' object); export the project as JSON, not JSON_MIN "
            "or CSV",
            source=where,
        )
    return task


def _list(task: dict, key: str, where: str) -> list:
    v = task.get(key)
    if key == "annotations" and v is None:
        v = task.get("completions")  # exports of Label Studio before 1.0
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError(f"'{key}' must be a list", source=where, field=key)
    return v


# ---- results -> labels ------------------------------------------------------------------------


def _labels(r: dict, values: dict[str, str], where: str) -> list[str]:
    """Their label texts from one result, by the result's type."""
    kind = r.get("type")
    value = r.get("value")
    key = RESULT_KEYS.get(kind) if isinstance(kind, str) else None
    if key is None:
        raise InputError(
            f"control '{r.get('from_name')}' gives '{kind}' results; a metric takes choices, taxonomy, "
            "rating, number or textarea (list region controls in ignore)",
            source=where,
            field=r.get("from_name"),
        )
    if not isinstance(value, dict) or key not in value:
        raise InputError(
            f"a '{kind}' result of '{r.get('from_name')}' has no value.{key}",
            source=where,
            field=r.get("from_name"),
        )
    got = value[key]
    if kind in ("rating", "number"):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise InputError(
                f"value.{key} of '{r.get('from_name')}' is not a number",
                source=where,
                field=r.get("from_name"),
            )
        return [label_text(got)]
    if kind == "pairwise":
        return [str(got)]
    if isinstance(got, str):
        got = [got]
    if not isinstance(got, list):
        raise InputError(
            f"value.{key} of '{r.get('from_name')}' must be a list",
            source=where,
            field=r.get("from_name"),
        )
    out = []
    for g in got:
        if isinstance(g, list):  # nested choices and taxonomy: a path from the top choice down
            parts = [str(x) for x in g]
            joined = "/".join(
                parts
            )  # the mapping may name the whole path ("Online/UGC") or the leaf ("UGC")
            out.append(joined if joined in values or not parts else parts[-1])
        else:
            out.append(label_text(g))
    return out


def _group(results: Any, mapping: Mapping, extra: set[str], where: str) -> dict[str, dict]:
    """Results by control name, refusing unmapped controls and a control answered twice."""
    if not isinstance(results, list):
        raise InputError("'result' must be a list", source=where, field="result")
    sources = mapping.by_source()
    out: dict[str, dict] = {}
    for r in results:
        if not isinstance(r, dict):
            raise InputError("a result must be an object", source=where, field="result")
        name = r.get("from_name")
        if name in mapping.ignore:
            continue
        if name not in sources and name not in extra:
            raise InputError(
                f"control '{name}' ({r.get('type')}) is not in the mapping {mapping.path}; map it to a "
                f'metric ([metrics.<key>] from = "{name}") or list it in ignore',
                source=where,
                field="from_name",
            )
        if name in out:
            raise InputError(
                f"control '{name}' has two results in one annotation (a per-region control?); a "
                "judgement holds one answer per metric: list it in ignore",
                source=where,
                field=name,
            )
        out[name] = r
    return out


def _answers(
    grouped: dict[str, dict], mapping: Mapping, where: str, *, judge: bool = False
) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for name, r in grouped.items():
        for mm in mapping.by_source().get(name, []):
            answers[mm.metric.key] = _value(mm, r, where, judge)
    return answers


def _value(mm: MetricMap, r: dict, where: str, judge: bool) -> Any:
    labels = _labels(r, mm.values, f"{where} control '{mm.source}'")
    return convert(mm.metric, labels, mm.values, f"{where} control '{mm.source}'", judge=judge)


def _choice(grouped: dict[str, dict], mapping: Mapping, where: str) -> str | None:
    """A pair vote from a pairwise result (left/right) or a tie choice (both/neither)."""
    pm = mapping.pair_map(where)
    got = []
    for name in (pm.source, pm.tie_source):
        if name and name in grouped:
            for lab in _labels(grouped[name], pm.values, where):
                ch = pm.values.get(lab, lab)
                if ch not in CHOICES:
                    raise InputError(
                        f"'{lab}' of '{name}' is not a pair choice; map it to one of {', '.join(CHOICES)} "
                        "in [pairs.values]",
                        source=where,
                        field=name,
                    )
                got.append(ch)
    if len(got) > 1:
        raise InputError(
            f"one annotation gives {len(got)} pair choices ({', '.join(got)}); keep one",
            source=where,
        )
    return got[0] if got else None


# ---- the import ------------------------------------------------------------------------------


class MediaResolver:
    """Label Studio's image references -> files under `root` (never outside it)."""

    def __init__(self, root: Path, source: str) -> None:
        self.root = root.resolve()
        self.source = source
        self.cache: dict[str, EncodedImage] = {}
        self.where = source

    def candidates(self, ref: str) -> list[str]:
        u = urlsplit(ref)
        if u.path.rstrip("/") == LOCAL_FILES or u.path.startswith(LOCAL_FILES + "/"):
            d = parse_qs(u.query).get("d")
            return [d[0]] if d else []
        if u.path.startswith("/data/upload/"):
            return [u.path.removeprefix("/data/")]
        if (
            u.scheme and u.scheme != "file" and len(u.scheme) > 1
        ):  # http(s), s3, gs, azure: offline, so look locally
            path = unquote(u.path).lstrip("/")
            return [p for p in (path, path.rsplit("/", 1)[-1]) if p]
        return [unquote(u.path) if u.scheme == "file" else ref]

    def __call__(self, ref: Any, _line: Any, fld: str) -> EncodedImage:
        """The manifest reader's resolver signature; errors name the task being read (`self.where`)."""
        where = self.where
        if not isinstance(ref, str) or not ref.strip():
            raise InputError(
                "an image reference must be a non-empty string", source=where, field=fld
            )
        if ref in self.cache:
            return self.cache[ref]
        if ref.startswith("data:"):
            head, _, payload = ref.partition(",")
            try:
                data = (
                    base64.b64decode(payload, validate=True)
                    if head.endswith(";base64")
                    else unquote(payload).encode()
                )
            except (binascii.Error, ValueError):
                raise InputError(
                    "a data: URL image is not valid base64", source=where, field=fld
                ) from None
            enc = encode_image(data, source=f"{where} (data URL)", field=fld)
        else:
            looked = []
            for rel in self.candidates(ref):
                if "\0" in rel:  # %00 in a ?d= path: no file name holds it
                    raise InputError(
                        f"image '{ref[:120]}' names a path with a NUL byte (%00); fix the reference",
                        source=where,
                        field=fld,
                    )
                p = (self.root / rel).resolve()
                if not p.is_relative_to(self.root):
                    raise InputError(
                        f"image '{ref[:120]}' points outside --media-root {self.root}; copy it under it",
                        source=where,
                        field=fld,
                    )
                looked.append(str(p))
                if p.is_file():
                    data = read_bytes(p, where, what=f"image '{rel}'", field=fld)
                    enc = encode_image(data, source=f"{where} ({rel})", field=fld)
                    break
            else:
                raise InputError(
                    f"image '{ref[:120]}' not found under --media-root {self.root} (looked for "
                    f"{' and '.join(looked) or 'no file: the reference names none'}); copy the file "
                    "there or point --media-root at the folder that holds it",
                    source=where,
                    field=fld,
                )
        self.cache[ref] = enc
        return enc


NEW_ITEM = ("item_id", "case_id", "prompt", "generator")


def _require(
    task: dict, mapping: Mapping, where: str, fields: tuple[str, ...], item_id: str | None = None
) -> None:
    """Every field of `fields` the task gives no value for, named in one line (not one a run)."""
    need = [f for f in fields if get_path(task, mapping.item.get(f) or "\0") in (None, "")]
    if not need:
        return
    unmapped = [f for f in need if f not in mapping.item]
    what = f"item '{item_id}' is not in the study and the task" if item_id else "the task"
    raise InputError(
        f"{what} gives no {', '.join(need)}"
        + (f" (the mapping's [item] names no path for {', '.join(unmapped)})" if unmapped else "")
        + "; map where the tasks hold each in [item] (--init-map writes them all), or import the "
        "items first",
        source=where,
        field=f"item.{need[0]}",
    )


def _item_dict(task: dict, mapping: Mapping, item_id: str, where: str) -> dict[str, Any]:
    """The manifest line (5.2) the mapping's [item] paths make of a task, for a new item."""
    _require(task, mapping, where, ("case_id", "prompt", "generator"), item_id)
    d: dict[str, Any] = {"item_id": item_id}
    for fld in (
        "case_id",
        "prompt",
        "criteria",
        "generator",
        "text",
        "slice",
        "seed",
        "task_type",
        "mask",
    ):
        path = mapping.item.get(fld)
        v = get_path(task, path) if path is not None else None
        # a project's tasks share one set of data keys: "" is how a task says it has no criteria / text / mask
        if v is not None and not (v == "" and fld in ("criteria", "text", "mask")):
            d[fld] = v
    for fld in ("case_id", "generator"):
        d[fld] = text_at(task, mapping.item[fld], f"the {fld}", where)
    for fld in ("images", "inputs"):
        paths = mapping.item.get(fld, [])
        refs: list[Any] = []
        for p in paths if isinstance(paths, list) else [paths]:
            v = get_path(task, p)
            refs.extend(v if isinstance(v, list) else [] if v in (None, "") else [v])
        d[fld] = refs
    return d


def parse(
    path: str | Path,
    rubric: Rubric,
    mapping: Mapping,
    known: set[str],
    *,
    media_root: Path | None = None,
) -> ToolImport:
    """Read every task; validate everything; nothing is written."""
    p = Path(path)
    src = str(p)
    out = ToolImport(src)
    resolve = MediaResolver(media_root if media_root is not None else p.parent, src)
    created: dict[str, str] = {}
    pm = mapping.pairs
    pair_controls = {n for n in ((pm.source, pm.tie_source) if pm else ()) if n}
    judged: dict[tuple[str, str, str], str] = {}
    for n, raw in enumerate(read_tasks(p), start=1):
        where = _task_where(src, raw, n)
        task = _check_task(raw, where)
        if pm is not None and pm.left and get_path(task, pm.left) is not None:
            _pair_task(task, mapping, where, out)
            continue
        if get_path(task, mapping.item.get("item_id") or "\0") in (None, ""):
            _require(task, mapping, where, NEW_ITEM)  # with the others it lacks, in one line
        item_id = text_at(task, mapping.item.get("item_id"), "the item_id", where, required=True)
        if item_id not in known and item_id not in created:
            d = _item_dict(task, mapping, item_id, where)
            resolve.where = where
            out.items.specs.append(item_from_dict(d, None, where, resolve, out.items))
            created[item_id] = where
        for i, ann in enumerate(_list(task, "annotations", where)):
            aw = f"{where} annotation {ann.get('id', i + 1) if isinstance(ann, dict) else i + 1}"
            meta = _annotation(ann, mapping, aw, out)
            if meta is None:
                continue
            grouped = _group(ann.get("result"), mapping, set(), aw)
            answers = _answers(grouped, mapping, aw)
            if not answers:
                out.skipped["annotations with no mapped result"] += 1
                continue
            # not in an annotation our exporter wrote: it writes an empty set as such, and a
            # missing control is a judgement that skipped the metric
            if not _our_meta(ann.get("result"), aw):
                add_empty_tag_sets(mapping.metrics, answers, grouped, aw)
            rater, created_at, time_ms, order = meta
            out.judgements.append(
                ToolJudgement(
                    item_id,
                    rater,
                    answers,
                    reason_of(rubric, answers),
                    created_at,
                    None,
                    time_ms,
                    aw,
                    order,
                )
            )
        for i, pred in enumerate(_list(task, "predictions", where)):
            if _prediction_id(pred, out):
                continue
            pw = f"{where} prediction {i + 1}"
            judge = _judge(pred, mapping, pw)
            grouped = _group(pred.get("result"), mapping, pair_controls, pw)
            for key, value in _answers(grouped, mapping, pw, judge=True).items():
                if (item_id, judge, key) in judged:
                    raise InputError(
                        f"judge '{judge}' scored '{key}' of '{item_id}' twice (first in "
                        f"{judged[(item_id, judge, key)]}); name the runs apart in [judges]",
                        source=pw,
                    )
                judged[(item_id, judge, key)] = pw
                out.judge_rows.append(JudgeRow(item_id, judge, key, value, None))
    out.check_pair_items(
        known | set(created), "no task of this file makes it either: import the item tasks first"
    )
    return out


def _annotation(
    ann: Any, mapping: Mapping, where: str, out: ToolImport
) -> tuple[str, datetime | None, int | None, tuple] | None:
    """(rater, time, lead time in ms, order) of an annotation to import; None when it is skipped."""
    if not isinstance(ann, dict):
        raise InputError("an annotation must be an object", source=where)
    if ann.get("was_cancelled"):
        out.skipped["cancelled annotations"] += 1
        return None
    ours = _our_meta(ann.get("result"), where)
    user = ann.get("completed_by")
    email = None
    if isinstance(user, dict):  # a snapshot export expands the user: {"id": 10, "email": ...}
        email = user.get("email")
        user = user.get("id")
    if ours.get("rater") is not None:
        # an annotation written by `annotator export label-studio`: Label Studio credits it to
        # whoever imported it, our rater and time ride in its results' meta
        rater = mapping.rater(ours["rater"], str(ours["rater"]), where)
        t = when(ours.get("created_at"), where, "meta.annotator.created_at")
        made = when(ann.get("created_at"), where, "created_at")
        changed = when(ann.get("updated_at"), where, "updated_at")
        if made and changed and (changed - made).total_seconds() > 1:
            t = changed  # relabelled in Label Studio after the import: its time, not ours
    else:
        if user is None or isinstance(user, (bool, list, dict)) or user == "":
            raise InputError(
                "annotation has no 'completed_by' (the user id of who made it); every judgement "
                "needs its rater",
                source=where,
                field="completed_by",
            )
        key = user if str(user) in mapping.raters or not email else email
        rater = mapping.rater(key, f"ls-user-{user}", where)
        # the time the answer took its final form: a relabelled annotation keeps its first created_at
        t = when(ann.get("updated_at") or ann.get("created_at"), where, "updated_at")
    order = (t or datetime.min, str(ann.get("id", "")).zfill(12))
    return rater, t, seconds_to_ms(ann.get("lead_time"), where), order


def _our_meta(results: Any, where: str) -> dict[str, Any]:
    """The rater and time our exporter put in each result's meta (all results agree), or {}."""
    found: list[dict] = []
    for r in results if isinstance(results, list) else []:
        m = r.get("meta") if isinstance(r, dict) else None
        if isinstance(m, dict) and isinstance(m.get(META_KEY), dict):
            found.append(m[META_KEY])
    raters = {str(m.get("rater")) for m in found}
    if len(raters) > 1:
        raise InputError(
            f"the results of one annotation name {len(raters)} raters in meta.{META_KEY}.rater "
            f"({', '.join(sorted(raters))}); an annotation is one rater's",
            source=where,
            field=f"meta.{META_KEY}.rater",
        )
    return found[0] if found else {}


PREDICTION_IDS = (
    "predictions given as ids (export a snapshot with predictions expanded for judge scores)"
)


def _prediction_id(pred: Any, out: ToolImport) -> bool:
    """Label Studio's default export (its Export button) lists a task's predictions by id only:
    no judge and no value to import, so each is counted as skipped and the annotations land."""
    if isinstance(pred, int) and not isinstance(pred, bool):
        out.skipped[PREDICTION_IDS] += 1
        return True
    return False


def _judge(pred: Any, mapping: Mapping, where: str) -> str:
    if not isinstance(pred, dict):
        raise InputError("a prediction must be an object", source=where)
    mv = pred.get("model_version")
    if mv is None or mv == "":
        if "" not in mapping.judges:
            raise InputError(
                'prediction has no model_version, so no judge name; add [judges] "" = "<name>" to '
                "the mapping",
                source=where,
                field="model_version",
            )
        mv = ""
    return mapping.judge(mv, where)


def _pair_task(task: dict, mapping: Mapping, where: str, out: ToolImport) -> None:
    pm = mapping.pair_map(where)
    left = text_at(task, pm.left, "the left item_id", where, required=True)
    right = text_at(task, pm.right, "the right item_id", where, required=True)
    if left == right:
        raise InputError("the left and right item are the same item", source=where, field=pm.right)
    pair_id = text_at(task, pm.pair_id, "the pair_id", where)
    extra = {n for n in (pm.source, pm.tie_source) if n}
    for i, ann in enumerate(_list(task, "annotations", where)):
        aw = f"{where} annotation {ann.get('id', i + 1) if isinstance(ann, dict) else i + 1}"
        meta = _annotation(ann, mapping, aw, out)
        if meta is None:
            continue
        grouped = _group(ann.get("result"), mapping, extra, aw)
        stray = sorted(set(grouped) - extra)
        if stray:
            raise InputError(
                f"control '{stray[0]}' answers a metric in a pair task; list it in ignore",
                source=aw,
            )
        choice = _choice(grouped, mapping, aw)
        if choice is None:
            out.skipped["annotations with no mapped result"] += 1
            continue
        rater, t, ms, order = meta
        out.votes.append(ToolVote(pair_id, left, right, rater, choice, t, ms, aw, order))
    for i, pred in enumerate(_list(task, "predictions", where)):
        if _prediction_id(pred, out):
            continue
        pw = f"{where} prediction {i + 1}"
        judge = _judge(pred, mapping, pw)
        choice = _choice(_group(pred.get("result"), mapping, extra, pw), mapping, pw)
        if choice is not None:
            t = when(pred.get("created_at"), pw)
            out.votes.append(
                ToolVote(pair_id, left, right, judge, choice, t, None, pw, (), is_judge=True)
            )


# ---- a starting mapping ------------------------------------------------------------------------


def survey(path: str | Path) -> Survey:
    p = Path(path)
    s = Survey("label-studio", str(p))
    for n, raw in enumerate(read_tasks(p), start=1):
        task = _check_task(raw, _task_where(str(p), raw, n))
        s.walk({k: task[k] for k in ("data", "meta") if isinstance(task.get(k), dict)})
        for key in ("annotations", "predictions"):
            for a in _list(task, key, str(p)):
                if not isinstance(a, dict):
                    continue
                if key == "annotations" and not a.get("was_cancelled"):
                    user = a.get("completed_by")
                    user = user.get("id") if isinstance(user, dict) else user
                    if user is not None:
                        s.users[str(user)] += 1
                if key == "predictions":
                    s.models[str(a.get("model_version", ""))] += 1
                for r in a.get("result") or []:
                    if isinstance(r, dict) and r.get("from_name"):
                        try:
                            labels = _labels(r, {}, str(p))
                        except InputError:
                            labels = []
                        s.seen(str(r["from_name"]), str(r.get("type")), labels)
    return s


def initial(path: str | Path, rubric: Rubric) -> str:
    return initial_mapping(survey(path), rubric)
