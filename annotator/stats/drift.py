"""Rater drift on live anchors: a chart calibrated to each rater, and a reference chart.
(Over 500 lines on purpose: the rater-calibrated chart, the reference chart and the offset
correction read the same deviation series.)

A rater's deviation on a seeded (live) anchor, per metric, in the order the
rater met the anchors (`seq`), is the kind's own signed distance from the
reference (`KindSpec.deviation`: a scale or likert answer minus the reference,
a gate (answer == PASS) - (reference == PASS)). Metrics without a direction
(choices, tags) take part in accuracy but not in drift; "cannot judge" has no
direction and is left out of the series (it counts as *not met* in accuracy:
the one anchor rule of domain/kinds.py).

Two one-sided CUSUM pairs watch each metric; the rater is flagged at the first
anchor where any of them crosses its threshold ("up" = more lenient than the
reference: higher scales, more PASS):

- **Calibrated chart** (drift from the rater's own habit). Each deviation is
  replaced by its sequential mid-rank among the rater's own earlier deviations
  on that metric (the first `BASELINE` = 30 of them, once there are 30; nothing
  is charted before 5), as a normal score u = Phi^-1((#below + #equal / 2 + 1/2)
  / (n + 1)). A rater's personal offset and spread, whatever they are, are thus
  the chart's zero and its unit: a steady rater of any noise level looks the
  same to it. CUSUM on u with k = 0.75, h = 5.5.
- **Combined chart** (a rater becoming lenient or severe on everything): CUSUM
  on the mean over the rater's metrics, at each anchor, of the deviation minus
  the rater's own early offset on that metric (the mean of their first
  `BASELINE_ALL` = 15 deviations, as far as they go; nothing is charted before
  5), k = 0.3, h = 3.3 (3 before, on raw deviations: the centring adds the
  noise of the offset's estimate). The short baseline keeps an early change
  (the demo's drifting rater, from its seventh anchor) out of the zero.

Drift is a *change* from where the rater started. A rater who is off the
reference by the same amount from the first anchor on has not drifted: that is
a **calibration offset**, reported apart (`calibration_offset`: per metric the
mean deviation with its 95% t interval over the rater's anchors, flagged as
"consistently severe by 0.75 on <metric>" when the interval excludes 0 and the
mean is at least OFFSET_TOLERANCE: half a point, a quarter on a two-valued
metric). Before this rule a steady rater 0.75 point severe was
flagged as drifting in 97% of runs, by the reference chart (CUSUM on the raw
deviation, k = 1 point, h = 5) and the combined chart on raw deviations. The
reference chart's paths are still drawn; for the app's notice
(`check_rater_drift`) it still raises a notice of kind "offset" (a rater far
from the reference from the start should recalibrate), never a drift flag in
the report.

**Detectability** depends on the anchor: answers are clipped to the scale, so
+1 point at a reference of 5 (or a PASS reference, for a gate) cannot show.
Each rater's entry says on how many of their anchors a shift up and a shift
down can show (`detectability`); the simulated detection figures below are
measured with answers clipped to the scale.
  Averaging cancels noise the metrics do not share, so a drift of about one
  point on the scales and a few more PASS from the seventh anchor on (the demo's
  drifting rater) is caught in about 90% of runs although no single metric's
  chart sees it.

Measured (tests/benchmarks/drift.md; ui_mockup-like rubric: 2 gates + 2
scales 0-5 watched at once, anchors' references spread over the scale and
answers clipped to it): see MODEL and drift.md for the false-flag and detection
rates of steady, offset and drifting raters.

**EWMA** (shown beside the CUSUM, does not decide the flag): z_t = lambda u_t +
(1 - lambda) z_{t-1} of the calibrated scores, lambda = 0.2, with limits
+-3 sqrt(lambda / (2 - lambda) (1 - (1 - lambda)^(2t))) (the scores have unit
variance by construction).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.stats import beta, norm
from scipy.stats import t as student_t

from ..domain.kinds import is_missing
from ..domain.rubric import Metric, Rubric
from .frames import StudyFrames

K = 0.75  # calibrated chart, in normal-score units
H = 5.5
K_REF = 1.0  # reference chart, in points (two-valued metrics: K_REF_BINARY)
K_REF_BINARY = 0.5
H_REF = 5.0
# the combined chart's zero: the mean of the rater's first BASELINE_ALL deviations per metric
# (short, so a rater who changes early, the demo's from the seventh anchor, has a clean start)
BASELINE_ALL = 15
K_ALL = 0.3  # combined chart: the mean deviation over the rater's metrics at one anchor
H_ALL = 3.3  # 3.0 on raw deviations, the rule before the centring (H_ALL_BEFORE, for the benchmark's "old rule")
H_ALL_BEFORE = 3.0
BASELINE = 30
MIN_BASELINE = 5
EWMA_LAMBDA = 0.2
EWMA_L = 3.0
OFFSET_TOLERANCE = 0.5  # points (two-valued metrics: OFFSET_TOLERANCE_BINARY)
OFFSET_TOLERANCE_BINARY = 0.25
MIN_OFFSET_ANCHORS = 5
MODEL = (
    "calibrated chart: sequential mid-rank normal scores of the rater's deviations among their "
    f"own first {BASELINE} (CUSUM k {K:g}, h {H:g}); combined chart: mean over the metrics of the "
    f"deviation minus the rater's own early offset (k {K_ALL:g}, h {H_ALL:g}); a constant offset "
    "from the reference is a calibration finding (calibration_offset), not drift. Simulated with "
    "answers clipped to the scale: a steady rater of any noise level is falsely flagged within "
    "100 anchors in at most 1.7% of runs, a steady rater 0.75 point severe in 0.4%; +1 point on "
    "both scales from anchor 30 is flagged within 15 anchors in 95% (sd 0.55), 71% (sd 0.75) "
    "and 56% (sd 0.89) of runs, none at a reference of 5"
)

__all__ = [
    "EWMA_LAMBDA",
    "H",
    "H_REF",
    "K",
    "K_REF",
    "MODEL",
    "calibration_offset",
    "centered",
    "check_rater_drift",
    "cusum",
    "drift_metrics",
    "ewma",
    "first_alarm",
    "rank_scores",
    "rater_drift_summary",
]


# ---- the charts ----------------------------------------------------------------


def drift_metrics(rubric: Rubric) -> list[Metric]:
    """Metrics whose answers have a direction against the reference (the kind says so)."""
    out = []
    for m in rubric.metrics:
        vals = m.values() if m.judgeable else ()
        if len(vals) >= 2 and m.spec.deviation(m, vals[-1], vals[0]) is not None:
            out.append(m)
    return out


def rank_scores(
    deviations: np.ndarray, baseline: int = BASELINE, start: int = MIN_BASELINE
) -> np.ndarray:
    """Sequential mid-rank normal scores, rows = runs (or one series): deviation t ranked among
    the series' earlier deviations (the first `baseline` of them); 0 before `start` earlier ones."""
    d = np.atleast_2d(np.asarray(deviations, dtype=float))
    runs, steps = d.shape
    u = np.zeros((runs, steps))
    b = min(baseline, steps)
    n = np.minimum(np.arange(steps), baseline)  # earlier answers each one is ranked among
    mask = np.arange(b)[None, :] < n[:, None]  # (T, b): baseline j counts for answer t
    step = max(1, 2_000_000 // max(1, steps * b))
    for r0 in range(0, runs, step):
        x = d[r0 : r0 + step, :, None]
        base = d[r0 : r0 + step, None, :b]
        below = ((base < x) & mask).sum(axis=2)
        equal = ((base == x) & mask).sum(axis=2)
        u[r0 : r0 + step] = norm.ppf((below + 0.5 * equal + 0.5) / (n + 1))
    u[:, n < start] = 0.0
    return u if np.ndim(deviations) > 1 else u[0]


def centered(
    deviations: np.ndarray, baseline: int | None = None, start: int = MIN_BASELINE
) -> np.ndarray:
    """Deviation t minus the mean of the series' earlier deviations (the first `baseline` of
    them), rows = runs (or one series); 0 before `start` earlier ones: the rater's own early
    offset is the zero, so a constant offset is no change."""
    baseline = BASELINE_ALL if baseline is None else baseline
    d = np.atleast_2d(np.asarray(deviations, dtype=float))
    steps = d.shape[1]
    n = np.minimum(np.arange(steps), baseline)
    cs = np.concatenate([np.zeros((d.shape[0], 1)), np.cumsum(d[:, :baseline], axis=1)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = cs[:, n] / np.maximum(n, 1)
    out = np.where(n[None, :] >= start, d - mean, 0.0)
    return out if np.ndim(deviations) > 1 else out[0]


def cusum(values: Sequence[float] | np.ndarray, k: float = K) -> tuple[np.ndarray, np.ndarray]:
    """One-sided CUSUM paths (S+, S-) of a series; both are >= 0."""
    d = np.asarray(values, dtype=float)
    up, down = np.zeros(len(d)), np.zeros(len(d))
    sp = sm = 0.0
    for t, x in enumerate(d):
        sp = max(0.0, sp + x - k)
        sm = max(0.0, sm - x - k)
        up[t], down[t] = sp, sm
    return up, down


def ewma(
    values: Sequence[float] | np.ndarray,
    lam: float = EWMA_LAMBDA,
    sigma: float = 1.0,
    width: float = EWMA_L,
) -> tuple[np.ndarray, np.ndarray]:
    """EWMA path and its (symmetric, time-varying) control limit."""
    d = np.asarray(values, dtype=float)
    z = np.zeros(len(d))
    prev = 0.0
    for i, x in enumerate(d):
        prev = lam * x + (1 - lam) * prev
        z[i] = prev
    t = np.arange(1, len(d) + 1)
    limit = width * sigma * np.sqrt(lam / (2 - lam) * (1 - (1 - lam) ** (2 * t)))
    return z, limit


def first_alarm(values: np.ndarray, k: float = K, h: float = H) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised CUSUM over runs: values (runs, T) -> (first alarm index, direction).

    The index is T where a run never alarms; direction is +1 (up), -1 (down),
    0 (none). For simulations; an up and a down alarm at the same index counts as up.
    """
    d = np.atleast_2d(np.asarray(values, dtype=float))
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


def reference_k(metric: Metric) -> float:
    return K_REF_BINARY if len(metric.values()) == 2 else K_REF


def flag_runs(
    deviations_by_metric: Sequence[np.ndarray],
    k_reference: Sequence[float] | None = None,
    *,
    reference: bool = False,
    centre: bool = True,
) -> np.ndarray:
    """First drift flag index of simulated raters (runs x T per metric): the calibrated chart
    of every metric and the combined chart of the centred deviations. `reference=True,
    centre=False` is the rule before the centring (reference charts and a raw combined chart
    decided too); k_reference: the reference chart's k per metric (default K_REF)."""
    firsts = []
    for i, d in enumerate(deviations_by_metric):
        firsts.append(first_alarm(rank_scores(d), K, H)[0])
        if reference:
            firsts.append(first_alarm(d, k_reference[i] if k_reference else K_REF, H_REF)[0])
    parts = [centered(d) if centre else d for d in deviations_by_metric]
    h_all = H_ALL if centre else H_ALL_BEFORE
    firsts.append(first_alarm(np.mean(parts, axis=0), K_ALL, h_all)[0])
    return np.min(firsts, axis=0)


def _combined_flag(matrix: np.ndarray) -> dict[str, Any] | None:
    """First alarm of the combined chart; matrix = anchors x metrics (NaN = no deviation)."""
    with np.errstate(invalid="ignore"):
        known = ~np.isnan(matrix)
        c = np.where(
            known.any(axis=1), np.nansum(matrix, axis=1) / np.maximum(known.sum(axis=1), 1), 0.0
        )
    up, down = cusum(c, K_ALL)
    hits = np.flatnonzero((up > H_ALL) | (down > H_ALL))
    if hits.size == 0:
        return None
    i = int(hits[0])
    going_up = bool(up[i] > H_ALL and up[i] >= down[i])
    # named after the metric that moved most in that direction over the last ten anchors
    recent = matrix[max(0, i - 9) : i + 1]
    with np.errstate(invalid="ignore"):
        means = np.nanmean(np.where(np.isnan(recent), 0.0, recent), axis=0)
    col = int(np.argmax(means if going_up else -means))
    return {
        "index": i,
        "direction": "up" if going_up else "down",
        "statistic": float(up[i] if going_up else down[i]),
        "chart": "combined",
        "column": col,
    }


def _metric_flag(
    series: Sequence[float], k_ref: float = K_REF, *, reference: bool = False
) -> dict[str, Any] | None:
    """The first alarm of one metric's deviation series: the calibrated chart (drift), and with
    `reference` the reference chart too (an offset from the start, for the app's notice)."""
    d = np.asarray(series, dtype=float)
    best: dict[str, Any] | None = None
    charts = [("calibrated", rank_scores(d), K, H)]
    if reference:
        charts.append(("reference", d, k_ref, H_REF))
    for chart, values, k, h in charts:
        up, down = cusum(values, k)
        hits = np.flatnonzero((up > h) | (down > h))
        if hits.size == 0:
            continue
        i = int(hits[0])
        going_up = bool(up[i] > h and up[i] >= down[i])
        stat = float(up[i] if going_up else down[i])
        cand: dict[str, Any] = {
            "index": i,
            "direction": "up" if going_up else "down",
            "statistic": stat,
            "chart": chart,
        }
        if best is None or i < best["index"]:
            best = cand
    return best


def check_rater_drift(
    deviations_by_metric: Mapping[str, Sequence[float]], rubric: Rubric | None = None
) -> dict[str, Any] | None:
    """The first flag over a rater's series, for the app to call at item boundaries.

    Series are aligned by position (index i = the rater's i-th deviation on that
    metric). Returns {"metric", "direction" ("up"|"down"), "index", "statistic",
    "chart" ("calibrated"|"reference"|"combined"), "kind" ("drift"|"offset")} or None:
    "offset" is the reference chart (the rater far from the reference from the start; the
    app asks them to recalibrate as well), which the report lists as a calibration
    offset, never as drift. Ties at the same index go to the
    larger statistic, then to the metric named first. With the rubric, two-valued
    metrics get their own reference-chart k (as the report does). Cost: O(anchors
    x 30) per metric, a millisecond for hundreds of anchors.
    """
    best: tuple[int, float, int] | None = None
    found: dict[str, Any] | None = None
    for order, (metric, series) in enumerate(deviations_by_metric.items()):
        k_ref = (
            reference_k(rubric.metric(metric))
            if rubric is not None and rubric.has(metric)
            else K_REF
        )
        f = _metric_flag(series, k_ref, reference=True)
        if f is None:
            continue
        f["kind"] = "offset" if f["chart"] == "reference" else "drift"
        rank = (f["index"], -f["statistic"], order)
        if best is None or rank < best:
            best = rank
            found = {"metric": metric, **f}
    keys = list(deviations_by_metric)
    if keys:
        longest = max(len(v) for v in deviations_by_metric.values())
        matrix = np.full((longest, len(keys)), np.nan)
        for j, key in enumerate(keys):  # aligned by position, as the series are
            vals = centered(np.asarray(deviations_by_metric[key], dtype=float))
            matrix[: len(vals), j] = vals
        f = _combined_flag(matrix)
        if f is not None and (best is None or (f["index"], -f["statistic"]) < best[:2]):
            col = f.pop("column")
            found = {"metric": keys[col], **f, "kind": "drift"}
    return found


# ---- calibration offset and detectability ----------------------------------------


def offset_tolerance(metric: Metric) -> float:
    return OFFSET_TOLERANCE_BINARY if len(metric.values()) == 2 else OFFSET_TOLERANCE


def calibration_offset(deviations: Sequence[float], metric: Metric) -> dict[str, Any]:
    """A rater's constant distance from the reference on one metric: the mean deviation with its
    95% t interval over their anchors (anchors are independent draws; the rater's answers on
    them are not charted here, only averaged).

    {estimate, low, high, n, tolerance, flagged, direction ("lenient"|"severe"|None), text}:
    flagged when the interval excludes 0 and |mean| >= the tolerance.
    """
    d = np.asarray(deviations, dtype=float)
    n = len(d)
    tol = offset_tolerance(metric)
    out: dict[str, Any] = {"n": n, "tolerance": tol, "flagged": False, "direction": None}
    if n < MIN_OFFSET_ANCHORS:
        out.update(
            estimate=float(d.mean()) if n else None,
            low=None,
            high=None,
            note=f"{n} anchors: below the minimum of {MIN_OFFSET_ANCHORS} for an offset",
        )
        return out
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    half = float(student_t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if sd > 0 else 0.0
    low, high = mean - half, mean + half
    out.update(estimate=mean, low=low, high=high)
    if (low > 0 or high < 0) and abs(mean) >= tol:
        word = "lenient" if mean > 0 else "severe"
        label = getattr(metric, "label", None) or metric.key
        out.update(
            flagged=True,
            direction=word,
            text=f"consistently {word} by {abs(mean):.2f} [{abs(high if mean < 0 else low):.2f}, "
            f"{abs(low if mean < 0 else high):.2f}] on {label}, the mean over {n} anchors "
            "(a standing offset, not drift)",
        )
    return out


def _detectability(live: pd.DataFrame, watched: Sequence[Metric]) -> dict[str, dict[str, Any]]:
    """Per metric: on how many of the rater's anchors a shift up / down can show at all (answers
    are clipped to the scale: +1 at the top reference, or PASS on a PASS reference, cannot)."""
    out: dict[str, dict[str, Any]] = {}
    for m in watched:
        mr = live[live["metric"] == m.key].drop_duplicates(subset=["anchor_id"], keep="last")
        refs = [r for r in mr["reference"] if not is_missing(r)]
        if not refs:
            continue
        vals = m.values()
        up = sum(1 for r in refs if (m.spec.deviation(m, vals[-1], r) or 0) > 0)
        down = sum(1 for r in refs if (m.spec.deviation(m, vals[0], r) or 0) < 0)
        out[m.key] = {
            "n_anchors": len(refs),
            "up": up,
            "down": down,
            "text": f"a shift up can show on {up} of {len(refs)} anchors, a shift down on {down}",
        }
    return out


# ---- per-rater summary ---------------------------------------------------------


def _proportion(hits: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"estimate": None, "low": None, "high": None, "n": 0, "note": "no answers"}
    # Clopper-Pearson (exact) 95%: conservative, as pass/fail decisions use the bound
    low = float(beta.ppf(0.025, hits, n - hits + 1)) if hits > 0 else 0.0
    high = float(beta.ppf(0.975, hits + 1, n - hits)) if hits < n else 1.0
    return {"estimate": hits / n, "low": low, "high": high, "n": n}


def _accuracy(rows: pd.DataFrame, rubric: Rubric) -> dict[str, dict[str, Any]]:
    """Anchor accuracy by the kind's rule; "cannot judge" counts as not met (and is counted)."""
    out: dict[str, dict[str, Any]] = {}
    for m in rubric.metrics:
        mr = rows[rows["metric"] == m.key]
        if mr.empty or not m.judgeable:
            continue
        marks = [
            m.spec.anchor_match(m, v, r) for v, r in zip(mr["value"], mr["reference"], strict=True)
        ]
        ok = [x for x in marks if x is not None]
        if not ok:
            continue
        d = _proportion(sum(x.met for x in ok), len(ok))
        d["rule"] = m.spec.match_rule
        d["n_cannot_judge"] = int(
            sum(is_missing(v) for v, x in zip(mr["value"], marks, strict=True) if x is not None)
        )
        if m.spec.match_rule != "exact":
            d["exact"] = sum(x.exact for x in ok) / len(ok)
        out[m.key] = d
    return out


def _test_retest(rows: pd.DataFrame, rubric: Rubric) -> dict[str, dict[str, Any]]:
    """Consecutive sessions' answers on the same anchor (first answer per session), by the kind's
    anchor rule with the earlier answer as the reference."""
    out: dict[str, dict[str, Any]] = {}
    for m in rubric.metrics:
        mr = rows[rows["metric"] == m.key]
        if mr.empty or not m.judgeable or m.spec.multi:
            continue
        answered = mr[[not is_missing(v) for v in mr["value"]]].sort_values("seq", kind="stable")
        firsts = answered.drop_duplicates(subset=["anchor_id", "session_id"], keep="first")
        prev = firsts.groupby("anchor_id", sort=False)["value"].shift(1)
        has_prev = prev.notna()
        pairs = list(zip(prev[has_prev], firsts["value"][has_prev], strict=True))
        n_anchors = int(firsts.loc[has_prev, "anchor_id"].nunique())
        d: dict[str, Any] = {
            "n_pairs": len(pairs),
            "n_anchors": n_anchors,
            "rule": m.spec.match_rule,
        }
        if not pairs:
            d.update(agreement=None, note="no anchor answered in two sessions")
            out[m.key] = d
            continue
        marks = [m.spec.anchor_match(m, b, a) for a, b in pairs]
        d["agreement"] = sum(x.met for x in marks if x) / len(pairs)
        if m.spec.match_rule != "exact":
            d["exact"] = sum(x.exact for x in marks if x) / len(pairs)
            signed = [m.spec.deviation(m, b, a) for a, b in pairs]
            devs = [abs(x) for x in signed if x is not None]
            if devs:
                d["mean_abs_difference"] = float(np.mean(devs))
        out[m.key] = d
    return out


def _metric_deviations(
    rows: pd.DataFrame, metric: Metric
) -> tuple[list[int], list[float], list[Any]]:
    """(seq, deviation, reference) of one metric's answers that have a direction, in anchor
    order."""
    mr = rows[rows["metric"] == metric.key].sort_values("seq", kind="stable")
    mr = mr.drop_duplicates(subset=["seq"], keep="last")
    seq, dev, refs = [], [], []
    for s, v, r in zip(mr["seq"], mr["value"], mr["reference"], strict=True):
        d = metric.spec.deviation(metric, v, r)
        if d is not None and math.isfinite(d):
            seq.append(int(s))
            dev.append(float(d))
            refs.append(r)
    return seq, dev, refs


def live_deviations(rows: pd.DataFrame, rubric: Rubric) -> dict[str, list[float]]:
    """One rater's live anchor answers as the series the drift charts read, per drift metric
    (deviations net of what the scale's ends do to the rater's own offset: `offset_adjusted`):
    the input of check_rater_drift, cheap enough for the app to run after every anchor answer."""
    live = rows[rows["context"] == "live"]
    out = {}
    for m in drift_metrics(rubric):
        _, dev, refs = _metric_deviations(live, m)
        if dev:
            out[m.key] = offset_adjusted(dev, refs, m).tolist()
    return out


# ---- an offset at the scale's ends is not drift --------------------------------------
#
# A rater constantly one point severe shows a deviation of -1 against a reference of 3 but 0
# against a reference at the scale's bottom: the answer cannot go lower. Where the references of
# the anchors a rater meets move over time (anchors served in an order, a new anchor set), the
# deviation then moves with them and a steady offset reads as drift (a severe rater whose
# references rose through the scale: flagged in 87-99% of runs). The charts read instead the
# deviation net of what the rater's own offset gives at that reference: with the offset d and
# spread s fitted on the rater's first BASELINE answers (a normal answer around reference + d,
# rounded to the scale's points and held at its ends: maximum likelihood), each deviation plus
# what the ends hold back of d at its reference (d minus the expected deviation there, in whole
# steps). Away from the ends this is the deviation itself; at them it keeps a constant offset
# constant.


def _expected_deviation(points: np.ndarray, refs: np.ndarray, d: float, s: float) -> np.ndarray:
    """E[answer - reference] for answers ~ N(reference + d, s) rounded to `points`, held at the
    ends; one value per reference."""
    cuts = (points[:-1] + points[1:]) / 2
    z = (cuts[None, :] - refs[:, None] - d) / s
    cdf = np.concatenate([np.zeros((len(refs), 1)), norm.cdf(z), np.ones((len(refs), 1))], axis=1)
    prob = np.diff(cdf, axis=1)
    return prob @ points - refs


def _fit_offset(points: np.ndarray, refs: np.ndarray, answers: np.ndarray) -> tuple[float, float]:
    """Maximum likelihood (d, s) of answers ~ N(reference + d, s) rounded to `points` and held
    at the ends (s at least a tenth of the points' gap: an exact rater has no spread to fit)."""
    cuts = np.concatenate([[-np.inf], (points[:-1] + points[1:]) / 2, [np.inf]])
    at = np.searchsorted(points, answers)
    gap = float(np.min(np.diff(points)))

    def nll(theta: np.ndarray) -> float:
        d, log_s = theta
        s = math.exp(log_s)
        hi = norm.cdf((cuts[at + 1] - refs - d) / s)
        lo = norm.cdf((cuts[at] - refs - d) / s)
        return -float(np.sum(np.log(np.clip(hi - lo, 1e-300, None))))

    start = np.array([float(np.mean(answers - refs)), math.log(max(np.std(answers - refs), gap))])
    res = minimize(nll, start, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-8})
    return float(res.x[0]), max(math.exp(float(res.x[1])), gap / 10)


def offset_adjusted(dev: Sequence[float], refs: Sequence[Any], metric: Metric) -> np.ndarray:
    """The deviations the drift charts read: on a scale or likert of three or more points, each
    deviation plus what the scale's ends hold back of the rater's own offset at its reference
    (the offset and spread fitted on their first BASELINE answers; rounded to the scale's step).
    Other metrics unchanged."""
    d = np.asarray(dev, dtype=float)
    if len(d) < MIN_BASELINE:
        return d
    points = np.asarray(metric.values(), dtype=float) if metric.spec.ordered else np.zeros(0)
    base = min(len(d), BASELINE)
    if len(points) >= 3 and metric.spec.level == "ordinal":
        try:
            r = np.asarray(refs, dtype=float)
        except (TypeError, ValueError):
            return d
        off, spread = _fit_offset(points, r[:base], r[:base] + d[:base])
        # what the ends take off the offset at each reference, in whole steps of the scale: the
        # calibrated chart ranks the deviations, and a continuous correction would break the
        # ties of a scale's answers (which its thresholds count on) on every anchor
        step = float(np.min(np.diff(points)))
        held = _expected_deviation(points, r, off, spread) - off
        return d - np.round(held / step) * step
    return d


def _series(rows: pd.DataFrame, metric: Metric) -> dict[str, Any] | None:
    seq, dev, refs = _metric_deviations(rows, metric)
    if not dev:
        return None
    adjusted = offset_adjusted(dev, refs, metric)
    u = rank_scores(adjusted)
    up, down = cusum(u, K)
    k_ref = reference_k(metric)
    ref_up, ref_down = cusum(dev, k_ref)
    z, limit = ewma(u)
    return {
        "seq": seq,
        "deviation": dev,
        "adjusted": adjusted.tolist(),
        "score": u.tolist(),
        "cusum_up": up.tolist(),
        "cusum_down": down.tolist(),
        "ewma": z.tolist(),
        "ewma_limit": limit.tolist(),
        "k": K,
        "h": H,
        "reference_up": ref_up.tolist(),
        "reference_down": ref_down.tolist(),
        "k_reference": k_ref,
        "h_reference": H_REF,
    }


def rater_drift_summary(frames: StudyFrames) -> dict[str, dict[str, Any]]:
    """Per rater: live anchor count, drift flag, accuracy, test-retest and the chart series.

    {rater: {"anchors": int, "drift": {flagged, metric, direction, first_flag_at, [chart]},
             "accuracy": {metric: {estimate, low, high, n, rule, ...}},
             "calibration_accuracy": {...} (only if calibration answers exist),
             "test_retest": {metric: {n_pairs, n_anchors, agreement, ...}},
             "calibration_offset": {metric: {estimate, low, high, n, tolerance, flagged,
                                             direction, [text]}} (a constant offset: not drift),
             "detectability": {metric: {n_anchors, up, down, text}},
             "series": {metric: {seq, deviation, score, cusum_up, cusum_down, ewma, ewma_limit, k, h,
                                 reference_up, reference_down, k_reference, h_reference}}}}
    first_flag_at is the seq of the anchor answer at which the first flag fell.
    """
    aa = frames.anchor_answers
    rubric = frames.rubric
    out: dict[str, dict[str, Any]] = {}
    if aa is None or aa.empty:
        return out
    aa = aa[aa["metric"].isin([m.key for m in rubric.metrics])]
    watched = drift_metrics(rubric)
    for rater, rows in aa.groupby("rater", sort=True):
        context = rows["context"].fillna("live").astype(str)
        live = rows[context == "live"]
        calib = rows[context == "calibration"]
        series: dict[str, Any] = {}
        for m in watched:
            s = _series(live, m)
            if s is not None:
                series[m.key] = s
        drift: dict[str, Any] = {
            "flagged": False,
            "metric": None,
            "direction": None,
            "first_flag_at": None,
        }
        # series differ in length where answers had no direction: compare flags by seq, not index
        flags = []
        for order, (key, s) in enumerate(series.items()):
            f = _metric_flag(s["adjusted"], s["k_reference"])  # drift only: no reference chart
            if f is not None:
                flags.append(
                    (s["seq"][f["index"]], -f["statistic"], order, key, f["direction"], f["chart"])
                )
        if series:
            seqs = sorted({q for s in series.values() for q in s["seq"]})
            pos = {q: i for i, q in enumerate(seqs)}
            matrix = np.full((len(seqs), len(series)), np.nan)
            for j, s in enumerate(series.values()):
                matrix[[pos[q] for q in s["seq"]], j] = centered(np.asarray(s["adjusted"]))
            f = _combined_flag(matrix)
            if f is not None:
                flags.append(
                    (
                        seqs[f["index"]],
                        -f["statistic"],
                        -1,
                        list(series)[f["column"]],
                        f["direction"],
                        "combined",
                    )
                )
        if flags:
            seq_at, _, _, key, direction, chart = min(flags)
            drift = {
                "flagged": True,
                "metric": key,
                "direction": direction,
                "first_flag_at": int(seq_at),
                "chart": chart,
            }
        # the offset is where the rater stands before any drift: a drifting rater's later
        # answers would count their change as an offset too
        before = drift["first_flag_at"] if drift["flagged"] else None
        offsets = {
            m.key: calibration_offset(
                [
                    d
                    for q, d in zip(series[m.key]["seq"], series[m.key]["deviation"], strict=True)
                    if before is None or q < before
                ],
                m,
            )
            for m in watched
            if m.key in series
        }
        entry: dict[str, Any] = {
            "anchors": int(live["seq"].dropna().nunique()),
            "drift": drift,
            "calibration_offset": offsets,
            "detectability": _detectability(live, watched),
            "accuracy": _accuracy(live, rubric),
            "test_retest": _test_retest(live, rubric),
            "series": series,
        }
        if not calib.empty:
            entry["calibration_accuracy"] = _accuracy(calib, rubric)
        out[str(rater)] = entry
    return out
