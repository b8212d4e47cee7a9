"""Agreement statistics against published values and against the krippendorff package.

References: Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability",
4 coders x 12 units; Fleiss (1971) 30 patients x 6 psychiatrists (the
`diagnoses` data of R irr / statsmodels); the SAS example table of statsmodels'
Cohen's kappa tests; R irr's `anxiety` weighted kappas; R irrCAC's README
(Gwet 2014) for Gwet's AC1, Fleiss' kappa and percent agreement with unequal
numbers of raters; PandaLM's published inter-annotator Cohen's kappas; TIFA's
published Pearson and Kendall correlations.
"""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from tifa_reference import TIFA_PUBLISHED

from annotator.stats.agreement import (
    IDENTICAL,
    NO_PAIRS,
    ValueCounts,
    alpha_features,
    alpha_point,
    bin_ordered,
    krippendorff_alpha,
    permutation_alpha,
    value_counts,
    value_counts_from_matrix,
)
from annotator.stats.bootstrap import resample_counts, rng_for
from annotator.stats.correlation import correlations, rank_correlations_from_tables
from annotator.stats.kappa import agreement_summary, cohen_kappa, cohen_kappa_table, fleiss_kappa

DATA = Path(__file__).resolve().parents[1] / "data"
nan = np.nan

# Krippendorff (2011), coders A-D x units 1-12, * = missing
KRIPP = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)

# Fleiss (1971): 30 patients x 6 raters, diagnoses 1-5
DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)

# irrCAC distrib.6raters: raters per subject and category
DISTRIB_6 = np.array(
    [
        [0, 0, 0, 6, 0],
        [0, 3, 0, 0, 3],
        [0, 1, 4, 0, 1],
        [0, 0, 0, 0, 6],
        [0, 3, 0, 3, 0],
        [2, 0, 4, 0, 0],
        [0, 0, 4, 0, 2],
        [2, 0, 3, 1, 0],
        [2, 0, 0, 4, 0],
        [0, 0, 0, 0, 6],
        [1, 0, 0, 5, 0],
        [1, 1, 0, 4, 0],
        [0, 3, 3, 0, 0],
        [1, 0, 0, 5, 0],
        [0, 2, 0, 3, 1],
    ]
)

# R irr `anxiety`, raters 1-3 (columns) for 20 subjects
ANXIETY = np.array(
    [
        3,
        3,
        3,
        4,
        5,
        5,
        2,
        3,
        5,
        2,
        2,
        6,
        1,
        5,
        2,
        2,
        1,
        2,
        4,
        3,
        3,
        6,
        4,
        6,
        2,
        4,
        2,
        4,
        3,
        3,
        2,
        3,
        3,
        3,
        2,
        2,
        1,
        3,
        3,
        4,
        2,
        1,
        4,
        4,
        3,
        2,
        1,
        6,
        1,
        1,
        1,
        2,
        3,
        3,
        1,
        1,
        3,
        3,
        2,
        2,
    ]
).reshape(20, 3, order="F")


def counts_of(table: np.ndarray) -> ValueCounts:
    u, v = np.nonzero(table)
    cnt = table[u, v].astype(float)
    units, t_unit = np.unique(u, return_inverse=True)
    return ValueCounts(
        units,
        np.arange(table.shape[1], dtype=float),
        t_unit,
        v,
        cnt,
        np.bincount(t_unit, weights=cnt),
    )


def own_formula(vc: ValueCounts, level: str) -> float:
    r, c, v, k, fin = alpha_features(vc, level)
    return float(fin(np.bincount(c, weights=v, minlength=k)[None, :])[0])


# ---- Krippendorff's alpha ---------------------------------------------------------


