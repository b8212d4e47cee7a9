"""Generator strengths from a judge's pair votes corrected by a human pair sample: Bradley-Terry
fitted by prediction-powered inference, and every generator's rank as a set.

**PPI++ Bradley-Terry** (Boyeau, Angelopoulos, Yosef, Malik & Jordan, "AutoEval done right:
using synthetic data for model evaluation", 2024; the estimator is PPI++ for M-estimation,
Angelopoulos, Duchi & Zrnic 2023). A pair between generators a and b (a first by name) has
covariates x = e_a - e_b (the alphabetically first generator is the reference, its strength
0) and an outcome in [0, 1]: 1 when a's output is preferred, 0 when b's, 1/2 for a tie; the
humans' outcome on a sampled pair is the mean of their votes. The strengths beta minimise

    L(beta) = (1/n) sum_labelled l(beta; x, y) + lam [(1/N) sum_unlabelled l(beta; x, f)
                                                     - (1/n) sum_labelled l(beta; x, f)]

with l the logistic loss, y the humans' outcome and f the judge's. The bracket has mean zero
on a random sample for every beta, so the estimate is consistent whatever the judge gets
wrong; lam in [0, 1] is tuned to the smallest total variance. The logistic loss's Hessian does
not depend on the outcome, so L is convex for lam in [0, 1] and Newton's method finds its
minimum. The covariance is the sandwich H^-1 M H^-1 with H the Hessian on all pairs and M the
variance of the gradients (the labelled pairs' g_y - lam g_f, the unlabelled pairs' lam g_f).
With independent pairs, equal weights and lam tuned as ppi_py tunes it (at the lam = 1 fit,
its `_calc_lam_glm` rule, clipped to [0, 1]), this is `ppi_py.ppi_logistic_pointestimate`,
and at that lam `ppi_logistic_ci` (tests/unit/test_debiased_bt.py; ppi_py's interval function
tunes lam once more at the tuned estimate and centres on that refit, ours stays centred on the
published estimate). Pairs that share a case are
clustered: M sums each case's gradients (CR1), lam minimises the trace of that covariance,
and the interval takes a t quantile on the cases less one.

**Rank-sets** (Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez, "Prediction-powered ranking of
large language models", NeurIPS 2024). From an estimate theta of K generators' figures (higher
is better) and its covariance S, the ellipsoid {t : (t - theta)' S^+ (t - theta) <= chi2} with
chi2 the 1 - alpha quantile on the figure's dimensions holds the truth with probability
1 - alpha. Generator j is surely above i when theta_j - theta_i exceeds sqrt(chi2 d' S d)
(d = e_j - e_i: the smallest value of the difference over the ellipsoid). The rank-set of i is
[1 + #{j surely above i}, K - #{j surely below i}], and all K rank-sets hold the true ranks
together with probability at least 1 - alpha (simultaneous coverage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, log1p
from scipy.stats import chi2, norm
from scipy.stats import t as student_t

NEWTON_TOL = 1e-12
NEWTON_MAX = 100


@dataclass(frozen=True)
class BTFit:
    names: list[str]  # generators, alphabetical; names[0] is the reference (strength 0)
    strength: np.ndarray  # K strengths (log-odds against the reference)
    cov: np.ndarray  # K x K (the reference's row and column 0)
    lam: float
    n_labelled: int
    n_unlabelled: int
    n_clusters: int | None

    def interval(self, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
        se = np.sqrt(np.clip(np.diag(self.cov), 0.0, None))
        q = (
            float(norm.isf(alpha / 2))
            if self.n_clusters is None
            else float(student_t.isf(alpha / 2, max(1, self.n_clusters - 1)))
        )
        return self.strength - q * se, self.strength + q * se


def design(first: np.ndarray, second: np.ndarray, names: list[str]) -> np.ndarray:
    """x = e_first - e_second without the reference's column (names[0])."""
    at = {g: i for i, g in enumerate(names)}
    x = np.zeros((len(first), len(names)))
    rows = np.arange(len(first))
    x[rows, [at[g] for g in first]] += 1.0
    x[rows, [at[g] for g in second]] -= 1.0
    return x[:, 1:]


def _loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    z = x @ theta
    # -y z + log(1 + e^z), stable for large |z|
    return float(w @ (np.maximum(z, 0) + log1p(np.exp(-np.abs(z))) - y * z))


