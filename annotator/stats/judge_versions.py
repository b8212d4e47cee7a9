"""Versions of a judge compared on the same items, against the human consensus.

A judge's version (judge/versions.py) fixes model, prompt, schema and settings;
a new prompt is a new version and its scores are kept beside the old ones.
Per metric (tags as one question per option are left out: too many rows to
read) and the verdict:

- agreement of each version with the human consensus: accuracy (share of items
  where its answer equals the clear consensus) for nominal metrics, mean
  absolute error from the consensus median for scales; each over the items it
  answered, with the shared item bootstrap's interval;
- the paired difference B - A on the items both versions answered (and the
  humans agree on), with an interval from the same item bootstrap, so the
  item-to-item variation common to both versions cancels;
- the items whose answer changed, each marked better / worse / other against
  the consensus (other: changed, but no closer to it);
- the exact McNemar test of their agreement with the clear consensus on the items both
  answered (b: A agrees and B does not, c: the other way; p = min(1, 2 P(Binomial(b + c, 1/2)
  <= min(b, c)))), agreement on a scale meaning within `certified_scale_tolerance` points of
  the consensus as certified judging counts it (stats/certified.py), and the flip rate (the
  share of items both answered whose answer changed) with its exact one-sided Clopper-Pearson
  upper bound at 95%: how far a threshold found for one version can be trusted on the other is
  bounded by how often they differ.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom

from .answers import judge_answers
from .bootstrap import ItemBootstrap, Pending, ratio, undefined
from .consensus import MetricSpec, consensus
from .frames import JUDGE_COLUMNS, StudyFrames

MAX_LISTED = 50  # changed items listed per direction; the counts are always whole
FLIP_LEVEL = 0.95  # the flip rate's one-sided bound


def mcnemar_exact(b: int, c: int) -> float:
    """The exact (binomial) McNemar test's two-sided p-value of b against c discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(b, c), n, 0.5)))


def paired_tests(
    spec: MetricSpec,
    a: pd.Series,
    b: pd.Series,
    ref: pd.Series,
    tolerance: float = 0.0,
) -> dict[str, Any]:
    """McNemar on agreement with the consensus and the flip rate of two versions' codes (by
    item), as the module docstring says."""
    from .selective import cp_upper

    both = a.index.intersection(b.index)
    ca, cb = a.reindex(both).to_numpy(dtype=float), b.reindex(both).to_numpy(dtype=float)
    flipped = int((ca != cb).sum())
    n = len(both)
    flip = {
        "n": n,
        "n_flipped": flipped,
        "rate": flipped / n if n else None,
        "upper_bound": cp_upper(flipped, n, 1 - FLIP_LEVEL) if n else None,
        "level": FLIP_LEVEL,
    }
    judged = both.intersection(ref.index)
    r = ref.reindex(judged).to_numpy(dtype=float)
    if spec.ordinal:
        r = np.floor(r + 0.5)  # the gold's value: a median's half point goes up
    ja, jb = a.reindex(judged).to_numpy(dtype=float), b.reindex(judged).to_numpy(dtype=float)
    if spec.ordinal:
        ra, rb = np.abs(ja - r) <= tolerance + 1e-9, np.abs(jb - r) <= tolerance + 1e-9
    else:
        ra, rb = ja == r, jb == r
    b_, c_ = int((ra & ~rb).sum()), int((~ra & rb).sum())
    mcnemar = {
        "n": len(judged),
        "a_only": b_,
        "b_only": c_,
        "both": int((ra & rb).sum()),
        "neither": int((~ra & ~rb).sum()),
        "p_value": mcnemar_exact(b_, c_),
        "test": "exact McNemar (binomial) on agreeing with the clear human consensus"
        + (f" (within {tolerance:g} points)" if spec.ordinal else ""),
    }
    return {"mcnemar": mcnemar, "flip_rate": flip}


def version_answers(
    frames: StudyFrames,
    specs: list[MetricSpec],
    items: pd.DataFrame,
    judge: str,
    version: str,
) -> pd.DataFrame:
    """Coded answers (judge_answers' columns) of one version of one judge."""
    v = frames.judge_score_versions
    sub = v[(v["judge"] == judge) & (v["version"] == version)][JUDGE_COLUMNS]
    return judge_answers(dataclasses.replace(frames, judge_scores=sub), specs, items)


def _reference(human: pd.DataFrame, spec: MetricSpec) -> pd.Series:
    cons = consensus(human, spec)
    return cons.loc[~cons["tie"] & cons["value"].notna(), "value"]


def _codes(answers: pd.DataFrame, spec: MetricSpec) -> pd.Series:
    a = answers[(answers["metric"] == spec.key)].dropna(subset=["code"])
    return a.drop_duplicates("idx", keep="last").set_index("idx")["code"]