@pytest.mark.parametrize(
    "level, expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_2011_example(level: str, expected: float) -> None:
    res = krippendorff_alpha(KRIPP, level=level, n_boot=1000, seed=1)
    assert res["estimate"] == pytest.approx(expected, abs=5e-4)
    assert res["n"] == 11  # unit 12 has a single value: not pairable
    package = krippendorff.alpha(reliability_data=KRIPP, level_of_measurement=level)
    vc = value_counts_from_matrix(KRIPP)
    assert own_formula(vc, level) == pytest.approx(package, abs=1e-12)
    # a value domain with unused values changes nothing
    wide = value_counts_from_matrix(KRIPP, domain=np.arange(0, 8, dtype=float))
    assert own_formula(wide, level) == pytest.approx(package, abs=1e-12)
    assert res["low"] <= res["estimate"] <= res["high"]


def test_long_format_input_matches_matrix_input() -> None:
    r, c = np.nonzero(~np.isnan(KRIPP))
    long = krippendorff_alpha(items=c, values=KRIPP[r, c], level="ordinal", n_boot=200, seed=3)
    mat = krippendorff_alpha(KRIPP, level="ordinal", n_boot=200, seed=3)
    assert long == mat


def test_fleiss_1971_kappa_and_alpha() -> None:
    counts = np.stack([(DIAGNOSES == v).sum(axis=1) for v in range(1, 6)], axis=1)
    assert fleiss_kappa(counts) == pytest.approx(0.4302, abs=5e-5)
    alpha = krippendorff_alpha(DIAGNOSES.T, level="nominal", n_boot=1000, seed=0)
    assert alpha["estimate"] == pytest.approx(0.4334, abs=5e-5)
    summary = agreement_summary(value_counts_from_matrix(DIAGNOSES.T), 5, n_boot=1000)
    assert summary["fleiss_kappa"]["estimate"] == pytest.approx(0.4302445, abs=1e-7)
    assert summary["fleiss_kappa"]["low"] < 0.4302 < summary["fleiss_kappa"]["high"]


def test_irrcac_published_coefficients() -> None:
    # cac.raw4raters is the Krippendorff (2011) matrix, subjects in rows
    s = agreement_summary(value_counts_from_matrix(KRIPP), 5, n_boot=200)
    assert s["percent_agreement"]["estimate"] == pytest.approx(0.8181818, abs=1e-7)
    assert s["fleiss_kappa"]["estimate"] == pytest.approx(0.76117, abs=5e-6)
    assert s["gwet_ac1"]["estimate"] == pytest.approx(0.77544, abs=5e-6)
    d = agreement_summary(counts_of(DISTRIB_6), 5, n_boot=200)
    assert d["percent_agreement"]["estimate"] == pytest.approx(0.5511111, abs=1e-7)
    assert d["gwet_ac1"]["estimate"] == pytest.approx(0.4448007, abs=1e-7)
    assert d["fleiss_kappa"]["estimate"] == pytest.approx(0.4139265, abs=1e-7)
    alpha = krippendorff_alpha(counts=counts_of(DISTRIB_6), level="nominal", n_boot=100)
    assert alpha["estimate"] == pytest.approx(0.4204384, abs=1e-7)


def test_package_and_vectorized_formula_agree_on_random_data() -> None:
    rng = np.random.default_rng(7)
    latent = rng.integers(0, 6, 400)
    data = np.clip(latent[None, :] + rng.integers(-1, 2, (5, 400)), 0, 5).astype(float)
    data[rng.random(data.shape) < 0.3] = nan
    vc = value_counts_from_matrix(data)
    for level in ("nominal", "ordinal", "interval"):
        package = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert own_formula(vc, level) == pytest.approx(package, abs=1e-10)
        assert alpha_point(vc, level) == pytest.approx(package, abs=1e-10)


def test_bootstrap_replicate_equals_alpha_of_resampled_data() -> None:
    """weights @ per-item contributions == alpha recomputed on the duplicated items."""
    rng = np.random.default_rng(11)
    data = np.clip(rng.integers(0, 6, 60)[None, :] + rng.integers(-1, 2, (4, 60)), 0, 5).astype(
        float
    )
    data[rng.random(data.shape) < 0.2] = nan
    vc = value_counts_from_matrix(data)
    local = ValueCounts(np.arange(len(vc.units)), vc.domain, vc.t_unit, vc.t_val, vc.t_cnt, vc.m)
    w = resample_counts(rng_for(0, "t"), len(vc.units), 5)
    for level in ("nominal", "ordinal", "interval"):
        r, c, v, k, fin = alpha_features(local, level)
        dense = np.zeros((len(vc.units), k))
        np.add.at(dense, (r, c), v)
        fast = fin(w @ dense)
        for b in range(5):
            cols = np.repeat(vc.units, w[b].astype(int))
            slow = krippendorff.alpha(
                reliability_data=data[:, cols], level_of_measurement=level, value_domain=vc.domain
            )
            assert fast[b] == pytest.approx(slow, abs=1e-10)


def test_identical_answers_are_undefined_not_one() -> None:
    data = np.full((3, 20), 4.0)
    for level in ("nominal", "ordinal", "interval"):
        res = krippendorff_alpha(data, level=level, n_boot=100)
        assert res["estimate"] is None and res["low"] is None and res["high"] is None
        assert res["note"] == IDENTICAL
    s = agreement_summary(value_counts_from_matrix(data), 2, n_boot=100)
    assert s["fleiss_kappa"]["estimate"] is None
    # decided: AC1 is 1 when every answer is identical (Gwet's formula, irrCAC 0.4.4 gives 1.0),
    # said in a note, with no interval (every resample is 1)
    ac1 = s["gwet_ac1"]
    assert ac1["estimate"] == 1.0 and ac1["low"] is None and "irrCAC" in ac1["note"]
    assert s["percent_agreement"]["estimate"] == 1.0  # a share, not a chance-corrected figure
    assert s["percent_agreement"]["low"] is None  # never a zero-width interval
    k = cohen_kappa(["PASS"] * 12, ["PASS"] * 12, n_boot=100)
    assert k["unweighted"]["estimate"] is None and "identical" in k["unweighted"]["note"]


def test_no_pairable_item_is_undefined() -> None:
    data = np.array([[1, nan, 3], [nan, 2, nan]])
    res = krippendorff_alpha(data, level="nominal", n_boot=50)
    assert res["estimate"] is None and res["note"] == NO_PAIRS and res["n"] == 0


def test_continuous_values_do_not_build_items_by_values_squared() -> None:
    rng = np.random.default_rng(5)
    n = 50_000  # 150,000 distinct values: N x V x V would be ~10^15 cells
    latent = rng.normal(size=n)
    items = np.repeat(np.arange(n), 3)
    values = np.repeat(latent, 3) + rng.normal(0, 0.5, 3 * n)
    res = krippendorff_alpha(items=items, values=values, level="interval", n_boot=200, seed=0)
    assert res["estimate"] == pytest.approx(1 / 1.25, abs=0.02)  # var(latent) / total
    assert res["low"] < res["estimate"] < res["high"]
    # the same formula matches the package where the package can run
    small = krippendorff_alpha(items=items[:180], values=values[:180], level="interval", n_boot=10)
    data = values[:180].reshape(60, 3).T
    assert small["estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=1e-10
    )


def test_ordinal_with_many_values_is_binned_with_a_note() -> None:
    rng = np.random.default_rng(2)
    latent = rng.normal(size=150)
    values = np.repeat(latent, 2) + rng.normal(0, 0.3, 300)  # 300 distinct values
    vc = value_counts(np.repeat(np.arange(150), 2), values)
    assert len(bin_ordered(vc).domain) == 200
    res = krippendorff_alpha(counts=vc, level="ordinal", n_boot=100)
    assert "ordered bins" in res["note"]
    exact = krippendorff.alpha(
        reliability_data=values.reshape(150, 2).T, level_of_measurement="ordinal"
    )
    assert res["estimate"] == pytest.approx(exact, abs=0.02)


# ---- bootstrap behaviour ----------------------------------------------------------------


def _sample(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 5, n)
    return np.clip(latent[None, :] + rng.integers(-1, 2, (3, n)), 0, 4).astype(float)


def test_interval_contains_estimate_and_shrinks_with_n() -> None:
    small = krippendorff_alpha(_sample(200, 1), level="ordinal", n_boot=1000, seed=0)
    large = krippendorff_alpha(_sample(3200, 1), level="ordinal", n_boot=1000, seed=0)
    for r in (small, large):
        assert r["low"] < r["estimate"] < r["high"]
    # 16x the items: about a quarter of the width
    ratio = (large["high"] - large["low"]) / (small["high"] - small["low"])
    assert 0.15 < ratio < 0.4


def test_interval_covers_the_population_value() -> None:
    """Coverage sanity: most intervals from independent samples cover the big-sample alpha."""
    truth = krippendorff.alpha(reliability_data=_sample(40_000, 99), level_of_measurement="ordinal")
    covered = 0
    for seed in range(30):
        r = krippendorff_alpha(_sample(300, seed), level="ordinal", n_boot=400, seed=seed)
        covered += r["low"] <= truth <= r["high"]
    assert covered >= 25  # nominal 95%: 28.5 of 30


def test_seeded_and_reproducible() -> None:
    data = _sample(300, 4)
    a = krippendorff_alpha(data, level="nominal", n_boot=300, seed=5)
    b = krippendorff_alpha(data, level="nominal", n_boot=300, seed=5)
    c = krippendorff_alpha(data, level="nominal", n_boot=300, seed=6)
    assert a == b
    assert a["estimate"] == c["estimate"] and (a["low"], a["high"]) != (c["low"], c["high"])


def test_permutation_baseline_is_chance() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, 2000)
    b = np.where(rng.random(2000) < 0.7, a, rng.integers(0, 4, 2000))
    res = permutation_alpha(a, b, "nominal", np.arange(4.0), n_perm=300, rng=rng_for(0, "p"))
    assert abs(res["mean"]) < 0.01
    assert res["p_value"] == pytest.approx(1 / 301)
    assert res["observed"] > 0.5
    shuffled = permutation_alpha(
        a, rng.permutation(b), "nominal", np.arange(4.0), n_perm=300, rng=rng_for(0, "q")
    )
    assert abs(shuffled["observed"]) < 0.05 and shuffled["p_value"] > 0.01


