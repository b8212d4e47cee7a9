"""The alternative-annotator test against a loop-by-loop reading of the paper, on simulations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_1samp

from annotator.stats.alt_test import (
    alt_test,
    benjamini_yekutieli,
    leave_one_out_wins,
    one_sided_p,
)


def _long(mat: np.ndarray) -> pd.DataFrame:
    n, r = mat.shape
    df = pd.DataFrame(
        {
            "idx": np.repeat(np.arange(n), r),
            "rater": np.tile([f"r{k}" for k in range(r)], n),
            "code": mat.ravel().astype(float),
        }
    )
    return df[df["code"].notna()]


def _sim(n: int, r: int, judge: str, seed: int, k: int = 3) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    # each human is right 80% of the time, else a random other value
    wrong = (truth[:, None] + rng.integers(1, k, (n, r))) % k
    mat = np.where(rng.random((n, r)) < 0.8, truth[:, None], wrong)
    if judge == "copy":  # a copy of the first human with 5% of answers replaced at random
        j = np.where(rng.random(n) < 0.05, rng.integers(0, k, n), mat[:, 0])
    else:
        j = rng.integers(0, k, n)
    return _long(mat[:, 1:]), pd.Series(j.astype(float), index=np.arange(n))


def _reference_wins(human: pd.DataFrame, judge: pd.Series, nominal: bool, min_items: int):
    """The paper's definitions item by item, annotator by annotator."""
    by_item = {i: dict(zip(g["rater"], g["code"], strict=True)) for i, g in human.groupby("idx")}
    out = {}
    for j in sorted(human["rater"].unique()):
        wf, wh = [], []
        for i, ans in by_item.items():
            if j not in ans or i not in judge.index or np.isnan(judge[i]):
                continue
            others = [v for r, v in ans.items() if r != j]
            if len(others) < 2:
                continue
            f, h = judge[i], ans[j]
            if nominal:
                sf = np.mean([f == o for o in others])
                sh = np.mean([h == o for o in others])
            else:
                sf = -np.sqrt(np.mean([(f - o) ** 2 for o in others]))
                sh = -np.sqrt(np.mean([(h - o) ** 2 for o in others]))
            wf.append(float(sf >= sh - 1e-12))
            wh.append(float(sh >= sf - 1e-12))
        if len(wf) >= min_items:
            out[j] = (np.array(wf), np.array(wh))
    return out


@pytest.mark.parametrize("nominal", [True, False])
def test_wins_match_item_by_item_definition(nominal: bool) -> None:
    rng = np.random.default_rng(3)
    mat = rng.integers(1, 6, (60, 5)).astype(float)
    mat[rng.random(mat.shape) < 0.25] = np.nan  # missing answers: some items have < 2 others
    human = _long(mat)
    judge = pd.Series(rng.integers(1, 6, 60).astype(float))
    judge[rng.random(60) < 0.1] = np.nan
    got = leave_one_out_wins(human, judge, nominal=nominal, min_items=5)
    ref = _reference_wins(human, judge, nominal, 5)
    assert got.annotators == sorted(ref)
    for r, wf, wh in zip(got.annotators, got.w_judge, got.w_human, strict=True):
        np.testing.assert_array_equal(wf, ref[r][0])
        np.testing.assert_array_equal(wh, ref[r][1])


def test_p_value_is_scipy_one_sided_t_test() -> None:
    d = np.array([1, 0, 0, -1, 0, 1, 0, 0, 1, 0], dtype=float)
    for eps in (0.0, 0.1, 0.3):
        want = ttest_1samp(d, eps, alternative="less").pvalue
        assert one_sided_p(d, eps)[0] == pytest.approx(want, abs=1e-12)
    # no spread: decided by the sign of mean - eps
    assert one_sided_p(np.zeros(5), 0.1)[0] == 0.0
    assert one_sided_p(np.zeros(5), 0.0)[0] == 1.0


