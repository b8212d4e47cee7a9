"""Findings: where a judge contradicts a clear human consensus, item by item.

A human consensus is *clear* when at least two humans answered the item (not
"cannot judge") and:

- gates, tags, choices, the verdict: at least 80% of them gave the same answer
  (with two to four raters that means all of them);
- scales: a judge value at least 2 points outside the range of the human
  answers (below the lowest or above the highest) contradicts them, whatever
  the spread inside that range.

Only judges answering on the rubric's scale can contradict; a judge on its own
scale (a [0, 1] score) is compared through correlations instead. Findings are
listed by case, item, metric and judge, never ranked by a score.

A *systematic* finding is a metric where a judge's mean signed difference from
the human consensus has a 95% interval that excludes zero: the judge is
lenient (higher) or severe (lower) on that metric as a whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .consensus import MetricSpec

CLEAR_SHARE = 0.8
SCALE_GAP = 2.0
MIN_HUMANS = 2

DEFINITION = (
    f"clear human consensus: at least {MIN_HUMANS} human answers and at least "
    f"{CLEAR_SHARE:.0%} of them the same (gates, tags, choices, verdict); for scales the judge "
    f"is at least {SCALE_GAP:g} points outside the range of the human answers"
)


def _kind(spec: MetricSpec, human: float, judge: float) -> str:
    if spec.multi:
        return "judge_tags_humans_do_not" if judge > human else "humans_tag_judge_does_not"
    if spec.ordinal:
        return "judge_above_human_range" if judge > human else "judge_below_human_range"
    if spec.directed:  # two directed values, e.g. FAIL/PASS: "judge_pass_humans_fail"
        return f"judge_{spec.label(judge).lower()}_humans_{spec.label(human).lower()}"
    return "judge_chooses_otherwise"


def contradictions(
    spec: MetricSpec, detail: dict[str, Any], items: pd.DataFrame
) -> list[dict[str, Any]]:
    """Every item where a judge contradicts a clear human consensus on this metric."""
    cons: pd.DataFrame = detail["consensus"]
    human: pd.DataFrame = detail["human"]
    out: list[dict[str, Any]] = []
    for name, view in detail["views"].items():
        if not view.same_scale:
            continue
        jv = view.answers[view.answers["code"].notna()]
        common = jv.index.intersection(cons.index[cons["n"] >= MIN_HUMANS])
        if not len(common):
            continue
        c = cons.loc[common]
        j = jv.loc[common, "code"].to_numpy(dtype=float)
        if spec.ordinal:
            lo, hi = c["min"].to_numpy(float), c["max"].to_numpy(float)
            hit = (j <= lo - SCALE_GAP) | (j >= hi + SCALE_GAP)
            ref = np.where(j >= hi + SCALE_GAP, hi, lo)
        else:
            val = c["value"].to_numpy(float)
            clear = c["clear_share"].to_numpy(float) >= CLEAR_SHARE
            hit = clear & ~np.isnan(val) & (j != val)
            ref = val
        if not hit.any():
            continue
        flagged = common[hit]
        answers = human[human["idx"].isin(flagged)].sort_values(["idx", "rater"])
        by_item = {i: g for i, g in answers.groupby("idx")}
        for idx, jval, r in zip(flagged, j[hit], ref[hit], strict=True):
            item = items.iloc[int(idx)]
            g = by_item.get(idx)
            human_list = [] if g is None else [
                {"rater": str(rt), "value": spec.label(cd), "reason": _text(rs)}
                for rt, cd, rs in zip(g["rater"], g["code"], g["reason"], strict=True)
            ]
            out.append({
                "item_id": str(item["item_id"]),
                "display_code": _text(item.get("display_code")),
                "case_id": _text(item.get("case_id")),
                "generator": _text(item.get("generator")),
                "metric": spec.key,
                "judge_name": name,
                "humans": ", ".join(h["value"] for h in human_list),
                "human_answers": human_list,
                "judge": spec.label(jval),
                "judge_reason": _text(view.answers.loc[idx, "reason"]),
                "kind": _kind(spec, float(r), float(jval)),
            })
    return out


def _text(x: Any) -> str | None:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return None
    s = str(x)
    return s if s.strip() else None


def sort_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Order by case, item, metric, judge: a listing, never a ranking by score."""
    return sorted(findings, key=lambda f: (f["case_id"] or "", f["display_code"] or "",
                                           f["item_id"], f["metric"], f["judge_name"]))


def systematic(sections: dict[str, dict[str, Any]], specs: dict[str, MetricSpec]) -> list[dict[str, Any]]:
    """Metrics where a judge's mean difference interval (resolved) excludes zero."""
    out = []
    for key, sec in sections.items():
        spec = specs[key]
        for name, j in sec.get("judges", {}).items():
            md = j.get("mean_difference") or {}
            lo, hi = md.get("low"), md.get("high")
            if lo is None or hi is None or md.get("estimate") is None or lo <= 0 <= hi:
                continue
            up = lo > 0
            if spec.multi:
                kind = "judge_tags_more_often" if up else "judge_tags_less_often"
            else:
                kind = "lenient" if up else "severe"
            out.append({"metric": key, "judge_name": name, "kind": kind, "mean_difference": md,
                        "note": "the 95% interval of judge minus human consensus excludes zero"})
    return out