def _loss(spec: MetricSpec, code: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """0/1 wrong for nominal metrics, absolute error for scales: lower is better."""
    if spec.ordinal:
        return np.abs(code - ref)
    return (code != ref).astype(float)


def register_agreement(
    plan: ItemBootstrap, spec: MetricSpec, ref: pd.Series, answers: pd.DataFrame
) -> tuple[pd.Series, Pending | dict[str, Any]]:
    """(codes on the items with a clear consensus, the version's agreement figure): accuracy,
    or mean absolute error on scales."""
    codes = _codes(answers, spec)
    codes = codes[codes.index.isin(ref.index)]
    n = len(codes)
    if n == 0:
        return codes, undefined(0, "no item with both this version's answer and a clear consensus")
    loss = _loss(spec, codes.to_numpy(), ref.reindex(codes.index).to_numpy())
    score = loss if spec.ordinal else 1.0 - loss
    reps = plan.add_dense(codes.index.to_numpy(), np.column_stack([np.ones(n), score]), ratio)
    return codes, Pending(reps, n)


def compare_metric(
    plan: ItemBootstrap,
    spec: MetricSpec,
    items: pd.DataFrame,
    human: pd.DataFrame,
    a: pd.DataFrame,
    b: pd.DataFrame,
    tolerance: float = 0.0,
) -> dict[str, Any]:
    """Figures of versions a and b on one metric (Pending leaves: resolve after plan.run())."""
    ref = _reference(human, spec)
    measure = "mean_abs_error" if spec.ordinal else "accuracy"
    out: dict[str, Any] = {
        "measure": measure,
        "better_if": "lower" if spec.ordinal else "higher",
        **paired_tests(spec, _codes(a, spec), _codes(b, spec), ref, tolerance),
    }
    per: dict[str, pd.Series] = {}
    for name, answers in (("a", a), ("b", b)):
        per[name], out[name] = register_agreement(plan, spec, ref, answers)
    both = per["a"].index.intersection(per["b"].index)
    n = len(both)
    out["n_items_both"] = n
    if n == 0:
        out["difference"] = undefined(
            0, "the two versions answered no common item with a clear consensus"
        )
        out["changed"] = {"n": 0, "better": [], "worse": [], "other": []}
        return out
    ca, cb = per["a"].reindex(both).to_numpy(), per["b"].reindex(both).to_numpy()
    r = ref.reindex(both).to_numpy()
    la, lb = _loss(spec, ca, r), _loss(spec, cb, r)
    sa, sb = (la, lb) if spec.ordinal else (1 - la, 1 - lb)
    idx = both.to_numpy()

    def diff(s: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s[:, 0] > 0, (s[:, 2] - s[:, 1]) / s[:, 0], np.nan)

    reps = plan.add_dense(idx, np.column_stack([np.ones(n), sa, sb]), diff)
    out["difference"] = Pending(reps, n, note="b minus a on the items both answered")
    changed = ca != cb
    ids = items.set_index("idx")["item_id"]
    lists: dict[str, list[dict[str, Any]]] = {"better": [], "worse": [], "other": []}
    for i in np.flatnonzero(changed):
        kind = "better" if lb[i] < la[i] else ("worse" if lb[i] > la[i] else "other")
        lists[kind].append(
            {
                "item_id": str(ids.get(idx[i])),
                "a": spec.label(float(ca[i])),
                "b": spec.label(float(cb[i])),
                "humans": spec.label(float(r[i])),
            }
        )
    out["changed"] = {
        "n": int(changed.sum()),
        **{f"n_{k}": len(v) for k, v in lists.items()},
        **{k: v[:MAX_LISTED] for k, v in lists.items()},
    }
    return out


def compare_versions(
    plan: ItemBootstrap,
    frames: StudyFrames,
    items: pd.DataFrame,
    specs: list[MetricSpec],
    human: pd.DataFrame,
    a: tuple[str, str],
    b: tuple[str, str],
) -> dict[str, Any]:
    """{"a": "judge@version", "b": ..., "metrics": {metric: compare_metric(...)}}."""
    from ..domain.settings import setting

    ans_a = version_answers(frames, specs, items, *a)
    ans_b = version_answers(frames, specs, items, *b)
    h_by = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
    tol = float(setting(frames.settings, "certified_scale_tolerance"))
    metrics = {
        s.key: compare_metric(plan, s, items, h_by[s.key], ans_a, ans_b, tol)
        for s in specs
        if not s.multi and s.key in h_by
    }
    return {"a": "@".join(a), "b": "@".join(b), "metrics": metrics}


def version_list(frames: StudyFrames, judge: str) -> list[dict[str, Any]]:
    """A judge's versions, oldest first: {version, order, n_items, with_confidence}."""
    v = frames.judge_score_versions
    rows = v[v["judge"] == judge]
    out = []
    for (order, version), g in rows.groupby(["order", "version"], sort=True):
        out.append(
            {
                "version": str(version),
                "order": int(order),
                "n_items": int(g["item_id"].nunique()),
                "with_confidence": bool(g["confidence"].notna().any()),
            }
        )
    return out


def judge_versions_section(
    plan: ItemBootstrap,
    frames: StudyFrames,
    items: pd.DataFrame,
    specs: list[MetricSpec],
    human: pd.DataFrame,
) -> dict[str, Any]:
    """Per judge with two or more versions: its versions (each with its agreement per metric),
    and its latest compared with the one before: {judge: {"versions": [{..., "agreement":
    {metric: figure}}], "latest", "comparison": compare_versions(...)}}."""
    v = frames.judge_score_versions
    if v is None or not len(v):
        return {}
    out: dict[str, Any] = {}
    h_by = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
    refs = {s.key: _reference(h_by[s.key], s) for s in specs if not s.multi and s.key in h_by}
    for judge in sorted(v["judge"].astype(str).unique()):
        versions = version_list(frames, judge)
        if len(versions) < 2:
            continue
        for ver in versions:
            answers = version_answers(frames, specs, items, judge, ver["version"])
            ver["agreement"] = {
                s.key: register_agreement(plan, s, refs[s.key], answers)[1]
                for s in specs
                if s.key in refs
            }
        prev, last = versions[-2]["version"], versions[-1]["version"]
        out[judge] = {
            "versions": versions,
            "latest": last,
            "comparison": compare_versions(
                plan, frames, items, specs, human, (judge, prev), (judge, last)
            ),
        }
    return out


__all__ = [
    "compare_metric",
    "compare_versions",
    "judge_versions_section",
    "mcnemar_exact",
    "paired_tests",
    "version_list",
]
