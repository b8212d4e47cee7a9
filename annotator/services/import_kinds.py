"""The import formats by name, with their options: the one table behind `annotator import`.

Light on purpose (standard library only): the CLI builds its argparse choices and flags from it
before any heavy module loads; `services/importers.py` binds each name to the code that runs it
and checks, when it is imported, that the two name the same formats and options.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImportOption:
    name: str  # the keyword the importer takes
    flag: str  # the CLI flag
    help: str
    metavar: str | None = None
    is_switch: bool = False  # a flag without a value


@dataclass(frozen=True)
class ImportKind:
    name: str
    what: str  # a line for --help and the app's menu
    options: tuple[str, ...] = ()  # names of the ImportOptions it takes
    in_package: bool = False  # may run on a rater package (the rater's own answers)


OPTIONS: dict[str, ImportOption] = {
    o.name: o
    for o in (
        ImportOption("cases", "--cases", "cases JSONL (for `import harness`)"),
        ImportOption("name", "--name", "anchor set name (for `import anchors`)"),
        ImportOption(
            "map_path",
            "--map",
            "mapping from the tool's names to the rubric's metrics (label-studio, potato, prodigy)",
            metavar="MAP.toml",
        ),
        ImportOption(
            "init_map",
            "--init-map",
            "write a starting mapping to --map from the file and the study's rubric; "
            "imports nothing",
            is_switch=True,
        ),
        ImportOption(
            "replace",
            "--replace",
            "correct judge scores imported before: the file's scores become the judge's new "
            "version, the scores in the study stay as its older one (`judge compare` compares them)",
            is_switch=True,
        ),
        ImportOption(
            "anonymous",
            "--anonymous",
            "the votes carry no rater identity (an arena's one voter string): each vote is its "
            "own anonymous rater, in the pooled figures, never compared rater with rater",
            is_switch=True,
        ),
        ImportOption(
            "media_root",
            "--media-root",
            "where Label Studio's image references are found (default: the export's folder)",
            metavar="DIR",
        ),
    )
}

_TOOL = ("map_path", "media_root", "init_map")

KINDS: dict[str, ImportKind] = {
    k.name: k
    for k in (
        ImportKind("items", "item manifest (JSON Lines)"),
        ImportKind("folder", "a folder: <case_id>/prompt.txt + one image per generator"),
        ImportKind("harness", "vision-harness results (JSON) with --cases", ("cases",)),
        ImportKind("ratings", "ratings CSV: item_id,rater,metric,value", in_package=True),
        ImportKind(
            "judge",
            "judge scores CSV: item_id,judge,metric,value[,reason][,confidence]",
            ("replace",),
        ),
        ImportKind(
            "pairs",
            "pair votes CSV: pair_id,item_left,item_right,rater,choice",
            ("anonymous",),
            in_package=True,
        ),
        ImportKind("judge-pairs", "judge pair votes CSV (the judge's name as rater)"),
        ImportKind("anchors", "anchor set (JSON Lines with reference and rationale)", ("name",)),
        ImportKind(
            "label-studio",
            "Label Studio JSON export, with --map MAP.toml (--init-map writes one)",
            _TOOL,
        ),
        ImportKind(
            "potato",
            "Potato annotation_output (folder or annotated_instances.jsonl), with --map MAP.toml",
            _TOOL,
        ),
        ImportKind("prodigy", "Prodigy db-out JSONL, with --map MAP.toml", _TOOL),
    )
}
