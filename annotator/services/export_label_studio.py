"""Label Studio tasks of a study: item tasks and pair tasks, a labeling config for each, the
images beside them, and the mapping file that imports the tasks back (ingest/label_studio.py);
with annotations, the raters' answers and the judges' latest scores as predictions.
Tested in tests/unit/test_interop_exports.py and tests/peers/test_label_studio.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_files, atomic_write_bytes, atomic_write_text
from ..domain.errors import InputError
from ..ingest.label_studio import META_KEY as LS_META
from ..ingest.mapping import render_mapping
from ..reports import label_studio_config as lsc
from ..store import rows as R
from ..store.exports import (
    ItemRecord,
    item_records,
    judgement_records,
    pair_records,
    vote_records,
)
from .exports import is_partial, live_items
from .frames import latest_versions
from .study import Study


def _media_ref(study: Study, sha: str, media_dir: Path, written: set[str]) -> str:
    """Images go beside the JSON as `<stem>-media/<sha256>.png` (already stripped of metadata,
    named by content) and are referenced the way Label Studio serves local files."""
    if sha not in written:
        atomic_write_bytes(media_dir / f"{sha}.png", study.media.read(sha))
        written.add(sha)
    return f"/data/local-files/?d={media_dir.name}/{sha}.png"


def _time(t: datetime) -> str:
    return t.isoformat() + "Z"


def export_label_studio(study: Study, out: Path, *, with_annotations: bool = False) -> list[Path]:
    """Tasks for Label Studio: `out` (item tasks), `<stem>-pairs.json` (pair tasks, when there are
    pairs), a labeling config for each (`<stem>.config.xml`, `<stem>-pairs.config.xml`), the images
    in `<stem>-media/`, and `<stem>.map.toml`: the mapping that imports the tasks back. Every file
    lands, or none (a full disk leaves no partial set: base/atomic.atomic_files)."""
    study.require_lead("an export")
    if out.suffix.lower() != ".json":
        raise InputError("a Label Studio export is a .json file", source=str(out), field="--out")
    with atomic_files(out.parent) as tmp:
        made = _label_studio_files(study, tmp / out.name, with_annotations=with_annotations)
        return [out.parent / p.relative_to(tmp) for p in made]


def _label_studio_files(study: Study, out: Path, *, with_annotations: bool) -> list[Path]:
    rubric = study.rubric
    items = live_items(study)
    by_pk = {r.pk: r for r in item_records(study.db)}
    judgements = judgement_records(study.db, rubric.version) if with_annotations else []
    votes = vote_records(study.db)
    media_dir = out.parent / f"{out.stem}-media"
    written: set[str] = set()
    ann_id = iter(range(1, 10**9))

    def annotation(rater: str, result: list, t: datetime, ms: int | None) -> dict[str, Any]:
        """No `completed_by`: Label Studio takes only the id or email of one of its own users
        (ours would be refused, or credited to whoever holds that id); it credits the annotation
        to the user who imports it, and our rater and time ride in each result's `meta`, which
        Label Studio keeps (it resets `created_at` on import)."""
        meta = {LS_META: {"rater": rater, "created_at": _time(t)}}
        a = {
            "id": next(ann_id),
            "result": [{**r, "meta": meta} for r in result],
            "was_cancelled": False,
            "ground_truth": False,
            "created_at": _time(t),
            "updated_at": _time(t),
        }
        if ms is not None:
            a["lead_time"] = ms / 1000
        return a

    by_item: dict[int, list] = {}
    for j in judgements:
        by_item.setdefault(j.item_pk, []).append(j)
    scores: dict[int, dict[str, list]] = {}
    all_scores = R.judge_scores(study.db)
    latest = latest_versions(all_scores)  # one prediction per judge: the version the report reads
    for sc in all_scores:
        if latest[sc.judge] == sc.version:
            scores.setdefault(sc.item_pk, {}).setdefault(sc.judge, []).append(sc)
    multi = any(len(r.outputs) > 1 for r in items.values())
    has = {
        k: any(getattr(r, k) for r in items.values())
        for k in ("outputs", "text", "criteria", "inputs", "mask")
    }
    tasks: list[dict[str, Any]] = []
    # by item_id, not by row number: rows are numbered in a seeded random order per study
    for r in sorted(items.values(), key=lambda r: r.item_id):
        data: dict[str, Any] = {"prompt": r.prompt}
        if has["criteria"]:
            data["criteria"] = r.criteria or ""
        refs = [_media_ref(study, sha, media_dir, written) for sha in r.outputs]
        if multi:
            data["images"] = refs
        elif has["outputs"]:
            data["image"] = refs[0] if refs else ""
        if has["text"]:
            data["text"] = r.text or ""
        if has["inputs"]:
            data["inputs"] = [_media_ref(study, sha, media_dir, written) for sha in r.inputs]
        if has["mask"]:
            data["mask"] = _media_ref(study, r.mask, media_dir, written) if r.mask else ""
        # who made it stays out of `data` (what a rater sees): the lead's fields ride in `meta`
        meta = {
            "kind": "item",
            "item_id": r.item_id,
            "case_id": r.case_id,
            "generator": r.generator,
        }
        meta |= {
            k: getattr(r, k) for k in ("slice", "seed", "task_type") if getattr(r, k) is not None
        }
        task: dict[str, Any] = {"id": len(tasks) + 1, "data": data, "meta": {"annotator": meta}}
        task["annotations"] = [
            annotation(
                j.rater,
                [
                    lsc.metric_result(rubric.metric(k), v)
                    for k, v in j.answers.items()
                    if rubric.has(k)
                ],
                j.created_at,
                j.time_ms,
            )
            for j in by_item.get(r.pk, [])
        ]
        task["predictions"] = [
            {
                "model_version": judge,
                "result": [
                    lsc.metric_result(rubric.metric(sc.metric), sc.value)
                    for sc in scs
                    if rubric.has(sc.metric)
                ],
            }
            for judge, scs in scores.get(r.pk, {}).items()
        ]
        tasks.append(task)
    pair_tasks = _pair_tasks(
        study, items, by_pk, votes, with_annotations, media_dir, written, annotation
    )
    paths = [_write_tasks(out, tasks)]
    images = "images" if multi else "image" if has["outputs"] else None
    paths.append(
        atomic_write_text(
            out.with_name(f"{out.stem}.config.xml"),
            lsc.item_config(
                rubric,
                images=images,
                text=has["text"],
                criteria=has["criteria"],
                inputs=has["inputs"],
                mask=has["mask"],
            ),
        )
    )
    if pair_tasks:
        paths.append(_write_tasks(out.with_name(f"{out.stem}-pairs.json"), pair_tasks))
        paths.append(
            atomic_write_text(
                out.with_name(f"{out.stem}-pairs.config.xml"),
                lsc.pair_config(study.setting("pair_question"), images=has["outputs"]),
            )
        )
    item_paths: dict[str, str | list[str]] = {
        "item_id": "meta.annotator.item_id",
        "case_id": "meta.annotator.case_id",
        "prompt": "data.prompt",
        "generator": "meta.annotator.generator",
        "slice": "meta.annotator.slice",
        "seed": "meta.annotator.seed",
        "task_type": "meta.annotator.task_type",
    }
    if has["criteria"]:
        item_paths["criteria"] = "data.criteria"
    if images:
        item_paths["images"] = [f"data.{images}"]
    for k, path in (("text", "data.text"), ("inputs", "data.inputs"), ("mask", "data.mask")):
        if has[k]:
            item_paths[k] = [path] if k == "inputs" else path
    pairs = (
        {
            "from": lsc.PAIR_CONTROL,
            "tie_from": lsc.TIE_CONTROL,
            "left": "meta.annotator.item_left",
            "right": "meta.annotator.item_right",
            "pair_id": "meta.annotator.pair_id",
        }
        if pair_tasks
        else None
    )
    paths.append(
        atomic_write_text(
            out.with_name(f"{out.stem}.map.toml"),
            render_mapping(
                "label-studio",
                rubric,
                item=item_paths,
                metrics={m.key: m.key for m in rubric.metrics},
                pairs=pairs,
                partial=any(is_partial(rubric, j) for j in judgements),
                note=f"Label Studio tasks exported from study '{study.name}'",
            ),
        )
    )
    return paths + sorted(media_dir / f"{sha}.png" for sha in written)


def _pair_tasks(
    study: Study,
    items: dict[int, ItemRecord],
    by_pk: dict[int, ItemRecord],
    votes: list,
    with_ann: bool,
    media_dir: Path,
    written: set[str],
    annotation: Callable,
) -> list[dict[str, Any]]:
    """One task per pair and the sides it was shown in: votes keep the sides their rater saw."""
    groups: dict[tuple[str, int, int], list] = {}
    for pid, a, b in pair_records(study.db):
        if a in items and b in items:
            groups.setdefault((pid, a, b), [])
    for v in votes:
        if v.item_left in items and v.item_right in items:
            key = (v.pair_id, v.item_left, v.item_right)
            if (
                key not in groups
                and (v.pair_id, v.item_right, v.item_left) in groups
                and not groups[(v.pair_id, v.item_right, v.item_left)]
            ):
                del groups[
                    (v.pair_id, v.item_right, v.item_left)
                ]  # no vote saw that side: one task is enough
            groups.setdefault(key, []).append(v)
    tasks: list[dict[str, Any]] = []
    # by name and sides, not by row number (rows are numbered in a seeded random order per study)
    order = sorted(groups, key=lambda k: (k[0], by_pk[k[1]].item_id, by_pk[k[2]].item_id))
    for (pid, a, b), vs in ((k, groups[k]) for k in order):
        left, right = by_pk[a], by_pk[b]
        data: dict[str, Any] = {"prompt": left.prompt}
        if any(r.outputs for r in items.values()):
            data["left_image"] = (
                _media_ref(study, left.outputs[0], media_dir, written) if left.outputs else ""
            )
            data["right_image"] = (
                _media_ref(study, right.outputs[0], media_dir, written) if right.outputs else ""
            )
        else:
            data["left_text"], data["right_text"] = left.text or "", right.text or ""
        meta = {
            "kind": "pair",
            "pair_id": pid,
            "item_left": left.item_id,
            "item_right": right.item_id,
        }
        tasks.append(
            {
                "id": len(tasks) + 1,
                "data": data,
                "meta": {"annotator": meta},
                "annotations": [
                    annotation(v.rater, [lsc.pair_result(v.choice)], v.created_at, v.time_ms)
                    for v in vs
                    if not v.is_judge and with_ann
                ],
                "predictions": [
                    {
                        "model_version": v.rater,
                        "created_at": _time(v.created_at),
                        "result": [lsc.pair_result(v.choice)],
                    }
                    for v in vs
                    if v.is_judge
                ],
            }
        )
    return tasks


def _write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    # one task a line: a valid JSON array that diffs and greps by task
    text = (
        "[\n"
        + ",\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tasks)
        + "\n]\n"
    )
    return atomic_write_text(path, text)
