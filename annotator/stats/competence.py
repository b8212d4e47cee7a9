"""Rater reliability models: Dawid-Skene and MACE, fitted by EM per metric.
(Over 500 lines on purpose: Dawid-Skene and MACE share the EM scaffolding, the coding of answers
and the interval rule.)

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
  is deterministic and can be checked against it. MACE's own model takes every
  true answer as equally likely; the report's fit (`LEARN_PRIOR`) estimates the
  truth's distribution too, as Dawid-Skene does: with 80/10/10 truth the
  uniform model read raters of 0.9 and 0.7 as about 0.4 and its intervals
  covered 25% (0% for the best rater), with the prior learned 93% (validity.md). `mace(x)` without it is crowd-kit's model.

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
of 95%. From a competence of 0.5 up the interval is normal on the logit scale
(estimate +- 1.96 x the replicates' logit spread, read by their interquartile
range, mapped back): a good rater's competence sits near the top of its range,
where the percentile interval covered 87% for the best rater with 80/10/10 truth
(logit: 93%; `logit_interval`); below 0.5 it stays the percentile interval. The coverage test is in tests/unit/test_stats_competence.py. No
interval is published where one latent answer holds more than
COVERED_MAX_SHARE (80%) of the items (coverage there was not shown >= 90%:
88.8% at yes/no 85/15, 82.6% at 90/5/5), and `low_competence` never flags a
rater without an interval. A rater sharing fewer than MIN_OVERLAP items with
another, or whose EM competence is 0 on every resample, is "not estimable".
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
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
K_STEPS = 40  # at most this many EM rounds per bootstrap resample, from the full-data fit
K_TOL = 1e-4  # ... fewer once no resample's competence moves by more than this in a round
# MACE's uniform truth made the competence of good raters look like 0.4 where 80% of items
# have one true answer (coverage 24-36%, 0% for the best rater): the truth's distribution is
# estimated with the other parameters (as Dawid-Skene does)
LEARN_PRIOR = True
# the largest share of one latent answer at which the interval's coverage was shown >= 90%
# (tests/benchmarks/validity.md); beyond it no interval is published, and nobody is flagged
COVERED_MAX_SHARE = 0.8
MIN_OVERLAP = 10  # items a rater shares with another rater, below which MACE is not estimable
# an interval wider than this says nothing about the rater (a tag rater at [0.01, 0.99] was
# flagged): no flag on it, whatever the others' median
MAX_FLAG_WIDTH = 0.5
MAX_BOOT = 200  # resamples of the competence interval (each is a small EM fit)
_BATCH = 2_000_000  # floats in one (patterns x resamples x labels) array
_DENSE_CELLS = 4_000_000  # patterns x (raters * labels) held as an array (32 MB) for BLAS
_THREADS = min(2, os.cpu_count() or 1)  # batches of resamples at once (the target has two cores)


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
    d = df[df[value].notna()]
    # sorted codes as np.unique gives them; pandas hashes, where np.unique sorts every answer
    i, items = pd.factorize(d[item], sort=True)
    r, raters = pd.factorize(d[rater].astype(str), sort=True)
    a, labels = pd.factorize(d[value], sort=True)
    i, r, a = i.astype(np.int64), r.astype(np.int64), a.astype(np.int64)
    last = ~pd.Series(i * len(raters) + r).duplicated(keep="last").to_numpy()
    if not last.all():  # one answer per item and rater: the last one given
        i, r, a = i[last], r[last], a[last]
        i, items = _recode(i, items)
        r, raters = _recode(r, raters)
        a, labels = _recode(a, labels)
    return Answers(i, r, a, np.asarray(items), np.asarray(raters), np.asarray(labels))


def _recode(codes: np.ndarray, uniques: Any) -> tuple[np.ndarray, Any]:
    """Codes over only the values still used, in the same order."""
    used = np.unique(codes)
    if len(used) == len(uniques):
        return codes, uniques
    return np.searchsorted(used, codes).astype(np.int64), np.asarray(uniques)[used]


def _shape(x: Answers) -> tuple[int, int, int]:
    return len(x.items), len(x.raters), len(x.labels)


@dataclass(frozen=True)
class _Patterns:
    """Items answered alike by the same raters share every posterior of both models: the
    distinct answer patterns as rows over (rater, answer) columns, and how items map onto them.
    An answer's terms depend only on (rater, answer, truth), so an EM round is two products of
    the patterns with small tables instead of arrays over every answer."""

    pat: sp.csr_matrix  # patterns x (rater * L + answer), ones
    pat_t: sp.csr_matrix  # its transpose
    to_pat: sp.csr_matrix  # items x patterns incidence
    count: np.ndarray  # items per pattern
    of: np.ndarray  # pattern of each item
    n_raters: int
    n_labels: int
    dense: np.ndarray | None  # `pat` as an array when small: BLAS beats a sparse product here

    def by_pattern(self, table: np.ndarray) -> np.ndarray:
        """Per pattern the sum of its answers' rows of `table` ((rater * L + answer) x k, finite
        on every row a pattern reads)."""
        if self.dense is not None:
            return self.dense @ table
        return np.asarray(self.pat @ table)

    def by_rater_answer(self, per_pattern: np.ndarray) -> np.ndarray:
        """Per (rater, answer) the sum over patterns of `per_pattern` (patterns x k), as
        raters x answers x k."""
        if self.dense is not None:
            out = self.dense.T @ per_pattern
        else:
            out = np.asarray(self.pat_t @ per_pattern)
        return out.reshape(self.n_raters, self.n_labels, -1)

    def in_float32(self) -> _Patterns:
        """The same patterns for products in single precision (bootstrap resamples)."""
        f = np.float32
        dense = None if self.dense is None else self.dense.astype(f)
        return replace(self, pat=self.pat.astype(f), pat_t=self.pat_t.astype(f), dense=dense)


def _patterns(x: Answers) -> _Patterns:
    n, R, L = _shape(x)
    m = sp.csr_matrix((np.ones(len(x.item)), (x.item, x.rater * L + x.label)), shape=(n, R * L))
    m.sum_duplicates()
    m.sort_indices()
    seen: dict[bytes, int] = {}
    of = np.empty(n, dtype=np.int64)
    first: list[int] = []
    for i in range(n):
        k = m.indices[m.indptr[i] : m.indptr[i + 1]].tobytes()
        if k not in seen:
            seen[k] = len(first)
            first.append(i)
        of[i] = seen[k]
    pat = m[np.asarray(first, dtype=np.int64)].tocsr()
    to_pat = sp.csr_matrix((np.ones(n), (np.arange(n), of)), shape=(n, len(first))).tocsr()
    count = np.bincount(of, minlength=len(first)).astype(float)
    dense = pat.toarray() if pat.shape[0] * pat.shape[1] <= _DENSE_CELLS else None
    return _Patterns(pat, pat.T.tocsr(), to_pat, count, of, R, L, dense)


def _softmax(ll: np.ndarray, axis: int, *, base2: bool = False) -> np.ndarray:
    """Softmax along `axis` in place of `ll`. The few labels are walked one slice at a time:
    with the resamples innermost, each slice is one contiguous pass (numpy's reduction along a
    short middle axis is several times slower)."""
    parts = list(np.moveaxis(ll, axis, 0))  # views of ll, one per label
    top = parts[0].copy()
    for v in parts[1:]:
        np.maximum(top, v, out=top)
    ll -= np.expand_dims(top, axis)
    p = np.exp2(ll, out=ll) if base2 else np.exp(ll, out=ll)
    total = parts[0].copy()
    for v in parts[1:]:
        total += v
    p /= np.expand_dims(total, axis)
    return p


@dataclass
class DawidSkeneFit:
    posterior: np.ndarray  # items x labels
    prior: np.ndarray  # labels
    confusion: np.ndarray  # raters x answer x truth: P(answer | truth)
    n_iter: int


def _ds_m_step(t: _Patterns, post: np.ndarray, seen: np.ndarray) -> np.ndarray:
    e = t.by_rater_answer(post * t.count[:, None])
    e = np.where(seen[:, :, None], np.maximum(e, _DS_EPS), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def _ds_e_step(t: _Patterns, prior: np.ndarray, e: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        loge = np.log2(e).reshape(t.n_raters * t.n_labels, t.n_labels)
    loge[~np.isfinite(loge)] = 0.0  # a (rater, answer) never given: a row no pattern reads
    ll = np.log2(np.maximum(prior, _DS_EPS))[None, :] + t.by_pattern(loge)
    return _softmax(ll, 1, base2=True)


def dawid_skene(
    x: Answers,
    n_iter: int = 100,
    tol: float | None = 1e-8,
    patterns: _Patterns | None = None,
) -> DawidSkeneFit:
    """EM for Dawid-Skene from the majority-vote shares; stops after `n_iter` rounds or when no
    posterior moves by more than `tol` (None: always `n_iter` rounds). `patterns`: `x`'s, when
    the caller has them already."""
    t = patterns if patterns is not None else _patterns(x)
    L = t.n_labels
    seen = t.by_rater_answer(t.count[:, None])[:, :, 0] > 0
    post = t.by_pattern(np.tile(np.eye(L), (t.n_raters, 1)))  # answers per label
    post /= post.sum(axis=1, keepdims=True)
    prior = t.count @ post / t.count.sum()
    e = _ds_m_step(t, post, seen)
    done = 0
    for _round in range(n_iter):
        done += 1
        new = _ds_e_step(t, prior, e)
        prior = t.count @ new / t.count.sum()
        e = _ds_m_step(t, new, seen)
        moved = float(np.abs(new - post).max())
        post = new
        if tol is not None and moved < tol:
            break
    return DawidSkeneFit(post[t.of], prior, e, done)


@dataclass
class MaceFit:
    posterior: np.ndarray  # items x labels
    competence: np.ndarray  # raters: P(knowing)
    strategy: np.ndarray  # raters x labels: answer distribution when spamming
    n_iter: int
    prior: np.ndarray | None = None  # labels: the truth's distribution, when estimated


def _mace_mix(s1: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """P(answer | truth) per rater for `b` parameter sets at once (s1: raters x b, theta:
    raters x labels x b): raters x answer x truth x b, the resamples innermost so that every
    array of a round is reduced along a contiguous axis."""
    eye = np.eye(theta.shape[1])[None, :, :, None]
    return ((1.0 - s1)[:, None, :] * theta)[:, :, None, :] + s1[:, None, None, :] * eye


def _mace_posterior(t: _Patterns, mix: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """Posterior of the truth per pattern and parameter set: patterns x truth x b. `prior`
    (truth x b): the truth's distribution; None is MACE's uniform one."""
    R, L, b = t.n_raters, t.n_labels, mix.shape[3]
    with np.errstate(divide="ignore"):
        logt = np.log(mix).reshape(R * L, L * b).astype(t.pat.dtype, copy=False)
    ll = t.by_pattern(logt).reshape(-1, L, b)
    if prior is not None:
        ll = ll + np.log(np.maximum(prior, _DS_EPS)).astype(ll.dtype)[None, :, :]
    return _softmax(ll, 1)


def _mace_round(
    t: _Patterns,
    s1: np.ndarray,
    theta: np.ndarray,
    wp: np.ndarray,
    smoothing: float,
    prior: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One EM round of MACE for `b` parameter sets (s1: raters x b, theta: raters x labels x
    b) with pattern weights `wp` (patterns x b): the next (s1, theta, prior); the prior is
    re-estimated only when one is given (None: MACE's uniform truth)."""
    R, L, b = t.n_raters, t.n_labels, s1.shape[1]
    mix = _mace_mix(s1, theta)
    post = _mace_posterior(t, mix, prior)
    post *= wp[:, None, :]
    if prior is not None:
        tot = post.sum(axis=0).astype(float)  # truth x b
        prior = tot / tot.sum(axis=0, keepdims=True)
    q = t.by_rater_answer(post.reshape(-1, L * b)).reshape(R, L, L, b).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        spam_share = np.nan_to_num(((1.0 - s1)[:, None, :] * theta)[:, :, None, :] / mix)
        know_share = np.nan_to_num(
            s1[:, None, :] / np.diagonal(mix, axis1=1, axis2=2).transpose(0, 2, 1)
        )
    strat = (q * spam_share).sum(axis=2)  # raters x answers x b
    know = (np.diagonal(q, axis1=1, axis2=2).transpose(0, 2, 1) * know_share).sum(axis=1)
    c0, c1 = strat.sum(axis=1) + smoothing, know + smoothing
    theta = strat + smoothing
    return c1 / (c0 + c1), theta / theta.sum(axis=1, keepdims=True), prior


