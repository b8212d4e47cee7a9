"""Stratified PPI++ (Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen 2024, "Stratified
prediction-powered inference for hybrid language model evaluation"): one lambda per stratum.

The debiased figure (stats/debiased.py) tunes one lambda for all of a generator's items. A
judge is rarely equally good everywhere: sure of itself it is mostly right, unsure mostly
noise. Splitting the items into strata where the judge is alike (by default the judge's stated
confidence, three bins at its tertiles over the generator's items; or the items' `slice`, by
the study setting `debiased_strata`) and tuning lambda_k within each lets the judge count
where it is good and the humans where it is not:

    theta = sum_k W_k theta_k,   var = sum_k W_k^2 var_k

theta_k: the PPI++ estimate within stratum k (`ppi_mean` on its items, with its own tuned
lambda_k and its jackknife variance var_k, `small_sample=True`), W_k: the stratum's share of
the generator's population weight (each case weighted equally, as the figure weights it; with
one item per case, its share of the items). The bins need MIN_PER_BIN answered items each
(fewer bins, or none, below it). The sample is the figure's uniform (or active)
sample, so the strata are post-strata: W_k is known from the judge, which scores every item,
and each stratum's answered items are a random sample of it. With several items per case a
case's items stay in one stratum (its items' mean confidence), so the strata are independent
samples of cases and their variances add. The interval is a t on the Welch-Satterthwaite
degrees of freedom of that sum (each stratum's Kish units less one): a small stratum's
variance is itself uncertain, and a t on the total units would under-cover.

A stratum with fewer than 2 answered items, or whose humans all agree (its variance would be
0, claiming a certainty its few labels do not have), merges with its neighbour (the next
bin up, the last with the one below) until every stratum has both.

The allocation of new labels is Neyman's: n_k proportional to W_k * S_k, S_k the (weighted)
standard deviation of the stratum's residual y - lambda_k f on its answered items, for a total
n = (2 z sum_k W_k S_k / width)^2 that reaches the plan's width (the judge's term on the
unlabelled items, lambda_k^2 var(f) / N_k, is left out: it is small beside the humans' at any
N much larger than n). Simulated coverage and width: tests/benchmarks/validity.md, model S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..domain.settings import setting
from .debiased import (
    Design,
    Interval,
    PPIResult,
    _kish_units,
    _published,
    _quantile,
    design,
    ppi_mean,
)

STRATA_SETTING = "debiased_strata"  # domain/settings.py
N_BINS = 3  # tertiles
# answered items a confidence bin needs: each stratum tunes its own lambda on its labels, and
# the jackknife counts that lambda's variability, so thin strata widen the interval (three bins
# of ~17 labels at n = 50 were 8% wider than one lambda, two of 25 4.5%, in simulation); so
# n // 30 bins, up to N_BINS, and none below 60 answered items
MIN_PER_BIN = 30


@dataclass(frozen=True)
class Stratum:
    name: str
    n_items: int
    n_sampled: int
    weight: float  # W_k
    result: PPIResult
    sd: float  # S_k: the residual's standard deviation on the answered items


@dataclass(frozen=True)
class Stratified:
    strata: list[Stratum]
    interval: Interval
    units: float  # Kish's effective sampled items, summed over the strata
    df: float  # the t quantile's degrees of freedom


def confidence_bins(conf: np.ndarray, cl: np.ndarray | None, n_bins: int = N_BINS) -> np.ndarray:
    """Each item's bin 0..B-1 of the judge's confidence, cut at its quantiles over the items
    (or, with clusters, over the cases' mean confidences: a case stays in one bin). Ties at a
    cut can leave fewer bins than asked."""
    conf = np.asarray(conf, dtype=float)
    unit = conf
    if cl is not None:
        sums = np.bincount(cl, weights=conf)
        unit_conf = sums / np.bincount(cl)
        unit = unit_conf[cl]
        cuts = np.quantile(unit_conf, np.arange(1, n_bins) / n_bins)
    else:
        cuts = np.quantile(conf, np.arange(1, n_bins) / n_bins)
    raw = np.searchsorted(np.unique(cuts), unit, side="right")
    return np.unique(raw, return_inverse=True)[1].astype(np.int64)


def merge_thin(strata: np.ndarray, y: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """Ordered strata 0..K-1, merged with a neighbour while one has fewer than 2 answered items
    or answers that do not vary; returned as 0..K'-1 in the same order."""
    s = np.unique(np.asarray(strata), return_inverse=True)[1]
    while s.max() > 0:
        for k in range(int(s.max()) + 1):
            yk = y[lab & (s == k)]
            if len(yk) < 2 or np.ptp(yk) == 0:
                into = k + 1 if k < s.max() else k - 1
                s = np.where(s == k, into, s)
                s = np.unique(s, return_inverse=True)[1]
                break
        else:
            break
    return s


def stratified_ppi(
    y: np.ndarray,
    f: np.ndarray,
    d: Design,
    strata: np.ndarray,
    names: list[str] | None = None,
    alpha: float = 0.05,
) -> Stratified:
    """Stratified PPI++ of one generator's items (`y`: the human mean, NaN where unanswered;
    `f`: the judge's value; `d`: their design, stats/debiased.design; `strata`: each item's
    stratum 0..K-1, each with at least 2 answered items)."""
    y = np.asarray(y, dtype=float)
    f = np.asarray(f, dtype=float)
    lab, unl = d.lab, d.unl
    total = float(d.v.sum())
    out: list[Stratum] = []
    est = var = units = 0.0
    satt = 0.0
    for k in range(int(strata.max()) + 1):
        m = strata == k
        ml, mu = lab & m, unl & m
        w_l = None if d.uniform else d.v[ml] / d.pi_lab[m[lab]]
        w_u = None if d.uniform or not mu.any() else d.w_u[m[unl]]
        res = ppi_mean(
            y[ml],
            f[ml],
            f[mu],
            w_labelled=w_l,
            w_unlabelled=w_u,
            cluster_labelled=None if d.cl is None else d.cl[ml],
            cluster_unlabelled=None if d.cl is None else d.cl[mu],
            alpha=alpha,
            small_sample=True,
        )
        wk = float(d.v[m].sum()) / total
        resid = y[ml] - res.lam * f[ml]
        b = np.ones(len(resid)) if w_l is None else w_l
        mean = float(b @ resid / b.sum())
        n_k = len(resid)
        sd = float(np.sqrt(b @ (resid - mean) ** 2 / b.sum() * n_k / max(1, n_k - 1)))
        name = names[k] if names is not None else str(k)
        out.append(Stratum(name, int(m.sum()), n_k, wk, res, sd))
        est += wk * res.ppi.estimate
        part = wk**2 * res.ppi.se**2
        var += part
        units += res.units
        # the t's units as ppi_mean counts them: cases where items cluster
        cl_l = None if d.cl is None else d.cl[ml]
        t_units = _kish_units(np.ones(n_k) if w_l is None else w_l, cl_l)
        satt += part**2 / max(1.0, t_units - 1.0)
    se = math.sqrt(var)
    df = var**2 / satt if satt > 0 else max(1.0, units - 1.0)
    t = _quantile(alpha, df + 1.0)  # _quantile takes units and subtracts the one
    iv = Interval(est, est - t * se, est + t * se, se, len(y))
    return Stratified(out, iv, units, df)


def neyman_allocation(strata: list[Stratum], width: float, alpha: float = 0.05) -> dict[str, int]:
    """Labels to add per stratum so that a Neyman allocation (n_k proportional to W_k S_k)
    reaches an interval `width` wide: n = (2 z sum W_k S_k / width)^2 in all, less what each
    stratum has."""
    ws = np.array([s.weight * s.sd for s in strata])
    if not ws.sum() > 0:
        return {s.name: 0 for s in strata}
    z = float(norm.isf(alpha / 2))
    n = (2 * z * ws.sum() / width) ** 2
    return {
        s.name: max(0, math.ceil(n * w / ws.sum()) - s.n_sampled)
        for s, w in zip(strata, ws, strict=True)
    }


def strata_mode(settings: dict[str, Any]) -> str | None:
    """ "confidence", "slice" or "none" as the study sets `debiased_strata`; None: confidence
    bins where the judge states confidences, else none."""
    value = setting(settings, STRATA_SETTING)
    return None if value is None else str(value)


def latest_confidences(versions: pd.DataFrame | None) -> pd.DataFrame:
    """(item_id, judge, metric, confidence) of each judge's latest version (the one the
    figures read), rows with a confidence only."""
    cols = ["item_id", "judge", "metric", "confidence"]
    if versions is None or not len(versions):
        return pd.DataFrame(columns=cols)
    v = versions[["item_id", "judge", "metric", "order", "confidence"]].copy()
    v["judge"] = v["judge"].astype(str)
    v = v[v["order"] == v.groupby("judge")["order"].transform("max")]
    v["confidence"] = pd.to_numeric(v["confidence"], errors="coerce")
    v = v[v["confidence"].between(0, 1)]
    v["item_id"] = v["item_id"].astype(str)
    return v[cols].drop_duplicates(["item_id", "judge", "metric"], keep="last")


def _bin_names(conf: np.ndarray, strata: np.ndarray, cl: np.ndarray | None) -> list[str]:
    """ "bin 1: confidence 0.50-0.66", ...: the range of what was binned (a case's mean
    confidence where items cluster, so the ranges do not overlap); numbered, so names stay
    distinct however they round."""
    unit = conf if cl is None else (np.bincount(cl, weights=conf) / np.bincount(cl))[cl]
    what = "confidence" if cl is None else "case mean confidence"
    names = []
    for k in range(int(strata.max()) + 1):
        c = unit[strata == k]
        names.append(f"bin {k + 1}: {what} {c.min():.2f}-{c.max():.2f}")
    return names


def stratified_entry(
    sub: pd.DataFrame,
    mode: str | None,
    alpha: float,
    span: tuple[float, float],
    width: float,
    members: bool = False,
) -> dict[str, Any]:
    """A debiased figure's `stratified` block (and `stratified_note` when it is null). `sub`:
    its items as `_one_figure` takes them, with `conf` (the judge's confidence, NaN where it
    states none) and `slice`; `mode`: `strata_mode`; `width`: the plan's width the
    allocation aims at. `members`: add each item's stratum (`members`, item_id -> index into
    `strata`), for `assign --by-strata` to draw by (a report leaves it out: one entry per
    item)."""
    if mode == "none":
        return {"stratified": None, "stratified_note": 'debiased_strata is "none"'}
    d = design(sub)
    y, f = sub["y"].to_numpy(float), sub["f"].to_numpy(float)
    if d.lab.sum() < 2:
        return {"stratified": None, "stratified_note": "fewer than 2 sampled items answered"}
    if mode == "slice":
        keys = sub["slice"].astype(object).where(sub["slice"].notna(), "(none)").astype(str)
        codes, uniq = pd.factorize(keys, sort=True)
        raw, names_of = np.asarray(codes, dtype=np.int64), [str(u) for u in uniq]
    else:
        conf = sub["conf"].to_numpy(float) if "conf" in sub else np.full(len(sub), np.nan)
        if np.isnan(conf).any():
            why = (
                "the judge states no confidence"
                if np.isnan(conf).all()
                else (f"the judge states no confidence on {int(np.isnan(conf).sum())} of the items")
            )
            return {"stratified": None, "stratified_note": f"no strata: {why}"}
        bins = min(N_BINS, int(d.lab.sum()) // MIN_PER_BIN)
        if bins < 2:
            return {
                "stratified": None,
                "stratified_note": f"no strata: {int(d.lab.sum())} sampled items answered, "
                f"fewer than the {2 * MIN_PER_BIN} two confidence bins need",
            }
        raw, names_of = confidence_bins(conf, d.cl, bins), []
    if raw.max() == 0:
        return {"stratified": None, "stratified_note": "one stratum: every item in one slice"}
    strata = merge_thin(raw, y, d.lab)
    if strata.max() == 0:
        return {
            "stratified": None,
            "stratified_note": "one stratum: the strata merged into one (each needs 2 answered "
            "items that differ), so the figure is the unstratified one",
        }
    if mode == "slice":
        names = [
            "+".join(sorted({names_of[r] for r in raw[strata == k].tolist()}))
            for k in range(int(strata.max()) + 1)
        ]
    else:
        names = _bin_names(conf, strata, d.cl)
    st = stratified_ppi(y, f, d, strata, names, alpha)
    flat = stratified_ppi(y, f, d, np.zeros(len(y), dtype=np.int64), ["all"], alpha)
    pub = _published(st.interval, span, st.units)
    w_flat = flat.interval.high - flat.interval.low
    w_st = st.interval.high - st.interval.low
    block = {
        "by": "slice" if mode == "slice" else "confidence",
        "strata": [
            {
                "name": s.name,
                "n_items": s.n_items,
                "n_sampled": s.n_sampled,
                "weight": round(s.weight, 4),
                "lambda": s.result.lam,
                "estimate": s.result.ppi.estimate,
                "sd": round(s.sd, 4),  # S_k: the allocation's reason beside W_k
            }
            for s in st.strata
        ],
        "estimate": st.interval.estimate,
        "low": pub["low"],
        "high": pub["high"],
        "width_ratio": round(w_st / w_flat, 3) if w_flat > 0 else None,
        "allocation": neyman_allocation(st.strata, width, alpha),
    }
    if "note" in pub:
        block["note"] = pub["note"]
    if members:
        block["members"] = dict(zip(sub["item_id"].astype(str), strata.tolist(), strict=True))
    return {"stratified": block}
