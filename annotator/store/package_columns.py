"""Which columns a rater package carries, and which a merge takes back: every column of every
table, read from the metadata (`__table__.columns`, as `copy.py` does), less the ones named here
with the reason. A column added to a model is carried by export and taken back by merge without
a line changed here; one that must stay home is named here, and
tests/unit/test_package_columns.py fails until every column of every table is one or the other.

Export (`package_export.read_content`): a study row becomes a package row of its carried columns
as stored; `renumbered` columns are copied and then given the package's own numbers
(`local_keys`); `rewritten` columns get the package's own value (a code, a blank, one time stamp),
which the export must give (`export_row` refuses a row without it); `dropped` columns are not
written (the package's default, or set when the row is written).

Merge (`package_merge`): an answer row of the package goes back into the study with its carried
columns as the package holds them; the columns named in `MERGE` are the study's own (its
numbers, the rater from the lead's record of the export, what the lead's code computes) or are
read as the code or UUID the package's local key points at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .models import Base

# Tables a package holds no row of, and why.
NOT_IN_PACKAGE: dict[str, str] = {
    "judge_runs": "the study's judges stay with the lead (a judge's view would steer the rater)",
    "judge_scores": "judge scores stay with the lead (a judge's view would steer the rater)",
    "judge_errors": "the judges' failures stay with the lead",
    "assignments": "who else was dealt an item stays home; the package's queue is the rater's share",
    "pair_assignments": "who else was dealt a pair stays home; the pair queue is the rater's share",
    "rater_codes": "the lead's key from codes to items: the package holds only the codes",
    "merges": "the lead's record of merges",
    "merge_conflicts": "the lead's record of merges",
    "adjudications": "the lead's verdicts would tell the rater the answer",
}

# Tables whose rows the export makes itself, not from a study row.
MADE_BY_EXPORT: dict[str, str] = {
    "package_manifest": "the package's own description, written at export",
    "media_blobs": "each image's bytes, read from the study's media store (folder or server), "
    "under the package's name of the image",
}


@dataclass(frozen=True)
class Carry:
    """How one table's study rows become package rows: {column: why} of the columns not copied
    as stored; every other column of the table is."""

    renumbered: dict[str, str] = field(default_factory=dict)
    rewritten: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)

    def named(self) -> dict[str, str]:
        return {**self.renumbered, **self.rewritten, **self.dropped}


_OWN = "the package's own row number (local_keys): a study-wide number would join raters' files"
_RATER = "the package's one rater (set when the row is written)"
_ONE_TIME = (
    "one time on every item and image (an anchor imported another day would stand out by it)"
)

EXPORT: dict[str, Carry] = {
    "settings": Carry(),  # only PACKAGE_SETTINGS' rows; anchor_every written as 0
    "raters": Carry(
        rewritten={"is_operator": "false: an operator gets no package"},
        dropped={"id": "the package's one rater, numbered by the package"},
    ),
    "rubric_versions": Carry(
        rewritten={"is_active": "true: the package holds the active version only"},
        dropped={"created_at": "the time of export (the default)"},
    ),
    "cases": Carry(
        renumbered={"id": _OWN},
        rewritten={
            "case_id": "the rater's code of the case (the study's id can name its source)",
            "task_type": "blank: not shown to raters",
        },
    ),
    "cells": Carry(
        renumbered={"id": _OWN, "case_pk": _OWN},
        rewritten={
            "prompt_sha256": "the hash of the prompt it carries, computed again (a rater's login "
            "on a server may not read the study's column)"
        },
    ),
    "media": Carry(
        rewritten={
            "sha256": "the image's name in this package (package_export.media_name): the "
            "study's hash would join two raters' packages",
            "original_sha256": "the package's name again: the original's hash would match the "
            "generator's own file",
            "created_at": _ONE_TIME,
        }
    ),
    "items": Carry(
        renumbered={"id": _OWN, "cell_pk": _OWN},
        rewritten={
            "item_id": "the rater's code of the item (the study's id can name the generator)",
            "generator": "blank: the rater is blind to it",
            "display_code": "the rater's code of the item (the study's is shared by every rater)",
            "slice": "blank: it can name the generator's setting",
            "seed": "blank: it can name the generator's run",
            "is_anchor": "set on the calibration copies only: a silent anchor is a plain item",
            "content_sha256": "the hash of the code: the imported content's would match the "
            "generator's file",
            "source": "blank: provenance (a path) is never shown",
            "created_at": _ONE_TIME,
        },
    ),
    "item_media": Carry(
        renumbered={"item_pk": _OWN},
        rewritten={
            "source_name": "blank: provenance (a file name) is never shown",
            "media_sha256": "the image's name in this package (package_export.media_name)",
        },
    ),
    "anchors": Carry(
        renumbered={"item_pk": _OWN},
        dropped={"promoted_from": "the lead's adjudication the anchor came from"},
    ),
    "anchor_set_versions": Carry(
        rewritten={"note": "blank: the lead's note on a new version"},
        dropped={"id": "the package's own number"},
    ),
    "queue": Carry(
        renumbered={
            "item_pk": _OWN,
            "position": "0..n-1 with the silent anchors in their places (a gap would mark them)",
        },
        dropped={"rater_pk": _RATER},
    ),
    "pairs": Carry(
        renumbered={"id": _OWN, "item_a": _OWN, "item_b": _OWN},
        rewritten={"pair_id": "the rater's code of the pair"},
    ),
    "pair_queue": Carry(
        renumbered={"pair_pk": _OWN, "left_item": _OWN}, dropped={"rater_pk": _RATER}
    ),
    "sessions": Carry(renumbered={"id": _OWN}, dropped={"rater_pk": _RATER}),
    # no rows: merged showings name the anchors, they stay in the lead's study
    "anchor_showings": Carry(
        renumbered={"id": _OWN, "session_pk": _OWN, "item_pk": _OWN}, dropped={"rater_pk": _RATER}
    ),
    "judgements": Carry(
        renumbered={
            "id": _OWN,
            "item_pk": _OWN,
            "session_pk": _OWN,
            "showing_pk": _OWN,
            "supersedes": _OWN,
            "queue_position": "a live answer's: its item's position in the package's queue",
        },
        dropped={"rater_pk": _RATER},
    ),
    "pair_votes": Carry(
        renumbered={
            "id": _OWN,
            "pair_pk": _OWN,
            "item_left": _OWN,
            "item_right": _OWN,
            "session_pk": _OWN,
            "supersedes": _OWN,
        },
        dropped={"rater_pk": _RATER, "judge": "a rater's vote has no judge"},
    ),
    "calibrations": Carry(
        renumbered={"id": _OWN, "session_pk": _OWN}, dropped={"rater_pk": _RATER}
    ),
}

_STUDY_ID = "the study's own number"
_LEAD_RATER = "the lead's record of whom the package was exported for, never the file's"
_KEY = "read as the code or UUID the package's local key points at"

# answer table -> {column: why} of the columns a merge does not take from the package as stored
MERGE: dict[str, dict[str, str]] = {
    "sessions": {"id": _STUDY_ID, "rater_pk": _LEAD_RATER},
    "anchor_showings": {
        "id": _STUDY_ID,
        "rater_pk": _LEAD_RATER,
        "session_pk": _KEY,
        "item_pk": _KEY,
    },
    "judgements": {
        "id": _STUDY_ID,
        "rater_pk": _LEAD_RATER,
        "item_pk": _KEY,
        "session_pk": _KEY,
        "showing_pk": _KEY,
        "supersedes": _KEY,
        "queue_position": "a live answer's: its item's position in the study's queue (unblind)",
    },
    "pair_votes": {
        "id": _STUDY_ID,
        "rater_pk": _LEAD_RATER,
        "judge": "a package holds no judge's votes (one refuses it)",
        "pair_pk": _KEY,
        "item_left": _KEY,
        "item_right": _KEY,
        "session_pk": _KEY,
        "supersedes": _KEY,
    },
    "calibrations": {
        "id": _STUDY_ID,
        "rater_pk": _LEAD_RATER,
        "session_pk": _KEY,
        "result": "computed by the lead's code from the calibration answers, never the file's",
        "qualified": "computed by the lead's code from the calibration answers, never the file's",
    },
}


@cache
def columns(table: str) -> tuple[str, ...]:
    """Every column of `table`, in the metadata's order."""
    return tuple(c.name for c in Base.metadata.tables[table].columns)


@cache
def carried(table: str) -> tuple[str, ...]:
    """The columns export copies from a study row of `table` (the renumbered ones included)."""
    c = EXPORT[table]
    return tuple(n for n in columns(table) if n not in c.rewritten and n not in c.dropped)


def export_row(table: str, row: Any, **rewritten: Any) -> dict[str, Any]:
    """A package row of `table` from the study's `row` (a mapped object): its carried columns as
    stored and the package's own value of each rewritten column (all of them must be given)."""
    c = EXPORT[table]
    if set(rewritten) != set(c.rewritten):
        raise ValueError(
            f"{table}: the export gives {sorted(rewritten)}, the policy rewrites {sorted(c.rewritten)}"
        )
    out = {n: getattr(row, n) for n in carried(table)}
    out.update(rewritten)
    return out


@cache
def merged(table: str) -> tuple[str, ...]:
    """The columns merge takes from a package's row of the answer table `table` as stored."""
    return tuple(n for n in columns(table) if n not in MERGE[table])