def mace(
    x: Answers,
    n_iter: int = 100,
    tol: float | None = 1e-9,
    default_noise: float = 0.5,
    learn_prior: bool = False,
    patterns: _Patterns | None = None,
) -> MaceFit:
    """EM for MACE; stops after `n_iter` rounds or when no parameter moves by more than `tol`.
    With `learn_prior` the truth's distribution is estimated too (from uniform), as Dawid-Skene
    does; without, MACE's uniform truth (the paper's and crowd-kit's model). `patterns`: `x`'s,
    when the caller has them already."""
    R, L = len(x.raters), len(x.labels)
    t = patterns if patterns is not None else _patterns(x)
    smoothing = 0.01 / L
    spam = uniform(1, 1 + default_noise).rvs(size=(R, 2), random_state=0)
    theta = uniform(1, 1 + default_noise).rvs(size=(R, L), random_state=0)
    s1 = (spam[:, 1] / spam.sum(axis=1))[:, None]
    theta = (theta / theta.sum(axis=1, keepdims=True))[:, :, None]
    wp = t.count[:, None]
    prior = np.full((L, 1), 1.0 / L) if learn_prior else None
    done = 0
    for _round in range(n_iter):
        done += 1
        new_s1, new_theta, prior = _mace_round(t, s1, theta, wp, smoothing, prior)
        moved = max(float(np.abs(new_s1 - s1).max()), float(np.abs(new_theta - theta).max()))
        s1, theta = new_s1, new_theta
        if tol is not None and moved < tol:
            break
    post = _mace_posterior(t, _mace_mix(s1, theta), prior)[:, :, 0]
    return MaceFit(
        post[t.of], s1[:, 0], theta[:, :, 0], done, None if prior is None else prior[:, 0]
    )


