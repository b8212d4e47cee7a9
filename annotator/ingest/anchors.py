"""Anchor sets: JSON Lines, one anchor a line: the manifest fields of an item
plus "reference" {metric: value} and "rationale" {metric: text} (anchors/README.md).
Tested in tests/unit/test_hardening.py and tests/unit/test_security_inputs.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..domain.errors import InputError
from ..domain.rubric import Rubric, format_value, parse_value
from .manifest import ParsedItems, parse_manifest


@dataclass
class AnchorImport:
    name: str
    items: ParsedItems
    references: list[dict[str, Any]]
    rationales: list[dict[str, str]]


def parse_anchors(path: str | Path, rubric: Rubric, *, name: str | None = None) -> AnchorImport:
    p = Path(path)
    src = str(p)
    items = parse_manifest(p, extra_fields={"reference", "rationale"})
    refs: list[dict[str, Any]] = []
    rats: list[dict[str, str]] = []
    for extra in items.extra:
        line = extra["_line"]
        ref = extra.get("reference")
        if not isinstance(ref, dict):
            raise InputError(
                "an anchor needs a 'reference' object", source=src, line=line, field="reference"
            )
        rationale = extra.get("rationale") or {}
        if not isinstance(rationale, dict) or not all(
            isinstance(v, str) for v in rationale.values()
        ):
            raise InputError(
                "'rationale' must map metric keys to text", source=src, line=line, field="rationale"
            )
        typed: dict[str, Any] = {}
        for key, raw in ref.items():
            if not rubric.has(key):
                raise InputError(
                    f"reference names unknown metric '{key}'",
                    source=src,
                    line=line,
                    field=f"reference.{key}",
                )
            typed[key] = parse_value(rubric.metric(key), format_value(raw), source=src, line=line)
        for m in rubric.metrics:
            if m.spec.multi:
                typed.setdefault(m.key, ())
            elif m.judgeable and m.key not in typed:
                raise InputError(
                    f"reference has no answer for '{m.key}'",
                    source=src,
                    line=line,
                    field=f"reference.{m.key}",
                )
        refs.append(typed)
        rats.append(dict(rationale))
    return AnchorImport(
        name or p.parent.name if p.name == "anchors.jsonl" else name or p.stem, items, refs, rats
    )
