"""Judge calibration: does the judge's stated probability match how often it is right?

Per metric, each item with a judge confidence c (from token logprobs or a
confidence field) and a clear human consensus gives y = 1 when the judge's
answer equals the consensus (majority; for scales the median) and 0 otherwise.

- Reliability diagram: confidences in `N_BINS` equal-width bins on [0, 1]
  (the last bin closed); per bin n, mean confidence and accuracy.
- Calibration error, debiased (`ece`): the plug-in ECE of Guo et al. (2017),
  (1/N) sum_b |sum_b (y - c)|, is biased upward: a perfectly calibrated judge
  shows about 0.10 at 50 items and its bootstrap interval never contains 0 (0 of
  300 simulated studies). The figure published is the binned L2 calibration
  error with the debiasing of Kumar, Liang & Ma (2019, "Verified uncertainty
  calibration"): CE^2 = sum_b (n_b / N) [(mean_b(y - c))^2 - var_b], var_b the
  estimated variance of that mean (the sample variance of y - c in the bin over
  n_b, or c (1 - c) for a bin of one item), and CE = sqrt(max(0, CE^2)). Its
  interval is the percentile bootstrap of the same (monotone) figure, so it
  reaches 0 for a calibrated judge. The plug-in ECE is kept as `ece_plugin`.
- Calibration test (`calibration_test`): consistency resampling (Broecker &
  Smith 2007): outcomes redrawn as y* ~ Bernoulli(c) from the judge's own
  confidences show the statistic's law *if the judge were calibrated*; the
  p-value is the share of CONSISTENCY_RESAMPLES redrawn CE^2 at least the
  observed one. p >= 0.05 reads "not miscalibrated at 5%"; below, the report
  gives the gap (the calibration error) with its interval.
- Brier score: (1/N) sum (c - y)^2 (0 is perfect; 0.25 is a constant 0.5).

The calibration error and the Brier score are sums over items of per-bin
features, so they sit on the report's shared item bootstrap: an interval
resamples items, every metric's items together. Coverage (validity.md, issue
23 point 5): tests/benchmarks/bench_intervals.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from .answers import judge_answers, split_by_metric
from .bootstrap import ItemBootstrap, Pending, undefined
from .consensus import MetricSpec, consensus
from .frames import JUDGE_COLUMNS, StudyFrames

N_BINS = 10
MIN_ITEMS = 10  # below this many items a calibration figure says too little to publish
CONSISTENCY_RESAMPLES = 999
TEST_LEVEL = 0.05
ECE_METHOD = (
    "binned (10 equal-width bins) L2 calibration error, debiased (Kumar et al. 2019): "
    "sqrt(max(0, sum_b n_b/N [mean_b(y - c)^2 - var_b])); 0 is calibrated"
)


def bin_of(conf: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index of each confidence: [0, 1/n), ..., [(n-1)/n, 1]."""
    return np.minimum((np.asarray(conf, dtype=float) * n_bins).astype(np.int64), n_bins - 1)


