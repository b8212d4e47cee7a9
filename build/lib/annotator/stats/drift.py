"""Rater drift on live anchors: CUSUM and EWMA of deviations from the reference.

A rater's deviation on a seeded (live) anchor, per metric, in the order the
rater met the anchors (`seq`):

- scale: answer - reference (points);
- gate: (answer == PASS) - (reference == PASS), so -1, 0 or +1;
- "cannot judge" (answer or reference) is skipped; choices and tags take part
  in accuracy but not in drift (a mismatch has no direction).

**CUSUM** (decides the flag). In each direction, S+ = max(0, S+ + d - k) and
S- = max(0, S- - d - k), starting at 0; the rater is flagged at the first
anchor where either exceeds h on any metric; "up" = more lenient than the
reference (higher scales, more PASS). Defaults K = 0.5, H = 3.5: k is half the
one-point shift we want to catch (the textbook optimum for a shift of size
2k); h was chosen on a ui_mockup-like rubric (2 gates, 2 scales 0-5, reference
scales mostly 1..4, gate references 60% PASS, 8 one-sided CUSUMs watched at
once). Run lengths, exact from the Markov chain of (S+, S-) (simulation agrees):

| scenario | h = 3.5 (default) | h = 3 | h = 4 |
|---|---|---|---|
| steady rater (scales -1/0/+1 at .15/.70/.15, gates flipped 15%): in-control ARL, one scale | 1.1e6 | 1.9e5 | 6.5e6 |
| steady rater: in-control ARL, all 4 metrics | 5.5e5 | 9.4e4 | 3.3e6 |
| steady rater: false flag within 100 anchors | 0.017% | 0.10% | 0.003% |
| noisier rater (.25/.50/.25, gates 25%): false flag within 100 | 1.0% | 3.5% | 0.3% |
| +1 point on both scales from anchor 30: flagged at anchors 30..44 | 99.7% | 99.9% | 99.4% |
| the same: delay in anchors, mean / median / 90th percentile | 7.2 / 7 / 10 | 6.2 / 6 / 9 | 8.2 / 8 / 11 |
| +1 point on one scale only: flagged at anchors 30..44 | 94.9% | 97.5% | 92.1% |

(delay 1 = flagged on the first shifted anchor; the script and more rows are
in tests/benchmarks/drift.md; the unit tests re-measure both requirements with
1000 seeded runs each.) h = 3.5 keeps a rater who is a point off half the
time (rather than 30%) at a 1% false-flag rate over 100 anchors, while still
catching a one-point shift on a single scale within 15 anchors 95% of the time. Deviations are
integers and k = 0.5, so the statistics move in half points: "> 3.5" means 4.

**EWMA** (shown beside the CUSUM, does not decide the flag): z_t = lambda d_t +
(1 - lambda) z_{t-1}, z_0 = 0, lambda = 0.2 (weights the last ~10 anchors, the
usual choice for shifts of about one in-control sd), control limits
+-L sigma sqrt(lambda / (2 - lambda) (1 - (1 - lambda)^(2t))) with L = 3 and
sigma = 0.55, the in-control sd of the steady rater above (sqrt(0.3)); a fixed
sigma, because estimating it from the rater's own series would absorb the
drift it is meant to show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta

from ..domain.rubric import CANNOT_JUDGE, PASS, Metric, Rubric
from .frames import StudyFrames

K = 0.5
H = 3.5
EWMA_LAMBDA = 0.2
EWMA_L = 3.0
EWMA_SIGMA = math.sqrt(0.3)
DRIFT_KINDS = ("gate", "scale")

__all__ = [
    "EWMA_LAMBDA",
    "H",
    "K",
    "check_rater_drift",
    "cusum",
    "deviation",
    "ewma",
    "first_alarm",
    "rater_drift_summary",
]


# ---- the charts ----------------------------------------------------------------


def deviation(metric: Metric, value: Any, reference: Any) -> float | None:
    """Signed deviation of an answer from the reference; None when not comparable."""
    if metric.kind not in DRIFT_KINDS or _missing(value) or _missing(reference):
        return None
    if metric.kind == "gate":
        return float(str(value).upper() == PASS) - float(str(reference).upper() == PASS)
    try:
        return float(value) - float(reference)
    except (TypeError, ValueError):
        return None


def _missing(v: Any) -> bool:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    return isinstance(v, str) and (v.strip() == "" or v.strip().lower() == CANNOT_JUDGE)


def cusum(deviations: Sequence[float], k: float = K) -> tuple[np.ndarray, np.ndarray]:
    """One-sided CUSUM paths (S+, S-) of a deviation series; both are >= 0."""
    d = np.asarray(deviations, dtype=float)
    up, down = np.zeros(len(d)), np.zeros(len(d))
    sp = sm = 0.0
    for t, x in enumerate(d):
        sp = max(0.0, sp + x - k)
        sm = max(0.0, sm - x - k)
        up[t], down[t] = sp, sm
    return up, down


def ewma(
    deviations: Sequence[float], lam: float = EWMA_LAMBDA, sigma: float = EWMA_SIGMA, width: float = EWMA_L
) -> tuple[np.ndarray, np.ndarray]:
    """EWMA path and its (symmetric, time-varying) control limit."""
    d = np.asarray(deviations, dtype=float)
    z = np.zeros(len(d))
    prev = 0.0
    for t, x in enumerate(d):
        prev = lam * x + (1 - lam) * prev
        z[t] = prev
    t = np.arange(1, len(d) + 1)
    limit = width * sigma * np.sqrt(lam / (2 - lam) * (1 - (1 - lam) ** (2 * t)))
    return z, limit


def first_alarm(deviations: np.ndarray, k: float = K, h: float = H) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised CUSUM over runs: deviations (runs, T) -> (first alarm index, direction).

    The index is T where a run never alarms; direction is +1 (up), -1 (down),
    0 (none). For simulations; an up and a down alarm at the same index counts as up.
    """
    d = np.atleast_2d(np.asarray(deviations, dtype=float))
    runs, steps = d.shape
    sp, sm = np.zeros(runs), np.zeros(runs)
    first = np.full(runs, steps)
    direction = np.zeros(runs, dtype=int)
    for t in range(steps):
        sp = np.maximum(0.0, sp + d[:, t] - k)
        sm = np.maximum(0.0, sm - d[:, t] - k)
        new = (first == steps) & ((sp > h) | (sm > h))
        first[new] = t
        direction[new] = np.where(sp[new] > h, 1, -1)
    return first, direction


