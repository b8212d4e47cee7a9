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
from certified_pair_models import (
    DESIGNS,
    SIZES,
    PairPool,
    confidence_and_disagreement,
    simulate_pair_pac,
)
from scipy.stats import beta, binomtest

from annotator.stats.certified_pairs import (
    CONSISTENT,
    INCONSISTENT,
    ONE_ORDER,
    PairVotes,
    certify_pairs,
)
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


def test_a_pair_only_humans_voted_on_has_its_decision() -> None:
    human, judge, truth = simulated(60, p_consistent=1.0)
    judge = judge[judge["pair_id"] != "p000"]  # rated, but the judge never voted on it
    c = certify_pairs(human, judge, {}, alpha=ALPHA, delta=DELTA, order=None)
    assert c is not None
    dec = c.decisions.set_index("pair_id")
    assert len(dec) == 60 and dec.loc["p000", "decision"] == "rated"
    assert dec.loc["p000", "code"] == ("a" if truth["p000"]["winner"].endswith("-a") else "b")
    assert dec.loc["p000", "item_a"] == "p000-a" and c.section["already_rated"] == 30
    assert c.judges["j1"]["n_calibration"] == 29  # the judge has no vote there to calibrate


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
    t = PairVotes.of(judge.drop(index=second)).table.set_index("pair_id")["conf"]
    assert (t.iloc[:5] == ONE_ORDER).all() and (t.iloc[5:] == CONSISTENT).all()
    assert set(confs["decision"]) == {"rated", "escalated"}


def test_inconsistent_orders_are_the_lowest_confidence_and_a_tie() -> None:
    human, judge, truth = simulated(20, p_consistent=0.0)
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


# ---- a real study: the report, `assign --escalated`, `export labels` ------------------------

RUBRIC = """id = "cpairs"
title = "Certified pairs test"
instructions = "Judge the text."
[[metrics]]
key = "ok"
kind = "gate"
label = "Meets the brief"
"""
N_CASES = 200


