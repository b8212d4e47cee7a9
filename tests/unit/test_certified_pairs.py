"""Certified judging of pair votes (stats/certified_pairs.py): the consistency confidence, the
threshold against an independent count and scipy's beta quantile, a judge at chance, the
cascade, and on a real SQLite study the report's section, `assign --escalated` dealing exactly
the escalated pairs and `export labels` writing each pair's winner with its source."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from annotator.stats.certified_pairs import CONSISTENT, INCONSISTENT, ONE_ORDER, certify_pairs
from annotator.stats.frames import PAIR_COLUMNS

ALPHA = DELTA = 0.1


def _vote(pid: str, left: str, right: str, rater: str, choice: str) -> tuple:
    gl, gr = left.split("-")[1], right.split("-")[1]
    return (pid, f"c-{pid}", left, right, f"gen{gl}", f"gen{gr}", rater, choice, None)


def _pick(pid: str, left: str, right: str, rater: str, winner: str) -> tuple:
    """A vote for `winner` (an item id), whichever side it is shown on."""
    return _vote(pid, left, right, rater, "left" if winner == left else "right")


def simulated(
    n_pairs: int, *, p_consistent: float, chance: bool = False, seed: int = 0, unclear: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict]]:
    """Pairs p000.. of items `p000-a`/`p000-b`; the first half voted by three humans who agree
    on the truth (the last `unclear` of those split 1-1 instead, no clear majority); the judge
    votes both orders: on a consistent pair (probability `p_consistent`) both orders pick the
    truth, otherwise the orders contradict each other (its vote is then a tie, which the
    humans never give). `chance`: each order's pick is a coin flip instead."""
    rng = np.random.default_rng(seed)
    human, judge, truth = [], [], {}
    n_rated = n_pairs // 2
    for i in range(n_pairs):
        pid = f"p{i:03d}"
        a, b = f"{pid}-a", f"{pid}-b"
        win = a if rng.random() < 0.5 else b
        consistent = bool(rng.random() < p_consistent)
        truth[pid] = {"winner": win, "consistent": consistent, "rated": i < n_rated}
        if i < n_rated:
            if i >= n_rated - unclear:
                human += [_pick(pid, a, b, "ann", a), _pick(pid, b, a, "bob", b)]
                truth[pid]["unclear"] = True
            else:
                human += [_pick(pid, a, b, r, win) for r in ("ann", "bob", "cy")]
        if chance:
            w1 = a if rng.random() < 0.5 else b
            w2 = a if rng.random() < 0.5 else b
            truth[pid]["consistent"] = w1 == w2
        elif consistent:
            w1 = w2 = win
        else:
            w1, w2 = win, (b if win == a else a)
        judge += [_pick(pid, a, b, "j1", w1), _pick(pid, b, a, "j1", w2)]
    frame = lambda rows: pd.DataFrame(rows, columns=PAIR_COLUMNS)  # noqa: E731
    return frame(human), frame(judge), truth


def test_consistent_pairs_are_accepted_and_the_bound_is_the_beta_quantile() -> None:
    human, judge, truth = simulated(400, p_consistent=0.7, unclear=10)
    c = certify_pairs(human, judge, {}, alpha=ALPHA, delta=DELTA, order=None)
    assert c is not None
    b = c.judges["j1"]
    # independently: calibration = the rated pairs with a clear majority, the judge's
    # consistent pairs there all agree, its inconsistent ones (a tie) all disagree
    cal = [p for p, t in truth.items() if t["rated"] and not t.get("unclear")]
    n = sum(truth[p]["consistent"] for p in cal)
    assert b["threshold"] == CONSISTENT
    assert (b["n_calibration"], b["n_above"], b["k_disagree_above"]) == (len(cal), n, 0)
    assert b["upper_bound"] == pytest.approx(beta.ppf(1 - DELTA, 0 + 1, n - 0), abs=1e-12)
    assert b["n_unclear"] == 10 and b["version"] is None
    assert b["disagreement"] == pytest.approx(1 - n / len(cal))
    # the cascade of one judge runs at the full delta: the same threshold
    dec = c.decisions.set_index("pair_id")
    todo = [p for p, t in truth.items() if not t["rated"]]
    accepted = set(dec.index[dec["decision"] == "accepted"])
    assert accepted == {p for p in todo if truth[p]["consistent"]}
    assert set(dec.index[dec["decision"] == "escalated"]) == set(todo) - accepted
    assert set(dec.index[dec["decision"] == "rated"]) == {p for p, t in truth.items() if t["rated"]}
    for p in accepted:  # the judge's vote, coded against the pair's orientation (a < b)
        assert dec.loc[p, "code"] == ("a" if truth[p]["winner"].endswith("-a") else "b")
        assert dec.loc[p, "judge"] == "j1" and dec.loc[p, "confidence"] == CONSISTENT
    assert dec.loc[cal[0], "code"] in ("a", "b")
    unclear = [p for p, t in truth.items() if t.get("unclear")]
    assert all(dec.loc[p, "code"] is None for p in unclear)
    assert c.section["escalated"] == len(todo) - len(accepted)
    assert c.split["accepted"] == {"j1": len(accepted)}


