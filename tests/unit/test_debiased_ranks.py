"""Rank-sets from the debiased figures (stats/debiased_ranks.py): the generators' joint
covariance over shared cases, the rank-sets read from it as Chatzi et al. define them, and
their simultaneous coverage (model R, tests/unit/rank_models.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from rank_models import NAMES, TRUE, TRUE_RANK, study
from scipy.stats import chi2

from annotator.stats.debiased import design, figure_and_terms, ppi_mean
from annotator.stats.debiased_bt import rank_sets
from annotator.stats.debiased_ranks import figure_rank_sets, joint_cov


def _figures(subs):
    figs, terms = {}, {}
    for g, sub in subs.items():
        figs[g], terms[g] = figure_and_terms(sub, True, 10, 0.05, (0.0, 1.0))
    return figs, terms


def _own_variance(sub: pd.DataFrame) -> float:
    """The published interval's variance, from ppi_mean called as the report calls it."""
    d = design(sub)
    y, f = sub["y"].to_numpy(float), sub["f"].to_numpy(float)
    res = ppi_mean(
        y[d.lab],
        f[d.lab],
        f[d.unl],
        w_labelled=None if d.uniform else d.v[d.lab] / d.pi_lab,
        w_unlabelled=None if d.uniform else d.w_u,
        cluster_labelled=None if d.cl is None else d.cl[d.lab],
        cluster_unlabelled=None if d.cl is None else d.cl[d.unl],
        small_sample=True,
    )
    return res.ppi.se**2


@pytest.mark.parametrize("per_case", [1, 3])
def test_the_diagonal_is_each_figures_own_variance(per_case: int) -> None:
    rng = np.random.default_rng(4)
    subs = study(rng, "shared", n_cases=60, per_case=per_case, n_sampled=40)
    # unequal inclusion probabilities and a case one generator lacks
    subs["gen-b"]["pi"] = np.where(np.arange(len(subs["gen-b"])) % 2, 0.2, 0.5)
    subs["gen-c"] = subs["gen-c"][subs["gen-c"]["case_id"] != "case0003"]
    figs, terms = _figures(subs)
    names, cov = joint_cov(terms)
    for i, g in enumerate(names):
        assert cov[i, i] == pytest.approx(_own_variance(subs[g]), rel=1e-12, abs=0)
    assert np.linalg.eigvalsh(cov).min() > -1e-15  # positive semi-definite
    sd = np.sqrt(np.diag(cov))
    assert (cov / np.outer(sd, sd))[np.triu_indices(4, 1)].mean() > 0.1  # shared cases correlate


def test_the_cross_terms_are_the_joint_delete_one_case_jackknife() -> None:
    """At a fixed lambda per generator, with every case shared: the covariance of the vector of
    estimates over the replicates that drop one case from every generator at once."""
    rng = np.random.default_rng(7)
    subs = study(rng, "shared", n_cases=30, per_case=3, n_sampled=40)
    lams = dict(zip(NAMES, (0.3, 0.6, 0.8, 0.5), strict=True))

    def estimate(sub: pd.DataFrame, g: str, small: bool):
        lab = sub["y"].notna().to_numpy()
        c = sub["case_id"].to_numpy()
        y, f = sub["y"].to_numpy(float), sub["f"].to_numpy(float)
        return ppi_mean(
            y[lab], f[lab], f[~lab], cluster_labelled=c[lab], cluster_unlabelled=c[~lab],
            lam=lams[g], small_sample=small,
        )  # fmt: skip

    terms = {}
    for g, sub in subs.items():
        res = estimate(sub, g, True)
        terms[g] = pd.Series(res.jk_terms, index=res.jk_units)
    names, cov = joint_cov(terms)
    cases = sorted(subs["gen-a"]["case_id"].unique())
    reps = np.array(
        [
            [estimate(subs[g][subs[g]["case_id"] != c], g, False).ppi.estimate for g in names]
            for c in cases
        ]
    )
    dev = reps - reps.mean(axis=0)
    brute = (len(cases) - 1) / len(cases) * dev.T @ dev
    assert np.max(np.abs(cov - brute)) < 1e-12 * np.max(np.abs(brute))