# ---- Cohen's kappa ----------------------------------------------------------------------


def test_cohen_kappa_sas_table() -> None:
    table = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
    assert cohen_kappa_table(table) == pytest.approx(0.4842, abs=5e-5)
    assert cohen_kappa_table(table, "linear") == pytest.approx(0.4701, abs=5e-5)


def test_cohen_kappa_irrcac_table() -> None:
    assert cohen_kappa_table([[13, 0, 0], [0, 20, 7], [0, 4, 56]]) == pytest.approx(
        0.7964094, abs=1e-7
    )


def test_weighted_kappa_r_irr_anxiety() -> None:
    # R irr kappa2(anxiety[, 2:3]) on the observed levels 1, 2, 3, 4, 6 (index spacing)
    levels = [1, 2, 3, 4, 6]
    t = np.zeros((5, 5))
    for x, y in ANXIETY[:, 1:]:
        t[levels.index(x), levels.index(y)] += 1
    assert cohen_kappa_table(t) == pytest.approx(-0.006289308, abs=1e-8)
    assert cohen_kappa_table(t, "linear") == pytest.approx(0.1459075, abs=1e-7)
    assert cohen_kappa_table(t, "quadratic") == pytest.approx(0.2520325, abs=1e-7)


def test_pandalm_published_annotator_kappas() -> None:
    votes = pd.read_csv(DATA / "pandalm" / "pair_votes.csv")
    wide = votes.pivot(index="pair_id", columns="rater", values="choice")
    expected = {
        ("annotator1", "annotator2"): 0.8520,
        ("annotator1", "annotator3"): 0.8789,
        ("annotator2", "annotator3"): 0.8617,
    }
    for (a, b), k in expected.items():
        res = cohen_kappa(wide[a].tolist(), wide[b].tolist(), n_boot=1000, seed=0)
        assert res["unweighted"]["estimate"] == pytest.approx(k, abs=5e-5)
        assert res["unweighted"]["n"] == 999
        assert res["unweighted"]["low"] < k < res["unweighted"]["high"]
    # README (recomputed): Fleiss 0.864175, nominal alpha 0.864221 over the 3 annotators
    codes = wide.replace({"both": 0, "left": 1, "right": 2}).to_numpy(dtype=float).T
    s = agreement_summary(value_counts_from_matrix(codes), 3, n_boot=100)
    assert s["fleiss_kappa"]["estimate"] == pytest.approx(0.864175, abs=5e-7)
    assert krippendorff_alpha(codes, level="nominal", n_boot=100)["estimate"] == pytest.approx(
        0.864221, abs=5e-7
    )
    judges = pd.read_csv(DATA / "pandalm" / "judge_pairs.csv").pivot(
        index="pair_id", columns="rater", values="choice"
    )
    majority = wide.mode(axis=1)[0]
    k = cohen_kappa(
        majority.tolist(), judges["gpt-3.5-turbo"].reindex(wide.index).tolist(), n_boot=100
    )
    assert k["unweighted"]["estimate"] == pytest.approx(0.495784, abs=5e-7)


