"""Certified judging's guarantees by simulation (model C, certified_models.py; the figures:
tests/benchmarks/validity.md, section "Certified judging"). The slow tests run 1,000 runs per
design and calibration size, as the benchmark does."""

from __future__ import annotations

import pytest
from certified_models import (
    DESIGNS,
    SIZES,
    Pool,
    simulate_cascade,
    simulate_fdr,
    simulate_pac,
)
from scipy.stats import binomtest

ALPHA = DELTA = Q = 0.1


def _not_above(k: int, n: int, level: float) -> bool:
    """The observed rate k / n is not significantly above `level` (exact one-sided test, 1%)."""
    return binomtest(k, n, level, alternative="greater").pvalue > 0.01


def test_fast_check_chance_never_accepted_and_a_calibrated_judge_holds() -> None:
    by = {d.name: d for d in DESIGNS}
    chance = simulate_pac(by["chance"], 200, 200)
    assert chance.accepted == 0
    calibrated = simulate_pac(by["calibrated"], 1000, 200)
    assert calibrated.accepted > 100 and _not_above(calibrated.violations, 200, DELTA)
    # the released code's fallback accepts the judge at chance in every run
    fallback = simulate_pac(by["chance"], 200, 50, released=True)
    assert fallback.accepted == 50 and fallback.violations == 50


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_realized_agreement_holds_in_1_minus_delta_of_runs(design) -> None:
    pool = Pool.of(design)
    for n in SIZES:
        t = simulate_pac(design, n, 1000, alpha=ALPHA, delta=DELTA, pool=pool)
        assert t.runs == 1000
        assert _not_above(t.violations, t.runs, DELTA), (design.name, n, t)
        if design.name == "chance":
            assert t.accepted == 0  # a judge at chance is never accepted


@pytest.mark.slow
def test_the_cascade_holds_with_delta_split() -> None:
    for n in SIZES:
        t = simulate_cascade(n, 1000, alpha=ALPHA, delta=DELTA)
        assert t.runs == 1000 and t.accepted > 0
        assert _not_above(t.violations, t.runs, DELTA), (n, t)


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_conformal_alignment_holds_its_false_discovery_rate_on_average(design) -> None:
    for n in SIZES:
        f = simulate_fdr(design, n, 1000, q=Q)
        mean, low, _high = f.mean_and_interval()
        assert f.runs == 1000
        assert low <= Q and mean <= Q + 0.01, (design.name, n, mean)
