"""Dawid-Skene and MACE against crowd-kit's outputs, planted spammers and adversaries, and the
coverage of the competence interval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotator.stats.competence import (
    binned,
    competence_figures,
    dawid_skene,
    encode,
    low_competence,
    mace,
)

ORACLE = Path(__file__).parents[1] / "data" / "crowdkit"


@pytest.fixture(scope="module")
def oracle() -> tuple[pd.DataFrame, dict]:
    return pd.read_csv(ORACLE / "answers.csv"), json.loads((ORACLE / "oracle.json").read_text())


def test_dawid_skene_posteriors_match_crowdkit(oracle) -> None:
    df, o = oracle
    x = encode(df, item="task", rater="worker", value="label")
    fit = dawid_skene(x, n_iter=o["dawid_skene"]["n_iter"], tol=None)
    ref = np.array([o["dawid_skene"]["posterior"][t] for t in x.items])
    assert list(x.labels) == o["dawid_skene"]["labels"]
    # crowd-kit floors its returned posteriors at 1e-10: the only difference allowed
    np.testing.assert_allclose(fit.posterior, ref, atol=1e-6, rtol=0)
    assert fit.posterior.max(axis=1).min() < 0.6  # the data leave items uncertain: a real check


def test_mace_posteriors_and_competence_match_crowdkit(oracle) -> None:
    df, o = oracle
    x = encode(df, item="task", rater="worker", value="label")
    fit = mace(x, n_iter=o["mace"]["n_iter"], tol=None)
    ref = np.array([o["mace"]["posterior"][t] for t in x.items])
    np.testing.assert_allclose(fit.posterior, ref, atol=1e-6, rtol=0)
    comp = [o["mace"]["competence"][w] for w in x.raters]
    np.testing.assert_allclose(fit.competence, comp, atol=1e-6, rtol=0)


def _planted(n: int, seed: int, k: int = 2) -> pd.DataFrame:
    """Five raters right 80% of the time, a uniform spammer and an adversary (always another
    answer: the opposite for yes/no)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    rows = []
    for name in ("a", "b", "c", "d", "e", "spammer", "adversary"):
        if name == "spammer":
            ans = rng.integers(0, k, n)
        elif name == "adversary":
            ans = (truth + 1) % k
        else:
            ans = np.where(rng.random(n) < 0.8, truth, (truth + rng.integers(1, k, n)) % k)
        rows.append(pd.DataFrame({"idx": np.arange(n), "rater": name, "code": ans.astype(float)}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("k", [2, 3])
def test_planted_spammer_and_adversary_have_the_lowest_competence(k: int) -> None:
    for seed in range(5):
        h = _planted(300, seed, k)
        x = encode(h)
        comp = dict(zip(x.raters, mace(x).competence, strict=True))
        worst = sorted(comp, key=comp.get)[:2]
        assert set(worst) == {"spammer", "adversary"}, comp
        ds = dawid_skene(x)
        acc = {
            r: ds.posterior[x.item[x.rater == i], x.label[x.rater == i]].mean()
            for i, r in enumerate(x.raters)
        }
        assert set(sorted(acc, key=acc.get)[:2]) == {"spammer", "adversary"}, acc


def test_report_figures_and_attention() -> None:
    h = _planted(200, 1)
    out, latent = competence_figures(h, ordinal=False, n_boot=200, seed=0, key="m")
    for r in ("a", "b", "c", "d", "e"):
        assert out[r]["low"] < out[r]["estimate"] < out[r]["high"]
    low = low_competence({r: {"m": f} for r, f in out.items()})
    assert set(low) == {"spammer", "adversary"}
    assert low["spammer"]["m"]["peers"] == pytest.approx(
        np.median([out[r]["estimate"] for r in out if r != "spammer"])
    )
    assert out["a"]["model"] == "mace" and out["a"]["n"] == 200
    assert out["adversary"]["dawid_skene_accuracy"]["estimate"] < 0.1
    assert latent["n_items"] == 200 and latent["model"] == "dawid_skene"


def test_too_few_raters_is_a_note() -> None:
    h = _planted(50, 0)
    h = h[h["rater"].isin(["a", "b"])]
    figs, latent = competence_figures(h, ordinal=False, n_boot=10)
    assert figs["a"]["estimate"] is None and "2 rater(s)" in figs["a"]["note"]
    assert "note" in latent


def test_binned_scale() -> None:
    codes = np.array([1.0, 5.0, np.nan, 10.0])
    np.testing.assert_array_equal(binned(codes, (1.0, 2.0, 3.0)), codes)
    b = binned(codes, tuple(float(v) for v in range(1, 11)))
    assert b[0] == 0 and b[3] == 6 and np.isnan(b[2])


@pytest.mark.slow
def test_competence_interval_covers_the_planted_competence() -> None:
    """Raters who know the answer with probability 0.7 (else answer uniformly): MACE's competence
    is 0.7; the item-bootstrap interval should cover it about 95% of the time."""
    runs, hits, trials = 100, 0, 0
    for seed in range(runs):
        rng = np.random.default_rng(1000 + seed)
        n, k = 150, 3
        truth = rng.integers(0, k, n)
        rows = []
        for r in range(5):
            know = rng.random(n) < 0.7
            ans = np.where(know, truth, rng.integers(0, k, n))
            rows.append(pd.DataFrame({"idx": np.arange(n), "rater": f"r{r}", "code": ans}))
        h = pd.concat(rows, ignore_index=True).astype({"code": float})
        out, _ = competence_figures(h, ordinal=False, n_boot=200, seed=seed)
        for c in out.values():
            trials += 1
            hits += c["low"] <= 0.7 <= c["high"]
    share = hits / trials
    # 500 intervals: a 95% interval gives 0.93-0.97 (binomial band, about 2 standard errors)
    print(f"competence interval coverage {share:.3f} over {trials}")
    assert 0.90 <= share <= 0.98, share


def _normalize(x: np.ndarray, smoothing: float) -> np.ndarray:
    s = x + smoothing
    return s / s.sum(axis=1, keepdims=True)


def _mace_e_step(x, spam: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, ...]:
    """MACE's E-step written answer by answer (the paper's form): the posterior of the truth per
    item, and per answer the posteriors of spamming and of knowing."""
    n, L = len(x.items), len(x.labels)
    s0, s1 = spam[x.rater, 0], spam[x.rater, 1]
    th = theta[x.rater, x.label]
    hit = x.label[:, None] == np.arange(L)[None, :]
    m = s0[:, None] * th[:, None] + s1[:, None] * hit  # answers x truth
    ll = np.zeros((n, L))
    np.add.at(ll, x.item, np.log(m))
    post = np.exp(ll - ll.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    spamming = (post[x.item] * (s0 * th)[:, None] / m).sum(axis=1)
    knowing = post[x.item, x.label] * s1 / (s0 * th + s1)
    return post, spamming, knowing


def _em_answer_by_answer(x, spam: np.ndarray, theta: np.ndarray, rounds: int) -> tuple:
    """`rounds` rounds of MACE's EM over every single answer, from (spam, theta)."""
    R, L = len(x.raters), len(x.labels)
    for _ in range(rounds):
        _, spamming, knowing = _mace_e_step(x, spam, theta)
        strat = np.zeros((R, L))
        np.add.at(strat, (x.rater, x.label), spamming)
        counts = np.column_stack(
            [
                np.bincount(x.rater, spamming, minlength=R),
                np.bincount(x.rater, knowing, minlength=R),
            ]
        )
        spam, theta = _normalize(counts, 0.01 / L), _normalize(strat, 0.01 / L)
    return spam, theta


def test_table_form_of_mace_equals_em_answer_by_answer() -> None:
    """The pattern-and-table EM of `mace` equals the paper's EM run over every single answer."""
    h = _planted(150, 2, 3)
    x = encode(h)
    fit = mace(x, n_iter=30, tol=None)
    R, L = len(x.raters), len(x.labels)
    from scipy.stats import uniform

    spam = uniform(1, 1.5).rvs(size=(R, 2), random_state=0)
    theta = uniform(1, 1.5).rvs(size=(R, L), random_state=0)
    spam, theta = _em_answer_by_answer(x, _normalize(spam, 0.0), _normalize(theta, 0.0), 30)
    post, _, _ = _mace_e_step(x, spam, theta)
    np.testing.assert_allclose(fit.competence, spam[:, 1], atol=1e-12)
    np.testing.assert_allclose(fit.strategy, theta, atol=1e-12)
    np.testing.assert_allclose(fit.posterior, post, atol=1e-12)


def test_bootstrap_rounds_equal_em_on_the_resampled_items() -> None:
    """The pattern-and-table form of the weighted EM rounds equals plain EM rounds run on the
    resample written out item by item (each item repeated as often as it was drawn)."""
    from annotator.stats.bootstrap import resample_counts
    from annotator.stats.competence import Answers, mace_bootstrap

    h = _planted(120, 4, 3)
    x = encode(h)
    fit = mace(x)
    w = resample_counts(np.random.default_rng(9), len(x.items), 3)
    got = mace_bootstrap(x, fit, w, k_steps=4)
    n = len(x.items)
    for b in range(len(w)):
        reps = np.repeat(np.arange(n), w[b].astype(int))  # new item j is old item reps[j]
        pos = {}
        for j, i in enumerate(reps):
            pos.setdefault(i, []).append(j)
        sel = [(j, k) for k in range(len(x.item)) for j in pos.get(x.item[k], [])]
        xr = Answers(
            np.array([j for j, _ in sel]),
            x.rater[[k for _, k in sel]],
            x.label[[k for _, k in sel]],
            np.arange(len(reps)),
            x.raters,
            x.labels,
        )
        spam = np.column_stack([1 - fit.competence, fit.competence])
        spam, _ = _em_answer_by_answer(xr, spam, fit.strategy.copy(), 4)
        # the resamples' rounds run in single precision (see mace_bootstrap)
        np.testing.assert_allclose(got[b], spam[:, 1], atol=1e-6)


def test_sparse_patterns_in_threaded_batches_give_the_dense_figures(monkeypatch) -> None:
    """A study too large for the dense pattern array takes the sparse path, its batches of
    resamples on two threads: the same competences per resample, in the same order."""
    from annotator.stats import competence
    from annotator.stats.bootstrap import resample_counts
    from annotator.stats.competence import mace_bootstrap

    x = encode(_planted(200, 5, 3))
    fit = mace(x)
    w = resample_counts(np.random.default_rng(3), len(x.items), 40)
    # one resample a batch: 40 batches (a batch stops its rounds together, so both runs split
    # the resamples alike)
    monkeypatch.setattr(competence, "_BATCH", 1)
    dense = mace_bootstrap(x, fit, w)
    monkeypatch.setattr(competence, "_DENSE_CELLS", 0)
    monkeypatch.setattr(competence, "_THREADS", 2)
    sparse = mace_bootstrap(x, fit, w)
    np.testing.assert_allclose(sparse, dense, atol=1e-6)
    assert not np.allclose(sparse[0], sparse[1])  # resamples differ: the order is checked


def test_encode_keeps_the_last_answer_per_item_and_rater() -> None:
    df = pd.DataFrame(
        {
            "idx": [7, 7, 3, 3, 9],
            "rater": ["b", "b", "a", "b", "a"],
            "code": [5.0, 1.0, 1.0, np.nan, 2.0],
        }
    )
    x = encode(df)
    got = {
        (x.items[i], x.raters[r], x.labels[a])
        for i, r, a in zip(x.item, x.rater, x.label, strict=True)
    }
    assert got == {(7, "b", 1.0), (3, "a", 1.0), (9, "a", 2.0)}
    assert list(x.items) == [3, 7, 9] and list(x.labels) == [1.0, 2.0]  # 5.0 was replaced