def test_benjamini_yekutieli_hand_computed() -> None:
    # m = 4, c(4) = 1 + 1/2 + 1/3 + 1/4 = 25/12; thresholds k * 0.05 / (4 * 25/12) = 0.006 k:
    # 0.006, 0.012, 0.018, 0.024. Sorted p: 0.001 <= 0.006, 0.013 > 0.012, 0.017 <= 0.018,
    # 0.5 > 0.024: the largest k is 3, so the three smallest are rejected (0.013 too: step-up).
    p = np.array([0.017, 0.5, 0.001, 0.013])
    np.testing.assert_array_equal(benjamini_yekutieli(p), [True, False, True, True])
    # with 0.019 in place of 0.017 only the first threshold is met
    p2 = np.array([0.019, 0.5, 0.001, 0.013])
    np.testing.assert_array_equal(benjamini_yekutieli(p2), [False, False, True, False])
    # row by row on a 2-d array
    np.testing.assert_array_equal(
        benjamini_yekutieli(np.vstack([p, p2])),
        [[True, False, True, True], [False] * 2 + [True, False]],
    )


def test_copy_of_a_human_passes_and_random_judge_fails() -> None:
    passed, failed = 0, 0
    # 1000 items: at 200 a copy with 5% noise is measurably worse than a human and passes only
    # about half the time at epsilon 0.1 (40 seeds: 40/40 pass at 1000, 0/40 for the random judge)
    for seed in range(20):
        h, j = _sim(1000, 6, "copy", seed)
        res = alt_test(h, j, nominal=True, epsilon=0.1, min_items=30)
        passed += res["passed"]
        h, j = _sim(1000, 6, "random", seed)
        res_r = alt_test(h, j, nominal=True, epsilon=0.1, min_items=30)
        failed += not res_r["passed"]
        assert res_r["advantage_probability"] < res["advantage_probability"]
    assert passed >= 19 and failed == 20  # binomial band for a 0.99+ pass rate


def test_min_passing_epsilon_is_the_first_passing_epsilon() -> None:
    h, j = _sim(200, 6, "random", 1)
    res = alt_test(h, j, nominal=True, epsilon=0.1, min_items=30)
    eps = res["min_passing_epsilon"]
    assert eps is not None and eps > 0.1
    assert alt_test(h, j, nominal=True, epsilon=eps, min_items=30)["passed"]
    assert not alt_test(h, j, nominal=True, epsilon=eps - 0.001, min_items=30)["passed"]


def test_scale_judge_close_to_humans_passes() -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, 150)
    mat = np.clip(truth[:, None] + rng.integers(-1, 2, (150, 5)), 1, 5)
    good = pd.Series(truth.astype(float))
    bad = pd.Series(np.clip(truth + 2, 1, 5).astype(float))
    assert alt_test(_long(mat), good, nominal=False, epsilon=0.1)["passed"]
    assert not alt_test(_long(mat), bad, nominal=False, epsilon=0.1)["passed"]


def test_too_few_annotators_is_a_note() -> None:
    h, j = _sim(20, 6, "copy", 0)
    res = alt_test(h, j, nominal=True, min_items=30)
    assert "winning_rate" not in res and "alt_test_min_items" in res["note"]


def test_alt_test_settings_are_checked() -> None:
    from annotator.domain.errors import InputError
    from annotator.services.study import DEFAULT_SETTINGS, check_setting

    assert DEFAULT_SETTINGS["alt_test_epsilon"] == 0.1
    assert DEFAULT_SETTINGS["alt_test_min_items"] == 30
    check_setting("alt_test_epsilon", 0.15)
    check_setting("alt_test_min_items", 20)
    for key, bad in (
        ("alt_test_epsilon", 1.5),
        ("alt_test_epsilon", "x"),
        ("alt_test_min_items", 0),
    ):
        with pytest.raises(InputError) as e:
            check_setting(key, bad)
        assert key in str(e.value) and "\n" not in str(e.value)
