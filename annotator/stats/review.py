"""What the lead's review queue and the gold read from the statistics, by the report's own rules.

Per rubric metric and item, the humans' consensus (consensus.metric_consensus: the clear-consensus
rule), and the judges' contradictions of it as the report finds them: `findings.contradictions`
on the same coded answers, the same consensus table and the same judge views (reconcile.judge_view:
a judge answering on a scale of its own contradicts nobody) as report_model, so that the queue's
"judge contradicts" is the report's findings and its "clear consensus" the gold's. The verdict is
left out: the lead adjudicates rubric metrics, and a verdict follows from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .answers import human_answers, item_table, judge_answers
from .consensus import VERDICT_KEY, consensus, metric_consensus, metric_specs
from .findings import contradictions
from .frames import StudyFrames
from .reconcile import judge_view


@dataclass(frozen=True)
class ReviewFigures:
    # rubric metric key -> metric_consensus() of the items humans answered, indexed by item_id
    consensus: dict[str, pd.DataFrame]
    # the report's findings (findings.contradictions) on every rubric metric, in no order
    findings: list[dict[str, Any]] = field(default_factory=list)


def review_figures(frames: StudyFrames, *, judges: bool = True) -> ReviewFigures:
    """The consensus of every judged rubric metric per item and, with `judges`, the findings."""
    specs = [s for s in metric_specs(frames.rubric) if s.key != VERDICT_KEY]
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    judged = judge_answers(frames, specs, items) if judges else None
    h_by = dict(tuple(human.groupby("metric", sort=False, observed=True))) if len(human) else {}
    j_by = (
        dict(tuple(judged.groupby("metric", sort=False, observed=True)))
        if judged is not None and len(judged)
        else {}
    )
    ids = items["item_id"].to_numpy()
    tables: dict[str, pd.DataFrame] = {}
    found: list[dict[str, Any]] = []
    for m in frames.rubric.judged_metrics:
        mine = [s for s in specs if s.base == m.key]
        cons = {s.key: consensus(h_by.get(s.key, human.iloc[0:0]), s) for s in mine}
        table = metric_consensus(mine, cons)
        table.index = pd.Index(ids[table.index.to_numpy()], name="item_id")
        tables[m.key] = table
        for s in mine:
            j = j_by.get(s.key)
            if j is None or not len(j):
                continue
            names = sorted(j["judge"].astype(str).unique())
            views = {n: judge_view(s, n, j[j["judge"].astype(str) == n]) for n in names}
            detail = {"consensus": cons[s.key], "views": views, "human": h_by[s.key]}
            found.extend(contradictions(s, detail, items))
    return ReviewFigures(tables, found)