def check_rater_drift(
    deviations_by_metric: Mapping[str, Sequence[float]], k: float = K, h: float = H
) -> dict[str, Any] | None:
    """The first CUSUM flag over a rater's series, for the app to call at item boundaries.

    Series are aligned by position (index i = the rater's i-th deviation on that
    metric). Returns {"metric", "direction" ("up"|"down"), "index", "statistic"}
    or None. Ties at the same index go to the larger statistic, then to the
    metric named first.
    """
    best: tuple[int, float, int] | None = None
    found: dict[str, Any] | None = None
    for order, (metric, series) in enumerate(deviations_by_metric.items()):
        up, down = cusum(series, k)
        hits = np.flatnonzero((up > h) | (down > h))
        if hits.size == 0:
            continue
        i = int(hits[0])
        going_up = up[i] > h and (up[i] >= down[i])
        stat = float(up[i] if going_up else down[i])
        rank = (i, -stat, order)
        if best is None or rank < best:
            best = rank
            found = {"metric": metric, "direction": "up" if going_up else "down", "index": i, "statistic": stat}
    return found


# ---- per-rater summary ---------------------------------------------------------


def _proportion(hits: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"estimate": None, "low": None, "high": None, "n": 0, "note": "no answers"}
    # Clopper-Pearson (exact) 95%: conservative, as pass/fail decisions use the bound
    low = float(beta.ppf(0.025, hits, n - hits + 1)) if hits > 0 else 0.0
    high = float(beta.ppf(0.975, hits + 1, n - hits)) if hits < n else 1.0
    return {"estimate": hits / n, "low": low, "high": high, "n": n}


def _correct(metric: Metric, value: Any, reference: Any) -> tuple[bool, bool] | None:
    """(counted as correct, exactly equal); None when not comparable."""
    if metric.kind not in ("gate", "scale", "choice") or _missing(value) or _missing(reference):
        return None
    if metric.kind == "scale":
        try:
            diff = abs(float(value) - float(reference))
        except (TypeError, ValueError):
            return None
        return diff <= 1, diff == 0
    same = str(value).strip().upper() == str(reference).strip().upper() if metric.kind == "gate" \
        else value == reference
    return same, same


def _accuracy(rows: pd.DataFrame, rubric: Rubric) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in rubric.metrics:
        if m.kind not in ("gate", "scale", "choice"):
            continue
        mr = rows[rows["metric"] == m.key]
        if mr.empty:
            continue
        marks = [_correct(m, v, r) for v, r in zip(mr["value"], mr["reference"], strict=True)]
        ok = [x for x in marks if x is not None]
        d = _proportion(sum(a for a, _ in ok), len(ok))
        d["rule"] = "within one point" if m.kind == "scale" else "exact"
        d["n_cannot_judge"] = len(marks) - len(ok)
        if m.kind == "scale" and ok:
            d["exact"] = sum(b for _, b in ok) / len(ok)
        out[m.key] = d
    return out