def _csv(path: Path, header: tuple, rows: list[tuple]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def study(tmp_path):
    """200 cases, one output of gen-a and one of gen-b each (pair p000 is case 0's); three
    raters vote on the first 100 pairs (the last 5 of them split 1-1), a judge on all 200 in
    both orders, consistent on about 70% (simulated(), the same law)."""
    from annotator.services.study import Study

    rubric = tmp_path / "rubric.toml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    st = Study.create(tmp_path / "study", rubric)
    manifest = tmp_path / "items.jsonl"
    lines = []
    for c in range(N_CASES):
        for side, gen in (("a", "gen-a"), ("b", "gen-b")):
            lines.append(
                json.dumps(
                    {
                        "item_id": f"p{c:03d}-{side}",
                        "case_id": f"case{c:03d}",
                        "prompt": f"Write about {c}",
                        "generator": gen,
                        "images": [],
                        "text": f"output {c}{side}",
                    }
                )
            )
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    st.import_items(manifest)
    human, judge, truth = simulated(N_CASES, p_consistent=0.7, seed=7, unclear=5)
    cols = ("pair_id", "item_left", "item_right", "rater", "choice")
    st.import_pairs(_csv(tmp_path / "pairs.csv", cols, list(human[list(cols)].itertuples(False))))
    st.import_pairs(
        _csv(tmp_path / "judge.csv", cols, list(judge[list(cols)].itertuples(False))), judges=True
    )
    yield st, truth
    st.close()


def _pair_assignments(st) -> dict[str, int]:
    from sqlalchemy import func, select

    from annotator.store.models_pairs import Pair
    from annotator.store.models_team import PairAssignment

    with st.db.read() as s:
        return {
            str(pid): int(n)
            for pid, n in s.execute(
                select(Pair.pair_id, func.count())
                .join(PairAssignment, PairAssignment.pair_pk == Pair.id)
                .group_by(Pair.pair_id)
            )
        }


def test_the_report_section_and_its_views(study) -> None:
    from annotator.reports.csv_report import report_tables
    from annotator.reports.section_certified import certified_section
    from annotator.reports.view_certified import certified_view
    from annotator.services.escalation import certification

    st, truth = study
    cert = certification(st)
    sec = cert.section
    b = sec["judges"]["j1"]["pair_vote"]
    cal = [p for p, t in truth.items() if t["rated"] and not t.get("unclear")]
    n = sum(truth[p]["consistent"] for p in cal)
    assert b["threshold"] == CONSISTENT and (b["n_above"], b["k_disagree_above"]) == (n, 0)
    assert b["calibration"] == "all pairs humans voted on (assumed exchangeable)"
    todo = [p for p, t in truth.items() if not t["rated"]]
    pairs = sec["pairs"]
    assert pairs["accepted"] == sum(truth[p]["consistent"] for p in todo)
    assert pairs["escalated"] == len(todo) - pairs["accepted"]
    assert pairs["already_rated"] == N_CASES - len(todo) and pairs["n_unclear"] == 5
    assert len(pairs["decisions"]) == N_CASES
    assert sec["split"]["pair_vote"]["accepted"] == {"j1": pairs["accepted"]}
    assert [s["metric"] for s in sec["cascade"]] == ["pair_vote"]
    json.dumps(sec)  # JSON-safe
    view = certified_view({"certified": sec, "conformal_alignment": cert.conformal})
    assert view is not None
    assert any(r["judge"] == "j1" and r["metric"] == "pair votes" for r in view["judges"])
    assert f"{pairs['accepted']} pairs decided by the judges" in view["pair_split"]
    assert view["pair_order"] == ["j1"] and view["order"] == []
    blocks = certified_section({"certified": view}).blocks
    assert any("pairs decided by the judges" in getattr(x, "text", "") for x in blocks)
    tables = report_tables({"certified": sec, "conformal_alignment": cert.conformal})
    rows = tables["certified"]
    assert ((rows["metric"] == "pair_vote") & (rows["judge"] == "j1")).any()
    dec = tables["certified_pairs"]
    assert len(dec) == N_CASES and set(dec["decision"]) == {"accepted", "escalated", "rated"}


def test_assign_escalated_deals_exactly_the_escalated_pairs_and_labels(study, tmp_path, capsys):
    from annotator.cli import main
    from annotator.services.escalation import certification
    from annotator.services.study import Study

    st, truth = study
    where = str(st.folder)
    cert = certification(st)
    d = cert.pair_decisions
    escalated = set(d.loc[d["decision"] == "escalated", "pair_id"])
    assert escalated == {p for p, t in truth.items() if not t["rated"] and not t["consistent"]}
    st.close()
    # without --pair-overlap the pairs are named, not dealt (the overlap options keep their sense)
    assert main(["assign", "--study", where, "--escalated", "--overlap", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{len(escalated)} escalated pairs not dealt" in out
    st2 = Study.open(where)
    try:
        assert _pair_assignments(st2) == {}
    finally:
        st2.close()
    args = ["assign", "--study", where, "--escalated", "--overlap", "1", "--pair-overlap", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"escalated: {len(escalated)} pairs no judge may decide" in out
    st3 = Study.open(where)
    try:
        dealt = _pair_assignments(st3)
    finally:
        st3.close()
    assert set(dealt) == escalated and set(dealt.values()) == {2}
    out_csv = tmp_path / "labels.csv"
    assert main(["export", "labels", "--study", where, "--out", str(out_csv)]) == 0
    with out_csv.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["metric"] == "pair_vote"]
    assert len(rows) == N_CASES
    for r in rows:
        t = truth[r["pair_id"]]
        if t["rated"]:
            if t.get("unclear"):
                assert r["source"] == "unresolved" and r["value"] == ""
            else:
                assert r["source"] == "clear_consensus" and r["value"] == t["winner"]
                assert r["n_raters"] == "3"
        elif t["consistent"]:
            assert r["source"] == "judge" and r["value"] == t["winner"]
            assert r["judge"] == "j1@import" and r["mode"] == "pac"
            assert float(r["confidence"]) == CONSISTENT == float(r["threshold"])
            assert "alpha=0.1 delta=0.1" in r["guarantee"]
            assert r["generator"] == ("gen-a" if t["winner"].endswith("-a") else "gen-b")
        else:
            assert r["source"] == "escalated" and r["value"] == ""


# ---- coverage by simulation (model CP, certified_pair_models.py; validity.md) ---------------


def test_the_model_s_rules_are_the_code_s() -> None:
    """The simulation derives confidence and disagreement itself: on 300 drawn pairs turned into
    votes, PairVotes and the humans' majority give the same."""
    design = DESIGNS[2]  # hard pairs, one order on some: every confidence occurs
    truth, p1, p2 = design.draw(np.random.default_rng(11), 300)
    conf, dis = confidence_and_disagreement(truth, p1, p2)
    item = lambda i, x: f"p{i:03d}-{'ab'[x]}"  # noqa: E731
    judge = []
    for i in range(300):
        a, b, pid = item(i, 0), item(i, 1), f"p{i:03d}"
        judge.append(_pick(pid, a, b, "j1", item(i, p1[i])))
        if p2[i] >= 0:
            judge.append(_pick(pid, b, a, "j1", item(i, p2[i])))
    t = PairVotes.of(pd.DataFrame(judge, columns=PAIR_COLUMNS)).table.set_index("pair_id")
    ids = [f"p{i:03d}" for i in range(300)]
    assert np.array_equal(t.loc[ids, "conf"].to_numpy(dtype=float), conf)
    ref = np.where(truth == 0, "a", "b")
    assert np.array_equal(t.loc[ids, "code"].to_numpy(dtype=object) != ref, dis)
    assert set(conf) == {CONSISTENT, ONE_ORDER, INCONSISTENT}


def _not_above(k: int, n: int, level: float) -> bool:
    return binomtest(k, n, level, alternative="greater").pvalue > 0.01


def test_fast_check_the_pair_guarantee() -> None:
    by = {d.name: d for d in DESIGNS}
    good = simulate_pair_pac(by["good"], 200, 200)
    assert good.accepted > 150 and good.violations == 0
    chance = simulate_pair_pac(by["chance"], 1000, 100)
    assert chance.accepted == 0


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=[d.name for d in DESIGNS])
def test_realized_pair_agreement_holds_in_1_minus_delta_of_runs(design) -> None:
    pool = PairPool.of(design)
    for n in SIZES:
        t = simulate_pair_pac(design, n, 1000, alpha=ALPHA, delta=DELTA, pool=pool)
        assert t.runs == 1000
        assert _not_above(t.violations, t.runs, DELTA), (design.name, n, t)
        if design.name == "chance":
            assert t.accepted == 0


def test_the_dataset_card_states_the_pairs_split(study, tmp_path) -> None:
    from annotator.cli import main

    st, truth = study
    where = str(st.folder)
    st.close()
    hf = tmp_path / "hf"
    assert main(["export", "hf", "--study", where, "--out", str(hf), "--boot", "10"]) == 0
    card = (hf / "README.md").read_text(encoding="utf-8")
    todo = [p for p, t in truth.items() if not t["rated"]]
    n_acc = sum(truth[p]["consistent"] for p in todo)
    assert "Pairs (metric `pair_vote`" in card
    assert f"{n_acc} decided by the judges" in card and f"{len(todo) - n_acc} escalated" in card


def test_a_recorded_pair_sample_is_the_calibration_set_on_a_study(study) -> None:
    from annotator.services.escalation import certification
    from annotator.services.sampling import draw_pairs

    st, truth = study
    sample, _pks, _line = draw_pairs(st, n=120, seed=3)
    drawn = set(sample["items"])
    assert len(drawn) == 120 and drawn <= set(truth)
    pairs = certification(st).section["pairs"]
    rated = {p for p, t in truth.items() if t["rated"]}
    assert pairs["calibration"] == "random pair sample"
    assert pairs["n_calibration"] == len(drawn & rated)
    cal = [p for p in drawn & rated if not truth[p].get("unclear")]
    b = certification(st).section["judges"]["j1"]["pair_vote"]
    assert b["n_calibration"] == len(cal)
    assert b["n_above"] == sum(truth[p]["consistent"] for p in cal)
    # raters' votes outside the sample still make their pairs already rated
    assert pairs["already_rated"] == len(rated)


def test_in_conformal_mode_the_pairs_still_follow_the_pac_rule(study) -> None:
    from annotator.services.escalation import certification, label_rows

    st, truth = study
    before = certification(st).pair_decisions
    st.db.set_setting("certified_mode", "conformal_alignment")
    cert = certification(st)
    assert cert.conformal["decides"]
    assert cert.pair_decisions.equals(before)
    rows = [r for r in label_rows(st) if r["metric"] == "pair_vote" and r["source"] == "judge"]
    assert rows and all(r["mode"] == "pac" for r in rows)
    assert all(r["guarantee"].startswith("Trust or Escalate") for r in rows)


def test_consistently_wrong_pairs_count_against_the_threshold() -> None:
    human, judge, truth = simulated(400, p_consistent=0.7, seed=9)
    cal = [p for p, t in truth.items() if t["rated"]]
    wrong = [p for p in cal if truth[p]["consistent"]][:4]
    for p in wrong:  # both orders pick the other item: consistent, and wrong
        rows = judge["pair_id"] == p
        judge.loc[rows, "choice"] = judge.loc[rows, "choice"].map(
            {"left": "right", "right": "left"}
        )
    c = certify_pairs(human, judge, {}, alpha=ALPHA, delta=DELTA, order=None)
    assert c is not None
    b = c.judges["j1"]
    n = sum(truth[p]["consistent"] for p in cal)
    assert (b["n_above"], b["k_disagree_above"]) == (n, 4) and b["threshold"] == CONSISTENT
    assert b["upper_bound"] == pytest.approx(beta.ppf(1 - DELTA, 4 + 1, n - 4), abs=1e-12)
