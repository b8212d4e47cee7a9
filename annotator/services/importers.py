"""Every import format by name: the one table the CLI and the app read.

Adding a format = one parser in `ingest/` + one `Importer` entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..domain.errors import InputError
from .study import Study


@dataclass(frozen=True)
class Importer:
    name: str
    what: str  # a line for --help and the app's menu
    run: Callable[..., str]  # (study, path, **options) -> a one-line summary
    options: tuple[str, ...] = ()  # keyword options it takes (e.g. "cases")
    in_package: bool = (
        False  # may run on a rater package (the rater's own answers, by display code)
    )


def _items(study: Study, path: Path) -> str:
    return f"imported {study.import_items(path)} items from {path}"


def _folder(study: Study, path: Path) -> str:
    return f"imported {study.import_folder(path)} items from {path}"


def _harness(study: Study, path: Path, cases: str | None = None) -> str:
    if not cases:
        raise InputError("`import harness` needs --cases CASES.jsonl", field="--cases")
    n, m = study.import_harness(path, cases)
    return f"imported {n} items and {m} judge scores from {path}"


def _ratings(study: Study, path: Path) -> str:
    return f"imported {study.import_ratings(path)} judgements from {path}"


def _judge(study: Study, path: Path) -> str:
    return f"imported {study.import_judge(path)} judge scores from {path}"


def _pairs(study: Study, path: Path) -> str:
    return f"imported {study.import_pairs(path)} pair votes from {path}"


def _judge_pairs(study: Study, path: Path) -> str:
    return f"imported {study.import_pairs(path, judges=True)} judge pair votes from {path}"


def _anchors(study: Study, path: Path, name: str | None = None) -> str:
    return f"imported {study.import_anchors(path, name)} anchors from {path}"


def _tool(tool: str) -> Callable[..., str]:
    """Label Studio, Potato, Prodigy: through a mapping file (services/interop.py)."""

    def run(
        study: Study,
        path: Path,
        map_path: str | None = None,
        media_root: str | None = None,
        init_map: bool = False,
    ) -> str:
        from .interop import import_tool

        return import_tool(
            study, tool, path, map_path=map_path, media_root=media_root, init_map=init_map
        )

    return run


_TOOL_OPTIONS = ("map_path", "media_root", "init_map")

IMPORTERS: dict[str, Importer] = {
    i.name: i
    for i in (
        Importer("items", "item manifest (JSON Lines)", _items),
        Importer("folder", "a folder: <case_id>/prompt.txt + one image per generator", _folder),
        Importer("harness", "vision-harness results (JSON) with --cases", _harness, ("cases",)),
        Importer("ratings", "ratings CSV: item_id,rater,metric,value", _ratings, in_package=True),
        Importer("judge", "judge scores CSV: item_id,judge,metric,value[,reason]", _judge),
        Importer(
            "pairs",
            "pair votes CSV: pair_id,item_left,item_right,rater,choice",
            _pairs,
            in_package=True,
        ),
        Importer("judge-pairs", "judge pair votes CSV (the judge's name as rater)", _judge_pairs),
        Importer(
            "anchors", "anchor set (JSON Lines with reference and rationale)", _anchors, ("name",)
        ),
        Importer(
            "label-studio",
            "Label Studio JSON export, with --map MAP.toml (--init-map writes one)",
            _tool("label-studio"),
            _TOOL_OPTIONS,
        ),
        Importer(
            "potato",
            "Potato annotation_output (folder or annotated_instances.jsonl), with --map MAP.toml",
            _tool("potato"),
            _TOOL_OPTIONS,
        ),
        Importer(
            "prodigy", "Prodigy db-out JSONL, with --map MAP.toml", _tool("prodigy"), _TOOL_OPTIONS
        ),
    )
}


def run_import(study: Study, kind: str, path: str | Path, **options: Any) -> str:
    """Run one import by name; returns its one-line summary."""
    imp = IMPORTERS.get(kind)
    if imp is None:
        raise InputError(
            f"unknown import '{kind}'; use one of {', '.join(IMPORTERS)}", field="kind"
        )
    if not imp.in_package:
        study.require_lead(f"importing {kind}")
    given = {k: v for k, v in options.items() if k in imp.options and v is not None}
    return imp.run(study, Path(path), **given)
