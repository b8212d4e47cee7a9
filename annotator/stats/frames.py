"""The tidy tables a study hands to the statistics: the one input of every report.

`services` builds a StudyFrames from the store; `stats` turns it into figures.
Operators are removed before the frames are built, so nothing in `stats` needs
to know they exist. Values are typed as in `domain.rubric.parse_value`:
gates "PASS"/"FAIL", scales int, choices str, tags a tuple of str, and the
string "cannot_judge" for no answer. Judge values may be on the judge's own
scale (a float in [0, 1], a raw CLIPScore...).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import pandas as pd

from ..domain.rubric import Rubric

ITEM_COLUMNS = ["item_id", "display_code", "case_id", "cell_id", "generator", "slice"]
JUDGEMENT_COLUMNS = [
    "item_id",
    "rater",
    "metric",
    "value",
    "reason",
    "created_at",
    "session_id",
    "position",
]
JUDGE_COLUMNS = ["item_id", "judge", "metric", "value", "reason"]
# every version's scores (judge_scores holds each judge's latest version only); `order` ranks a
# judge's versions by when they first ran, `confidence` is the judge's probability of its answer
JUDGE_VERSION_COLUMNS = [*JUDGE_COLUMNS, "version", "order", "confidence"]
PAIR_COLUMNS = [
    "pair_id",
    "case_id",
    "item_left",
    "item_right",
    "gen_left",
    "gen_right",
    "rater",
    "choice",
    "created_at",
]
# the lead's resolved answers (current ones only: a later adjudication supersedes an earlier one);
# value typed as in `judgements`; category: why it was resolved so ("rubric_unclear", ...) or None
ADJUDICATION_COLUMNS = ["item_id", "metric", "value", "reason", "category", "by", "created_at"]
ANCHOR_COLUMNS = [
    "rater",
    "anchor_id",
    "item_id",
    "metric",
    "value",
    "reference",
    "seq",
    "session_id",
    "created_at",
    "context",
]


def empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True, eq=False)
class Grown:
    """`table` is `earlier` with rows added after its last: its first len(earlier) rows hold
    earlier's values but for `position` (a live refresh that only added answers counts their
    sessions' places again). What is computed per row of `earlier` is kept for `table`'s
    first rows (row_codes.py)."""

    earlier: pd.DataFrame
    table: pd.DataFrame


@dataclass
class StudyFrames:
    study: str
    rubric: Rubric
    items: pd.DataFrame = field(default_factory=lambda: empty(ITEM_COLUMNS))
    # current (not superseded) human judgements on live items, one row per metric
    judgements: pd.DataFrame = field(default_factory=lambda: empty(JUDGEMENT_COLUMNS))
    judge_scores: pd.DataFrame = field(default_factory=lambda: empty(JUDGE_COLUMNS))
    judge_score_versions: pd.DataFrame = field(default_factory=lambda: empty(JUDGE_VERSION_COLUMNS))
    pair_votes: pd.DataFrame = field(default_factory=lambda: empty(PAIR_COLUMNS))
    judge_pair_votes: pd.DataFrame = field(default_factory=lambda: empty(PAIR_COLUMNS))
    # answers on anchors (seeded in live work: context "live"; calibration: "calibration"),
    # seq = 0-based order of the rater's live anchor answers
    anchor_answers: pd.DataFrame = field(default_factory=lambda: empty(ANCHOR_COLUMNS))
    adjudications: pd.DataFrame = field(default_factory=lambda: empty(ADJUDICATION_COLUMNS))
    settings: dict[str, Any] = field(default_factory=dict)
    # ids of stored judgements left out because their answers are not a JSON object (a damaged
    # or hand-edited row): counted and named in the report, never a reason for it to fail
    unreadable: list[int] = field(default_factory=list)
    # set by a live refresh that only added answers: `judgements` grew from an earlier table
    # (read only while `judgements_grown.table is judgements`: a copy of the frames with other
    # judgements keeps the field, and it then says nothing)
    judgements_grown: Grown | None = None


# the names of StudyFrames' tables (what a copy of the frames must carry whole)
TABLES = tuple(f.name for f in fields(StudyFrames) if f.type == "pd.DataFrame")
