"""Every import format by name, bound to the code that runs it: the table the CLI reads.

Adding a format = one parser in `ingest/`, one `ImportKind` in `import_kinds.py` (name, help
line, options, what reads it: the CLI reads it) and its run function here. When this module is
imported it checks the two tables against each other: the same names, each run function's
keywords exactly the format's options, each `Study.import_*` method a format names present (a
format read through a mapping needs its `ingest/` module instead: services/interop.py).
Tested in tests/unit/test_import_kinds.py and tests/unit/test_cli.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..domain.errors import InputError
from ..domain.text import counted
from .import_kinds import KINDS, MAPPING, ImportKind
from .study import Study


@dataclass(frozen=True)
class Importer:
    kind: ImportKind  # its name, help line, options and package rule: import_kinds.KINDS
    run: Callable[..., str]  # (study, path, **options) -> a one-line summary

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def what(self) -> str:
        return self.kind.what

    @property
    def options(self) -> tuple[str, ...]:
        return self.kind.options

    @property
    def in_package(self) -> bool:
        return self.kind.in_package


def _added(n: int, what: str, path: Path) -> str:
    """The one line of an import: what it added (`what`: the singular noun), or that it added
    nothing."""
    if n == 0:
        return f"nothing new in {path}: the study holds every one of its {what}s already"
    return f"imported {counted(n, what)} from {path}"


def _items(study: Study, path: Path) -> str:
    return _added(study.import_items(path), "item", path)


def _folder(study: Study, path: Path) -> str:
    return _added(study.import_folder(path), "item", path)


def _harness(study: Study, path: Path, cases: str | None = None) -> str:
    if not cases:
        raise InputError("`import harness` needs --cases CASES.jsonl", field="--cases")
    n, m = study.import_harness(path, cases)
    return f"imported {counted(n, 'item')} and {counted(m, 'judge score')} from {path}"


def _ratings(study: Study, path: Path) -> str:
    return f"imported {counted(study.import_ratings(path), 'judgement')} from {path}"


def _judge(study: Study, path: Path, replace: bool = False) -> str:
    versions: dict[str, str] = {}
    n = study.import_judge(path, replace=replace, versions=versions)
    if not n:
        return f"nothing new in {path}: the study holds these judge scores already"
    if not replace:
        return f"imported {counted(n, 'judge score')} from {path}"
    named = ", ".join(f"{j}@{v}" for j, v in sorted(versions.items()))
    return (
        f"imported {counted(n, 'judge score')} from {path} as {named}: the figures read these now, the "
        "earlier scores stay as each judge's older version"
    )


def _pairs(study: Study, path: Path, anonymous: bool = False) -> str:
    n = study.import_pairs(path, anonymous=anonymous)
    return f"imported {counted(n, 'pair vote')} from {path}" + (
        ", each its own anonymous rater" if anonymous else ""
    )


def _judge_pairs(study: Study, path: Path) -> str:
    return (
        f"imported {counted(study.import_pairs(path, judges=True), 'judge pair vote')} from {path}"
    )


def _anchors(study: Study, path: Path, name: str | None = None) -> str:
    return _added(study.import_anchors(path, name), "anchor", path)


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


_RUNS: dict[str, Callable[..., str]] = {
    "items": _items,
    "folder": _folder,
    "harness": _harness,
    "ratings": _ratings,
    "judge": _judge,
    "pairs": _pairs,
    "judge-pairs": _judge_pairs,
    "anchors": _anchors,
    "label-studio": _tool("label-studio"),
    "potato": _tool("potato"),
    "prodigy": _tool("prodigy"),
}


def check_tables(kinds: Mapping[str, ImportKind], runs: Mapping[str, Callable[..., str]]) -> None:
    """Refuse import tables that disagree: a format named in one table only, a run function
    whose keywords are not the format's options (a CLI flag it would never receive, or a
    keyword the CLI never passes), or a reader the study lacks. A bug, found at import."""
    faults = [f"{n}: in one table only" for n in sorted(set(runs) ^ set(kinds))]
    for name in sorted(set(runs) & set(kinds)):
        kind = kinds[name]
        keywords = list(inspect.signature(runs[name]).parameters)[2:]  # after (study, path)
        if set(keywords) != set(kind.options):
            faults.append(
                f"{name}: run takes {sorted(keywords)}, the table says {sorted(kind.options)}"
            )
        if kind.reader != MAPPING and not (
            kind.reader.startswith("import_") and callable(getattr(Study, kind.reader, None))
        ):
            faults.append(f"{name}: no Study.{kind.reader or '<reader>'} to read it")
    if faults:
        raise RuntimeError("import tables differ: " + "; ".join(faults))


check_tables(KINDS, _RUNS)

IMPORTERS: dict[str, Importer] = {name: Importer(KINDS[name], _RUNS[name]) for name in KINDS}


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
