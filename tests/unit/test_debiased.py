"""Debiased generator figures (stats/debiased.py): PPI++ against ppi-python, power tuning,
coverage (a fast check; the full simulation is tests/benchmarks/bench_debiased.py)."""

from __future__ import annotations

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from annotator.stats.debiased import ppi_mean


def _data(rng: np.random.Generator, n: int, N: int, scale: bool):
    if scale:  # a 0-5 score, the judge lenient by about half a point, noisy
        y = rng.integers(0, 6, n).astype(float)
        f = np.clip(np.round(y + rng.normal(0.5, 1.0, n)), 0, 5)
        yu = rng.integers(0, 6, N).astype(float)
        fu = np.clip(np.round(yu + rng.normal(0.5, 1.0, N)), 0, 5)
    else:  # a pass rate, the judge agreeing 80% of the time and lenient
        y = rng.binomial(1, 0.6, n).astype(float)
        f = np.where(rng.random(n) < 0.8, y, 1.0)
        fu = np.where(rng.random(N) < 0.8, rng.binomial(1, 0.6, N), 1.0).astype(float)
    return y, f, fu


@pytest.mark.parametrize("scale", [False, True])
def test_point_estimate_and_interval_match_ppi_python(scale: bool) -> None:
    rng = np.random.default_rng(7 + scale)
    for _ in range(20):
        n, N = int(rng.integers(10, 300)), int(rng.integers(50, 3000))
        y, f, fu = _data(rng, n, N, scale)
        ours = ppi_mean(y, f, fu)
        est = float(np.ravel(ppi_mean_pointestimate(y, f, fu))[0])
        lo, hi = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, f, fu, alpha=0.05))
        assert ours.ppi.estimate == pytest.approx(est, abs=1e-9)
        assert ours.ppi.low == pytest.approx(lo, abs=1e-9)
        assert ours.ppi.high == pytest.approx(hi, abs=1e-9)
        for lam in (0.0, 0.4, 1.0):  # a fixed lambda too (0: the classical interval)
            fixed = ppi_mean(y, f, fu, lam=lam)
            lo, hi = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam))
            assert fixed.ppi.low == pytest.approx(lo, abs=1e-9)
            assert fixed.ppi.high == pytest.approx(hi, abs=1e-9)
        # with weights the point estimate at a given lambda is ppi_py's (Hajek weights)
        w, wu = rng.uniform(0.5, 3, n), rng.uniform(0.5, 3, N)
        est_w = float(np.ravel(ppi_mean_pointestimate(y, f, fu, lam=0.7, w=w, w_unlabeled=wu))[0])
        assert ppi_mean(y, f, fu, w_labelled=w, w_unlabelled=wu, lam=0.7).ppi.estimate == (
            pytest.approx(est_w, abs=1e-9)
        )


def test_a_useless_judge_costs_at_most_two_percent_of_width() -> None:
    rng = np.random.default_rng(3)
    worst = 0.0
    for i in range(300):
        n = (50, 200, 1000)[i % 3]
        y = rng.binomial(1, 0.6, n).astype(float)
        # constant, then pure noise unrelated to the item: PPI++ tunes lambda towards 0
        judge = np.ones if i % 2 else (lambda k: rng.binomial(1, 0.5, k).astype(float))
        res = ppi_mean(y, judge(n), judge(10 * n))
        worst = max(worst, (res.ppi.high - res.ppi.low) / (res.humans.high - res.humans.low))
    assert worst <= 1.02
    # clustered and weighted, the same bound
    case = np.repeat(np.arange(20), 10)
    y = rng.binomial(1, 0.5, 200).astype(float)
    res = ppi_mean(
        y,
        rng.binomial(1, 0.5, 200).astype(float),
        rng.binomial(1, 0.5, 2000).astype(float),
        w_labelled=rng.uniform(1, 2, 200),
        cluster_labelled=case,
        cluster_unlabelled=np.repeat(np.arange(20), 100),
    )
    assert res.ppi.high - res.ppi.low <= 1.02 * (res.humans.high - res.humans.low)


def test_a_perfect_judge_is_worth_many_labels_and_a_constant_one_none() -> None:
    rng = np.random.default_rng(5)
    y = rng.binomial(1, 0.6, 100).astype(float)
    fu = rng.binomial(1, 0.6, 1000).astype(float)
    good = ppi_mean(y, y, fu)
    assert good.lam > 0.85 and good.effective_labels > 500
    const = ppi_mean(y, np.ones(100), np.ones(1000))
    assert const.lam == 0.0 and const.effective_labels == pytest.approx(100)
    assert (const.ppi.low, const.ppi.high) == pytest.approx((const.humans.low, const.humans.high))