def test_the_covariance_against_a_case_bootstrap() -> None:
    """Lambda tuned as the report tunes it, one item a case: the correlations of the estimates
    over a bootstrap of the cases (the sample fixed) match the covariance's."""
    rng = np.random.default_rng(11)
    subs = study(rng, "shared", n_cases=300, per_case=1, n_sampled=120)
    _, terms = _figures(subs)
    names, cov = joint_cov(terms)
    cases = subs["gen-a"]["case_id"].to_numpy()
    by_case = {g: s.set_index("case_id") for g, s in subs.items()}
    boot = []
    for _ in range(400):
        pick = rng.choice(cases, len(cases))
        row = []
        for g in names:
            s = by_case[g].loc[pick]
            lab = s["y"].notna().to_numpy()
            y, f = s["y"].to_numpy(float), s["f"].to_numpy(float)
            row.append(ppi_mean(y[lab], f[lab], f[~lab]).ppi.estimate)
        boot.append(row)
    b = np.cov(np.array(boot).T)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    b_corr = b / np.sqrt(np.outer(np.diag(b), np.diag(b)))
    off = np.triu_indices(len(names), 1)
    assert np.max(np.abs(corr[off] - b_corr[off])) < 0.12
    assert np.allclose(np.diag(cov), np.diag(b), rtol=0.25)


def _brute_force(theta, cov, alpha, rng, draws=200_000):
    """Chatzi et al.'s rank-sets read from their definition: j is above i when theta_j >
    theta_i at every point of the 1 - alpha ellipsoid (its boundary sampled densely); the
    rank-set of i runs from 1 + #{j above i} to K - #{j below i}."""
    k = len(theta)
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    u = rng.normal(size=(draws, k))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    pts = theta + np.sqrt(chi2.ppf(1 - alpha, k)) * u @ root.T
    above = np.array([[j != i and bool(np.all(pts[:, j] > pts[:, i])) for j in range(k)]
                      for i in range(k)])  # fmt: skip
    return [[1 + int(above[i].sum()), k - int(above[:, i].sum())] for i in range(k)], above


def test_rank_sets_are_chatzi_et_als_definition() -> None:
    rng = np.random.default_rng(3)
    subs = study(rng, "shared", n_cases=400, per_case=1, n_sampled=250)
    figs, terms = _figures(subs)
    got = figure_rank_sets(figs, terms)
    names, cov = joint_cov(terms)
    theta = np.array([figs[g]["ppi"]["estimate"] for g in names])
    ranks, above = _brute_force(theta, cov, 0.05, rng)
    assert [got["rank_sets"][g]["ranks"] for g in names] == ranks
    assert len({tuple(r) for r in ranks}) > 1  # the data separate some generators
    for i, g in enumerate(names):
        assert got["rank_sets"][g]["below"] == [names[j] for j in np.flatnonzero(above[i])]
    assert "95%" in got["coverage"]


def test_a_null_says_why() -> None:
    rng = np.random.default_rng(5)
    subs = study(rng, "shared", n_cases=60, per_case=1, n_sampled=30)
    figs, terms = _figures(subs)
    figs["gen-d"] = {"ppi": None, "note": "fewer than 10"}
    terms["gen-d"] = None
    out = figure_rank_sets(figs, terms)
    assert out["not_ranked"] == {"gen-d": "no debiased estimate"}
    assert set(out["rank_sets"]) == {"gen-a", "gen-b", "gen-c"}
    figs["gen-c"] = dict(
        figs["gen-c"], ppi={"estimate": 0.5, "low": None, "note": "no interval: x"}
    )
    out = figure_rank_sets(figs, terms)
    assert out["rank_sets"] is None and "gen-c: no interval: x" in out["note"]
    one = figure_rank_sets({"gen-a": figs["gen-a"]}, {"gen-a": terms["gen-a"]})
    assert one["rank_sets"] is None and "fewer than two" in one["note"]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)