def test_a_judge_at_chance_accepts_nothing() -> None:
    human, judge, _ = simulated(400, p_consistent=0.0, chance=True, seed=3)
    c = certify_pairs(human, judge, {}, alpha=ALPHA, delta=DELTA, order=None)
    assert c is not None
    b = c.judges["j1"]
    assert b["threshold"] is None and b["n_accepted"] == 0
    assert "abstains on every pair" in b["note"]
    assert b["disagreement"] > 0.5 and "feasibility" in b
    assert (c.decisions["decision"] != "accepted").all()


def test_one_order_voted_is_the_middle_confidence_and_fewer_than_30_abstain() -> None:
    human, judge, truth = simulated(40, p_consistent=1.0)
    # drop the second order of the first five pairs: one order each
    second = judge.index[1::2][:5]
    c = certify_pairs(human, judge.drop(index=second), {}, alpha=ALPHA, delta=DELTA, order=None)
    assert c is not None
    confs = c.decisions.set_index("pair_id")
    b = c.judges["j1"]
    assert b["n_calibration"] == 20 and b["threshold"] is None  # 20 < 30 pairs
    assert "fewer than the 30" in b["note"]
    from annotator.stats.certified_pairs import PairVotes

    t = PairVotes.of(judge.drop(index=second)).table.set_index("pair_id")["conf"]
    assert (t.iloc[:5] == ONE_ORDER).all() and (t.iloc[5:] == CONSISTENT).all()
    assert set(confs["decision"]) == {"rated", "escalated"}


def test_inconsistent_orders_are_the_lowest_confidence_and_a_tie() -> None:
    human, judge, truth = simulated(20, p_consistent=0.0)
    from annotator.stats.certified_pairs import PairVotes

    t = PairVotes.of(judge).table
    assert (t["conf"] == INCONSISTENT).all() and (t["code"] == "both").all()


def test_the_pair_sample_is_the_calibration_set() -> None:
    human, judge, truth = simulated(400, p_consistent=0.8, seed=2)
    rated = [p for p, t in truth.items() if t["rated"]]
    sample = {"items": {p: 0.5 for p in rated[:100]}, "rates": {"gena vs genb": 0.5}}
    c = certify_pairs(
        human, judge, {"human_pair_sample": sample}, alpha=ALPHA, delta=DELTA, order=None
    )
    assert c is not None
    assert c.section["calibration"] == "random pair sample"
    assert c.judges["j1"]["n_calibration"] == 100
    # the humans' other pairs are still already rated, never decided by the judge
    assert c.section["already_rated"] == len(rated)


def test_cascade_splits_delta_between_judges() -> None:
    human, judge, truth = simulated(400, p_consistent=0.6, seed=4)
    _, j2, _ = simulated(400, p_consistent=0.9, seed=5)
    # a second judge on the same pairs: consistent on other pairs than the first
    j2["rater"] = "j2"
    both = pd.concat([judge, j2], ignore_index=True)
    c = certify_pairs(human, judge, {}, alpha=ALPHA, delta=DELTA, order=["j1"])
    c2 = certify_pairs(human, both, {}, alpha=ALPHA, delta=DELTA, order=["j1", "j2"])
    assert c is not None and c2 is not None
    assert [s["delta"] for s in c2.stages] == [DELTA / 2, DELTA / 2]
    s1 = c2.stages[0]
    cal = [p for p, t in truth.items() if t["rated"]]
    n = sum(truth[p]["consistent"] for p in cal)
    assert s1["n_above"] == n and s1["upper_bound"] == pytest.approx(
        beta.ppf(1 - DELTA / 2, 1, n), abs=1e-12
    )
    # the second judge is calibrated only on the pairs the first left
    assert c2.stages[1]["n_calibration"] == len(cal) - n
