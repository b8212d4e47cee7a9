"""Reconciliation of judges with humans, tested on studies with a planted truth.

"Test the test": a judge that copies the human consensus agrees highly; the
same judge with its scores shuffled across items falls to the permutation
baseline; a judge planted to PASS where the humans FAIL on 30% of the items is
reported as lenient, and every planted contradiction is listed as a finding.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotator.domain.rubric import FAIL, PASS, parse_rubric
from annotator.domain.verdict import compile_rules
from annotator.ingest.rubrics import load_rubric
from annotator.stats.answers import consensus_table, human_answers, item_table
from annotator.stats.consensus import consensus, metric_specs
from annotator.stats.frames import JUDGEMENT_COLUMNS, StudyFrames
from annotator.stats.leave_one_out import leave_one_out
from annotator.stats.report_model import build_report

REPO = Path(__file__).resolve().parents[2]
UI = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
GENS = ["gen_a", "gen_b", "gen_c"]


def judgement_rows(
    item_ids, rater, answers: dict[str, list], session=None, position=None, reason=None
) -> pd.DataFrame:
    parts = []
    for metric, values in answers.items():
        parts.append(
            pd.DataFrame(
                {
                    "item_id": item_ids,
                    "rater": rater,
                    "metric": metric,
                    "value": list(values),
                    "reason": reason,
                    "created_at": None,
                    "session_id": session,
                    "position": position,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[JUDGEMENT_COLUMNS]


def make_items(n_cases: int, per_gen: int) -> pd.DataFrame:
    rows = []
    for c in range(n_cases):
        for g in GENS:
            for _ in range(per_gen):
                i = len(rows)
                rows.append(
                    {
                        "item_id": f"it{i:04d}",
                        "display_code": f"D{i:04d}",
                        "case_id": f"case{c:02d}",
                        "cell_id": f"cell{c:02d}",
                        "generator": g,
                        "slice": None,
                    }
                )
    return pd.DataFrame(rows)


def simulated_study(n_cases: int = 40, per_gen: int = 3, n_raters: int = 5, seed: int = 0):
    """ui_mockup study with a latent quality per item; returns frames and the mirror judge."""
    rng = np.random.default_rng(seed)
    items = make_items(n_cases, per_gen)
    n = len(items)
    q = rng.normal(0, 1, n)
    ids = items["item_id"].to_numpy()
    frames = []
    for r in range(n_raters):
        e = rng.normal(0, 0.35, (4, n))
        frames.append(
            judgement_rows(
                ids,
                f"rater{r}",
                {
                    "instruction_following": np.where(q + e[0] > 0, "PASS", "FAIL"),
                    "text_rendering": np.where(q + e[1] > -0.5, "PASS", "FAIL"),
                    "layout_hierarchy": np.clip(np.rint(2.5 + 1.3 * q + e[2]), 0, 5).astype(int),
                    "ui_affordance": np.clip(np.rint(3 + q + e[3]), 0, 5).astype(int),
                    "failure_tags": [("broken_layout",) if v < -0.8 else () for v in q + e[0]],
                },
                session=f"s{r}",
                position=rng.permutation(n),
                reason=f"reason of rater{r}",
            )
        )
    judgements = pd.concat(frames, ignore_index=True)
    return items, judgements


def mirror_judge(
    items: pd.DataFrame, judgements: pd.DataFrame, name: str = "mirror"
) -> pd.DataFrame:
    """A judge that answers the human majority (gates, tags) and the rounded median (scales)."""
    rows = []
    for metric, g in judgements.groupby("metric"):
        for item, a in g.groupby("item_id"):
            vals = a["value"].tolist()
            if metric in ("layout_hierarchy", "ui_affordance"):
                v = int(np.floor(np.median(vals) + 0.5))
            elif metric == "failure_tags":
                v = ("broken_layout",) if sum(bool(x) for x in vals) * 2 > len(vals) else ()
            else:
                v = "PASS" if vals.count("PASS") * 2 >= len(vals) else "FAIL"
            rows.append(
                {
                    "item_id": item,
                    "judge": name,
                    "metric": metric,
                    "value": v,
                    "reason": f"{name} says so",
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def planted():
    items, judgements = simulated_study()
    mirror = mirror_judge(items, judgements)
    rng = np.random.default_rng(1)
    # shuffled: the mirror's answers moved to other items, metric by metric
    shuffled = mirror.copy()
    shuffled["judge"] = "shuffled"
    perm = dict(zip(items["item_id"], rng.permutation(items["item_id"].to_numpy()), strict=True))
    shuffled["item_id"] = shuffled["item_id"].map(perm)
    # lenient: PASS where the humans FAIL, on 30% of all items
    lenient = mirror.copy()
    lenient["judge"] = "lenient"
    lenient["reason"] = "lenient says so"
    gate = lenient["metric"] == "instruction_following"
    fails = lenient.index[gate & (lenient["value"] == "FAIL")]
    flip = rng.choice(fails, size=int(0.3 * len(items)), replace=False)
    lenient.loc[flip, "value"] = "PASS"
    # far: a scale 3 points above every human on planted items
    far = mirror[mirror["metric"] == "layout_hierarchy"].copy()
    far["judge"] = "far"
    hi = judgements[judgements["metric"] == "layout_hierarchy"].groupby("item_id")["value"].max()
    low_items = hi[hi <= 2].index[:15]
    far.loc[far["item_id"].isin(low_items), "value"] = 5
    judge = pd.concat([mirror, shuffled, lenient, far], ignore_index=True)
    frames = StudyFrames(
        "planted",
        UI,
        items=items,
        judgements=judgements,
        judge_scores=judge,
        settings={"release_gate": {"verdict_pass_rate": 0.2, "layout_hierarchy": 9}},
    )
    report = build_report(frames, n_boot=1000, seed=0, n_perm=200)
    return {
        "frames": frames,
        "report": report,
        "flip": lenient.loc[flip, "item_id"].tolist(),
        "low_items": list(low_items),
    }


def test_mirror_judge_agrees_and_beats_the_permutation_baseline(planted) -> None:
    m = planted["report"]["metrics"]["instruction_following"]["judges"]["mirror"]
    assert m["alpha_vs_consensus"]["estimate"] == pytest.approx(1.0)
    assert m["exact_agreement"] == pytest.approx(1.0)
    assert abs(m["permutation_alpha"]["mean"]) < 0.05
    assert m["permutation_alpha"]["p_value"] == pytest.approx(1 / 201)
    s = planted["report"]["metrics"]["layout_hierarchy"]["judges"]["mirror"]
    assert s["alpha_vs_consensus"]["estimate"] > 0.95
    assert s["permutation_alpha"]["p_value"] < 0.01
    assert s["kendall_tau_b"]["estimate"] > 0.8
    assert s["alpha_with_judge_as_rater"]["estimate"] > s["alpha_humans_same_items"]["estimate"]
    assert s["human_range"]["position"] == "above"


def test_shuffled_judge_falls_to_the_permutation_baseline(planted) -> None:
    for key in ("instruction_following", "layout_hierarchy", "ui_affordance"):
        s = planted["report"]["metrics"][key]["judges"]["shuffled"]
        perm = s["permutation_alpha"]
        assert abs(perm["mean"]) < 0.05
        assert abs(s["alpha_vs_consensus"]["estimate"] - perm["mean"]) < 0.15
        assert (
            s["alpha_vs_consensus"]["low"] < 0.0 < s["alpha_vs_consensus"]["high"]
            or perm["p_value"] > 0.01
        )
        assert s["human_range"]["position"] == "below"
        mirror = planted["report"]["metrics"][key]["judges"]["mirror"]
        # a perfect mirror has alpha 1 in every resample: no zero-width interval is printed
        m_alpha = mirror["alpha_vs_consensus"]
        assert s["alpha_vs_consensus"]["estimate"] < (m_alpha["low"] or m_alpha["estimate"])


def test_lenient_judge_is_a_systematic_finding_with_item_findings(planted) -> None:
    report = planted["report"]
    sys_f = [
        f
        for f in report["systematic_findings"]
        if f["judge_name"] == "lenient" and f["metric"] == "instruction_following"
    ]
    assert len(sys_f) == 1 and sys_f[0]["kind"] == "lenient"
    assert sys_f[0]["mean_difference"]["low"] > 0
    # an odd number of raters: the mirror copies every median exactly, so no bias on the
    # metrics (the verdict of consensus answers may differ from the consensus of verdicts)
    assert not [
        f
        for f in report["systematic_findings"]
        if f["judge_name"] == "mirror" and f["metric"] != "verdict"
    ]
    found = [
        f
        for f in report["findings"]
        if f["judge_name"] == "lenient" and f["metric"] == "instruction_following"
    ]
    # expected: planted items whose human answers are a clear FAIL (>= 80% of >= 2 humans)
    j = planted["frames"].judgements
    g = j[j["metric"] == "instruction_following"].groupby("item_id")["value"]
    clear_fail = (g.apply(lambda v: (v == "FAIL").mean()) >= 0.8) & (g.size() >= 2)
    expected = {i for i in planted["flip"] if clear_fail[i]}
    assert {f["item_id"] for f in found} == expected
    assert len(expected) > 0.25 * len(planted["flip"])
    f = found[0]
    assert f["kind"] == "judge_pass_humans_fail" and f["judge"] == "PASS"
    assert f["display_code"].startswith("D") and f["case_id"].startswith("case")
    assert f["generator"] in GENS and f["judge_reason"] == "lenient says so"
    assert f["humans"].count("FAIL") >= 0.8 * len(f["human_answers"])
    assert {h["reason"] for h in f["human_answers"]} <= {f"reason of rater{r}" for r in range(5)}
    # findings are a listing by case and item, not a ranking
    # (metric and judge groups above a held-out human's rate come first, marked "excess")
    keys = [(not x["excess"], x["case_id"], x["display_code"]) for x in report["findings"]]
    assert keys == sorted(keys)
    base = {(b["metric"], b["judge_name"]): b for b in report["item_findings_baseline"]}
    lenient = base[("instruction_following", "lenient")]
    assert lenient["excess"] and lenient["judge_rate"] > lenient["held_out_human_rate"]
    assert found[0]["excess"]


def test_scale_judge_outside_human_range_is_a_finding(planted) -> None:
    found = [f for f in planted["report"]["findings"] if f["judge_name"] == "far"]
    assert {f["item_id"] for f in found} == set(planted["low_items"])
    assert {f["kind"] for f in found} == {"judge_above_human_range"}
    assert all(f["judge"] == "5" for f in found)


def test_verdict_from_rules_for_both_sides(planted) -> None:
    v = planted["report"]["verdict"]
    assert v["kind"] == "verdict" and v["human_alpha"]["estimate"] > 0.5
    # recompute one rater's verdict on one item with the domain rules
    j = planted["frames"].judgements
    one = j[(j["rater"] == "rater0") & (j["item_id"] == "it0000")]
    expected = compile_rules(UI).evaluate(dict(zip(one["metric"], one["value"], strict=True)))
    specs = metric_specs(UI)
    items = item_table(planted["frames"])
    ans = human_answers(planted["frames"], specs, items)
    got = ans[
        (ans["metric"] == "verdict") & (ans["rater"] == "rater0") & (ans["item_id"] == "it0000")
    ]
    assert expected in (PASS, FAIL)
    assert got["code"].iloc[0] == (1.0 if expected == PASS else 0.0)
    assert v["judges"]["mirror"]["alpha_vs_consensus"]["estimate"] > 0.8
    # judges that do not score every metric the rules use get no verdict
    assert "far" not in v["judges"]


def test_slices_and_pair_kappas(planted) -> None:
    s = planted["report"]["metrics"]["instruction_following"]
    by_case = s["judges"]["mirror"]["slices"]["by_case"]
    assert list(by_case) == sorted(by_case) and len(by_case) == 40
    assert list(s["judges"]["mirror"]["slices"]["by_generator"]) == GENS
    assert sum(c["n_items"] for c in by_case.values()) == 360
    pairs = s["rater_pairs"]
    assert len(pairs) == 10 and all(p["n"] == 360 for p in pairs.values())
    k = pairs["rater0 vs rater1"]["unweighted"]
    assert k["low"] < k["estimate"] < k["high"]
    assert s["gwet_ac1"]["low"] < s["gwet_ac1"]["estimate"] < s["gwet_ac1"]["high"]
    conf = s["judges"]["lenient"]["confusion"]
    assert conf["labels"] == ["FAIL", "PASS"] and conf["matrix"][0][1] > 0


def test_generators_hold_cases_fixed_and_gate_release(planted) -> None:
    g = planted["report"]["generators"]
    assert g["cases"] == sorted(g["cases"])
    gen = g["by_generator"]["gen_a"]
    assert list(gen["by_case"]) == sorted(gen["by_case"])
    overall = gen["overall"]["instruction_following"]
    cells = [c["instruction_following"]["estimate"] for c in gen["by_case"].values()]
    assert overall["estimate"] == pytest.approx(np.mean(cells))
    assert overall["low"] < overall["estimate"] < overall["high"]
    rg = gen["release_gate"]
    assert rg["checks"]["layout_hierarchy"]["pass"] is False and rg["pass"] is False


def test_cases_weigh_equally_and_small_cells_hide_shares() -> None:
    rub = parse_rubric(
        'id="t"\n[[metrics]]\nkey="ok"\nkind="gate"\n[verdict]\nrules=["ok == PASS"]\n'
    )
    items = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(10)],
            "display_code": None,
            "case_id": ["b_case"] + ["a_case"] * 9,
            "cell_id": None,
            "generator": "g",
            "slice": None,
        }
    )
    vals = ["PASS"] + ["FAIL"] * 9
    j = pd.concat([judgement_rows(items["item_id"], r, {"ok": vals}) for r in ("x", "y")])
    frames = StudyFrames("eq", rub, items=items, judgements=j, settings={"min_count_for_share": 5})
    g = build_report(frames, n_boot=200)["generators"]
    assert g["cases"] == ["a_case", "b_case"]
    gen = g["by_generator"]["g"]
    assert gen["overall"]["ok"]["estimate"] == pytest.approx(0.5)  # not 0.1
    assert gen["overall"]["verdict_pass_rate"]["estimate"] == pytest.approx(0.5)
    assert gen["by_case"]["a_case"]["ok"]["estimate"] == 0.0
    b = gen["by_case"]["b_case"]["ok"]
    assert b["estimate"] is None and "fewer than 5" in b["note"]


def test_consensus_flags_ties_instead_of_breaking_them() -> None:
    rub = parse_rubric(
        'id="t"\n[[metrics]]\nkey="ok"\nkind="gate"\n[[metrics]]\nkey="s"\n'
        'kind="scale"\nmin=1\nmax=5\n'
    )
    items = make_items(1, 1)
    ids = items["item_id"]
    j = pd.concat(
        [
            judgement_rows(ids, "a", {"ok": ["PASS", "PASS", "FAIL"], "s": [2, 3, 4]}),
            judgement_rows(ids, "b", {"ok": ["FAIL", "PASS", "cannot_judge"], "s": [3, 3, 5]}),
        ]
    )
    frames = StudyFrames("t", rub, items=items, judgements=j)
    table = consensus_table(frames).set_index(["item_id", "metric"])
    assert table.loc[("it0000", "ok"), "tie"] and pd.isna(table.loc[("it0000", "ok"), "value"])
    assert table.loc[("it0001", "ok"), "value"] == "PASS" and not table.loc[("it0001", "ok"), "tie"]
    assert table.loc[("it0002", "ok"), "n_cannot_judge"] == 1
    assert table.loc[("it0002", "ok"), "n"] == 1
    assert table.loc[("it0000", "s"), "value"] == "2.5" and table.loc[("it0000", "s"), "tie"]
    assert table.loc[("it0001", "s"), "value"] == "3" and not table.loc[("it0001", "s"), "tie"]
    spec = metric_specs(rub)[0]
    c = consensus(pd.DataFrame({"idx": [0, 0, 0, 1], "code": [1.0, 1.0, 0.0, np.nan]}), spec)
    assert c.loc[0, "value"] == 1.0 and c.loc[0, "clear_share"] == pytest.approx(2 / 3)
    assert c.loc[1, "n"] == 0 and c.loc[1, "n_cannot_judge"] == 1


@pytest.mark.parametrize("which", [0, 1, 4])  # a gate, a 1-5 scale, a tag
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("spread", [1, 1000])  # item rows; indexes too far apart for a table
def test_consensus_from_the_value_counts_is_the_consensus_counted(
    which: int, seed: int, spread: int
) -> None:
    """The humans' section hands consensus() alpha's value counts instead of letting it count
    the answers again: every column the same, bit for bit (items with cannot-judge answers
    only, lone answers, ties, sparse item indexes); a domain out of order is counted apart."""
    from annotator.stats.agreement import value_counts
    from annotator.stats.distinct import distinct
    from annotator.stats.reconcile import _counted_answers

    spec = metric_specs(UI)[which]
    dom = spec.domain()
    rng = np.random.default_rng(seed)
    n = 3_000
    idx = np.sort(rng.choice(np.arange(0, 4_000, 3), n)).astype(np.int64) * spread
    code = rng.choice(dom, n)
    code[rng.random(n) < 0.15] = np.nan  # cannot judge
    code[idx == idx[7]] = np.nan  # an item with cannot-judge answers only
    h = pd.DataFrame({"idx": idx, "code": code})
    items_of = distinct(idx)
    vc = value_counts(idx, code, dom)
    counted = _counted_answers(vc)
    assert counted is not None
    pd.testing.assert_frame_equal(
        consensus(h, spec, items_of, counted), consensus(h, spec, items_of), check_exact=True
    )
    backwards = value_counts(idx, code, dom[::-1])
    assert len(dom) < 2 or _counted_answers(backwards) is None


def test_leave_one_out_consensus() -> None:
    spec = metric_specs(UI)[1]  # layout_hierarchy, a scale
    h = pd.DataFrame(
        {
            "idx": [0, 0, 0, 1, 1],
            "rater": ["a", "b", "c", "a", "b"],
            "code": [1.0, 3.0, 4.0, 2.0, 5.0],
        }
    )
    loo = leave_one_out(h, spec).set_index(["idx", "rater"])
    assert loo.loc[(0, "a"), "loo"] == 3.5 and loo.loc[(0, "a"), "agree"] == 0.0
    assert loo.loc[(0, "b"), "loo"] == 2.5 and loo.loc[(0, "b"), "agree"] == 1.0
    assert loo.loc[(1, "a"), "loo"] == 5.0
    gate = metric_specs(UI)[0]
    g = pd.DataFrame({"idx": [0, 0, 0], "rater": ["a", "b", "c"], "code": [1.0, 1.0, 0.0]})
    lg = leave_one_out(g, gate).set_index("rater")
    assert np.isnan(lg.loc["a", "loo"])  # the others tie 1-1: no consensus
    assert lg.loc["c", "loo"] == 1.0 and lg.loc["c", "agree"] == 0.0


def test_leave_one_out_positions_are_present_positions_of_the_kept_answers() -> None:
    """The positions the leave-one-out step hands the raters' alphas are what
    present_positions finds among the answers with a consensus and their consensus, for every
    answer kept and for the kept ones alone: a value only lone or tied answers took drops out
    and the values above it move down."""
    from annotator.stats.distinct import present_positions
    from annotator.stats.leave_one_out import left_out

    gate = metric_specs(UI)[0]
    lone = (np.array([0, 0, 1, 1, 2]), np.array([0.0, 0.0, 0.0, 0.0, 1.0]))  # item 2: alone
    rng = np.random.default_rng(5)
    n = rng.integers(1, 5, 300)
    drawn = (np.repeat(np.arange(300), n), rng.integers(0, 2, int(n.sum())).astype(float))
    full = (np.repeat(np.arange(50), 4), np.tile([0.0, 0.0, 0.0, 1.0], 50))  # no tie, none alone
    for idx, code in (lone, drawn, full):
        left = left_out(idx, code, gate)
        has = ~np.isnan(left.val)
        want = present_positions(gate.domain(), code[has], left.val[has])
        assert want is not None
        for got in [left.positions(has)] + ([left.positions(None)] if has.all() else []):
            assert got is not None
            assert np.array_equal(got[0], want[0])
            assert all(np.array_equal(a, b) for a, b in zip(got[1], want[1], strict=True))
    assert not np.isnan(left_out(*full, gate).val).any()
    assert np.array_equal(left_out(*lone, gate).positions(np.arange(5) < 4)[0], [0])
    scale = metric_specs(UI)[1]  # a median: no positions found, the long way finds them
    assert left_out(*drawn, scale).positions(None) is None


def test_the_cells_columns_are_the_rows_columns() -> None:
    """The others' counts of every (item, own value) cell, made as columns, are count_columns'
    columns and totals of the rows `counts[:, None, :] - eye(V)`, number for number (empty
    items and every domain size the rubrics have)."""
    from annotator.stats.leave_one_out import cell_columns
    from annotator.stats.package_alpha import count_columns

    rng = np.random.default_rng(11)
    for V in (1, 2, 3, 6, 11):
        counts = rng.integers(0, 4, (257, V)).astype(float)
        counts[rng.random(257) < 0.2] = 0.0  # items nobody answered
        want_cols, want_m = count_columns((counts[:, None, :] - np.eye(V)).reshape(-1, V))
        got_cols, got_m = cell_columns(counts)
        assert np.array_equal(got_cols, want_cols) and np.array_equal(got_m, want_m)


def test_leave_one_out_is_the_others_majority_or_median_answer_by_answer() -> None:
    """Against the definition, one answer at a time: the majority of the others' answers (none
    at a tie) for a gate, their median for a scale; on random items with 1 to 6 raters."""
    from collections import Counter
    from statistics import median

    rng = np.random.default_rng(11)
    rows = []
    for i in range(400):
        for r in range(int(rng.integers(1, 7))):
            rows.append((i, f"r{r}", int(rng.integers(0, 2)), int(rng.integers(0, 6))))
    answers = pd.DataFrame(rows, columns=["idx", "rater", "code", "scale"])
    for spec, column in ((metric_specs(UI)[0], "code"), (metric_specs(UI)[1], "scale")):
        h = answers[["idx", "rater", column]].rename(columns={column: "code"})
        h["code"] = h["code"].astype(float)
        got = leave_one_out(h, spec)
        for (i, rater), row in got.set_index(["idx", "rater"]).iterrows():
            others = h[(h["idx"] == i) & (h["rater"] != rater)]["code"].tolist()
            if not others:
                want = np.nan
            elif spec.nominal:
                (top, n), *rest = Counter(others).most_common()
                want = np.nan if rest and rest[0][1] == n else top
            else:
                want = median(others)
            assert (np.isnan(want) and np.isnan(row["loo"])) or row["loo"] == want, (i, rater)
            if not np.isnan(want):
                close = row["code"] == want if spec.nominal else abs(row["code"] - want) <= 0.5
                assert row["agree"] == float(close)


def test_fatigue_shows_a_rater_who_tires() -> None:
    items, judgements = simulated_study(n_cases=60, per_gen=2, n_raters=4, seed=3)
    rng = np.random.default_rng(4)
    j = judgements.copy()
    tired = (j["rater"] == "rater3") & (j["position"] >= len(items) // 2)
    gates = tired & j["metric"].isin(["instruction_following", "text_rendering"])
    j.loc[gates, "value"] = rng.choice(["PASS", "FAIL"], gates.sum())
    scales = tired & j["metric"].isin(["layout_hierarchy", "ui_affordance"])
    j.loc[scales, "value"] = rng.integers(0, 6, scales.sum())
    frames = StudyFrames("tired", UI, items=items, judgements=j)
    r = build_report(frames, n_boot=500, seed=0)["raters"]
    tired_change = r["rater3"]["fatigue"]["change"]
    assert tired_change["high"] < 0
    assert r["rater0"]["fatigue"]["change"]["low"] < 0 < r["rater0"]["fatigue"]["change"]["high"]
    q = r["rater3"]["fatigue"]["by_position_quarter"]
    assert q[0]["estimate"] > q[3]["estimate"]
    ag = r["rater3"]["agreement_with_consensus"]["instruction_following"]
    assert (
        ag["exact_agreement"]["estimate"]
        < r["rater0"]["agreement_with_consensus"]["instruction_following"]["exact_agreement"][
            "estimate"
        ]
    )


def test_judge_on_its_own_scale_gets_correlations_not_alpha() -> None:
    items, judgements = simulated_study(n_cases=20, per_gen=2, n_raters=3, seed=5)
    mean = judgements[judgements["metric"] == "layout_hierarchy"].groupby("item_id")["value"].mean()
    judge = pd.DataFrame(
        {
            "item_id": mean.index,
            "judge": "prob",
            "metric": "layout_hierarchy",
            "value": (mean / 5.0 * 0.9 + 0.05).to_numpy(),
            "reason": None,
        }
    )
    frames = StudyFrames("own", UI, items=items, judgements=judgements, judge_scores=judge)
    s = build_report(frames, n_boot=300)["metrics"]["layout_hierarchy"]["judges"]["prob"]
    assert s["same_scale"] is False
    assert (
        s["alpha_vs_consensus"]["estimate"] is None and "scale" in s["alpha_vs_consensus"]["note"]
    )
    assert s["cohen_kappa"]["quadratic"]["estimate"] is None
    assert s["permutation_alpha"]["mean"] is None
    assert s["pearson"]["estimate"] == pytest.approx(1.0)
    assert s["kendall_tau_b"]["estimate"] == pytest.approx(1.0)
    assert s["permutation_pearson"]["p_value"] < 0.01


def test_cannot_judge_is_counted_but_left_out() -> None:
    items, judgements = simulated_study(n_cases=10, per_gen=2, n_raters=3, seed=6)
    j = judgements.copy()
    pick = j.index[(j["metric"] == "instruction_following")][:7]
    j.loc[pick, "value"] = "cannot_judge"
    frames = StudyFrames("cj", UI, items=items, judgements=j)
    m = build_report(frames, n_boot=200)["metrics"]["instruction_following"]
    assert m["n_cannot_judge"] == 7 and m["n_judgements"] == 180
    full = build_report(StudyFrames("cj", UI, items=items, judgements=judgements), n_boot=200)[
        "metrics"
    ]["instruction_following"]
    assert m["human_alpha"]["estimate"] != full["human_alpha"]["estimate"]


@pytest.mark.parametrize("categorical", [False, True])
def test_metric_rows_are_each_metrics_answers_in_table_order(categorical: bool) -> None:
    """The raters', generators' and certified figures read a metric's answers through these
    positions: the rows a filter on the metric (and a known code) gives, whether the table
    lists one metric after another or mixes them, with a metric's name as a category or as
    text."""
    from annotator.stats.answers import at_rows, metric_rows

    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        names = rng.choice(["b", "a", "c"], n)
        metric = (
            pd.Categorical(names, categories=["c", "b", "a", "unused"])
            if categorical
            else pd.Series(names, dtype=object)
        )
        code = np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 3, n).astype(float))
        if rng.random() < 0.5:  # one metric after another, as human_answers writes them
            order = np.argsort(names, kind="stable")
            metric, code = pd.Series(metric)[order].reset_index(drop=True), code[order]
            names = names[order]
        table = pd.DataFrame({"metric": metric, "code": code})
        for coded_only in (True, False):
            got = metric_rows(table, coded_only=coded_only)
            coded = ~np.isnan(code) if coded_only else np.ones(n, dtype=bool)
            want = {k: np.flatnonzero((names == k) & coded) for k in ("a", "b", "c")}
            assert set(got) == {k for k, rows in want.items() if len(rows)}
            for k, rows in got.items():
                assert np.array_equal(rows, want[k]), k
                # and the values at those rows: a read-only view where they are one run
                values = at_rows(code, rows)
                assert np.array_equal(values, code[rows], equal_nan=True)
                if rows[-1] - rows[0] + 1 == len(rows):
                    assert np.shares_memory(values, code) and not values.flags.writeable
                else:
                    assert not np.shares_memory(values, code)


@pytest.mark.parametrize("categorical", [True, False])
def test_split_by_metric_is_the_groupby(categorical: bool) -> None:
    """Four sections split a coded table by metric: the same frames, in the same order, with
    the same index and dtypes as `dict(tuple(groupby("metric", sort=False)))`, whether the
    table lists one metric after another (slices) or mixes them (rows taken)."""
    from annotator.stats.answers import split_by_metric

    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        names = rng.choice(["b", "a", "c"], n)
        if rng.random() < 0.5:
            names = names[np.argsort(names, kind="stable")]
        metric = (
            pd.Categorical(names, categories=["c", "b", "a", "unused"])
            if categorical
            else pd.Series(names, dtype=object)
        )
        table = pd.DataFrame(
            {"metric": metric, "code": rng.integers(0, 3, n).astype(float)},
            index=rng.permutation(n) + 100,
        )
        got = split_by_metric(table)
        want = dict(tuple(table.groupby("metric", sort=False, observed=True))) if n else {}
        assert list(got) == [str(k) for k in want]
        for key, frame in want.items():
            pd.testing.assert_frame_equal(got[str(key)], frame)


def test_fatigue_finds_answers_by_table_as_by_search(monkeypatch) -> None:
    """The raters' fatigue figures count each answer in a table of every (item, rater) read at
    the judgements' keys where it is small: the same report, bit for bit, as the binary search
    a sparse study (many raters, few per item) takes; a rater missing from the positions too."""
    from annotator.stats import fatigue

    items, judgements = simulated_study(n_cases=40, per_gen=2, n_raters=5, seed=7)
    j = judgements.copy()
    # one rater's answers without a session: in `pooled`, not among the positioned judgements
    j.loc[j["rater"] == "rater4", ["session_id", "position"]] = None
    frames = StudyFrames("places", UI, items=items, judgements=j)
    exact = build_report(frames, n_boot=200, seed=1)
    by_table = json.dumps(exact["raters"], sort_keys=True)
    # a live estimate takes the judgements unsorted where the table finds them
    live = build_report(frames, intervals_from=exact, as_of="x")["raters"]
    live_by_table = json.dumps(live, sort_keys=True)
    assert '"early"' in by_table and '"early"' in live_by_table
    monkeypatch.setattr(fatigue, "_by_key", lambda *_: False)
    by_search = json.dumps(build_report(frames, n_boot=200, seed=1)["raters"], sort_keys=True)
    assert by_table == by_search
    live = build_report(frames, intervals_from=exact, as_of="x")["raters"]
    assert json.dumps(live, sort_keys=True) == live_by_table


def test_split_by_holds_each_labels_positions_in_order() -> None:
    from annotator.stats.reconcile import _split_by

    rng = np.random.default_rng(2)
    for high in (1, 5, 40_000, 2**40):  # slices, then labels too wide for 16 bits
        labels = rng.integers(0, high, 5_000)
        got = _split_by(labels)
        assert sorted(got) == sorted(set(labels.tolist()))
        for label, at in got.items():
            assert np.array_equal(at, np.flatnonzero(labels == label))
    assert _split_by(np.zeros(0, dtype=np.int64)) == {}