def _test_retest(rows: pd.DataFrame, rubric: Rubric) -> dict[str, dict[str, Any]]:
    """Consecutive sessions' answers on the same anchor (first answer per session)."""
    out: dict[str, dict[str, Any]] = {}
    for m in rubric.metrics:
        if m.kind not in ("gate", "scale", "choice"):
            continue
        mr = rows[rows["metric"] == m.key]
        if mr.empty:
            continue
        answered = mr[[not _missing(v) for v in mr["value"]]].sort_values("seq", kind="stable")
        firsts = answered.drop_duplicates(subset=["anchor_id", "session_id"], keep="first")
        prev = firsts.groupby("anchor_id", sort=False)["value"].shift(1)
        has_prev = prev.notna()
        pairs = list(zip(prev[has_prev], firsts["value"][has_prev], strict=True))
        n_anchors = int(firsts.loc[has_prev, "anchor_id"].nunique())
        d: dict[str, Any] = {"n_pairs": len(pairs), "n_anchors": n_anchors}
        if not pairs:
            d.update(agreement=None, note="no anchor answered in two sessions")
        elif m.kind == "scale":
            diffs = [abs(float(a) - float(b)) for a, b in pairs]
            d.update(agreement=sum(x <= 1 for x in diffs) / len(diffs),
                     exact=sum(x == 0 for x in diffs) / len(diffs),
                     mean_abs_difference=float(np.mean(diffs)), rule="within one point")
        else:
            d.update(agreement=sum(str(a) == str(b) for a, b in pairs) / len(pairs), rule="exact")
        out[m.key] = d
    return out


def _metric_deviations(rows: pd.DataFrame, metric: Metric) -> tuple[list[int], list[float]]:
    """(seq, deviation) of one metric's comparable answers, in anchor order."""
    mr = rows[rows["metric"] == metric.key].sort_values("seq", kind="stable")
    mr = mr.drop_duplicates(subset=["seq"], keep="last")
    seq, dev = [], []
    for s, v, r in zip(mr["seq"], mr["value"], mr["reference"], strict=True):
        d = deviation(metric, v, r)
        if d is not None:
            seq.append(int(s))
            dev.append(d)
    return seq, dev


def live_deviations(rows: pd.DataFrame, rubric: Rubric) -> dict[str, list[float]]:
    """One rater's live anchor answers as deviation series per drift metric: the input of
    check_rater_drift, cheap enough for the app to run after every anchor answer."""
    live = rows[rows["context"] == "live"]
    out = {}
    for m in rubric.metrics:
        if m.kind in DRIFT_KINDS:
            _, dev = _metric_deviations(live, m)
            if dev:
                out[m.key] = dev
    return out


def _series(rows: pd.DataFrame, metric: Metric, k: float, h: float) -> dict[str, Any] | None:
    seq, dev = _metric_deviations(rows, metric)
    if not dev:
        return None
    up, down = cusum(dev, k)
    z, limit = ewma(dev)
    return {"seq": seq, "deviation": dev, "cusum_up": up.tolist(), "cusum_down": down.tolist(),
            "ewma": z.tolist(), "ewma_limit": limit.tolist(), "k": k, "h": h}


def rater_drift_summary(frames: StudyFrames, *, k: float = K, h: float = H) -> dict[str, dict[str, Any]]:
    """Per rater: live anchor count, drift flag, accuracy, test-retest and the chart series.

    {rater: {"anchors": int, "drift": {flagged, metric, direction, first_flag_at},
             "accuracy": {metric: {estimate, low, high, n, rule, ...}},
             "calibration_accuracy": {...} (only if calibration answers exist),
             "test_retest": {metric: {n_pairs, n_anchors, agreement, ...}},
             "series": {metric: {seq, deviation, cusum_up, cusum_down, ewma, ewma_limit, k, h}}}}
    first_flag_at is the seq of the anchor answer at which the first flag fell.
    """
    aa = frames.anchor_answers
    rubric = frames.rubric
    out: dict[str, dict[str, Any]] = {}
    if aa is None or aa.empty:
        return out
    aa = aa[aa["metric"].isin([m.key for m in rubric.metrics])]
    for rater, rows in aa.groupby("rater", sort=True):
        context = rows["context"].fillna("live").astype(str)
        live = rows[context == "live"]
        calib = rows[context == "calibration"]
        series: dict[str, Any] = {}
        for m in rubric.metrics:
            if m.kind in DRIFT_KINDS:
                s = _series(live, m, k, h)
                if s is not None:
                    series[m.key] = s
        flag = check_rater_drift({key: s["deviation"] for key, s in series.items()}, k, h)
        drift: dict[str, Any] = {"flagged": False, "metric": None, "direction": None, "first_flag_at": None}
        if flag is not None:
            # series differ in length where cannot_judge was skipped: compare by seq, not index
            flags = []
            for order, (key, s) in enumerate(series.items()):
                f = check_rater_drift({key: s["deviation"]}, k, h)
                if f is not None:
                    flags.append((s["seq"][f["index"]], -f["statistic"], order, key, f["direction"]))
            seq_at, _, _, key, direction = min(flags)
            drift = {"flagged": True, "metric": key, "direction": direction, "first_flag_at": int(seq_at)}
        entry: dict[str, Any] = {
            "anchors": int(live["seq"].dropna().nunique()),
            "drift": drift,
            "accuracy": _accuracy(live, rubric),
            "test_retest": _test_retest(live, rubric),
            "series": series,
        }
        if not calib.empty:
            entry["calibration_accuracy"] = _accuracy(calib, rubric)
        out[str(rater)] = entry
    return out
