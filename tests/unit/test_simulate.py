"""The simulated raters behave as their docstrings say (rates checked with binomial bands)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from annotator.demo.simulate import SimulatedPairVoter, SimulatedRater, sigmoid
from annotator.domain.rubric import CANNOT_JUDGE, FAIL, PASS, validate_answer
from annotator.ingest.rubrics import load_rubric

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = load_rubric(ROOT / "rubrics" / "ui_mockup.toml")
TRUTH = {
    "instruction_following": PASS,
    "text_rendering": FAIL,
    "layout_hierarchy": 3,
    "ui_affordance": 2,
    "failure_tags": ("misspelled_text",),
}


def band(p: float, n: int, sigmas: float = 4.0) -> tuple[float, float]:
    sd = math.sqrt(p * (1 - p) / n)
    return p - sigmas * sd, p + sigmas * sd


def test_answers_are_typed_valid_and_reproducible():
    rater = SimulatedRater("r1", noise=0.8, tag_rate=0.2)
    a = [rater.answer(TRUTH, RUBRIC, np.random.default_rng(7)) for _ in range(2)]
    assert a[0] == a[1]  # same seed, same answers
    rng = np.random.default_rng(1)
    for _ in range(300):
        ans = rater.answer(TRUTH, RUBRIC, rng)
        assert "reason" not in ans  # text is not simulated
        assert set(ans) == {
            "instruction_following",
            "text_rendering",
            "layout_hierarchy",
            "ui_affordance",
            "failure_tags",
        }
        for key, value in ans.items():
            # the domain's own validator accepts every simulated answer unchanged
            assert validate_answer(RUBRIC.metric(key), value) == value
        assert isinstance(ans["layout_hierarchy"], int) and 0 <= ans["layout_hierarchy"] <= 5


def test_steady_rater_is_off_by_one_point_15_percent_each_way():
    rater = SimulatedRater("steady", noise=0.48)
    rng = np.random.default_rng(3)
    n = 4000
    dev = np.array(
        [
            rater.answer({"layout_hierarchy": 2}, RUBRIC, rng)["layout_hierarchy"] - 2
            for _ in range(n)
        ]
    )
    for value, p in ((-1, 0.15), (0, 0.70), (1, 0.15)):
        lo, hi = band(p, n)
        assert lo <= (dev == value).mean() <= hi
    # gates flip at the same one-sided rate by default
    assert rater.gate_flip == pytest.approx(0.149, abs=0.002)
    flips = np.mean(
        [
            rater.answer({"instruction_following": PASS}, RUBRIC, rng)["instruction_following"]
            == FAIL
            for _ in range(n)
        ]
    )
    lo, hi = band(rater.gate_flip, n)
    assert lo <= flips <= hi


def test_severity_lowers_scales_and_pass_rate():
    rng = np.random.default_rng(5)
    mild, severe = SimulatedRater("m", noise=0.5), SimulatedRater("s", noise=0.5, severity=1.0)
    n = 3000

    def stats(r):
        answers = [r.answer(TRUTH, RUBRIC, rng) for _ in range(n)]
        return (
            np.mean([a["layout_hierarchy"] for a in answers]),
            np.mean([a["instruction_following"] == PASS for a in answers]),
        )

    (m_scale, m_pass), (s_scale, s_pass) = stats(mild), stats(severe)
    assert m_scale - s_scale == pytest.approx(1.0, abs=0.1)
    assert m_pass - s_pass > 0.1


def test_planted_drift_starts_at_drift_at_and_only_on_chosen_kinds():
    rater = SimulatedRater("d", noise=0.48, drift_at=30, drift_shift=1.0, drift_kinds=("scale",))
    rng = np.random.default_rng(11)
    before = [rater.answer(TRUTH, RUBRIC, rng, anchor_index=29) for _ in range(2000)]
    after = [rater.answer(TRUTH, RUBRIC, rng, anchor_index=30) for _ in range(2000)]
    assert np.mean([a["layout_hierarchy"] for a in before]) == pytest.approx(3.0, abs=0.06)
    assert np.mean([a["layout_hierarchy"] for a in after]) == pytest.approx(4.0, abs=0.06)
    # gates untouched by a scale-only drift
    p_before = np.mean([a["instruction_following"] == PASS for a in before])
    p_after = np.mean([a["instruction_following"] == PASS for a in after])
    assert abs(p_before - p_after) < 4 * math.sqrt(2 * 0.85 * 0.15 / 2000)


def test_cannot_judge_truth_and_rate():
    rater = SimulatedRater("c", cannot_judge_rate=0.0)
    rng = np.random.default_rng(0)
    ans = rater.answer({"instruction_following": CANNOT_JUDGE, "layout_hierarchy": 4}, RUBRIC, rng)
    assert ans["instruction_following"] == CANNOT_JUDGE and isinstance(ans["layout_hierarchy"], int)
    assert "text_rendering" not in ans  # no truth, no answer
    always = SimulatedRater("c2", cannot_judge_rate=1.0)
    ans = always.answer(TRUTH, RUBRIC, rng)
    assert ans["layout_hierarchy"] == CANNOT_JUDGE and isinstance(ans["failure_tags"], tuple)


def test_pair_voter_left_bias_strengths_and_ties():
    rng = np.random.default_rng(2)
    n = 4000
    biased = SimulatedPairVoter("b", {"x": 0.0, "y": 0.0}, left_bias=0.65, tie_rate=0.0)
    share = np.mean([biased.vote("x", "y", rng) == "left" for _ in range(n)])
    lo, hi = band(0.65, n)
    assert lo <= share <= hi

    fair = SimulatedPairVoter("f", {"x": 1.0, "y": 0.0}, tie_rate=0.2)
    votes = [fair.vote("y", "x", rng) for _ in range(n)]
    ties = np.mean([v in ("both", "neither") for v in votes])
    lo, hi = band(0.2, n)
    assert lo <= ties <= hi
    decisive = [v for v in votes if v in ("left", "right")]
    p_right = np.mean([v == "right" for v in decisive])  # x (stronger) was dealt right
    lo, hi = band(sigmoid(1.0), len(decisive))
    assert lo <= p_right <= hi
    assert {"both", "neither"} <= set(votes)
