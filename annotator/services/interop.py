"""Imports from the tools teams already run (Label Studio, Potato, Prodigy), through a
mapping file: each lands whole or not at all (items, answers, relabels, judge scores and
pair votes in one transaction), or, with `--init-map`, writes a starting mapping instead.
Tested in tests/unit/test_interop_label_studio.py, test_interop_potato.py and
test_interop_prodigy.py; the table it reads in tests/unit/test_import_kinds.py."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from ..base.atomic import atomic_write_text
from ..domain import time_spent
from ..domain.errors import InputError
from ..ingest.mapping import ToolImport, ToolJudgement, ToolVote, load_mapping
from ..store import corrections, imports
from .import_kinds import TOOLS
from .study import Study

# Each tool of the import table read through a mapping, by its `ingest/` module of the same
# name (label-studio -> ingest/label_studio.py): a tool added to the table without its module
# fails here, at import.
READERS: dict[str, ModuleType] = {
    t: importlib.import_module(f"..ingest.{t.replace('-', '_')}", __package__) for t in TOOLS
}


def write_initial_mapping(study: Study, tool: str, path: str | Path, map_path: str | Path) -> str:
    """A starting mapping from what the export holds and the study's rubric; never over a file."""
    out = Path(map_path)
    if out.exists():
        raise InputError(
            "the mapping file already exists; --init-map writes a new one: remove it or give another "
            "--map path",
            source=str(out),
            field="--map",
        )
    atomic_write_text(out, READERS[tool].initial(path, study.rubric))
    return f"wrote a starting mapping to {out}: check every line and each TODO, then import with --map {out}"


def import_tool(
    study: Study,
    tool: str,
    path: str | Path,
    *,
    map_path: str | Path | None,
    media_root: str | Path | None = None,
    init_map: bool = False,
) -> str:
    """Import one tool's export; returns the one-line summary."""
    if tool not in READERS:
        raise InputError(f"unknown tool '{tool}'; use one of {', '.join(READERS)}", field="kind")
    if media_root and tool != "label-studio":
        raise InputError(
            f"--media-root is for Label Studio's image references; `import {tool}` reads no images "
            "(import the items first)",
            field="--media-root",
        )
    if not map_path:
        raise InputError(
            f"`import {tool}` needs --map MAP.toml (write a starting one with --init-map --map "
            "MAP.toml)",
            field="--map",
        )
    if init_map:
        return write_initial_mapping(study, tool, path, map_path)
    rubric = study.rubric
    mapping = load_mapping(map_path, tool, rubric)
    kwargs = {"media_root": Path(media_root)} if media_root else {}
    parsed: ToolImport = READERS[tool].parse(
        path, rubric, mapping, imports.known_item_ids(study.db), **kwargs
    )
    parsed.check_complete(rubric, mapping)
    _check_times(parsed)
    landed: dict[str, corrections.Landed] = {}

    def also(tx) -> None:
        landed["judgements"] = corrections.add_judgements(tx, parsed.judgements, rubric.version)
        landed["scores"] = corrections.add_judge_scores(tx, parsed.judge_rows, source=str(path))
        landed["votes"] = corrections.add_votes(tx, [v for v in parsed.votes if not v.is_judge])
        landed["judge_votes"] = corrections.add_votes(tx, [v for v in parsed.votes if v.is_judge])

    n_items, _ = study._land(parsed.items, also=also)
    return summary(str(path), n_items, landed, parsed)


def _check_times(parsed: ToolImport) -> None:
    """Every time spent as stored: capped at a day (domain/time_spent.py); a negative one is a
    damaged file, refused in one line."""

    def stored(row: ToolJudgement | ToolVote) -> int | None:
        try:
            return time_spent.capped(row.time_ms)
        except InputError as exc:
            raise InputError(exc.message, source=row.where, field="lead_time") from None

    for j in parsed.judgements:
        j.time_ms = stored(j)
    parsed.votes = [replace(v, time_ms=stored(v)) for v in parsed.votes]


def summary(
    source: str, n_items: int, landed: dict[str, corrections.Landed], parsed: ToolImport
) -> str:
    j, sc, v, jv = (landed[k] for k in ("judgements", "scores", "votes", "judge_votes"))
    parts = [f"{n_items} items", f"{j.added} judgements"]
    if j.corrections:
        parts[-1] += f" + {j.corrections} corrections (relabels)"
    parts += [f"{sc.added} judge scores", f"{v.added} pair votes"]
    if v.corrections:
        parts[-1] += f" + {v.corrections} corrections"
    parts.append(f"{jv.added} judge pair votes")
    same = j.unchanged + sc.unchanged + v.unchanged + jv.unchanged
    older = j.older + v.older + jv.older
    line = f"imported from {source}" + (f" ({parsed.layout})" if parsed.layout else "")
    line += ": " + ", ".join(parts)
    if same:
        line += f"; {same} already in the study unchanged"
    if older:
        line += f"; {older} older than the answer the study holds (left out)"
    if parsed.skipped:
        line += "; skipped " + ", ".join(
            f"{n} {what}" for what, n in sorted(parsed.skipped.items())
        )
    return line