def binned(codes: np.ndarray, values: tuple[float, ...]) -> np.ndarray:
    """Scale answers as categories: the points themselves, or MAX_CATEGORIES equal-width bins."""
    if len(values) <= MAX_CATEGORIES:
        return codes
    lo, hi = min(values), max(values)
    width = (hi - lo) / MAX_CATEGORIES
    b = np.floor((codes - lo) / width)
    return np.where(np.isnan(codes), np.nan, np.minimum(b, MAX_CATEGORIES - 1))


def mace_bootstrap(
    x: Answers,
    fit: MaceFit,
    weights: np.ndarray,
    k_steps: int = K_STEPS,
    patterns: _Patterns | None = None,
) -> np.ndarray:
    """Competence per resample (b x raters): `k_steps` rounds of weighted EM on each resample of
    items (`weights`: b x items, multiplicities), started at the full-data fit (fewer once
    the competences stop moving: K_TOL).

    Resamples enter through their weights on the answer patterns. Batches of resamples are
    independent: with sparse patterns they run on `_THREADS` threads (numpy and scipy's sparse
    products release the GIL) and are put back in order; dense ones leave the cores to BLAS
    (two pools on two cores were slower than one).
    """
    _, R, L = _shape(x)
    # Single precision: a resample's competence moves by about 1e-6, a thousandth of the
    # bootstrap's own Monte Carlo error, and the products and exponentials take half the time.
    t = (patterns if patterns is not None else _patterns(x)).in_float32()
    P = t.pat.shape[0]
    wp_all = np.asarray(t.to_pat.T @ weights.T, dtype=np.float32)  # patterns x b
    smoothing = 0.01 / L
    per = max(1, _BATCH // max(1, (P + R * L) * L))

    def batch(start: int) -> np.ndarray:
        wp = wp_all[:, start : start + per]
        b = wp.shape[1]
        s1 = np.repeat(fit.competence[:, None], b, axis=1)
        theta = np.repeat(fit.strategy[:, :, None], b, axis=2)
        prior = None if fit.prior is None else np.repeat(fit.prior[:, None], b, axis=1)
        for _ in range(k_steps):
            new_s1, theta, prior = _mace_round(t, s1, theta, wp, smoothing, prior)
            moved = float(np.abs(new_s1 - s1).max())
            s1 = new_s1
            if moved < K_TOL:
                break
        return s1.T

    starts = range(0, len(weights), per)
    if len(starts) < 2 or _THREADS < 2 or t.dense is not None:
        out = [batch(s) for s in starts]
    else:
        with ThreadPoolExecutor(_THREADS) as pool:
            out = list(pool.map(batch, starts))
    return np.concatenate(out) if out else np.zeros((0, R))


LOGIT_CLIP = 1e-6  # a competence of exactly 0 or 1 read as this far inside, so its logit is finite


def logit_interval(
    estimate: float, reps: np.ndarray, z: float = 1.959963984540054
) -> tuple[float, float]:
    """A 95% interval for a share near 0 or 1: estimate +- z x the replicates' spread (robust),
    on the logit scale, mapped back. The percentile interval of a competence near 1 (a good
    rater) covered 87% with 80/10/10 truth; this one 93% (validity.md, MACE section)."""

    def logit(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, LOGIT_CLIP, 1 - LOGIT_CLIP)
        return np.log(p / (1 - p))

    r = np.asarray(reps, dtype=float)
    r = r[np.isfinite(r)]
    # the spread read robustly (the interquartile range of a normal over 1.349): an EM resample
    # that falls into the other solution (competence 0) lies a dozen logits away, and one of
    # them would make a plain standard deviation span the whole range
    sd = float(np.subtract(*np.percentile(logit(r), [75, 25])) / 1.349) if len(r) > 1 else 0.0
    centre = float(logit(np.array([estimate]))[0])
    lo, hi = centre - z * sd, centre + z * sd
    return float(1 / (1 + np.exp(-lo))), float(1 / (1 + np.exp(-hi)))


def competence_figures(
    h: pd.DataFrame,
    *,
    ordinal: bool,
    values: tuple[float, ...] = (),
    n_boot: int = 200,
    seed: int = 0,
    key: str = "",
    gate: bool = True,
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
    t = _patterns(x)  # built once: the three fits read the same patterns
    m = mace(x, learn_prior=LEARN_PRIOR, patterns=t)
    ds = dawid_skene(x, patterns=t)
    b = min(int(n_boot), MAX_BOOT)
    weights = resample_counts(rng_for(seed, "competence", key), len(x.items), b)
    reps = mace_bootstrap(x, m, weights, K_STEPS, patterns=t)
    correct = np.bincount(x.rater, weights=ds.posterior[x.item, x.label], minlength=len(x.raters))
    ds_note = "expected share of the rater's answers equal to the Dawid-Skene latent truth"
    top_share = float(m.prior.max()) if m.prior is not None else None
    withheld = None
    if gate and top_share is not None and top_share > COVERED_MAX_SHARE:
        withheld = (
            f"no interval: {top_share:.0%} of the items' latent answers are one class, beyond "
            f"the {COVERED_MAX_SHARE:.0%} up to which the interval's coverage was shown >= 90% "
            "in simulation (validity.md)"
        )
    overlap = _overlap(x)
    out = {}
    for i, r in enumerate(x.raters):
        fig = summarize(m.competence[i], reps[:, i], int(n_r[i]))
        if fig["low"] is not None and m.competence[i] >= 0.5:
            # a good rater's competence sits near the top of its range, where the percentile
            # interval is short; a spammer's near 0 keeps it (its resamples that hit 0 exactly
            # have no logit)
            fig["low"], fig["high"] = logit_interval(float(m.competence[i]), reps[:, i])
        fig["model"] = "mace"
        # EM stuck at competence 0 on every resample: 0.00 [0.00, 0.00] says nothing about the rater
        degenerate = fig["low"] is not None and fig["high"] < 1e-6
        if overlap[i] < MIN_OVERLAP or degenerate:
            fig = {
                **undefined(
                    int(n_r[i]),
                    "not estimable: too little overlap with other raters "
                    f"({int(overlap[i])} items shared with another rater; the EM solution is "
                    "degenerate)",
                ),
                "model": "mace",
            }
        elif withheld:
            fig.update(low=None, high=None, note=withheld)
        fig["n_overlap"] = int(overlap[i])
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
        "mace_truth_prior": None if m.prior is None else [float(p) for p in m.prior],
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


def _overlap(x: Answers) -> np.ndarray:
    """Per rater the number of their items that at least one other rater answered too."""
    per_item = np.bincount(x.item, minlength=len(x.items))
    shared = per_item[x.item] >= 2
    return np.bincount(x.rater, weights=shared.astype(float), minlength=len(x.raters))


def rater_competence(
    human: pd.DataFrame,
    specs: list[Any],
    *,
    n_boot: int,
    seed: int,
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
            h,
            ordinal=spec.ordinal,
            values=spec.values,
            n_boot=n_boot,
            seed=seed,
            key=spec.key,
        )
        for r, fig in figs.items():
            per_rater.setdefault(r, {})[spec.key] = fig
    return per_rater, latent


def low_competence(
    competence: dict[str, dict[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per rater the metrics where their competence is clearly below the others': the upper
    bound under the median of the other raters' estimates, on a metric where that median is
    at least ATTENTION, and an interval no wider than MAX_FLAG_WIDTH. On a metric where most
    raters look like guessers (a rare yes/no tag, where MACE reads a run of "no" as a strategy)
    nobody is singled out. The one rule: the summary and the dashboard both read it."""
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
            # never on a point estimate alone: an interval is published only where its coverage
            # was shown (>= 90%) under the metric's answer distribution
            top, bottom = f.get("high"), f.get("low")
            if top is None or bottom is None or top - bottom > MAX_FLAG_WIDTH:
                continue
            if peers >= ATTENTION and top < peers:
                out.setdefault(r, {})[key] = {
                    "estimate": e,
                    "low": f.get("low"),
                    "high": f.get("high"),
                    "peers": peers,
                }
                if f.get("as_of"):  # a live estimate's fit, carried from the last full one
                    out[r][key]["as_of"] = f["as_of"]
    return out


__all__ = [
    "Answers",
    "binned",
    "dawid_skene",
    "encode",
    "mace",
    "low_competence",
    "MAX_FLAG_WIDTH",
    "rater_competence",
    "competence_figures",
    "mace_bootstrap",
]