def coverage(rng: np.random.Generator, model: str, runs: int, per_case: int = 1) -> dict:
    """Per run: whether the 95% ellipsoid the rank-sets read holds the true pass rates, and
    whether all four rank-sets hold the true ranks; with the joint covariance and with its
    diagonal alone (the generators taken as independent)."""
    hits = {"ellipsoid": 0, "ranks": 0, "ellipsoid_diag": 0, "ranks_diag": 0}
    width, width_diag = [], []
    q = chi2.ppf(0.95, len(NAMES))
    for _ in range(runs):
        subs = study(rng, model, n_cases=200 // per_case, per_case=per_case, n_sampled=80)
        figs, terms = _figures(subs)
        names, cov = joint_cov(terms)
        theta = np.array([figs[g]["ppi"]["estimate"] for g in names])
        for key, c in (("", cov), ("_diag", np.diag(np.diag(cov)))):
            e = theta - TRUE
            hits["ellipsoid" + key] += bool(e @ np.linalg.solve(c, e) <= q)
            r = rank_sets(names, theta, c, 0.05, dims=len(names))
            hits["ranks" + key] += all(r[g][0] <= TRUE_RANK[g] <= r[g][1] for g in names)
            (width if not key else width_diag).append(np.mean([b - a for a, b in r.values()]))
    return {
        **{k: (v / runs, *wilson(v, runs)) for k, v in hits.items()},
        "width": float(np.mean(width)),
        "width_diag": float(np.mean(width_diag)),
    }


@pytest.mark.parametrize("model", ["shared", "independent"])
def test_simultaneous_coverage(model: str) -> None:
    """300 studies of four generators on 200 shared cases, 80 human labels each: the rank-sets
    cover all true ranks together at 95% or more (the upper Wilson bound at least 0.95) and so
    does the ellipsoid they read. With correlated generators the joint covariance gives
    narrower rank-sets than the diagonal alone."""
    got = coverage(np.random.default_rng(2026), model, 300)
    assert got["ranks"][2] >= 0.95 and got["ellipsoid"][2] >= 0.95
    if model == "shared":
        assert got["width"] < got["width_diag"]


def test_the_summary_ranks_by_the_rank_sets() -> None:
    """The summary's debiased rank is the best end of the rank-set (1 + the generators surely
    above), and *known* orders exactly the pairs the rank-sets separate; without rank-sets the
    intervals rank, and the summary says why."""
    from annotator.stats.summary import build_summary

    ppi = {
        "gen-a": {"estimate": 0.80, "low": 0.70, "high": 0.90},
        "gen-b": {"estimate": 0.60, "low": 0.52, "high": 0.68},  # apart from gen-a's interval
        "gen-c": {"estimate": 0.40, "low": 0.30, "high": 0.50},
    }
    sets = {
        "gen-a": {"ranks": [1, 2], "text": "1st to 2nd", "below": []},
        "gen-b": {"ranks": [1, 2], "text": "1st to 2nd", "below": []},
        "gen-c": {"ranks": [3, 3], "text": "3rd", "below": ["gen-a", "gen-b"]},
    }
    figs = {g: {"verdict_pass_rate": {"ppi": p, "lambda": 0.5}} for g, p in ppi.items()}
    report = {
        "generators": {
            "figures": {"verdict_pass_rate": "pass rate"},
            "by_generator": {g: {"overall": {}} for g in ppi},
        },
        "debiased": {
            "recorded": True,
            "figures": {"verdict_pass_rate": "pass rate"},
            "judges": {
                "j": {
                    "by_generator": figs,
                    "rank_sets": {"verdict_pass_rate": {"rank_sets": sets, "coverage": "c"}},
                }
            },
        },
    }
    g = build_summary(report)["generators"]
    assert {r["generator"]: r["debiased_rank"] for r in g["ranking"]} == {
        "gen-a": 1,
        "gen-b": 1,
        "gen-c": 3,
    }
    assert g["ranking"][2]["debiased_rank_set"]["text"] == "3rd"
    assert "rank-sets" in g["ranked_by_note"]
    from annotator.stats.next_steps import _debiased_order

    known = {(f["above"], f["below"]) for k in _debiased_order(g) for f in k["figures"]}
    assert known == {("gen-a", "gen-c"), ("gen-b", "gen-c")}  # not gen-a over gen-b
    report["debiased"]["judges"]["j"]["rank_sets"]["verdict_pass_rate"] = {
        "rank_sets": None,
        "note": "no rank-sets: gen-c: no interval",
    }
    g = build_summary(report)["generators"]
    assert g["ranking"][1]["debiased_rank"] == 2  # gen-a's interval is above gen-b's
    assert g["rank_sets_note"] == "no rank-sets: gen-c: no interval"
    assert "intervals that do not overlap" in g["ranked_by_note"]