def _debiased_ce2(n: np.ndarray, s: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Kumar et al.'s debiased squared calibration error from per-bin sums (last axis = bins):
    counts n, sum(y - c) s, sum((y - c)^2) q, sum(c (1 - c)) v. Bins of one item take
    c (1 - c) as the variance of their gap; empty bins add nothing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(n > 0, s / n, 0.0)
        sample = np.where(n > 1, (q - n * d**2) / (n * (n - 1)), 0.0)
        var = np.where(n > 1, np.maximum(sample, 0.0), np.where(n > 0, v / np.maximum(n, 1), 0.0))
        total = n.sum(axis=-1)
        return np.where(total > 0, (n * (d**2 - var)).sum(axis=-1) / total, np.nan)


def _bin_sums(conf: np.ndarray, y: np.ndarray, n_bins: int = N_BINS) -> tuple[np.ndarray, ...]:
    b = bin_of(conf, n_bins)
    e = y - conf
    return (
        np.bincount(b, minlength=n_bins).astype(float),
        np.bincount(b, weights=e, minlength=n_bins),
        np.bincount(b, weights=e**2, minlength=n_bins),
        np.bincount(b, weights=conf * (1 - conf), minlength=n_bins),
    )


def debiased_ce(conf: Any, correct: Any, n_bins: int = N_BINS) -> float:
    """The debiased binned L2 calibration error (the report's `ece`), 0 where CE^2 <= 0."""
    c = np.asarray(conf, dtype=float)
    y = np.asarray(correct, dtype=float)
    if not len(c):
        return float("nan")
    return float(np.sqrt(max(0.0, float(_debiased_ce2(*_bin_sums(c, y, n_bins))))))


def ece_brier(conf: Any, correct: Any, n_bins: int = N_BINS) -> tuple[float, float]:
    """(plug-in expected calibration error, Brier score) of confidences against 0/1 outcomes."""
    c = np.asarray(conf, dtype=float)
    y = np.asarray(correct, dtype=float)
    if not len(c):
        return float("nan"), float("nan")
    b = bin_of(c, n_bins)
    gap = np.bincount(b, weights=y - c, minlength=n_bins)
    return float(np.abs(gap).sum() / len(c)), float(((c - y) ** 2).mean())


def consistency_test(
    conf: Any, correct: Any, *, resamples: int = CONSISTENCY_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """Broecker & Smith's consistency resampling: is the observed debiased CE^2 unusual for a
    judge whose stated confidences are its true probabilities of being right?

    Outcomes are redrawn y* ~ Bernoulli(c) `resamples` times (seeded, so a report is
    reproducible); p = (1 + #{CE^2* >= CE^2}) / (resamples + 1), exact for the Monte Carlo test.
    """
    c = np.asarray(conf, dtype=float)
    y = np.asarray(correct, dtype=float)
    n = len(c)
    observed = float(_debiased_ce2(*_bin_sums(c, y)))
    rng = np.random.default_rng([20070, n, seed])
    b = bin_of(c)
    idx = np.arange(N_BINS)
    counts = np.bincount(b, minlength=N_BINS).astype(float)
    v = np.bincount(b, weights=c * (1 - c), minlength=N_BINS)
    onehot = (b[:, None] == idx[None, :]).astype(float)  # (n, bins)
    hits = 0
    step = max(1, 2_000_000 // max(1, n))
    for start in range(0, resamples, step):
        m = min(step, resamples - start)
        e = (rng.random((m, n)) < c[None, :]).astype(float) - c[None, :]
        s_ = e @ onehot
        q_ = (e**2) @ onehot
        t = _debiased_ce2(counts[None, :], s_, q_, v[None, :])
        hits += int((t >= observed - 1e-12).sum())
    p = (1 + hits) / (resamples + 1)
    ok = p >= TEST_LEVEL
    return {
        "p_value": p,
        "level": TEST_LEVEL,
        "miscalibrated": not ok,
        "verdict": "not_miscalibrated" if ok else "miscalibrated",
        "text": "not miscalibrated at 5%" if ok else f"miscalibrated at 5% (p = {p:.3g})",
        "resamples": resamples,
        "test": "consistency resampling (Broecker & Smith 2007): outcomes redrawn from the "
        "judge's own confidences, statistic the debiased binned L2 calibration error",
    }


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
) -> tuple[Pending, Pending, Pending]:
    """Debiased calibration error, Brier and plug-in ECE on the shared bootstrap: per item and
    bin the features count, y - c, (y - c)^2 and c (1 - c), and (c - y)^2 over all bins."""
    n_bins = N_BINS
    b = bin_of(conf, n_bins)
    e = correct - conf
    m = len(idx)
    k = 4 * n_bins + 2
    rows = np.concatenate([idx] * 6)
    cols = np.concatenate(
        [
            b,
            n_bins + b,
            2 * n_bins + b,
            3 * n_bins + b,
            np.full(m, 4 * n_bins),
            np.full(m, 4 * n_bins + 1),
        ]
    )
    vals = np.concatenate([np.ones(m), e, e**2, conf * (1 - conf), e**2, np.ones(m)])

    def fin(s: np.ndarray) -> np.ndarray:
        n = s[:, 4 * n_bins + 1]
        cnt, gap = s[:, :n_bins], s[:, n_bins : 2 * n_bins]
        ce2 = _debiased_ce2(cnt, gap, s[:, 2 * n_bins : 3 * n_bins], s[:, 3 * n_bins : 4 * n_bins])
        with np.errstate(divide="ignore", invalid="ignore"):
            plug = np.abs(gap).sum(axis=1) / n
            brier = s[:, 4 * n_bins] / n
        ce = np.sqrt(np.maximum(ce2, 0.0))
        return np.column_stack(
            [
                np.where(n > 0, ce, np.nan),
                np.where(n > 0, brier, np.nan),
                np.where(n > 0, plug, np.nan),
            ]
        )

    reps = plan.add(rows, cols, vals, k, fin)
    return Pending(reps, m, col=0), Pending(reps, m, col=1), Pending(reps, m, col=2)


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
    h_by = split_by_metric(human)
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
        fig["ece_plugin"] = undefined(n, note)
        fig["calibration_test"] = {"p_value": None, "verdict": "undetermined", "text": note}
    else:
        fig["ece"], fig["brier"], plugin = register_calibration(plan, idx, conf, y)
        fig["ece_method"] = ECE_METHOD
        # the old figure, for comparison: no interval (it never reaches 0, whatever the judge)
        fig["ece_plugin"] = {
            "estimate": plugin.estimate,
            "n": n,
            "note": "plug-in ECE (Guo et al. 2017), biased upward: about 0.10 for a calibrated "
            "judge at 50 items",
        }
        fig["calibration_test"] = consistency_test(conf, y)
    return fig


__all__ = [
    "N_BINS",
    "calibration_figures",
    "consistency_test",
    "debiased_ce",
    "ece_brier",
    "judge_calibration_section",
    "register_calibration",
    "reliability_bins",
]
