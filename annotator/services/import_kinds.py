"""The import formats by name, with their options and what reads each: the one table behind
`annotator import`.

Light on purpose (standard library only): the CLI builds its argparse choices and flags from it
before any heavy module loads. The rest is derived from it or checked against it when imported:
`services/importers.py` binds each name to its run function and refuses a run whose keywords
are not the format's options or a `Study.import_*` method the table names that is missing;
`services/interop.py` builds its READERS (the tools read through a mapping) from `TOOLS`.
Tested in tests/unit/test_import_kinds.py.
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
    what: str  # its line in `annotator import --help`
    options: tuple[str, ...] = ()  # names of the ImportOptions it takes
    in_package: bool = False  # may run on a rater package (the rater's own answers)
    # What reads it: the `Study` method it calls ("import_items"), or MAPPING for another tool's
    # export read through a mapping file by the `ingest/` module of the same name
    # (label-studio -> ingest/label_studio.py) in services/interop.py.
    reader: str = ""


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

MAPPING = "mapping"
_TOOL = ("map_path", "media_root", "init_map")

KINDS: dict[str, ImportKind] = {
    k.name: k
    for k in (
        ImportKind("items", "item manifest (JSON Lines)", reader="import_items"),
        ImportKind(
            "folder",
            "a folder: <case_id>/prompt.txt + one image per generator",
            reader="import_folder",
        ),
        ImportKind(
            "harness",
            "vision-harness results (JSON) with --cases",
            ("cases",),
            reader="import_harness",
        ),
        ImportKind(
            "ratings",
            "ratings CSV: item_id,rater,metric,value",
            in_package=True,
            reader="import_ratings",
        ),
        ImportKind(
            "judge",
            "judge scores CSV: item_id,judge,metric,value[,reason][,confidence]",
            ("replace",),
            reader="import_judge",
        ),
        ImportKind(
            "pairs",
            "pair votes CSV: pair_id,item_left,item_right,rater,choice",
            ("anonymous",),
            in_package=True,
            reader="import_pairs",
        ),
        ImportKind(
            "judge-pairs", "judge pair votes CSV (the judge's name as rater)", reader="import_pairs"
        ),
        ImportKind(
            "anchors",
            "anchor set (JSON Lines with reference and rationale)",
            ("name",),
            reader="import_anchors",
        ),
        ImportKind(
            "label-studio",
            "Label Studio JSON export, with --map MAP.toml (--init-map writes one)",
            _TOOL,
            reader=MAPPING,
        ),
        ImportKind(
            "potato",
            "Potato annotation_output (folder or annotated_instances.jsonl), with --map MAP.toml",
            _TOOL,
            reader=MAPPING,
        ),
        ImportKind("prodigy", "Prodigy db-out JSONL, with --map MAP.toml", _TOOL, reader=MAPPING),
    )
}

# The tools read through a mapping file (services/interop.py READERS is built from this).
TOOLS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.reader == MAPPING)
