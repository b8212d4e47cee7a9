"""Rater reliability models: Dawid-Skene and MACE, fitted by EM per metric.

Both see one metric as a table of (item, rater, answer) with unordered answer
categories, and infer each item's latent true answer:

- Dawid & Skene (1979): each rater has a confusion matrix P(answer | truth);
  EM from the majority-vote shares, classes' prior from the posteriors. A
  rater's DS accuracy is the expected share of their answers equal to the
  item's latent truth (mean posterior of the answer they gave).
- MACE (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013): a rater either knows
  the answer (probability = competence) and gives the truth, or spams and
  draws from their own answer distribution; EM with add-(0.01/L) smoothing as
  in the paper's tool. Competence near 0 marks a spammer *and* an adversary
  (always the opposite answer looks like a fixed strategy, never like knowing).
  EM starts from the same fixed draws as crowd-kit's MACE (uniform on
  [1, 1 + 1.5] from seed 0, raters and answers in sorted order), so the fit
  is deterministic and can be checked against it.

Which metrics: every nominal spec of the report (gates, choices, the verdict;
multi-select tags as one yes/no spec per option, as the report already splits
them). Scales: each scale point is a category (the scales of a rubric have few
points; an ordinal model would add an order the raters' mistakes need not
follow). A scale with more than MAX_CATEGORIES points is binned into
MAX_CATEGORIES equal-width bins first.

Intervals: a seeded bootstrap over the metric's items (the report's seed, at
most MAX_BOOT resamples). Each resample runs up to K_STEPS rounds of weighted EM
(item multiplicities as weights) from the full-data fit, all resamples at once
in arrays, rather than a fit from scratch: the fit is already near the
resample's optimum. Holding the posteriors at the full-data fit (a single
M-step, which would fit the report's shared ItemBootstrap) was tried and
rejected: its intervals covered a planted competence 68% of the time instead
of 95%. The coverage test is in tests/unit/test_stats_competence.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import uniform

from .bootstrap import resample_counts, rng_for, summarize, undefined

_DS_EPS = 1e-10  # floor of a confusion cell (log of zero)
MAX_CATEGORIES = 7
MIN_RATERS = 3  # below this a latent truth is two raters' say against each other
ATTENTION = 0.5  # the others' median competence from which a low one is flagged
K_STEPS = 10  # at most this many EM rounds per bootstrap resample, from the full-data fit
K_TOL = 1e-4  # ... fewer once no resample's competence moves by more than this in a round
MAX_BOOT = 200  # resamples of the competence interval (each is a small EM fit)
_BATCH = 2_000_000  # floats in one (answers x resamples x labels) array


@dataclass(frozen=True)
class Answers:
    """One metric's answers as codes: item (0..n-1), rater (0..R-1), label (0..L-1)."""

    item: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    items: np.ndarray  # item key of code i
    raters: np.ndarray  # rater name of code r (sorted)
    labels: np.ndarray  # answer value of code l (sorted)


def encode(
    df: pd.DataFrame, item: str = "idx", rater: str = "rater", value: str = "code"
) -> Answers:
    """Codes of a long table of answers (missing values dropped, one answer per item and rater)."""
    d = df[df[value].notna()].drop_duplicates([item, rater], keep="last")
    items, i = np.unique(d[item].to_numpy(), return_inverse=True)
    raters, r = np.unique(d[rater].astype(str).to_numpy(), return_inverse=True)
    labels, a = np.unique(d[value].to_numpy(), return_inverse=True)
    return Answers(
        i.astype(np.int64), r.astype(np.int64), a.astype(np.int64), items, raters, labels
    )


def _shape(x: Answers) -> tuple[int, int, int]:
    return len(x.items), len(x.raters), len(x.labels)


