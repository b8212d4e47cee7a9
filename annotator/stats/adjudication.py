"""What the lead's adjudications say about the raters, the judge and the rubric (contract 5.5).

An adjudication is the lead's resolved answer on an item x rubric metric. It is read here as a
reference, never as one more rater: human agreement is computed on the raters' own answers only,
so resolving a disagreement can never raise alpha.

Per report metric (a multi-select metric counts once per option, as everywhere in the report):

- `sided_with`: with whom the adjudicator sided, each decision counted once, the first that
  holds: `majority` (the raters' consensus, majority or median, was not tied and the lead kept
  it), `tie_broken` (the raters tied and the lead chose one of the tied answers: even when a
  judge gave it too, the judge overruled no consensus there), `judge` (a judge gave it),
  `minority` (a rater gave it), `new_answer` (nobody gave it).
- accuracy of each rater and judge: the share of their answers on adjudicated items that equal
  the adjudicated answer, with a percentile interval from the report's item bootstrap (an
  item's decisions on every metric are resampled together). A "cannot judge" answer is left
  out (counted beside it), as is an adjudication of "cannot judge".
- `rubric_feedback`: per rubric metric, the decisions whose category is `rubric_unclear`: the
  sign that the rubric text, not the raters, needs work.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .answers import coded_answers, split_by_metric
from .bootstrap import ItemBootstrap, Pending, ratio, undefined
from .consensus import VERDICT_KEY, MetricSpec, consensus
from .frames import StudyFrames

_NONE = np.empty(0)
SIDES = ("majority", "judge", "minority", "tie_broken", "new_answer")
RUBRIC_UNCLEAR = "rubric_unclear"


def adjudicated_codes(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """The current adjudications coded like the raters' answers: idx, item_id, metric (report
    key), code, category, by. Adjudications of "cannot judge" are dropped."""
    adj = frames.adjudications
    cols = ["idx", "item_id", "metric", "code", "category", "by"]
    if adj is None or not len(adj):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    base = adj.assign(adjudicator="lead")[["item_id", "adjudicator", "metric", "value"]]
    # per metric only: a verdict of the lead's answers would be dropped anyway
    metric_specs = [s for s in specs if s.key != VERDICT_KEY]
    coded = coded_answers(base, "adjudicator", frames.rubric, metric_specs, items)
    coded = coded[coded["code"].notna()]
    extra = adj.drop_duplicates(["item_id", "metric"], keep="last").set_index(
        ["item_id", "metric"]
    )[["category", "by"]]
    base_of = {s.key: s.base for s in specs}
    key = pd.MultiIndex.from_arrays([coded["item_id"], coded["metric"].map(base_of)])
    out = coded[["idx", "item_id", "metric", "code"]].copy()
    out["category"] = extra["category"].reindex(key).to_numpy()
    out["by"] = extra["by"].reindex(key).to_numpy()
    return out.reset_index(drop=True)


def _tied(humans: np.ndarray, ordinal: bool) -> np.ndarray:
    """The answers a tied consensus is torn between: the two middle values of a scale, the most
    frequent answers otherwise."""
    if ordinal:
        return np.array([np.quantile(humans, 0.5, method=m) for m in ("lower", "higher")])
    values, counts = np.unique(humans, return_counts=True)
    return values[counts == counts.max()]


def _side(
    code: float, cons: pd.Series | None, humans: np.ndarray, judges: np.ndarray, ordinal: bool
) -> str:
    """With whom a decision sided, the first that holds in the module docstring's order."""
    tied = cons is not None and bool(cons["tie"])
    if cons is not None and not tied and not np.isnan(cons["value"]) and code == cons["value"]:
        return "majority"
    if tied and len(humans) and code in _tied(humans, ordinal):
        return "tie_broken"
    if code in judges:
        return "judge"
    if code in humans:
        return "minority"
    return "new_answer"


