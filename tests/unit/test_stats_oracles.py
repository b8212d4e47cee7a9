"""Point estimates checked against independent implementations (test-only oracles: statsmodels,
scikit-learn, choix; irrCAC's values are written down, since irrCAC pins an old scipy)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.stats.agreement import value_counts_from_matrix
from annotator.stats.bradley_terry import bradley_terry
from annotator.stats.frames import PAIR_COLUMNS
from annotator.stats.generators import wilson_low
from annotator.stats.kappa import agreement_summary, cohen_kappa, fleiss_kappa
from annotator.stats.pairwise import macro_prf


def three_raters(seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 40)
    data = np.where(rng.random((40, 4)) < 0.7, truth[:, None], rng.integers(0, 3, (40, 4))).astype(
        float
    )
    data[rng.random((40, 4)) < 0.15] = np.nan
    return data  # items x raters


def test_gwet_ac1_and_fleiss_match_irrcac():
    # irrCAC 0.4.4, CAC(pd.DataFrame(three_raters()), categories=[0, 1, 2]): gwet() 0.50017,
    # fleiss() 0.49966, pa 0.66667 (it prints 5 decimals)
    s = agreement_summary(
        value_counts_from_matrix(three_raters().T, np.array([0.0, 1, 2])), 3, n_boot=10
    )
    assert s["gwet_ac1"]["estimate"] == pytest.approx(0.50017, abs=5e-6)
    assert s["fleiss_kappa"]["estimate"] == pytest.approx(0.49966, abs=5e-6)
    assert s["percent_agreement"]["estimate"] == pytest.approx(0.66667, abs=5e-6)


def test_fleiss_matches_statsmodels():
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(1)
    counts = np.stack([rng.multinomial(5, p) for p in rng.dirichlet([1, 1, 1, 1], 50)])
    assert fleiss_kappa(counts) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-12)


def test_cohen_kappas_match_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(2)
    a = rng.integers(0, 6, 200)
    b = np.clip(a + rng.integers(-1, 2, 200), 0, 5)
    k = cohen_kappa(a.tolist(), b.tolist(), categories=list(range(6)), n_boot=20)
    for ours, weights in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
        assert k[ours]["estimate"] == pytest.approx(
            metrics.cohen_kappa_score(a, b, weights=weights), abs=1e-12
        )


def test_macro_prf_matches_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    t = rng.choice(["a", "b", "both"], 300)
    p = np.where(rng.random(300) < 0.6, t, rng.choice(["a", "b", "both", "neither"], 300))
    ours = macro_prf(t, p)
    pr, rc, f1, _ = metrics.precision_recall_fscore_support(t, p, average="macro", zero_division=0)
    assert (ours["macro_precision"], ours["macro_recall"], ours["macro_f1"]) == pytest.approx(
        (pr, rc, f1), abs=1e-12
    )


def test_bradley_terry_matches_choix_map():
    choix = pytest.importorskip("choix")
    rng = np.random.default_rng(6)
    strength = np.array([0.8, 0.3, 0.0, -0.5, -0.6])
    rows, data = [], []
    for i in range(400):
        a, b = rng.choice(5, 2, replace=False)
        win_a = rng.random() < 1 / (1 + np.exp(strength[b] - strength[a]))
        rows.append(
            (
                f"p{i}",
                "case",
                f"i{i}a",
                f"i{i}b",
                f"g{a}",
                f"g{b}",
                "r",
                "left" if win_a else "right",
                None,
            )
        )
        data.append((a, b) if win_a else (b, a))
    ours = bradley_terry(pd.DataFrame(rows, columns=PAIR_COLUMNS), n_boot=0, by_case=False)[
        "pooled"
    ]
    # choix penalises alpha * sum(theta^2) (its gradient is 2 alpha theta), so our N(0, 1/0.1)
    # prior, a penalty of 0.1 / 2 * sum(theta^2), is alpha = 0.05 there
    ref = choix.opt_pairwise(5, data, alpha=0.05, tol=1e-10)
    ref = ref - ref.mean()
    for g in range(5):
        assert ours[f"g{g}"]["estimate"] == pytest.approx(ref[g], abs=1e-5)


def test_wilson_matches_statsmodels():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for hits, n in ((10, 10), (0, 12), (7, 30), (29, 30)):
        low, _ = proportion.proportion_confint(hits, n, alpha=0.05, method="wilson")
        assert wilson_low(hits / n, n) == pytest.approx(max(0.0, low), abs=1e-12)
