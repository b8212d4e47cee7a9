"""The vision-harness results list plus its cases file.

results JSON: a list (or {"results": [...]}) of {test_id, model_label, task_type,
artifact_paths, scores, reasons, run_params}; cases JSONL: the harness's TestCase
{id, task_type, prompt, criteria, image_inputs: {image_paths, mask_path}}.
Each result becomes one item (case = test_id, generator = model_label); its
`scores` and `reasons` become judge scores. The judge's name is
`run_params.judge_model` (or `run_params.judge`) when the run records one, else
"harness-judge".
Tested in tests/unit/test_cli.py and tests/unit/test_hardening.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..domain.errors import InputError
from ..domain.records import ItemSpec
from ..domain.rubric import Metric, Rubric, format_value
from ..domain.text import check_name
from .manifest import ImageResolver, ParsedItems, Spool
from .readers import parse_json, read_jsonl, read_text
from .tables import JudgeRow, parse_judge_value

DEFAULT_JUDGE = "harness-judge"


@dataclass
class HarnessImport:
    items: ParsedItems
    judge_rows: list[JudgeRow]


def _cases(path: Path, spool: Spool) -> dict[str, dict[str, Any]]:
    src = str(path)
    resolve = ImageResolver(path.parent, src, spool)
    out: dict[str, dict[str, Any]] = {}
    for n, d in read_jsonl(path):
        if not isinstance(d, dict) or not isinstance(d.get("id"), str) or not d["id"]:
            raise InputError("case needs a string 'id'", source=src, line=n, field="id")
        if not isinstance(d.get("prompt"), str):
            raise InputError("case needs a string 'prompt'", source=src, line=n, field="prompt")
        check_name(d["id"], "the case id", source=src, line=n, field="id")
        if d["id"] in out:
            raise InputError(f"duplicate case id '{d['id']}'", source=src, line=n, field="id")
        inputs = d.get("image_inputs") or {}
        if not isinstance(inputs, dict):
            raise InputError(
                "'image_inputs' must be an object", source=src, line=n, field="image_inputs"
            )
        paths = inputs.get("image_paths") or []
        if not isinstance(paths, list):
            raise InputError(
                "'image_paths' must be a list", source=src, line=n, field="image_inputs.image_paths"
            )
        encoded = [resolve(p, n, "image_inputs.image_paths") for p in paths]
        mask = inputs.get("mask_path")
        out[d["id"]] = {
            "prompt": d["prompt"],
            "criteria": d.get("criteria"),
            "task_type": d.get("task_type"),
            "inputs": encoded,
            "mask": resolve(mask, n, "image_inputs.mask_path") if mask else None,
            "names": [str(p) for p in paths],
            "mask_name": mask,
        }
    return out


def _criteria_text(c: Any) -> str | None:
    if c is None or isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(f"- {x}" for x in c)
    return json.dumps(c, ensure_ascii=False)


def _score_value(metric: Metric, raw: Any, src: str, line: int) -> Any:
    if isinstance(raw, bool):
        raw = "PASS" if raw else "FAIL"
    if isinstance(raw, list):
        raw = ";".join(map(str, raw))
    return parse_judge_value(metric, format_value(raw), src, line)


def parse_harness(
    results_path: str | Path, cases_path: str | Path, rubric: Rubric
) -> HarnessImport:
    rp, cp = Path(results_path), Path(cases_path)
    src = str(rp)
    data = parse_json(read_text(rp, src), src)
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise InputError("expected a list of results (or an object with 'results')", source=src)
    items = ParsedItems()
    cases = _cases(cp, items.spool)
    resolve = ImageResolver(rp.parent, src, items.spool)
    rows: list[JudgeRow] = []
    counts: dict[str, int] = {}
    for n, r in enumerate(results, start=1):
        where = f"results[{n - 1}]"
        if not isinstance(r, dict):
            raise InputError(f"{where} is not an object", source=src)
        for key in ("test_id", "model_label"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise InputError(f"{where}: missing '{key}'", source=src, field=key)
            check_name(r[key], f"{where}: '{key}'", source=src, field=key)
        case = cases.get(r["test_id"])
        if case is None:
            raise InputError(
                f"{where}: test_id '{r['test_id']}' is not in {cp}", source=src, field="test_id"
            )
        base = f"{r['test_id']}:{r['model_label']}"
        counts[base] = counts.get(base, 0) + 1
        item_id = base if counts[base] == 1 else f"{base}:{counts[base]}"
        paths = r.get("artifact_paths") or []
        if not isinstance(paths, list):
            raise InputError(
                f"{where}: 'artifact_paths' must be a list", source=src, field="artifact_paths"
            )
        outs = [resolve(p, n, "artifact_paths") for p in paths]
        for e in outs + case["inputs"] + ([case["mask"]] if case["mask"] else []):
            items.images[e.sha256] = e
        names = {e.sha256: str(p) for e, p in zip(outs, paths, strict=True)}
        names |= {e.sha256: nm for e, nm in zip(case["inputs"], case["names"], strict=True)}
        items.specs.append(
            ItemSpec(
                item_id=item_id,
                case_id=r["test_id"],
                prompt=case["prompt"],
                criteria=_criteria_text(case["criteria"]),
                generator=r["model_label"],
                outputs=tuple(e.sha256 for e in outs),
                inputs=tuple(e.sha256 for e in case["inputs"]),
                mask=case["mask"].sha256 if case["mask"] else None,
                task_type=r.get("task_type") or case["task_type"],
                source=src,
                source_names=names,
            )
        )
        params = r.get("run_params") or {}
        judge = (
            (params.get("judge_model") or params.get("judge") or DEFAULT_JUDGE)
            if isinstance(params, dict)
            else DEFAULT_JUDGE
        )
        judge = check_name(
            str(judge), f"{where}: the judge name", source=src, field="run_params.judge_model"
        )
        scores = r.get("scores") or {}
        reasons = r.get("reasons") or {}
        if not isinstance(scores, dict):
            raise InputError(f"{where}: 'scores' must be an object", source=src, field="scores")
        for key, raw in scores.items():
            if not rubric.has(key):
                raise InputError(
                    f"{where}: score '{key}' is not a metric of rubric '{rubric.id}'",
                    source=src,
                    field="scores",
                )
            reason = (
                reasons.get(key)
                if isinstance(reasons, dict)
                else (reasons if isinstance(reasons, str) else None)
            )
            if reason is not None and not isinstance(reason, str):
                raise InputError(
                    f"{where}: the reason for '{key}' must be text, not {type(reason).__name__}",
                    source=src,
                    field="reasons",
                )
            rows.append(
                JudgeRow(
                    item_id, str(judge), key, _score_value(rubric.metric(key), raw, src, n), reason
                )
            )
    return HarnessImport(items, rows)