def _hess(theta: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    mu = expit(x @ theta)
    return (x * (w * mu * (1 - mu))[:, None]).T @ x


def _grads(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per-row weighted gradients of the logistic loss, rows x d."""
    return x * (w * (expit(x @ theta) - y))[:, None]


def _fit(parts: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]], d: int) -> np.ndarray:
    """Minimise sum_k c_k * (1/len) weighted logistic loss (c may be negative; the sum is convex
    here) by Newton's method with backtracking."""

    def total(theta: np.ndarray) -> float:
        return sum(c * _loss(theta, x, y, w) for c, x, y, w in parts)

    theta = np.zeros(d)
    for _ in range(NEWTON_MAX):
        g = sum(c * _grads(theta, x, y, w).sum(axis=0) for c, x, y, w in parts)
        h = sum(c * _hess(theta, x, w) for c, x, _, w in parts)
        if float(np.max(np.abs(g))) < NEWTON_TOL:
            break
        step = np.linalg.lstsq(h, g, rcond=None)[0]
        now, t = total(theta), 1.0
        while t > 1e-10 and total(theta - t * step) > now + 1e-15:
            t /= 2
        theta = theta - t * step
    return theta


def _normalised(w: np.ndarray | None, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=float)
    return w / w.sum() * n  # mean weight 1, as ppi_py


def _cluster_meat(infl: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    codes, inv = np.unique(cluster, return_inverse=True)
    k = len(codes)
    sums = np.zeros((k, infl.shape[1]))
    np.add.at(sums, inv, infl)
    return sums.T @ sums * (k / (k - 1) if k > 1 else 1.0)


def ppi_bradley_terry(
    names: list[str],
    x_labelled: np.ndarray,
    y: np.ndarray,
    f_labelled: np.ndarray,
    x_unlabelled: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    w_labelled: np.ndarray | None = None,
    w_unlabelled: np.ndarray | None = None,
    cluster_labelled: np.ndarray | None = None,
    cluster_unlabelled: np.ndarray | None = None,
    lam: float | None = None,
) -> BTFit:
    """PPI++ Bradley-Terry strengths (see the module doc). `x_*`: design rows (`design`), `y`
    the humans' outcome and `f_*` the judge's; weights are Hajek-normalised within each set;
    clusters (case codes comparable between the sets) make the covariance cluster-robust.
    `lam=None` tunes lam; lam = 0 is the humans-only fit."""
    xl, xu = np.asarray(x_labelled, float), np.asarray(x_unlabelled, float)
    y, fl, fu = (np.asarray(a, float) for a in (y, f_labelled, f_unlabelled))
    n, m, d = len(y), len(fu), xl.shape[1]
    wl, wu = _normalised(w_labelled, n), _normalised(w_unlabelled, m)
    clustered = cluster_labelled is not None

    def fit(lam_: float) -> np.ndarray:
        parts = [(1.0 / n, xl, y, wl)]
        if lam_ and m:
            parts += [(lam_ / m, xu, fu, wu), (-lam_ / n, xl, fl, wl)]
        return _fit(parts, d)

    def stats(theta: np.ndarray, with_unlabelled: bool) -> tuple[np.ndarray, ...]:
        g, gh = _grads(theta, xl, y, wl), _grads(theta, xl, fl, wl)
        ghu = _grads(theta, xu, fu, wu) if m else np.zeros((0, d))
        if with_unlabelled and m:
            h = (_hess(theta, xu, wu) + _hess(theta, xl, wl)) / (n + m)
        else:
            h = _hess(theta, xl, wl) / n
        return g, gh, ghu, np.linalg.pinv(h)

    if lam is None:
        if not m:
            lam = 0.0
        else:
            g, gh, ghu, hinv = stats(fit(1.0), True)
            lam = _tune(g, gh, ghu, hinv, cluster_labelled, cluster_unlabelled)
    theta = fit(lam)
    g, gh, ghu, hinv = stats(theta, lam != 0)
    if not clustered:
        var_l = np.atleast_2d(np.cov((g - lam * gh).T))
        var_u = np.atleast_2d(np.cov((lam * ghu).T)) if m > 1 else np.zeros((d, d))
        sigma = hinv @ (n / m * var_u + var_l if m else var_l) @ hinv / n
        k = None
    else:
        infl = np.concatenate(
            [(g - lam * gh - (g - lam * gh).mean(axis=0)) / n, lam * (ghu - ghu.mean(axis=0)) / m]
            if m
            else [(g - lam * gh - (g - lam * gh).mean(axis=0)) / n]
        )
        cl = np.concatenate([np.asarray(cluster_labelled), np.asarray(cluster_unlabelled)])
        cl = cl if m else np.asarray(cluster_labelled)
        sigma = hinv @ _cluster_meat(infl, cl) @ hinv
        k = len(np.unique(cl))
    full = np.zeros((d + 1, d + 1))
    full[1:, 1:] = sigma
    return BTFit(
        names=list(names),
        strength=np.concatenate([[0.0], theta]),
        cov=full,
        lam=float(lam),
        n_labelled=n,
        n_unlabelled=m,
        n_clusters=k,
    )


def _tune(
    g: np.ndarray,
    gh: np.ndarray,
    ghu: np.ndarray,
    hinv: np.ndarray,
    cluster_labelled: np.ndarray | None,
    cluster_unlabelled: np.ndarray | None,
) -> float:
    """lam minimising the total variance: ppi_py's rule for independent pairs; with clusters the
    exact minimiser of the trace of the cluster-robust covariance (quadratic in lam)."""
    n, m = len(g), len(ghu)
    if cluster_labelled is None:
        gc, hc = g - g.mean(axis=0), gh - gh.mean(axis=0)
        cov_g = (gc.T @ hc + hc.T @ gc) / n
        var_h = np.atleast_2d(np.cov(np.concatenate([gh, ghu]).T))
        num = np.trace(hinv @ cov_g @ hinv)
        den = 2 * (1 + n / m) * np.trace(hinv @ var_h @ hinv)
        return float(np.clip(num / den, 0.0, 1.0)) if den > 0 else 0.0
    cl = np.concatenate([np.asarray(cluster_labelled), np.asarray(cluster_unlabelled)])
    _, inv = np.unique(cl, return_inverse=True)
    k = int(inv.max()) + 1
    base = np.concatenate([(g - g.mean(axis=0)) / n, np.zeros_like(ghu)])
    slope = np.concatenate([-(gh - gh.mean(axis=0)) / n, (ghu - ghu.mean(axis=0)) / m])
    sb, ss = np.zeros((k, g.shape[1])), np.zeros((k, g.shape[1]))
    np.add.at(sb, inv, base)
    np.add.at(ss, inv, slope)
    a, b = sb @ hinv, ss @ hinv  # per cluster, in the estimate's coordinates
    den = float(np.sum(b * b))
    return float(np.clip(-float(np.sum(a * b)) / den, 0.0, 1.0)) if den > 1e-300 else 0.0


def surely_above(
    theta: np.ndarray, cov: np.ndarray, alpha: float = 0.05, dims: int | None = None
) -> np.ndarray:
    """above[i, j]: generator j's figure exceeds i's at every point of the 1 - alpha confidence
    ellipsoid (see the module doc; `dims` as `rank_sets`)."""
    theta = np.asarray(theta, float)
    cov = np.asarray(cov, float)
    k = len(theta)
    radius = float(chi2.ppf(1 - alpha, dims if dims is not None else k))
    above = np.zeros((k, k), dtype=bool)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            var = cov[j, j] + cov[i, i] - 2 * cov[i, j]
            above[i, j] = theta[j] - theta[i] > np.sqrt(max(var, 0.0) * radius)
    return above


def rank_sets(
    names: list[str],
    theta: np.ndarray,
    cov: np.ndarray,
    alpha: float = 0.05,
    dims: int | None = None,
) -> dict[str, list[int]]:
    """Each generator's rank as [best, worst] (1 = highest figure), all holding the true ranks
    together with probability at least 1 - alpha (see the module doc). `dims`: the figure's
    degrees of freedom (K, or K - 1 when one generator is fixed as the reference)."""
    above = surely_above(theta, cov, alpha, dims)
    k = len(names)
    return {names[i]: [1 + int(above[i].sum()), k - int(above[:, i].sum())] for i in range(k)}


def rank_text(rank: list[int]) -> str:
    """[2, 3] -> '2nd to 3rd'; [1, 1] -> '1st'."""

    def nth(r: int) -> str:
        return (
            f"{r}{'th' if 10 <= r % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(r % 10, 'th')}"
        )

    lo, hi = rank
    return nth(lo) if lo == hi else f"{nth(lo)} to {nth(hi)}"


def bt_section(fit: BTFit, humans: BTFit | None, alpha: float = 0.05) -> dict[str, Any]:
    """The report's entry of one judge's PPI++ Bradley-Terry fit, with the humans-only fit."""
    lo, hi = fit.interval(alpha)
    ranks = rank_sets(fit.names, fit.strength, fit.cov, alpha, dims=len(fit.names) - 1)
    out: dict[str, Any] = {
        "reference": fit.names[0],
        "strengths": {
            g: {"estimate": float(fit.strength[i]), "low": float(lo[i]), "high": float(hi[i])}
            for i, g in enumerate(fit.names)
        },
        "rank_sets": {g: {"ranks": r, "text": rank_text(r)} for g, r in ranks.items()},
        "lam": fit.lam,
        "n_labelled": fit.n_labelled,
        "n_unlabelled": fit.n_unlabelled,
        "n_clusters": fit.n_clusters,
        "coverage": f"rank-sets hold every generator's true rank together with probability at "
        f"least {1 - alpha:.0%}",
    }
    if fit.lam == 0.0:
        # lambda 0: these strengths are the human votes' alone, whatever the section's title
        out["judge_value"] = {
            "added_nothing": True,
            "words": "the judge added nothing here: humans only (its weight lambda is 0)",
        }
    if humans is not None:
        hlo, hhi = humans.interval(alpha)
        out["humans_only"] = {
            g: {"estimate": float(humans.strength[i]), "low": float(hlo[i]), "high": float(hhi[i])}
            for i, g in enumerate(humans.names)
        }
        out["humans_only_rank_sets"] = {
            g: {"ranks": r, "text": rank_text(r)}
            for g, r in rank_sets(
                humans.names, humans.strength, humans.cov, alpha, dims=len(humans.names) - 1
            ).items()
        }
    return out


MIN_LABELLED = 10


def _connected(first: np.ndarray, second: np.ndarray, names: list[str]) -> bool:
    """Every generator reachable from every other through the compared pairs: otherwise the
    strengths of two groups have no common scale."""
    at = {g: i for i, g in enumerate(names)}
    parent = list(range(len(names)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(first, second, strict=True):
        parent[root(at[a])] = root(at[b])
    return len({root(i) for i in range(len(names))}) == 1


def bt_from_pairs(df: Any, alpha: float = 0.05, min_labelled: int = MIN_LABELLED) -> dict[str, Any]:
    """One judge's PPI++ Bradley-Terry entry from stats/debiased_pairs' per-pair frame (index
    pair_id; columns key "A vs B", case_id, f the judge's outcome, y the humans' mean where
    they voted, in_sample, pi the inclusion probability). Labelled: sampled pairs with a human
    outcome (weight 1/pi); unlabelled: the judge's other pairs (weight 1/(1 - pi)); pairs of one
    case clustered. A null figure says why."""
    keys = df["key"].astype(str).str.split(" vs ", n=1, regex=False)
    first = np.array([k[0] for k in keys])
    second = np.array([k[1] for k in keys])
    names = sorted(set(first) | set(second))
    lab = df["in_sample"].to_numpy(bool) & df["y"].notna().to_numpy()
    n = int(lab.sum())
    base: dict[str, Any] = {"n_labelled": n, "n_unlabelled": int((~lab).sum())}
    if len(names) < 2:
        return {**base, "note": "fewer than two generators compared"}
    if n < min_labelled:
        return {
            **base,
            "note": f"{n} human-voted pairs of the sample: at least {min_labelled} needed",
        }
    if not _connected(first[lab], second[lab], names):
        return {
            **base,
            "note": "the human-voted pairs do not connect every generator: their strengths "
            "would have no common scale",
        }
    x = design(first, second, names)
    pi = df["pi"].to_numpy(float)
    cases = df["case_id"].astype(str).to_numpy()
    clustered = len(np.unique(cases)) < len(cases)
    kw: dict[str, Any] = {
        "w_labelled": 1.0 / np.clip(pi[lab], 1e-12, None),
        "w_unlabelled": 1.0 / np.clip(1.0 - pi[~lab], 1e-12, None) if (~lab).any() else None,
    }
    if clustered:
        kw |= {"cluster_labelled": cases[lab], "cluster_unlabelled": cases[~lab]}
    y, f = df["y"].to_numpy(float), df["f"].to_numpy(float)
    fit = ppi_bradley_terry(names, x[lab], y[lab], f[lab], x[~lab], f[~lab], **kw)
    humans = ppi_bradley_terry(names, x[lab], y[lab], f[lab], x[~lab], f[~lab], lam=0.0, **kw)
    return bt_section(fit, humans, alpha)


__all__ = [
    "BTFit",
    "bt_from_pairs",
    "bt_section",
    "design",
    "ppi_bradley_terry",
    "rank_sets",
    "rank_text",
    "surely_above",
]