def _accuracy(
    plan: ItemBootstrap,
    answers: pd.DataFrame,
    who: str,
    truth: pd.Series,
    min_count: int,
) -> dict[str, Any]:
    """Each rater's (judge's) share of answers equal to the adjudicated one, as Pending estimates
    on the report's bootstrap (one block for everyone)."""
    key = pd.MultiIndex.from_arrays([answers["idx"], answers["metric"]])
    ref = truth.reindex(key).to_numpy(dtype=float)
    on = ~np.isnan(ref)
    a = answers[on]
    ref = ref[on]
    out: dict[str, Any] = {}
    if not len(a):
        return out
    known = a["code"].notna().to_numpy()
    names = sorted(a[who].astype(str).unique())
    slot = {n: i for i, n in enumerate(names)}
    sid = a[who].astype(str).map(slot).to_numpy(np.int64)
    idx = a["idx"].to_numpy(np.int64)
    hit = (a["code"].to_numpy(dtype=float) == ref).astype(float)
    reps = plan.add_sliced(
        np.repeat(idx[known], 2),
        np.tile(np.arange(2), int(known.sum())),
        np.column_stack([np.ones(int(known.sum())), hit[known]]).ravel(),
        2,
        ratio,
        np.repeat(sid[known], 2),
        len(names),
    )
    n_known = np.bincount(sid[known], minlength=len(names))
    n_cj = np.bincount(sid[~known], minlength=len(names))
    for name, i in slot.items():
        n = int(n_known[i])
        out[name] = {
            "accuracy": Pending(reps, n, col=i)
            if n >= min_count
            else undefined(n, f"fewer than {min_count} answers on adjudicated items"),
            "n_answers": n,
            "n_cannot_judge": int(n_cj[i]),
        }
    return out


def adjudication_section(
    plan: ItemBootstrap,
    frames: StudyFrames,
    specs: list[MetricSpec],
    items: pd.DataFrame,
    human: pd.DataFrame,
    judged: pd.DataFrame,
    min_count: int,
) -> dict[str, Any] | None:
    """The report's `adjudication` section, with Pending estimates (resolve after plan.run());
    None when nothing was adjudicated."""
    adj = adjudicated_codes(frames, specs, items)
    if not len(adj):
        return None
    spec_of = {s.key: s for s in specs}
    sided = dict.fromkeys(SIDES, 0)
    by_metric: dict[str, dict[str, int]] = {}
    h_by, j_by = split_by_metric(human), split_by_metric(judged)
    for metric, decisions in adj.groupby("metric", sort=False, observed=True):
        # only the adjudicated items: an item's consensus needs no other item's answers
        on = set(decisions["idx"])
        h = h_by.get(metric, human.iloc[0:0])
        h = h[h["idx"].isin(on)]
        j = j_by.get(metric, judged.iloc[0:0])
        j = j[j["idx"].isin(on) & j["code"].notna()]
        cons = consensus(h, spec_of[metric]) if len(h) else None
        given = h.dropna(subset=["code"])
        h_codes = {i: g.to_numpy(float) for i, g in given.groupby("idx")["code"]}
        j_codes = {i: g.to_numpy(float) for i, g in j.groupby("idx")["code"]}
        counts = by_metric.setdefault(str(metric), dict.fromkeys(SIDES, 0))
        for idx, code in zip(decisions["idx"], decisions["code"], strict=True):
            row = cons.loc[idx] if cons is not None and idx in cons.index else None
            side = _side(
                float(code),
                row,
                h_codes.get(idx, _NONE),
                j_codes.get(idx, _NONE),
                spec_of[metric].ordinal,
            )
            counts[side] += 1
            sided[side] += 1
    truth = adj.set_index(["idx", "metric"])["code"].astype(float)
    feedback: dict[str, dict[str, Any]] = {}
    per_decision = adj.assign(base=adj["metric"].map(lambda k: spec_of[k].base))
    per_decision = per_decision.drop_duplicates(["item_id", "base"])
    for base, g in per_decision.groupby("base"):
        feedback[str(base)] = {
            "label": frames.rubric.metric(str(base)).label,
            "n_decisions": int(len(g)),
            RUBRIC_UNCLEAR: int((g["category"] == RUBRIC_UNCLEAR).sum()),
        }
    categories = per_decision["category"].fillna("none")  # one per decision, not per tag
    return {
        "n_items": int(adj["item_id"].nunique()),
        "n_decisions": int(len(per_decision)),  # item x rubric metric
        "n_compared": int(len(adj)),  # item x report metric (a tags metric: one per tag)
        "sided_with": sided,
        "sided_with_by_metric": by_metric,
        "raters": _accuracy(plan, human.rename(columns={"rater": "who"}), "who", truth, min_count),
        "judges": _accuracy(plan, judged.rename(columns={"judge": "who"}), "who", truth, min_count),
        "categories": {str(k): int(v) for k, v in categories.value_counts().items()},
        "rubric_feedback": feedback,
        "adjudicators": sorted({str(b) for b in adj["by"].dropna()}),
    }