# ---- correlations -----------------------------------------------------------------------


def test_tifa_published_correlations() -> None:
    ratings = pd.read_csv(DATA / "tifa" / "ratings.csv")
    judge = pd.read_csv(DATA / "tifa" / "judge.csv")
    human_avg = ratings.groupby("item_id")["value"].mean()
    published = TIFA_PUBLISHED
    for name, (r, tau) in published.items():
        x = judge[judge["judge"] == name].set_index("item_id")["value"].reindex(human_avg.index)
        res = correlations(x.to_numpy(), human_avg.to_numpy(), n_boot=500, seed=0)
        assert res["pearson"]["estimate"] == pytest.approx(r, abs=1e-12)
        assert res["kendall_tau_b"]["estimate"] == pytest.approx(tau, abs=1e-12)
        assert res["kendall_tau_b"]["low"] < tau < res["kendall_tau_b"]["high"]


def test_rank_correlations_from_tables_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(9)
    x = rng.integers(0, 7, 500).astype(float)
    y = np.round(x / 2 + rng.normal(0, 1, 500))
    xi, yi = np.unique(x, return_inverse=True)[1], np.unique(y, return_inverse=True)[1]
    t = np.zeros((xi.max() + 1, yi.max() + 1))
    np.add.at(t, (xi, yi), 1)
    rho, tau = rank_correlations_from_tables(t[None])[0]
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert tau == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
