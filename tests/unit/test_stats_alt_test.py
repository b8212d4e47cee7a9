"""The alternative-annotator test: `alt_test` against a loop-by-loop reading of the paper's definition
(as its authors compute it) on simulations and on the shipped TIFA ratings; `alt_test_balanced`, the
project's variant, against its own item-by-item definition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_1samp

from annotator.stats.alt_test import (
    alt_test,
    alt_test_balanced,
    benjamini_yekutieli,
    leave_one_out_wins,
    one_sided_p,
    verdict_test,
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
        res = alt_test_balanced(h, j, nominal=True, epsilon=0.1, min_items=30)
        passed += res["passed"]
        h, j = _sim(1000, 6, "random", seed)
        res_r = alt_test_balanced(h, j, nominal=True, epsilon=0.1, min_items=30)
        failed += not res_r["passed"]
        assert res_r["advantage_probability"] < res["advantage_probability"]
    assert passed >= 19 and failed == 20  # binomial band for a 0.99+ pass rate


def test_min_passing_epsilon_is_the_first_passing_epsilon() -> None:
    h, j = _sim(200, 6, "random", 1)
    res = alt_test_balanced(h, j, nominal=True, epsilon=0.1, min_items=30)
    eps = res["min_passing_epsilon"]
    assert eps is not None and eps > 0.1
    assert alt_test_balanced(h, j, nominal=True, epsilon=eps, min_items=30)["passed"]
    assert not alt_test_balanced(h, j, nominal=True, epsilon=eps - 0.001, min_items=30)["passed"]


def test_scale_judge_close_to_humans_passes() -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, 150)
    mat = np.clip(truth[:, None] + rng.integers(-1, 2, (150, 5)), 1, 5)
    good = pd.Series(truth.astype(float))
    bad = pd.Series(np.clip(truth + 2, 1, 5).astype(float))
    assert alt_test_balanced(_long(mat), good, nominal=False, epsilon=0.1)["passed"]
    assert not alt_test_balanced(_long(mat), bad, nominal=False, epsilon=0.1)["passed"]


def test_too_few_annotators_is_a_note() -> None:
    h, j = _sim(20, 6, "copy", 0)
    res = alt_test_balanced(h, j, nominal=True, min_items=30)
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


# ---- the paper's test -----------------------------------------------------------------------


def _paper_reference(
    humans: dict[str, dict[int, float]],
    judge: dict[int, float],
    *,
    nominal: bool,
    epsilon: float,
    min_items: int = 30,
    q: float = 0.05,
) -> tuple[float, float, int]:
    """(winning rate, advantage probability, annotators) read off the paper's definition, loop
    by loop: items with at least 2 human answers and a judge answer; each annotator with at least
    `min_items` of them left out in turn; accuracy (or minus the RMSE) against the others; W_f,
    W_h with ties to both; scipy's one-sided t-test of W_h - W_f against epsilon;
    Benjamini-Yekutieli over the annotators; rate = rejected / annotators tested."""
    by_item: dict[int, dict[str, float]] = {}
    for h, answers in humans.items():
        for i, v in answers.items():
            by_item.setdefault(i, {})[h] = v
    keep = {i for i, a in by_item.items() if len(a) >= 2 and i in judge}

    def score(x: float, others: list[float]) -> float:
        if nominal:
            return float(np.mean([x == o for o in others]))
        return -float(np.sqrt(np.mean([(x - o) ** 2 for o in others])))

    p_values, advantage = [], []
    for h, answers in humans.items():
        items = [i for i in answers if i in keep]
        if len(items) < min_items:
            continue
        wf, wh = [], []
        for i in items:
            others = [v for r, v in by_item[i].items() if r != h]
            s_h, s_f = score(answers[i], others), score(judge[i], others)
            wf.append(1 if s_f >= s_h else 0)
            wh.append(1 if s_h >= s_f else 0)
        d = np.array(wh) - np.array(wf)
        p_values.append(ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantage.append(float(np.mean(wf)))
    m = len(p_values)
    srt = np.sort(p_values)
    c_m = sum(1 / k for k in range(1, m + 1))
    passing = [k for k in range(m) if srt[k] <= (k + 1) / m * q / c_m]
    rejected = passing[-1] + 1 if passing else 0
    return rejected / m, float(np.mean(advantage)), m


def _as_dicts(human: pd.DataFrame, judge: pd.Series) -> tuple[dict, dict]:
    humans: dict[str, dict[int, float]] = {}
    for r, i, v in human[["rater", "idx", "code"]].itertuples(index=False):
        humans.setdefault(str(r), {})[int(i)] = float(v)
    return humans, {int(i): float(v) for i, v in judge.dropna().items()}


@pytest.mark.parametrize("nominal", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_alt_test_is_the_papers_on_designs_with_two_to_six_raters_an_item(nominal, seed) -> None:
    rng = np.random.default_rng([seed, nominal])
    n, r = 120, 6
    truth = rng.integers(1, 6, n)
    mat = np.clip(truth[:, None] + rng.integers(-1, 2, (n, r)), 1, 5).astype(float)
    mat[rng.random(mat.shape) < 0.45] = np.nan  # 0 to 6 answers an item: many with 2
    human = _long(mat)
    judge = pd.Series(np.clip(truth + rng.integers(-1, 2, n), 1, 5).astype(float))
    judge[rng.random(n) < 0.1] = np.nan
    for eps in (0.05, 0.1, 0.2):
        got = alt_test(human, judge, nominal=nominal, epsilon=eps, min_items=30)
        rate, adv, m = _paper_reference(*_as_dicts(human, judge), nominal=nominal, epsilon=eps)
        assert got["n_annotators"] == m
        assert got["winning_rate"] == pytest.approx(rate, abs=1e-12)
        assert got["advantage_probability"] == pytest.approx(adv, abs=1e-12)


def test_alt_test_is_the_papers_on_the_shipped_tifa_ratings() -> None:
    """TIFA v1.0's 1-5 faithfulness ratings (3 raters an image) against a judge read off the
    shipped TIFA (mPLUG) score, put on the raters' scale (1 + 4 x score, rounded)."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "tifa"
    ratings = pd.read_csv(data / "ratings.csv")
    scores = pd.read_csv(data / "judge.csv")
    scores = scores[scores["judge"] == "tifa_mplug-large"]
    ids = {k: n for n, k in enumerate(sorted(set(ratings["item_id"])))}
    human = pd.DataFrame(
        {
            "idx": ratings["item_id"].map(ids),
            "rater": ratings["rater"].astype(str),
            "code": pd.to_numeric(ratings["value"], errors="coerce"),
        }
    ).dropna()
    judge = pd.Series(
        np.rint(1 + 4 * scores["value"].astype(float).to_numpy()),
        index=scores["item_id"].map(ids).to_numpy(),
    ).dropna()
    judge = judge[judge.index.notna()]
    judge.index = judge.index.astype(int)
    for eps in (0.1, 0.2, 0.3):
        got = alt_test(human, judge, nominal=False, epsilon=eps, min_items=30)
        rate, adv, m = _paper_reference(*_as_dicts(human, judge), nominal=False, epsilon=eps)
        assert (got["n_annotators"], got["n_items"] > 0) == (m, True)
        assert got["winning_rate"] == pytest.approx(rate, abs=1e-12)
        assert got["advantage_probability"] == pytest.approx(adv, abs=1e-12)


def test_the_papers_test_takes_items_with_two_raters_the_variant_needs_three() -> None:
    rng = np.random.default_rng(2)
    n = 80
    truth = rng.integers(0, 2, n)
    mat = np.where(rng.random((n, 3)) < 0.85, truth[:, None], 1 - truth[:, None]).astype(float)
    mat[:, 2] = np.nan  # two raters an item: the paper's test runs, the variant cannot
    human, judge = _long(mat), pd.Series(truth.astype(float))
    paper = alt_test(human, judge, nominal=True, min_items=30)
    variant = alt_test_balanced(human, judge, nominal=True, min_items=30)
    assert paper["n_annotators"] == 2 and paper["n_items"] == n
    assert "winning_rate" not in variant and "needs 3" in variant["note"]
    both = verdict_test(
        {"alt_test": paper, "alt_test_balanced": None, "alt_test_balanced_note": variant["note"]}
    )
    assert both is not None and not both["passed"] and "did not run" in both["used"]