def _compress(x: Answers) -> tuple[Answers, np.ndarray, np.ndarray]:
    """The answers over distinct answer patterns (items answered alike by the same raters have
    the same posterior), each pattern's number of items, and each item's pattern."""
    n, R, L = _shape(x)
    pat, to_pat = _patterns(x)
    of = to_pat.indices  # one pattern per item row, in item order
    rows = np.repeat(np.arange(pat.shape[0]), np.diff(pat.indptr))
    cols = pat.indices
    xp = Answers(rows, cols // L, cols % L, np.arange(pat.shape[0]), x.raters, x.labels)
    return xp, np.bincount(of, minlength=pat.shape[0]).astype(float), of


def _by_item(x: Answers, vals: np.ndarray) -> np.ndarray:
    """Per-answer rows (answers x labels) summed per item (items x labels)."""
    n, L = len(x.items), vals.shape[1]
    return np.column_stack([np.bincount(x.item, weights=vals[:, c], minlength=n) for c in range(L)])


def _by_rater_answer(x: Answers, vals: np.ndarray) -> np.ndarray:
    """Per-answer values (answers, or answers x k) summed per (rater, answer): R x L (x k)."""
    R, L = len(x.raters), len(x.labels)
    key = x.rater * L + x.label
    if vals.ndim == 1:
        return np.bincount(key, weights=vals, minlength=R * L).reshape(R, L)
    return np.stack(
        [np.bincount(key, weights=vals[:, c], minlength=R * L) for c in range(vals.shape[1])],
        axis=1,
    ).reshape(R, L, -1)


@dataclass
class DawidSkeneFit:
    posterior: np.ndarray  # items x labels
    prior: np.ndarray  # labels
    confusion: np.ndarray  # raters x answer x truth: P(answer | truth)
    n_iter: int


def _ds_m_step(x: Answers, post: np.ndarray, wa: np.ndarray) -> np.ndarray:
    e = _by_rater_answer(x, post[x.item] * wa[:, None])
    seen = _by_rater_answer(x, np.ones(len(x.item))) > 0
    e = np.where(seen[:, :, None], np.maximum(e, _DS_EPS), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def _ds_e_step(x: Answers, prior: np.ndarray, e: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        loge = np.log2(e[x.rater, x.label])  # answers x truth
    ll = np.log2(np.maximum(prior, _DS_EPS))[None, :] + _by_item(x, loge)
    p = np.exp2(ll - ll.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def dawid_skene(x: Answers, n_iter: int = 100, tol: float | None = 1e-8) -> DawidSkeneFit:
    """EM for Dawid-Skene from the majority-vote shares; stops after `n_iter` rounds or when no
    posterior moves by more than `tol` (None: always `n_iter` rounds)."""
    xp, cnt, of = _compress(x)
    wa = cnt[xp.item]
    post = _by_item(xp, np.eye(len(x.labels))[xp.label])
    post /= post.sum(axis=1, keepdims=True)
    prior = cnt @ post / cnt.sum()
    e = _ds_m_step(xp, post, wa)
    done = 0
    for _round in range(n_iter):
        done += 1
        new = _ds_e_step(xp, prior, e)
        prior = cnt @ new / cnt.sum()
        e = _ds_m_step(xp, new, wa)
        moved = float(np.abs(new - post).max())
        post = new
        if tol is not None and moved < tol:
            break
    return DawidSkeneFit(post[of], prior, e, done)


@dataclass
class MaceFit:
    posterior: np.ndarray  # items x labels
    competence: np.ndarray  # raters: P(knowing)
    strategy: np.ndarray  # raters x labels: answer distribution when spamming
    n_iter: int


def _normalize(x: np.ndarray, smoothing: float) -> np.ndarray:
    s = x + smoothing
    norm = s.sum(axis=1, keepdims=True)
    return np.divide(s, norm, out=np.zeros_like(s), where=~np.isclose(norm, 0.0))


def _mace_e_step(
    x: Answers, spam: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posterior of the truth per item, and per answer the posteriors of spamming and knowing."""
    L = len(x.labels)
    s0, s1 = spam[x.rater, 0], spam[x.rater, 1]
    th = theta[x.rater, x.label]
    hit = x.label[:, None] == np.arange(L)[None, :]
    with np.errstate(divide="ignore"):
        logm = np.log(s0[:, None] * th[:, None] + s1[:, None] * hit)  # answers x truth
    ll = _by_item(x, logm)
    p = np.exp(ll - ll.max(axis=1, keepdims=True))
    post = p / p.sum(axis=1, keepdims=True)
    pa = post[x.item]
    with np.errstate(divide="ignore", invalid="ignore"):
        spamming = (pa * (s0 * th)[:, None] / (s0[:, None] * th[:, None] + s1[:, None] * hit)).sum(
            axis=1
        )
        knowing = post[x.item, x.label] * s1 / (s0 * th + s1)
    return post, np.nan_to_num(spamming), np.nan_to_num(knowing)


def mace(
    x: Answers, n_iter: int = 100, tol: float | None = 1e-9, default_noise: float = 0.5
) -> MaceFit:
    """EM for MACE; stops after `n_iter` rounds or when no parameter moves by more than `tol`."""
    R, L = len(x.raters), len(x.labels)
    xp, cnt, of = _compress(x)
    wa = cnt[xp.item]
    smoothing = 0.01 / L
    spam = uniform(1, 1 + default_noise).rvs(size=(R, 2), random_state=0)
    theta = uniform(1, 1 + default_noise).rvs(size=(R, L), random_state=0)
    spam = spam / spam.sum(axis=1, keepdims=True)
    theta = theta / theta.sum(axis=1, keepdims=True)
    post, spamming, knowing = _mace_e_step(xp, spam, theta)
    done = 0
    for _round in range(n_iter):
        done += 1
        strat = _by_rater_answer(xp, wa * spamming)
        counts = np.column_stack(
            [
                np.bincount(xp.rater, wa * spamming, minlength=R),
                np.bincount(xp.rater, wa * knowing, minlength=R),
            ]
        )
        new_spam, new_theta = _normalize(counts, smoothing), _normalize(strat, smoothing)
        moved = max(float(np.abs(new_spam - spam).max()), float(np.abs(new_theta - theta).max()))
        spam, theta = new_spam, new_theta
        post, spamming, knowing = _mace_e_step(xp, spam, theta)
        if tol is not None and moved < tol:
            break
    return MaceFit(post[of], spam[:, 1], theta, done)


def binned(codes: np.ndarray, values: tuple[float, ...]) -> np.ndarray:
    """Scale answers as categories: the points themselves, or MAX_CATEGORIES equal-width bins."""
    if len(values) <= MAX_CATEGORIES:
        return codes
    lo, hi = min(values), max(values)
    width = (hi - lo) / MAX_CATEGORIES
    b = np.floor((codes - lo) / width)
    return np.where(np.isnan(codes), np.nan, np.minimum(b, MAX_CATEGORIES - 1))


def _patterns(x: Answers) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Items with the same answers from the same raters share a posterior: the distinct answer
    patterns as rows over (rater, answer) columns, and the item -> pattern incidence."""
    n, R, L = _shape(x)
    m = sp.csr_matrix((np.ones(len(x.item)), (x.item, x.rater * L + x.label)), shape=(n, R * L))
    m.sum_duplicates()
    m.sort_indices()
    seen: dict[bytes, int] = {}
    of = np.empty(n, dtype=np.int64)
    first = []
    for i in range(n):
        k = m.indices[m.indptr[i] : m.indptr[i + 1]].tobytes()
        if k not in seen:
            seen[k] = len(first)
            first.append(i)
        of[i] = seen[k]
    pat = m[np.asarray(first, dtype=np.int64)]
    to_pat = sp.csr_matrix((np.ones(n), (np.arange(n), of)), shape=(n, len(first)))
    return pat.tocsr(), to_pat.tocsr()


def mace_bootstrap(
    x: Answers, fit: MaceFit, weights: np.ndarray, k_steps: int = K_STEPS
) -> np.ndarray:
    """Competence per resample (b x raters): `k_steps` rounds of weighted EM on each resample of
    items (`weights`: b x items, multiplicities), started at the full-data fit (fewer once
    the competences stop moving: K_TOL).

    An answer's terms depend only on (rater, answer, truth), so they are tables of raters x
    answers x truths per resample, and items enter through their distinct answer patterns:
    two sparse products per round instead of arrays over every answer.
    """
    n, R, L = _shape(x)
    pat, to_pat = _patterns(x)
    P = pat.shape[0]
    wp_all = np.asarray(to_pat.T @ weights.T).T  # b x patterns
    pat_t = pat.T.tocsr()
    eye = np.eye(L, dtype=bool)
    smoothing = 0.01 / L
    per = max(1, _BATCH // max(1, (P + R * L) * L))
    out = []
    for start in range(0, len(weights), per):
        wp = wp_all[start : start + per]
        b = len(wp)
        s1 = np.broadcast_to(fit.competence, (b, R)).copy()
        theta = np.broadcast_to(fit.strategy, (b, R, L)).copy()
        for _ in range(k_steps):
            s0 = 1.0 - s1
            # mix[b, r, a, l] = P(answer a | truth l) for rater r
            mix = (s0[:, :, None] * theta)[:, :, :, None] + s1[:, :, None, None] * eye
            with np.errstate(divide="ignore"):
                logt = np.log(mix).transpose(1, 2, 0, 3).reshape(R * L, b * L)
            ll = np.asarray(pat @ logt).reshape(P, b, L)
            p = np.exp(ll - ll.max(axis=2, keepdims=True))
            post = p / p.sum(axis=2, keepdims=True) * wp.T[:, :, None]
            q = np.asarray(pat_t @ post.reshape(P, b * L)).reshape(R, L, b, L).transpose(2, 0, 1, 3)
            with np.errstate(divide="ignore", invalid="ignore"):
                spam_share = np.nan_to_num((s0[:, :, None] * theta)[:, :, :, None] / mix)
                know_share = np.nan_to_num(s1[:, :, None] / np.diagonal(mix, axis1=2, axis2=3))
            strat = (q * spam_share).sum(axis=3)  # b x R x answers
            know = (np.diagonal(q, axis1=2, axis2=3) * know_share).sum(axis=2)
            c0, c1 = strat.sum(axis=2) + smoothing, know + smoothing
            moved = float(np.abs(c1 / (c0 + c1) - s1).max())
            s1 = c1 / (c0 + c1)
            theta = strat + smoothing
            theta /= theta.sum(axis=2, keepdims=True)
            if moved < K_TOL:
                break
        out.append(s1)
    return np.concatenate(out) if out else np.zeros((0, R))


def competence_figures(
    h: pd.DataFrame,
    *,
    ordinal: bool,
    values: tuple[float, ...] = (),
    n_boot: int = 200,
    seed: int = 0,
    key: str = "",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per rater a competence figure ({"estimate","low","high","n","model"} with the DS accuracy
    beside it), and a short latent-truth summary of the metric.

    `h`: the metric's human answers (idx, rater, code). Intervals: a seeded bootstrap over the
    metric's items (`n_boot` resamples, at most MAX_BOOT), `K_STEPS` rounds of EM per resample
    from the full-data fit. Raters and metrics the models cannot support (fewer than MIN_RATERS
    raters, a single answer category) get an undefined figure and a note.
    """
    d = h[["idx", "rater", "code"]].assign(rater=h["rater"].astype(str))
    if ordinal:
        d = d.assign(code=binned(d["code"].to_numpy(float), values))
    x = encode(d)
    n_r = np.bincount(x.rater, minlength=len(x.raters))
    note = None
    if len(x.raters) < MIN_RATERS:
        note = f"competence not estimated: {len(x.raters)} rater(s) on this metric (needs {MIN_RATERS})"
    elif len(x.labels) < 2:
        note = "competence not estimated: every answer is the same (nothing to tell raters apart)"
    if note:
        return {
            str(r): {**undefined(int(n), note), "model": "mace"}
            for r, n in zip(x.raters, n_r, strict=True)
        }, {"note": note}
    m = mace(x)
    ds = dawid_skene(x)
    b = min(int(n_boot), MAX_BOOT)
    weights = resample_counts(rng_for(seed, "competence", key), len(x.items), b)
    reps = mace_bootstrap(x, m, weights)
    correct = np.bincount(x.rater, weights=ds.posterior[x.item, x.label], minlength=len(x.raters))
    ds_note = "expected share of the rater's answers equal to the Dawid-Skene latent truth"
    out = {}
    for i, r in enumerate(x.raters):
        fig = summarize(m.competence[i], reps[:, i], int(n_r[i]))
        fig["model"] = "mace"
        fig["dawid_skene_accuracy"] = {
            **undefined(int(n_r[i]), "no answers"),
            "estimate": float(correct[i] / n_r[i]),
            "note": ds_note + " (point estimate; the interval is on the MACE competence)",
        }
        out[str(r)] = fig
    truth_ds = ds.posterior.argmax(axis=1)
    counts = np.zeros((len(x.items), len(x.labels)))
    np.add.at(counts, (x.item, x.label), 1.0)
    clear_major = (counts == counts.max(axis=1, keepdims=True)).sum(axis=1) == 1
    latent = {
        "model": "dawid_skene",
        "n_items": int(len(x.items)),
        "n_confident": int((ds.posterior.max(axis=1) >= 0.9).sum()),
        "n_differs_from_majority": int((clear_major & (truth_ds != counts.argmax(axis=1))).sum()),
        "n_boot": b,
    }
    if ordinal:
        latent["scale_as"] = (
            "scale points as categories"
            if len(values) <= MAX_CATEGORIES
            else f"{MAX_CATEGORIES} bins"
        )
    return out, latent


def rater_competence(
    human: pd.DataFrame, specs: list[Any], *, n_boot: int, seed: int
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """`raters.<r>.competence.<metric>` for every metric spec with human answers, and per metric
    the latent-truth summary. `human`: the report's long table (idx, rater, metric, code)."""
    per_rater: dict[str, dict[str, Any]] = {}
    latent: dict[str, Any] = {}
    by_metric = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
    for spec in specs:
        h = by_metric.get(spec.key)
        if h is None or not h["code"].notna().any():
            continue
        figs, latent[spec.key] = competence_figures(
            h, ordinal=spec.ordinal, values=spec.values, n_boot=n_boot, seed=seed, key=spec.key
        )
        for r, fig in figs.items():
            per_rater.setdefault(r, {})[spec.key] = fig
    return per_rater, latent


def low_competence(
    competence: dict[str, dict[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per rater the metrics where their competence is clearly below the others': the upper
    bound under the median of the other raters' estimates, on a metric where that median is
    at least ATTENTION. On a metric where most raters look like guessers (a rare yes/no tag,
    where MACE reads a run of "no" as a strategy) nobody is singled out."""
    est: dict[str, dict[str, float]] = {}
    for r, figs in competence.items():
        for key, f in figs.items():
            if f.get("estimate") is not None:
                est.setdefault(key, {})[r] = f["estimate"]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, by_r in est.items():
        for r, e in by_r.items():
            others = [v for o, v in by_r.items() if o != r]
            if len(others) < MIN_RATERS - 1:
                continue
            peers = float(np.median(others))
            f = competence[r][key]
            top = f.get("high") if f.get("high") is not None else e
            if peers >= ATTENTION and top < peers:
                out.setdefault(r, {})[key] = {
                    "estimate": e,
                    "low": f.get("low"),
                    "high": f.get("high"),
                    "peers": peers,
                }
    return out


__all__ = [
    "Answers",
    "binned",
    "dawid_skene",
    "encode",
    "mace",
    "low_competence",
    "rater_competence",
    "competence_figures",
    "mace_bootstrap",
]
