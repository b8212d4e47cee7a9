"""build_report on real data (TIFA, PandaLM) and the JSON contract of docs/design.md 5.5."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tifa_reference import DSG_KENDALL, HUMAN_ALPHA, TIFA_PUBLISHED

from annotator.domain.rubric import parse_rubric
from annotator.ingest.rubrics import load_rubric
from annotator.stats.frames import ANCHOR_COLUMNS, JUDGEMENT_COLUMNS, PAIR_COLUMNS, StudyFrames
from annotator.stats.report_model import build_report

DATA = Path(__file__).resolve().parents[1] / "data"
REPO = Path(__file__).resolve().parents[2]
TIFA_RUBRIC = parse_rubric(
    'id = "tifa"\ntitle = "TIFA faithfulness"\n[[metrics]]\nkey = "faithfulness"\nkind = "scale"\n'
    "min = 1\nmax = 5\n"
)


def tifa_frames(ratings_file: str) -> StudyFrames:
    """A StudyFrames built straight from the TIFA CSV files (items, ratings, judges)."""
    items = pd.read_json(DATA / "tifa" / "items.jsonl", lines=True)
    items = pd.DataFrame(
        {
            "item_id": items["item_id"],
            "display_code": [f"T{i:03d}" for i in range(len(items))],
            "case_id": items["case_id"],
            "cell_id": items["case_id"],
            "generator": items["generator"],
            "slice": None,
        }
    )
    r = pd.read_csv(DATA / "tifa" / ratings_file, dtype={"rater": str})
    judgements = r.assign(reason=None, created_at=None, session_id=None, position=None)
    judge = pd.read_csv(DATA / "tifa" / "judge.csv", keep_default_na=False)
    return StudyFrames(
        "tifa",
        TIFA_RUBRIC,
        items=items,
        judgements=judgements[JUDGEMENT_COLUMNS],
        judge_scores=judge,
    )


@pytest.fixture(scope="module")
def tifa_report() -> dict:
    return build_report(tifa_frames("ratings.csv"), n_boot=1000, seed=0)


def test_tifa_human_alphas_match_the_readme(tifa_report) -> None:
    m = tifa_report["metrics"]["faithfulness"]
    assert m["kind"] == "scale" and m["level"] == "ordinal"
    alpha = HUMAN_ALPHA["ratings.csv"]
    assert m["human_alpha"]["estimate"] == pytest.approx(alpha["ordinal"], abs=1e-12)
    assert m["human_alpha_interval"]["estimate"] == pytest.approx(alpha["interval"], abs=1e-12)
    assert m["human_alpha_nominal"]["estimate"] == pytest.approx(alpha["nominal"], abs=5e-7)
    assert (m["n_items"], m["n_raters"], m["n_judgements"]) == (800, 2, 1600)
    for key in ("human_alpha", "human_alpha_interval", "human_alpha_nominal"):
        e = m[key]
        assert e["low"] < e["estimate"] < e["high"] and e["n"] == 800


def test_tifa_published_judge_correlations(tifa_report) -> None:
    judges = tifa_report["metrics"]["faithfulness"]["judges"]
    published = TIFA_PUBLISHED
    assert sorted(judges) == sorted(published)
    for name, (r, tau) in published.items():
        j = judges[name]
        assert j["n_items"] == 800
        assert j["pearson"]["estimate"] == pytest.approx(r, abs=1e-12)
        assert j["kendall_tau_b"]["estimate"] == pytest.approx(tau, abs=1e-12)
        assert j["pearson"]["low"] < r < j["pearson"]["high"]
        # the judges score in [0, 1] or raw CLIPScore: no alpha on a common scale
        assert j["alpha_vs_consensus"]["estimate"] is None and j["alpha_vs_consensus"]["note"]
        assert j["mean_difference"]["estimate"] is None
        assert j["permutation_pearson"]["p_value"] < 0.01
        assert abs(j["permutation_pearson"]["mean"]) < 0.05
    assert tifa_report["findings"] == []  # judges off the human scale cannot contradict by value


def test_tifa_dsg_ratings() -> None:
    report = build_report(tifa_frames("ratings_dsg.csv"), n_boot=300, seed=0)
    m = report["metrics"]["faithfulness"]
    alpha = HUMAN_ALPHA["ratings_dsg.csv"]
    assert m["human_alpha"]["estimate"] == pytest.approx(alpha["ordinal"], abs=1e-12)
    assert m["human_alpha_interval"]["estimate"] == pytest.approx(alpha["interval"], abs=1e-12)
    assert m["human_alpha_nominal"]["estimate"] == pytest.approx(alpha["nominal"], abs=5e-7)
    assert (m["n_raters"], m["n_judgements"]) == (5, 3995)
    for name, tau in DSG_KENDALL.items():
        assert m["judges"][name]["kendall_tau_b"]["estimate"] == pytest.approx(tau, abs=5e-7)
    assert len(m["rater_pairs"]) == 10
    for r in report["raters"].values():
        assert r["n_judgements"] in (798, 799, 800)
        assert r["agreement_with_consensus"]["faithfulness"]["alpha"]["estimate"] > 0.5


CONTRACT_METRIC = {
    "kind",
    "level",
    "n_items",
    "n_raters",
    "n_judgements",
    "human_alpha",
    "human_alpha_interval",
    "judges",
}
CONTRACT_JUDGE = {
    "n_items",
    "alpha_vs_consensus",
    "alpha_with_judge_as_rater",
    "permutation_alpha",
    "exact_agreement",
    "mean_difference",
    "pearson",
    "spearman",
    "kendall_tau_b",
}
ESTIMATE = {"estimate", "low", "high"}


def check_json_clean(x, path="report") -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            assert isinstance(k, str), path
            check_json_clean(v, f"{path}.{k}")
        if "estimate" in x and x["estimate"] is None:
            assert x.get("note"), f"{path}: undefined estimate without a note"
    elif isinstance(x, list):
        for i, v in enumerate(x):
            check_json_clean(v, f"{path}[{i}]")
    else:
        assert x is None or type(x) in (str, int, float, bool), f"{path}: {type(x)}"
        if type(x) is float:
            assert math.isfinite(x), path


def check_contract(report: dict) -> None:
    assert {"study", "rubric", "metrics", "findings", "raters", "pairwise"} <= set(report)
    assert set(report["rubric"]) >= {"id", "version"}
    for m in report["metrics"].values():
        assert CONTRACT_METRIC <= set(m)
        assert ESTIMATE <= set(m["human_alpha"]) and ESTIMATE <= set(m["human_alpha_interval"])
        for j in m["judges"].values():
            assert CONTRACT_JUDGE <= set(j)
            assert {"mean", "p_value"} <= set(j["permutation_alpha"])
    for f in report["findings"]:
        assert {"item_id", "metric", "humans", "judge", "kind"} <= set(f)
    for r in report["raters"].values():
        assert {"n_judgements", "anchors", "drift"} <= set(r)
        assert {"flagged", "metric", "direction", "first_flag_at"} <= set(r["drift"])
    p = report["pairwise"]
    assert {"cells", "bradley_terry", "position_bias", "rater_alpha", "judges"} <= set(p)
    assert {"left", "right", "p_value", "by_rater"} <= set(p["position_bias"])
    check_json_clean(report)
    json.dumps(report, allow_nan=False)


def test_tifa_report_keeps_the_contract(tifa_report) -> None:
    check_contract(tifa_report)
    assert tifa_report["rubric"] == {"id": "tifa", "version": TIFA_RUBRIC.version}
    assert tifa_report["n_boot"] == 1000 and tifa_report["seed"] == 0


def test_a_full_rubric_study_with_pairs_and_anchors_keeps_the_contract() -> None:
    rubric = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
    rng = np.random.default_rng(0)
    items = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(60)],
            "display_code": [f"C{k}" for k in range(60)],
            "case_id": [f"case{k // 6}" for k in range(60)],
            "cell_id": None,
            "generator": ["g1", "g2", "g3"] * 20,
            "slice": None,
        }
    )
    q = rng.normal(size=60)
    rows = []
    for r in ("ann", "bob", "cy"):
        e = rng.normal(0, 0.4, 60)
        for i in range(60):
            base = {
                "item_id": f"i{i}",
                "rater": r,
                "reason": "why",
                "created_at": None,
                "session_id": "s",
                "position": i,
            }
            rows += [
                {
                    **base,
                    "metric": "instruction_following",
                    "value": "PASS" if q[i] + e[i] > 0 else "FAIL",
                },
                {**base, "metric": "text_rendering", "value": "cannot_judge" if i == 3 else "PASS"},
                {
                    **base,
                    "metric": "layout_hierarchy",
                    "value": int(np.clip(round(3 + q[i] + e[i]), 0, 5)),
                },
                {**base, "metric": "ui_affordance", "value": 3},
                {
                    **base,
                    "metric": "failure_tags",
                    "value": ("broken_layout",) if q[i] < -1 else (),
                },
                {**base, "metric": "reason", "value": "text"},
            ]
    judgements = pd.DataFrame(rows)[JUDGEMENT_COLUMNS]
    judge = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(60)],
            "judge": "llm",
            "metric": "instruction_following",
            "value": ["PASS" if v > -0.2 else "FAIL" for v in q],
            "reason": "r",
        }
    )
    pairs = pd.DataFrame(
        [
            {
                "pair_id": f"p{k}",
                "case_id": f"case{k}",
                "item_left": f"i{6 * k}",
                "item_right": f"i{6 * k + 1}",
                "gen_left": "g1",
                "gen_right": "g2",
                "rater": "dana",
                "choice": "left" if k % 3 else "right",
                "created_at": None,
            }
            for k in range(10)
        ]
    )[PAIR_COLUMNS]
    anchors = pd.DataFrame(
        [
            {
                "rater": "ann",
                "anchor_id": f"a{k}",
                "item_id": f"i{k}",
                "metric": "layout_hierarchy",
                "value": 3,
                "reference": 3,
                "seq": k,
                "session_id": "s",
                "created_at": None,
                "context": "live",
            }
            for k in range(4)
        ]
    )[ANCHOR_COLUMNS]
    frames = StudyFrames(
        "full",
        rubric,
        items=items,
        judgements=judgements,
        judge_scores=judge,
        pair_votes=pairs,
        anchor_answers=anchors,
        settings={"min_count_for_share": 5},
    )
    report = build_report(frames, n_boot=200, seed=1, n_perm=200)
    check_contract(report)
    assert set(report["raters"]) == {"ann", "bob", "cy", "dana"}
    assert report["raters"]["dana"]["n_judgements"] == 0
    assert report["raters"]["ann"]["n_judgements"] == 60 and report["raters"]["ann"]["anchors"] == 4
    m = report["metrics"]
    assert set(m) == {
        "instruction_following",
        "text_rendering",
        "layout_hierarchy",
        "ui_affordance",
        *(f"failure_tags:{t}" for t in rubric.metric("failure_tags").options),
    }
    # every answer identical: undefined with a note, never 1
    ua = m["ui_affordance"]["human_alpha"]
    assert ua["estimate"] is None and "identical" in ua["note"]
    tr = m["text_rendering"]
    assert tr["human_alpha"]["estimate"] is None and tr["n_cannot_judge"] == 3
    assert tr["fleiss_kappa"]["estimate"] is None
    # AC1 of identical answers is 1 by construction (decided, as irrCAC), said, with no interval
    assert (
        tr["gwet_ac1"]["estimate"] == 1.0
        and tr["gwet_ac1"]["low"] is None
        and tr["gwet_ac1"]["note"]
    )
    assert m["instruction_following"]["judges"]["llm"]["n_items"] == 60
    assert m["layout_hierarchy"]["judges"] == {}
    assert report["verdict"]["kind"] == "verdict"
    assert report["generators"]["cases"] == sorted(f"case{k}" for k in range(10))
    assert (
        report["pairwise"]["position_bias"]["left"] + report["pairwise"]["position_bias"]["right"]
        == 10
    )


def test_same_seed_same_report_and_a_study_without_answers() -> None:
    frames = tifa_frames("ratings.csv")
    small = StudyFrames(
        "s",
        frames.rubric,
        items=frames.items.iloc[:40],
        judgements=frames.judgements[
            frames.judgements["item_id"].isin(frames.items["item_id"].iloc[:40])
        ],
    )
    assert build_report(small, n_boot=200, seed=3) == build_report(small, n_boot=200, seed=3)
    empty = build_report(StudyFrames("e", TIFA_RUBRIC, items=frames.items.iloc[:5]), n_boot=50)
    check_contract(empty)
    e = empty["metrics"]["faithfulness"]
    assert e["n_judgements"] == 0 and e["human_alpha"]["estimate"] is None
    assert empty["findings"] == [] and empty["raters"] == {}