def _coverage(rng, runs, n, clustered, lenient, small=False):
    theta, hits = None, 0
    k = 25
    for _ in range(runs):
        N = 10 * n
        case = np.arange(N) % k
        u = rng.normal(0, 0.6, k)[case] if clustered else 0.0
        p = 1 / (1 + np.exp(-(0.3 + u + rng.normal(0, 1, N))))
        y = rng.binomial(1, p).astype(float)
        f = np.where(rng.random(N) < 0.75, y, 1.0 if lenient else rng.binomial(1, p))
        lab = np.zeros(N, bool)
        lab[rng.choice(N, n, replace=False)] = True
        res = ppi_mean(
            y[lab],
            f[lab],
            f[~lab],
            cluster_labelled=case[lab] if clustered else None,
            cluster_unlabelled=case[~lab] if clustered else None,
            small_sample=small,
        )
        if theta is None:  # the population pass rate of this model (cases averaged)
            g = np.random.default_rng(0)
            uu = g.normal(0, 0.6, 2_000_000) if clustered else 0.0
            theta = float(np.mean(1 / (1 + np.exp(-(0.3 + uu + g.normal(0, 1, 2_000_000))))))
        hits += res.ppi.low <= theta <= res.ppi.high
    return hits / runs


def test_intervals_cover_the_pass_rate_fast_check() -> None:
    """400 studies each (the 1000-run figures are in validity.md, model H): a lenient judge on
    independent items, an unbiased one on items clustered in cases (ppi-python's interval and
    its cluster-robust sandwich), and the report's interval with 60 human items in 25 cases."""
    rng = np.random.default_rng(11)
    assert 0.91 <= _coverage(rng, 400, 100, clustered=False, lenient=True) <= 0.985
    assert 0.91 <= _coverage(rng, 400, 150, clustered=True, lenient=False) <= 0.985
    # the report's interval (jackknife, lambda re-tuned per replicate), lenient, clustered
    assert 0.92 <= _coverage(rng, 400, 60, clustered=True, lenient=True, small=True) <= 0.985


def test_the_report_interval_is_the_delete_one_case_jackknife() -> None:
    """small_sample=True (what the report prints): the variance is the jackknife over cases,
    checked against recomputing the estimate without each case in turn."""
    rng = np.random.default_rng(21)
    k = 12
    cu, cl = rng.integers(0, k, 400), rng.integers(0, k, 60)
    cl[:k] = np.arange(k)  # every case has sampled items
    y = rng.binomial(1, 0.6, 60).astype(float)
    fl = np.where(rng.random(60) < 0.8, y, 1.0)
    fu = rng.binomial(1, 0.7, 400).astype(float)
    wl, wu = rng.uniform(1, 3, 60), rng.uniform(1, 1.5, 400)
    res = ppi_mean(
        y,
        fl,
        fu,
        w_labelled=wl,
        w_unlabelled=wu,
        cluster_labelled=cl,
        cluster_unlabelled=cu,
        small_sample=True,
    )
    thetas = []
    for c in range(k):
        keep_l, keep_u = cl != c, cu != c
        thetas.append(
            ppi_mean(
                y[keep_l],
                fl[keep_l],
                fu[keep_u],
                w_labelled=wl[keep_l],
                w_unlabelled=wu[keep_u],
                lam=res.lam,
            ).ppi.estimate
        )
    t = np.array(thetas)
    se = np.sqrt((k - 1) / k * np.sum((t - t.mean()) ** 2))
    from scipy.stats import t as student_t

    # t on Kish's effective number of cases less one: (sum W_c)^2 / sum W_c^2 over the cases'
    # summed sampling weights (unequal weights leave fewer effective units than cases)
    wc = np.bincount(cl, weights=wl)
    kish = wc.sum() ** 2 / np.sum(wc**2)
    assert kish < k
    half = student_t.isf(0.025, kish - 1) * se
    fixed = ppi_mean(
        y,
        fl,
        fu,
        w_labelled=wl,
        w_unlabelled=wu,
        cluster_labelled=cl,
        cluster_unlabelled=cu,
        small_sample=True,
        lam=res.lam,
    )
    assert fixed.ppi.high - fixed.ppi.estimate == pytest.approx(half, rel=1e-9)
    # with lam tuned, each replicate re-tunes it: the same estimate, another spread
    assert res.ppi.estimate == pytest.approx(fixed.ppi.estimate)
    assert res.ppi.se != pytest.approx(fixed.ppi.se, rel=1e-6)
    # independent, equal weights: ppi_py's variance with n-1 in place of n, t on n-1
    plain = ppi_mean(y, fl, fu, lam=0.5)
    small = ppi_mean(y, fl, fu, lam=0.5, small_sample=True)
    v = np.var(y - 0.5 * fl, ddof=1) / 60 + 0.25 * np.var(fu, ddof=1) / 400
    assert small.ppi.se == pytest.approx(np.sqrt(v), rel=1e-9)
    assert plain.ppi.estimate == small.ppi.estimate
