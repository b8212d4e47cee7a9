"""Judge calibration: does the judge's stated probability match how often it is right?

Per metric, each item with a judge confidence c (from token logprobs or a
confidence field) and a clear human consensus gives y = 1 when the judge's
answer equals the consensus (majority; for scales the median) and 0 otherwise.

- Reliability diagram: confidences in `N_BINS` equal-width bins on [0, 1]
  (the last bin closed); per bin n, mean confidence and accuracy.
- Expected calibration error (Guo et al. 2017): ECE = sum_b (n_b / N) |acc_b - conf_b|,
  which is (1/N) sum_b |sum_b y - sum_b c|.
- Brier score: (1/N) sum (c - y)^2 (0 is perfect; 0.25 is a constant 0.5).

Both are sums over items of per-bin features, so they sit on the report's shared
item bootstrap: an interval resamples items, every metric's items together.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from .answers import judge_answers
from .bootstrap import ItemBootstrap, Pending, undefined
from .consensus import MetricSpec, consensus
from .frames import JUDGE_COLUMNS, StudyFrames

N_BINS = 10
MIN_ITEMS = 10  # below this many items a calibration figure says too little to publish


def bin_of(conf: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index of each confidence: [0, 1/n), ..., [(n-1)/n, 1]."""
    return np.minimum((np.asarray(conf, dtype=float) * n_bins).astype(np.int64), n_bins - 1)


def ece_brier(conf: Any, correct: Any, n_bins: int = N_BINS) -> tuple[float, float]:
    """(expected calibration error, Brier score) of confidences against 0/1 outcomes."""
    c = np.asarray(conf, dtype=float)
    y = np.asarray(correct, dtype=float)
    if not len(c):
        return float("nan"), float("nan")
    b = bin_of(c, n_bins)
    gap = np.bincount(b, weights=y - c, minlength=n_bins)
    return float(np.abs(gap).sum() / len(c)), float(((c - y) ** 2).mean())


def reliability_bins(conf: Any, correct: Any, n_bins: int = N_BINS) -> list[dict[str, Any]]:
    """The reliability diagram as data: one dict per non-empty bin."""
    c = np.asarray(conf, dtype=float)
    y = np.asarray(correct, dtype=float)
    b = bin_of(c, n_bins)
    out = []
    for k in range(n_bins):
        sel = b == k
        if not sel.any():
            continue
        out.append(
            {
                "low": k / n_bins,
                "high": (k + 1) / n_bins,
                "n": int(sel.sum()),
                "confidence": float(c[sel].mean()),
                "accuracy": float(y[sel].mean()),
            }
        )
    return out


def register_calibration(
    plan: ItemBootstrap, idx: np.ndarray, conf: np.ndarray, correct: np.ndarray
) -> tuple[Pending, Pending]:
    """ECE and Brier on the shared bootstrap: features per item are, per bin, (count, y - c),
    and (c - y)^2."""
    n_bins = N_BINS
    b = bin_of(conf, n_bins)
    k = 2 * n_bins + 2
    rows = np.concatenate([idx, idx, idx, idx])
    cols = np.concatenate(
        [b, n_bins + b, np.full(len(idx), 2 * n_bins), np.full(len(idx), 2 * n_bins + 1)]
    )
    vals = np.concatenate(
        [np.ones(len(idx)), correct - conf, (conf - correct) ** 2, np.ones(len(idx))]
    )

    def fin(s: np.ndarray) -> np.ndarray:
        n = s[:, 2 * n_bins + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ece = np.abs(s[:, n_bins : 2 * n_bins]).sum(axis=1) / n
            brier = s[:, 2 * n_bins] / n
        return np.column_stack([np.where(n > 0, ece, np.nan), np.where(n > 0, brier, np.nan)])

    reps = plan.add(rows, cols, vals, k, fin)
    n = len(idx)
    return Pending(reps, n, col=0), Pending(reps, n, col=1)


def outcomes(spec: MetricSpec, judged: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    """Per item of one metric: idx, conf, correct (judge answer == clear human consensus)."""
    cons = consensus(human, spec)
    ref = cons.loc[~cons["tie"] & cons["value"].notna(), "value"]
    j = judged.dropna(subset=["code", "confidence"])
    j = j[j["idx"].isin(ref.index)]
    correct = (j["code"].to_numpy() == ref.reindex(j["idx"]).to_numpy()).astype(float)
    return pd.DataFrame(
        {
            "idx": j["idx"].to_numpy(),
            "conf": j["confidence"].to_numpy(dtype=float),
            "correct": correct,
        }
    )


def judge_calibration_section(
    plan: ItemBootstrap,
    frames: StudyFrames,
    items: pd.DataFrame,
    specs: list[MetricSpec],
    human: pd.DataFrame,
) -> dict[str, Any]:
    """{judge: {"version", "metrics": {metric: {n, ece, brier, bins, accuracy,
    mean_confidence}}}} for each judge, of its latest version that stated confidences; the
    figures' intervals come after `plan.run()` (resolve the tree)."""
    v = frames.judge_score_versions
    if v is None or not len(v) or v["confidence"].notna().sum() == 0:
        return {}
    out: dict[str, Any] = {}
    h_by = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
    for judge, rows in v.groupby("judge", sort=True):
        stated = rows[rows["confidence"].notna()]
        if not len(stated):
            continue
        latest = rows[rows["order"] == stated["order"].max()]
        sub = dataclasses.replace(frames, judge_scores=latest[JUDGE_COLUMNS])
        judged = judge_answers(sub, specs, items)
        conf = latest.set_index(["item_id", "metric"])["confidence"]
        metrics: dict[str, Any] = {}
        for spec in specs:
            if spec.multi or spec.key not in h_by:
                continue
            j = judged[judged["metric"] == spec.key].copy()
            key = pd.MultiIndex.from_arrays([j["item_id"], j["metric"]])
            j["confidence"] = conf.reindex(key).to_numpy() if len(j) else []
            o = outcomes(spec, j, h_by[spec.key])
            if not len(o):
                continue
            metrics[spec.key] = calibration_figures(plan, o)
        if metrics:
            out[str(judge)] = {
                "version": str(latest["version"].iloc[0]),
                "metrics": metrics,
            }
    return out


def calibration_figures(plan: ItemBootstrap, o: pd.DataFrame) -> dict[str, Any]:
    n = len(o)
    idx = o["idx"].to_numpy(dtype=np.int64)
    conf, y = o["conf"].to_numpy(dtype=float), o["correct"].to_numpy(dtype=float)
    fig: dict[str, Any] = {
        "n": n,
        "bins": reliability_bins(conf, y),
        "accuracy": float(y.mean()),
        "mean_confidence": float(conf.mean()),
    }
    if n < MIN_ITEMS:
        note = f"n={n} items is below the minimum of {MIN_ITEMS} for a calibration figure"
        fig["ece"], fig["brier"] = undefined(n, note), undefined(n, note)
    else:
        fig["ece"], fig["brier"] = register_calibration(plan, idx, conf, y)
    return fig


__all__ = [
    "N_BINS",
    "calibration_figures",
    "ece_brier",
    "judge_calibration_section",
    "register_calibration",
    "reliability_bins",
]
