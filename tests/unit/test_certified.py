"""The threshold searches of certified judging (stats/selective.py) against independent
references: scipy's exact binomial bounds, a brute-force reading of Trust or Escalate's
definition, statsmodels' Benjamini-Hochberg."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import beta, binom, binomtest
from statsmodels.stats.multitest import multipletests

from annotator.stats.selective import (
    MIN_ABOVE,
    cascade,
    conformal_alignment,
    cp_upper,
    min_escalation,
    pac_threshold,
)


@pytest.mark.parametrize("delta", [0.01, 0.05, 0.1, 0.2])
def test_upper_bound_is_the_exact_clopper_pearson_bound(delta: float) -> None:
    for n in (1, 2, 5, 30, 31, 97, 400, 2500):
        for k in sorted({0, 1, 2, n // 3, n // 2, n - 1}):
            if not 0 <= k < n:
                continue
            ub = cp_upper(k, n, delta)
            assert abs(ub - beta.ppf(1 - delta, k + 1, n - k)) <= 1e-12
            ci = binomtest(k, n, alternative="less").proportion_ci(
                confidence_level=1 - delta, method="exact"
            )
            assert abs(ub - ci.high) <= 1e-12
        # every trial an event: nothing bounds the rate below 1
        assert cp_upper(n, n, delta) == 1.0
    assert cp_upper(0, 0, delta) == 1.0


@functools.cache
def _paper_bound(k: int, n: int, delta: float) -> float:
    """The paper's R+ (section 2.2): sup{r : P(Binomial(n, r) <= k) >= delta}, found by root
    finding on the binomial tail (as the authors' code does), not by the beta quantile."""
    if k >= n:
        return 1.0
    return brentq(lambda r: binom.cdf(k, n, r) - delta, 0.0, 1.0, xtol=1e-13, rtol=1e-13)


def _paper_threshold(
    conf: np.ndarray, wrong: np.ndarray, alpha: float, delta: float
) -> tuple[float | None, float | None]:
    """Trust or Escalate's lambda-hat from its definition, by brute force: the candidate set is
    every calibration confidence with at least 30 calibration items at or above it, and lambda-hat
    the smallest candidate such that R+(l) <= alpha for every candidate l at or above it (the
    fixed sequence from the top); none: abstain. Returns (lambda-hat, R+ there)."""
    cands = sorted({float(c) for c in conf if (conf >= c).sum() >= MIN_ABOVE})
    bound = {
        c: _paper_bound(int(wrong[conf >= c].sum()), int((conf >= c).sum()), delta) for c in cands
    }
    ok = [c for c in cands if all(bound[x] <= alpha for x in cands if x >= c)]
    if not ok:
        return None, None
    return min(ok), bound[min(ok)]


def _calibration(rng: np.random.Generator, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    conf = rng.beta(4, 1.5, n)
    if ties:
        conf = np.round(conf, 1)
    # a judge right more often where it is more confident, never perfectly
    wrong = rng.random(n) < np.clip(0.6 - 0.6 * conf + rng.normal(0, 0.05, n), 0.01, 0.9)
    return conf, wrong


def test_threshold_search_matches_the_papers_definition() -> None:
    rng = np.random.default_rng(20250)
    checked = abstained = 0
    for case in range(150):
        n = int(rng.choice([25, 40, 80, 150, 300]))
        conf, wrong = _calibration(rng, n, ties=case % 2 == 0)
        alpha = float(rng.choice([0.05, 0.1, 0.2]))
        delta = float(rng.choice([0.05, 0.1, 0.2]))
        t = pac_threshold(conf, wrong, alpha=alpha, delta=delta)
        want, bound = _paper_threshold(conf, wrong, alpha, delta)
        assert t.threshold == want, (case, n, alpha, delta)
        if want is None:
            abstained += 1
            continue
        checked += 1
        assert t.n_above == int((conf >= want).sum())
        assert t.k_disagree_above == int(wrong[conf >= want].sum())
        assert t.upper_bound == pytest.approx(bound, abs=1e-9)
    assert checked > 20 and abstained > 10  # both outcomes were exercised


def test_no_threshold_passing_means_abstaining_everywhere() -> None:
    """The authors' code returns the highest threshold when even it fails; the guarantee is
    false there, so the search returns none and the bound at the highest threshold tried."""
    rng = np.random.default_rng(7)
    conf = rng.random(400)
    wrong = rng.random(400) < 0.5  # a judge at chance, whatever its confidence
    t = pac_threshold(conf, wrong, alpha=0.1, delta=0.1)
    assert t.threshold is None and not t.accepted
    top = np.sort(conf)[::-1][MIN_ABOVE - 1]
    k = int(wrong[conf >= top].sum())
    assert t.n_above == MIN_ABOVE and t.k_disagree_above == k
    assert t.upper_bound == pytest.approx(beta.ppf(0.9, k + 1, MIN_ABOVE - k), abs=1e-12)
    assert t.n_tested == 1
    # too few calibration items for any threshold: abstain, with no bound to show
    few = pac_threshold(conf[:29], np.zeros(29, dtype=bool), alpha=0.1, delta=0.1)
    assert few.threshold is None and few.upper_bound is None and few.n_calibration == 29


def test_a_perfect_judge_is_accepted_down_to_its_lowest_confidence() -> None:
    conf = np.linspace(0.5, 1.0, 100)
    t = pac_threshold(conf, np.zeros(100, dtype=bool), alpha=0.1, delta=0.1)
    assert t.threshold == 0.5 and t.n_above == 100 and t.k_disagree_above == 0
    assert t.upper_bound == pytest.approx(1 - 0.1 ** (1 / 100), abs=1e-12)


def test_the_search_stops_at_the_first_failure() -> None:
    """Fixed-sequence testing: a threshold below a failing one is never reached, even when its
    own bound would pass."""
    conf = np.r_[
        np.linspace(0.99, 0.9, 40), np.linspace(0.89, 0.8, 10), np.linspace(0.79, 0.5, 200)
    ]
    wrong = np.r_[np.zeros(40), np.ones(10), np.zeros(200)].astype(bool)
    t = pac_threshold(conf, wrong, alpha=0.1, delta=0.1)
    # at 0.5 (250 items, 10 wrong) the bound passes, but the thresholds between fail first: the
    # search ends within the ten wrong answers (41 items, 1 wrong, passes; 42, 2 wrong, fails)
    assert cp_upper(10, 250, 0.1) <= 0.1
    assert (t.threshold, t.n_above, t.k_disagree_above) == (0.89, 41, 1)
    assert cp_upper(2, 42, 0.1) > 0.1


def test_min_escalation_is_the_most_any_selection_can_accept() -> None:
    """With a disagreement rate mu > alpha, the largest set of items whose disagreement rate is
    at most alpha (all agreeing items and as many disagreeing ones as alpha allows) leaves out
    (mu - alpha) / (1 - alpha) of the items, up to one item's rounding."""
    for n, n_wrong, alpha in ((1000, 300, 0.1), (500, 50, 0.1), (800, 40, 0.1), (1200, 600, 0.2)):
        mu = n_wrong / n
        agree = n - n_wrong
        extra = min(n_wrong, int(np.floor(alpha * agree / (1 - alpha))))
        best_escalated = (n - agree - extra) / n
        assert best_escalated >= min_escalation(mu, alpha) - 1e-12
        assert best_escalated <= min_escalation(mu, alpha) + 1 / n
    assert min_escalation(0.05, 0.1) == 0.0


def test_conformal_alignment_matches_its_definition_and_statsmodels_bh() -> None:
    rng = np.random.default_rng(3)
    for case in range(50):
        n, m = int(rng.integers(10, 300)), int(rng.integers(1, 400))
        cal_conf, cal_wrong = _calibration(rng, n, ties=case % 2 == 0)
        test_conf = rng.beta(4, 1.5, m)
        if case % 2 == 0:
            test_conf = np.round(test_conf, 1)
        q = float(rng.choice([0.05, 0.1, 0.2]))
        sel = conformal_alignment(cal_conf, cal_wrong, test_conf, q=q)
        # Gui, Jin & Candes eq. (3.2), item by item
        p = np.array(
            [(1 + np.sum(cal_wrong & (cal_conf >= c))) / (n + 1) for c in test_conf], dtype=float
        )
        assert np.allclose(sel.p_values, p, atol=0, rtol=0)
        want = multipletests(p, alpha=q, method="fdr_bh")[0]
        assert np.array_equal(sel.selected, want), case
        if want.any():
            assert sel.threshold == test_conf[want].min()
            # a top set: everything at or above the lowest selected confidence is selected
            assert np.array_equal(sel.selected, test_conf >= sel.threshold)
        else:
            assert sel.threshold is None


def test_cascade_splits_delta_and_calibrates_each_judge_on_what_the_others_left() -> None:
    rng = np.random.default_rng(11)
    n, m = 600, 900
    conf1, wrong1 = _calibration(rng, n, ties=False)
    conf2, wrong2 = _calibration(rng, n, ties=True)
    conf2[rng.random(n) < 0.1] = np.nan  # the second judge did not answer some items
    t1 = rng.beta(4, 1.5, m)
    t2 = rng.beta(4, 1.5, m)
    c = cascade(
        np.vstack([conf1, conf2]),
        np.vstack([wrong1, wrong2]),
        np.vstack([t1, t2]),
        alpha=0.15,
        delta=0.1,
    )
    assert c.deltas == [0.05, 0.05]  # not 0.1 each, as the released code has it
    first = pac_threshold(conf1, wrong1, alpha=0.15, delta=0.05)
    assert c.stages[0] == first and first.accepted
    left = (conf1 < first.threshold) & ~np.isnan(conf2)
    second = pac_threshold(conf2[left], wrong2[left], alpha=0.15, delta=0.05)
    assert c.stages[1] == second
    assert np.array_equal(c.test_stage == 0, t1 >= first.threshold)
    if second.accepted:
        assert np.array_equal(c.test_stage == 1, (t1 < first.threshold) & (t2 >= second.threshold))
    assert np.array_equal(c.cal_stage == 0, conf1 >= first.threshold)
