"""Pair votes: tallies per cell, Bradley-Terry strengths, position bias, agreement.

Everything here is a pure function of `StudyFrames.pair_votes` (and
`judge_pair_votes`); `pairwise_section` assembles the "pairwise" object of the
report (DESIGN.md 5.5). Choices made, and why:

- **Sides.** `left`/`right` in a vote are the sides *shown*. For agreement and
  for comparing a judge with the humans, a vote is re-coded against a fixed
  orientation of its pair: `a` = the pair's item with the smaller item id, `b`
  the other (as the store keeps pairs), plus `both` / `neither`. So two raters
  who preferred the same item agree even if it was dealt to different sides.
  Categories are pooled across pairs as a/b, not as generator names: with
  generator names as categories, chance agreement between pairs of different
  generators is impossible and alpha is inflated (PandaLM: 0.9016 with generator
  names vs 0.8642 with a/b, the latter equal to the published left/right
  coding because PandaLM always shows `a` on the left).
- **Ties in Bradley-Terry.** `both` and `neither` count as half a win to each
  side. This is the likelihood of the Rao-Kupper/Davidson family with the tie
  parameter fixed, keeps the model one-parameter-per-generator and the fit a
  plain logistic one, and a tie moves both strengths towards each other, which
  is what "equally good/bad" says. Votes between two items of the same
  generator carry no information about strengths and are left out of the fit.
- **Strengths.** Natural-log strengths, centred to mean 0 over the generators
  of the fit. Each fit is a maximum a-posteriori estimate under an N(0, 1/0.1)
  prior (precision `PRIOR_PRECISION`), so that a generator that won every vote
  of a small case gets a finite strength; with hundreds of votes the prior is
  negligible. Fitted per case (`bradley_terry_by_case`) and pooled
  (`bradley_terry`). The pooled fit is one joint model in which each vote
  weighs N / (C * n_case), so every case carries the same total weight whatever
  its number of votes. We do *not* average per-case centred strengths: a case
  holding only some generators would centre them against a different company,
  and per-case fits of 3-30 votes are dominated by the prior.
- **Intervals.** Percentile bootstrap (95%), resampling votes with replacement
  within each case (the case mix stays fixed: generators vary, cases stay
  fixed), seeded. Agreement intervals resample pairs.
- **Position bias.** Decisive votes (left/right) only; exact two-sided binomial
  test against 1/2. Per rater, p-values are Holm-adjusted over the study's
  raters (family-wise 5%), so a study of twenty fair raters is not expected to
  name one; with a single rater this is the plain test. A rater is named in
  `flagged_raters` when the adjusted p < 0.05.
- **Majority.** The human majority of a pair is its unique most frequent coded
  choice (a plurality); pairs with a tie for the top are excluded and counted.
- **Minimum counts.** A share is published only from `min_count` votes (10 by
  default); below that, counts alone with a "note".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import binomtest

from .frames import StudyFrames

CHOICES = ("left", "right", "both", "neither")
TIES = ("both", "neither")
CODES = ("a", "b", "both", "neither")
PRIOR_PRECISION = 0.1
ALPHA_LEVEL = 0.05

__all__ = [
    "CODES",
    "bradley_terry",
    "cell_tallies",
    "coded_votes",
    "cohen_kappa",
    "judge_agreement",
    "macro_prf",
    "nominal_alpha",
    "nominal_alpha_bootstrap",
    "pair_key",
    "pairwise_section",
    "position_bias",
    "rater_agreement",
    "to_json_safe",
]


# ---- helpers -------------------------------------------------------------------


def to_json_safe(obj: Any) -> Any:
    """numpy scalars -> Python, NaN/inf -> None, tuples -> lists, recursively."""
    if isinstance(obj, Mapping):
        return {str(k): to_json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_json_safe(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    return obj


def pair_key(gen_a: str, gen_b: str) -> str:
    """The unordered generator pair, names sorted: "<gen A> vs <gen B>"."""
    a, b = sorted((str(gen_a), str(gen_b)))
    return f"{a} vs {b}"


def _estimate(value: float | None, low: float | None = None, high: float | None = None,
              note: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"estimate": value, "low": low, "high": high}
    out.update(extra)
    if note is not None or value is None:
        out["note"] = note or "undefined on these data"
    return out


def _percentiles(samples: np.ndarray) -> tuple[float | None, float | None]:
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return None, None
    lo, hi = np.percentile(s, [2.5, 97.5])
    return float(lo), float(hi)


def coded_votes(votes: pd.DataFrame) -> pd.DataFrame:
    """Votes with a fixed orientation per pair and the choice coded against it.

    Adds item_a/item_b (sorted item ids), gen_a/gen_b, `code` in CODES and
    `winner` (the generator chosen, None for a tie). Rows with an unknown
    choice are dropped; a rater's repeated vote on a pair keeps the last row.
    """
    cols = ["pair_id", "case_id", "item_left", "item_right", "gen_left", "gen_right", "rater", "choice"]
    if votes is None or len(votes) == 0:
        return pd.DataFrame(
            {c: pd.Series(dtype=object) for c in [*cols, "item_a", "item_b", "gen_a", "gen_b", "code", "winner"]}
        )
    v = votes[votes["choice"].isin(CHOICES)].copy()
    v = v.drop_duplicates(subset=["rater", "pair_id"], keep="last")
    left_is_a = v["item_left"].astype(str) <= v["item_right"].astype(str)
    v["item_a"] = np.where(left_is_a, v["item_left"], v["item_right"])
    v["item_b"] = np.where(left_is_a, v["item_right"], v["item_left"])
    v["gen_a"] = np.where(left_is_a, v["gen_left"], v["gen_right"])
    v["gen_b"] = np.where(left_is_a, v["gen_right"], v["gen_left"])
    ch = v["choice"].to_numpy()
    code = np.where(
        np.isin(ch, TIES), ch,
        np.where((ch == "left") == left_is_a.to_numpy(), "a", "b"),
    )
    v["code"] = code
    v["winner"] = np.where(ch == "left", v["gen_left"], np.where(ch == "right", v["gen_right"], None))
    return v.reset_index(drop=True)


# ---- tallies -------------------------------------------------------------------


def _tally(rows: pd.DataFrame, gen_a: str, gen_b: str, min_count: int) -> dict[str, Any]:
    counts = rows["choice"].value_counts()
    n = int(len(rows))
    out: dict[str, Any] = {"n": n}
    for c in CHOICES:
        out[c] = int(counts.get(c, 0))
    wins = rows["winner"].dropna().value_counts()
    out["wins"] = {g: int(wins.get(g, 0)) for g in dict.fromkeys((gen_a, gen_b))}
    if n >= min_count:
        share = {g: w / n for g, w in out["wins"].items()}
        share.update(both=out["both"] / n, neither=out["neither"] / n)
        out["share"] = share
    else:
        out["note"] = f"n={n} is below the minimum of {min_count} votes for a share"
    return out


def cell_tallies(votes: pd.DataFrame, *, min_count: int = 10) -> dict[str, dict[str, dict[str, Any]]]:
    """{case_id: {"<gen A> vs <gen B>": {n, left, right, both, neither, wins, [share|note]}}}.

    left/right count the side shown; `wins` counts the generator chosen; `share`
    (fractions of n: each generator's wins, both, neither) appears only when
    n >= min_count.
    """
    v = coded_votes(votes)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if v.empty:
        return out
    v["key"] = [pair_key(a, b) for a, b in zip(v["gen_a"], v["gen_b"], strict=True)]
    for (case, key), rows in v.groupby(["case_id", "key"], sort=True):
        a, b = key.split(" vs ", 1)
        out.setdefault(str(case), {})[key] = _tally(rows, a, b, min_count)
    return out


def generator_pair_tallies(votes: pd.DataFrame, *, min_count: int = 10) -> dict[str, dict[str, Any]]:
    """The same tallies pooled over cells, per unordered generator pair."""
    v = coded_votes(votes)
    if v.empty:
        return {}
    v["key"] = [pair_key(a, b) for a, b in zip(v["gen_a"], v["gen_b"], strict=True)]
    out = {}
    for key, rows in v.groupby("key", sort=True):
        a, b = str(key).split(" vs ", 1)
        out[str(key)] = _tally(rows, a, b, min_count) | {"n_cells": int(rows["case_id"].nunique())}
    return out


# ---- Bradley-Terry -------------------------------------------------------------


def _fit_bt(wins: np.ndarray, prior: float = PRIOR_PRECISION, iters: int = 100) -> np.ndarray:
    """MAP log-strengths for a batch of win matrices, shape (B, G, G) -> (B, G).

    wins[b, i, j] = (fractional) wins of i over j. Newton's method on the
    concave penalised log-likelihood, steps capped at 2 to avoid overshooting
    in near-separated data. The ridge prior makes the solution sum to zero over
    every set of generators linked by votes (and 0 for unseen ones).
    """
    wins = np.asarray(wins, dtype=float)
    if wins.ndim == 2:
        wins = wins[None]
    nb, g, _ = wins.shape
    comps = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    theta = np.zeros((nb, g))
    eye = np.eye(g)
    for _ in range(iters):
        p = expit(theta[:, :, None] - theta[:, None, :])
        grad = won - (comps * p).sum(axis=2) - prior * theta
        w = comps * p * (1 - p)
        hess = w - eye * w.sum(axis=2)[:, :, None] - prior * eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 2.0, step * (2.0 / np.maximum(big, 1e-300)), step)
        theta = theta - step
        if np.abs(step).max() < 1e-9:
            break
    return theta


def _bt_arrays(v: pd.DataFrame, gens: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per vote: index of the left and right generator and the (fractional) win of each."""
    idx = {g: i for i, g in enumerate(gens)}
    li = v["gen_left"].map(idx).to_numpy(dtype=int)
    ri = v["gen_right"].map(idx).to_numpy(dtype=int)
    ch = v["choice"].to_numpy()
    wl = np.where(ch == "left", 1.0, np.where(ch == "right", 0.0, 0.5))
    return li, ri, wl, 1.0 - wl


def _win_matrices(li, ri, wl, wr, weight, draws: np.ndarray, g: int) -> np.ndarray:
    """Sum resampled votes into (B, G, G) win matrices; draws is (B, k) vote indices."""
    nb = draws.shape[0]
    rep = np.repeat(np.arange(nb), draws.shape[1])
    d = draws.ravel()
    flat = np.bincount(rep * g * g + li[d] * g + ri[d], weights=wl[d] * weight[d], minlength=nb * g * g)
    flat += np.bincount(rep * g * g + ri[d] * g + li[d], weights=wr[d] * weight[d], minlength=nb * g * g)
    return flat.reshape(nb, g, g)


def _bt_summary(point: np.ndarray, boot: np.ndarray | None, gens: list[str], n_votes: Mapping[str, int]) -> dict:
    out = {}
    for i, gname in enumerate(gens):
        lo, hi = _percentiles(boot[:, i]) if boot is not None and len(boot) else (None, None)
        out[gname] = {"estimate": float(point[i]), "low": lo, "high": hi, "n": int(n_votes.get(gname, 0))}
    return out


def bradley_terry(
    votes: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, by_case: bool = True
) -> dict[str, Any]:
    """{"pooled": {gen: {estimate, low, high, n}}, "by_case": {case: {gen: {...}}}}.

    Estimates are centred natural-log strengths (see the module docstring for
    ties, the prior and the equal weighting of cases); `n` = votes involving
    the generator. Cases are bootstrapped independently, votes within a case.
    """
    v = coded_votes(votes)
    v = v[v["gen_left"] != v["gen_right"]].reset_index(drop=True) if not v.empty else v
    if v.empty:
        return {"pooled": {}, "by_case": {}}
    rng = np.random.default_rng(seed)
    gens = sorted(set(v["gen_left"]) | set(v["gen_right"]))
    g = len(gens)
    li, ri, wl, wr = _bt_arrays(v, gens)
    case = v["case_id"].astype(str).to_numpy()
    cases, case_idx = np.unique(case, return_inverse=True)
    n_case = np.bincount(case_idx)
    weight = len(v) / (len(cases) * n_case[case_idx])
    n_votes = pd.concat([v["gen_left"], v["gen_right"]]).value_counts().to_dict()

    all_idx = np.arange(len(v))[None]
    point = _fit_bt(_win_matrices(li, ri, wl, wr, weight, all_idx, g))[0]
    boot = None
    members = [np.flatnonzero(case_idx == c) for c in range(len(cases))]
    if n_boot > 0:
        draws = np.concatenate(
            [m[rng.integers(0, len(m), size=(n_boot, len(m)))] for m in members], axis=1
        )
        boot = _fit_bt(_win_matrices(li, ri, wl, wr, weight, draws, g))
    pooled = _bt_summary(point - point.mean(), None if boot is None else boot - boot.mean(1, keepdims=True),
                         gens, n_votes)

    per_case: dict[str, Any] = {}
    if by_case:
        for c, m in enumerate(members):
            # fit only the generators this case holds (keeps the matrices small)
            present = np.unique(np.concatenate([li[m], ri[m]]))
            local = np.full(g, -1)
            local[present] = np.arange(len(present))
            cl, cr, ones = local[li[m]], local[ri[m]], np.ones(len(m))
            gc = len(present)
            pt = _fit_bt(_win_matrices(cl, cr, wl[m], wr[m], ones, np.arange(len(m))[None], gc))[0]
            bt = None
            if n_boot > 0:
                d = rng.integers(0, len(m), size=(n_boot, len(m)))
                bt = _fit_bt(_win_matrices(cl, cr, wl[m], wr[m], ones, d, gc))
                bt = bt - bt.mean(1, keepdims=True)
            sub = v.iloc[m]
            nv = pd.concat([sub["gen_left"], sub["gen_right"]]).value_counts().to_dict()
            per_case[str(cases[c])] = _bt_summary(pt - pt.mean(), bt, [gens[i] for i in present], nv)
    return {"pooled": pooled, "by_case": per_case}


# ---- position bias -------------------------------------------------------------


def _holm(pvals: Mapping[str, float]) -> dict[str, float]:
    keys = sorted(pvals, key=lambda k: pvals[k])
    m = len(keys)
    out, running = {}, 0.0
    for i, k in enumerate(keys):
        running = max(running, min(1.0, (m - i) * pvals[k]))
        out[k] = running
    return out


def _side_counts(rows: pd.DataFrame, min_count: int) -> dict[str, Any]:
    left = int((rows["choice"] == "left").sum())
    right = int((rows["choice"] == "right").sum())
    n = left + right
    out: dict[str, Any] = {"left": left, "right": right, "n": n}
    if n == 0:
        out["p_value"] = None
        out["note"] = "no decisive (left/right) votes"
        return out
    out["p_value"] = float(binomtest(left, n, 0.5, alternative="two-sided").pvalue)
    if n >= min_count:
        out["share_left"] = left / n
    else:
        out["note"] = f"n={n} is below the minimum of {min_count} votes for a share"
    return out


def position_bias(
    votes: pd.DataFrame, *, min_count: int = 10, alpha: float = ALPHA_LEVEL
) -> dict[str, Any]:
    """Share of decisive votes that went left, overall and per rater, exact binomial tests.

    {left, right, n, p_value, [share_left], by_rater: {r: {left, right, n, p_value,
    p_adjusted, flagged, [share_left]}}, flagged_raters, multiplicity}.
    """
    v = coded_votes(votes)
    out = _side_counts(v, min_count)
    by_rater: dict[str, dict[str, Any]] = {}
    if not v.empty:
        for rater, rows in v.groupby("rater", sort=True):
            by_rater[str(rater)] = _side_counts(rows, min_count)
    adjusted = _holm({r: d["p_value"] for r, d in by_rater.items() if d["p_value"] is not None})
    for r, d in by_rater.items():
        d["p_adjusted"] = adjusted.get(r)
        d["flagged"] = bool(d["p_adjusted"] is not None and d["p_adjusted"] < alpha)
    out["by_rater"] = by_rater
    out["flagged_raters"] = [r for r, d in by_rater.items() if d["flagged"]]
    out["multiplicity"] = f"Holm over {len(adjusted)} raters, family-wise {alpha:g}"
    return out


# ---- agreement -----------------------------------------------------------------


def cohen_kappa(a: Iterable[Any], b: Iterable[Any]) -> float | None:
    """Cohen's kappa of two aligned label sequences; None when undefined."""
    x, y = list(a), list(b)
    if not x or len(x) != len(y):
        return None
    labels = sorted(set(x) | set(y), key=str)
    idx = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    conf = np.bincount([idx[i] * k + idx[j] for i, j in zip(x, y, strict=True)], minlength=k * k)
    return _kappa_from_confusion(conf.reshape(k, k))


def _kappa_from_confusion(conf: np.ndarray) -> float | None:
    n = conf.sum()
    if n == 0:
        return None
    po = np.trace(conf) / n
    pe = float((conf.sum(0) * conf.sum(1)).sum()) / n**2
    if pe >= 1.0 - 1e-12:
        return None
    return float((po - pe) / (1 - pe))


def _kappa_boot(a: np.ndarray, b: np.ndarray, n_boot: int, rng: np.random.Generator):
    """Percentile interval of kappa, resampling the aligned pairs."""
    if n_boot <= 0 or len(a) == 0:
        return None, None
    labels = sorted(set(a) | set(b), key=str)
    idx = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    cell = np.array([idx[i] * k + idx[j] for i, j in zip(a, b, strict=True)])
    draws = rng.integers(0, len(cell), size=(n_boot, len(cell)))
    rep = np.repeat(np.arange(n_boot), len(cell))
    conf = np.bincount(rep * k * k + cell[draws.ravel()], minlength=n_boot * k * k).reshape(n_boot, k, k)
    n = len(cell)
    po = np.trace(conf, axis1=1, axis2=2) / n
    pe = (conf.sum(1) * conf.sum(2)).sum(1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kap = np.where(pe < 1 - 1e-12, (po - pe) / (1 - pe), np.nan)
    return _percentiles(kap)


def macro_prf(y_true: Iterable[Any], y_pred: Iterable[Any]) -> dict[str, float | None]:
    """Macro precision/recall/F1 over the labels in either sequence (0 when undefined)."""
    t, p = list(y_true), list(y_pred)
    if not t:
        return {"macro_precision": None, "macro_recall": None, "macro_f1": None}
    labels = sorted(set(t) | set(p), key=str)
    prec, rec, f1 = [], [], []
    for lab in labels:
        tp = sum(1 for a, b in zip(t, p, strict=True) if a == lab and b == lab)
        npred = sum(1 for b in p if b == lab)
        ntrue = sum(1 for a in t if a == lab)
        pr = tp / npred if npred else 0.0
        rc = tp / ntrue if ntrue else 0.0
        prec.append(pr)
        rec.append(rc)
        f1.append(2 * pr * rc / (pr + rc) if pr + rc else 0.0)
    return {"macro_precision": float(np.mean(prec)), "macro_recall": float(np.mean(rec)),
            "macro_f1": float(np.mean(f1))}


def _unit_coincidences(table: np.ndarray, k: int) -> np.ndarray:
    """Per-unit coincidence matrices (U, k, k) of a (units x raters) code table (-1 missing)."""
    counts = np.stack([(table == c).sum(axis=1) for c in range(k)], axis=1).astype(float)
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep], m[keep]
    o = counts[:, :, None] * counts[:, None, :]
    o[:, np.arange(k), np.arange(k)] -= counts
    return o / (m - 1)[:, None, None]


def _alpha_from_coincidence(o: np.ndarray) -> np.ndarray:
    """Nominal alpha from coincidence matrices (..., k, k)."""
    nc = o.sum(axis=-1)
    n = nc.sum(axis=-1)
    diag = np.trace(o, axis1=-2, axis2=-1)
    d_o = (n - diag) / n
    d_e = (n**2 - (nc**2).sum(axis=-1)) / (n * (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d_e > 0, 1 - d_o / d_e, np.nan)


def nominal_alpha(table: np.ndarray, k: int) -> float | None:
    """Nominal Krippendorff alpha of a (units x raters) table of codes 0..k-1 (-1 = missing).

    The coincidence-matrix form used by the bootstrap; equals krippendorff.alpha.
    """
    o = _unit_coincidences(np.asarray(table), k)
    if len(o) == 0:
        return None
    a = float(_alpha_from_coincidence(o.sum(axis=0)))
    return a if math.isfinite(a) else None


def nominal_alpha_bootstrap(
    table: np.ndarray, k: int, n_boot: int, rng: np.random.Generator
) -> tuple[float | None, float | None]:
    """Percentile interval of nominal alpha resampling units (rows) of a code table.

    Alpha is a function of the coincidence matrix, which is a sum of per-unit
    matrices, so a bootstrap replicate is a weighted sum: no refit per replicate.
    """
    o = _unit_coincidences(table, k)
    if n_boot <= 0 or len(o) == 0:
        return None, None
    draws = rng.integers(0, len(o), size=(n_boot, len(o)))
    weights = np.stack([np.bincount(d, minlength=len(o)) for d in draws]).astype(float)
    ob = (weights @ o.reshape(len(o), -1)).reshape(n_boot, k, k)
    return _percentiles(_alpha_from_coincidence(ob))


def _code_table(v: pd.DataFrame) -> tuple[np.ndarray, list[str], list[str]]:
    """(pairs x raters) table of code indices into CODES, -1 where a rater did not vote."""
    pairs = sorted(v["pair_id"].astype(str).unique())
    raters = sorted(v["rater"].astype(str).unique())
    pi = {p: i for i, p in enumerate(pairs)}
    ri = {r: i for i, r in enumerate(raters)}
    ci = {c: i for i, c in enumerate(CODES)}
    table = np.full((len(pairs), len(raters)), -1, dtype=int)
    table[v["pair_id"].astype(str).map(pi).to_numpy(), v["rater"].astype(str).map(ri).to_numpy()] = (
        v["code"].map(ci).to_numpy()
    )
    return table, pairs, raters


def rater_agreement(
    votes: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Krippendorff's alpha (nominal, a/b/both/neither) among raters on shared pairs, and Cohen kappas.

    {"rater_alpha": {estimate, low, high, n_pairs, n_raters, n_votes, coding},
     "rater_kappas": {"a|b": value}, "rater_kappas_detail": {"a|b": {estimate, low, high, n}}}
    """
    rng = np.random.default_rng(seed)
    v = coded_votes(votes)
    coding = "choice coded as the pair's item a (smaller item id) / item b / both / neither"
    empty = {
        "rater_alpha": _estimate(None, note="needs two raters voting on the same pair", n_pairs=0,
                                 n_raters=int(v["rater"].nunique()) if not v.empty else 0, n_votes=0,
                                 coding=coding),
        "rater_kappas": {},
        "rater_kappas_detail": {},
    }
    if v.empty:
        return empty
    table, pairs, raters = _code_table(v)
    shared = (table >= 0).sum(axis=1) >= 2
    if len(raters) < 2 or not shared.any():
        return empty
    st = table[shared]
    n_votes = int((st >= 0).sum())
    reliability = np.where(st >= 0, st, np.nan).T.astype(float)
    est = float("nan")
    # the package divides by zero (with a warning) when every vote is the same: check first
    if nominal_alpha(st, len(CODES)) is not None:
        est = float(krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal",
                                       value_domain=list(range(len(CODES)))))
    if math.isfinite(est):
        lo, hi = nominal_alpha_bootstrap(st, len(CODES), n_boot, rng)
        alpha = _estimate(est, lo, hi, n_pairs=int(shared.sum()), n_raters=len(raters), n_votes=n_votes,
                          coding=coding)
    else:
        alpha = _estimate(None, note="undefined: every vote on the shared pairs is the same",
                          n_pairs=int(shared.sum()), n_raters=len(raters), n_votes=n_votes, coding=coding)

    kappas: dict[str, float | None] = {}
    detail: dict[str, dict[str, Any]] = {}
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            both = (table[:, i] >= 0) & (table[:, j] >= 0)
            a, b = table[both, i], table[both, j]
            key = f"{raters[i]}|{raters[j]}"
            kap = cohen_kappa(a, b)
            kappas[key] = kap
            if kap is None:
                detail[key] = _estimate(None, n=int(both.sum()),
                                        note="no shared pairs" if not both.any() else "undefined: no variation")
            else:
                lo, hi = _kappa_boot(a, b, n_boot, rng)
                detail[key] = _estimate(kap, lo, hi, n=int(both.sum()))
    return {"rater_alpha": alpha, "rater_kappas": kappas, "rater_kappas_detail": detail}


def human_majority(votes: pd.DataFrame) -> tuple[pd.Series, int]:
    """The unique most frequent code per pair_id, and how many pairs have none (a tie at the top)."""
    v = coded_votes(votes)
    if v.empty:
        return pd.Series(dtype=object), 0
    counts = v.groupby(["pair_id", "code"]).size().unstack(fill_value=0)
    top = counts.max(axis=1)
    unique = (counts.eq(top, axis=0)).sum(axis=1) == 1
    majority = counts[unique].idxmax(axis=1)
    majority.index = majority.index.astype(str)
    return majority, int((~unique).sum())


def judge_agreement(
    votes: pd.DataFrame, judge_votes: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
    min_count: int = 10,
) -> dict[str, dict[str, Any]]:
    """Per judge: agreement and Cohen kappa with the human majority, its own position bias.

    {judge: {n, agreement_with_majority, kappa_vs_majority, agreement_interval,
    kappa_interval, n_no_majority, n_without_humans, position_bias,
    macro_precision, macro_recall, macro_f1, [note]}}
    """
    rng = np.random.default_rng(seed)
    jv = coded_votes(judge_votes)
    if jv.empty:
        return {}
    majority, _ = human_majority(votes)
    hv = coded_votes(votes)
    human_pairs = set(hv["pair_id"].astype(str)) if not hv.empty else set()
    out: dict[str, dict[str, Any]] = {}
    for judge, rows in jv.groupby("rater", sort=True):
        pid = rows["pair_id"].astype(str)
        with_humans = pid.isin(human_pairs)
        has_major = pid.isin(majority.index)
        sel = rows[has_major.to_numpy()]
        ref = majority.loc[sel["pair_id"].astype(str)].to_numpy()
        pred = sel["code"].to_numpy()
        n = len(sel)
        pb = _side_counts(rows, min_count)
        d: dict[str, Any] = {
            "n": n,
            "n_no_majority": int((with_humans & ~has_major).sum()),
            "n_without_humans": int((~with_humans).sum()),
            "position_bias": pb,
        }
        if n == 0:
            d.update(agreement_with_majority=None, kappa_vs_majority=None,
                     note="no pair with a human majority")
            out[str(judge)] = d
            continue
        agree = (ref == pred).astype(float)
        d["agreement_with_majority"] = float(agree.mean())
        if n_boot > 0:
            draws = rng.integers(0, n, size=(n_boot, n))
            lo, hi = _percentiles(agree[draws].mean(axis=1))
        else:
            lo = hi = None
        d["agreement_interval"] = {"low": lo, "high": hi}
        kap = cohen_kappa(ref, pred)
        d["kappa_vs_majority"] = kap
        if kap is None:
            d["note"] = "kappa undefined: a single class in reference and judge"
            d["kappa_interval"] = {"low": None, "high": None}
        else:
            lo, hi = _kappa_boot(ref, pred, n_boot, rng)
            d["kappa_interval"] = {"low": lo, "high": hi}
        d.update(macro_prf(ref, pred))
        out[str(judge)] = d
    return out


# ---- the report section --------------------------------------------------------


def pairwise_section(
    frames: StudyFrames, *, n_boot: int = 1000, seed: int = 0, min_count: int = 10
) -> dict[str, Any]:
    """The "pairwise" object of the report JSON (DESIGN.md 5.5), JSON-safe.

    Contract keys: cells, bradley_terry, position_bias {left, right, p_value,
    by_rater}, rater_alpha {estimate, low, high}, judges {name: {n,
    agreement_with_majority, kappa_vs_majority}}. Extras: generator_pairs,
    bradley_terry_by_case, rater_kappas(_detail), majority_counts, settings.
    """
    votes = frames.pair_votes
    judge_votes = frames.judge_pair_votes
    bt = bradley_terry(votes, n_boot=n_boot, seed=seed)
    agreement = rater_agreement(votes, n_boot=n_boot, seed=seed + 1)
    majority, undefined = human_majority(votes)
    counts = majority.value_counts() if len(majority) else pd.Series(dtype=int)
    section: dict[str, Any] = {
        "cells": cell_tallies(votes, min_count=min_count),
        "generator_pairs": generator_pair_tallies(votes, min_count=min_count),
        "bradley_terry": bt["pooled"],
        "bradley_terry_by_case": bt["by_case"],
        "position_bias": position_bias(votes, min_count=min_count),
        "rater_alpha": agreement["rater_alpha"],
        "rater_kappas": agreement["rater_kappas"],
        "rater_kappas_detail": agreement["rater_kappas_detail"],
        "majority_counts": {c: int(counts.get(c, 0)) for c in CODES} | {"undefined": undefined},
        "judges": judge_agreement(votes, judge_votes, n_boot=n_boot, seed=seed + 2, min_count=min_count),
        "settings": {
            "n_boot": n_boot, "seed": seed, "min_count": min_count,
            "bradley_terry": "log-strength, mean 0; ties = half a win each; cases weighted equally; "
                             f"N(0, 1/{PRIOR_PRECISION:g}) prior",
            "interval": "95% percentile bootstrap",
        },
    }
    if not section["bradley_terry"]:
        section["bradley_terry_note"] = "no votes between two different generators"
    return to_json_safe(section)
