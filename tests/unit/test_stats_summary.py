"""The summary's verdicts and rankings from hand-built report entries."""

from __future__ import annotations

from annotator.stats.summary import GLOSSARY, build_summary, judge_verdict


def _alt(passed: bool) -> dict:
    return {
        "epsilon": 0.1,
        "winning_rate": 0.75 if passed else 0.25,
        "advantage_probability": 0.8,
        "passed": passed,
        "min_passing_epsilon": 0.05 if passed else 0.2,
        "n_annotators": 4,
        "n_items": 60,
    }


def _range(position: str | None, judge_low: float = 0.35) -> dict:
    if not position:
        return {"position": None, "note": "needs kappas on at least 10 shared items"}
    diff = {"inside": (-0.02, -0.08, 0.04), "below": (-0.3, -0.4, -0.2)}.get(
        position, (-0.1, -0.3, 0.1)
    )
    return {
        "measure": "cohen_kappa",
        "judge_mean": 0.5,
        "judge_mean_ci": {"estimate": 0.5, "low": judge_low, "high": 0.6, "n": 60},
        "human_mean": {"estimate": 0.55, "low": 0.45, "high": 0.65, "n": 60},
        "difference": {"estimate": diff[0], "low": diff[1], "high": diff[2], "n": 60},
        "human_vs_human": {"min": 0.4, "max": 0.7},
        "margin": 0.1,
        "position": position,
        **(
            {
                "n_needed": 240,
                "position_note": "undetermined, too few items (n = 60; about 240 needed)",
            }
            if position == "undetermined"
            else {}
        ),
    }


def _both(passed: bool) -> dict:
    """A judge entry's two alternative-annotator tests (the paper's and the class-balanced
    variant), both passing or both failing: a verdict needs both."""
    return {"alt_test": _alt(passed), "alt_test_balanced": _alt(passed)}


def test_judge_verdicts() -> None:
    v = judge_verdict({**_both(True), "human_range": _range("inside")})
    assert v["verdict"] == "replaceable" and "3 of 4 raters" in v["why"]
    assert "0.50 [0.35, 0.60]" in v["why"]  # the kappa behind it, with its interval
    # passing the alt-test is not enough: below the humans, or a kappa not above zero
    v = judge_verdict({**_both(True), "human_range": _range("below")})
    assert v["verdict"] == "not_trustworthy" and "less than they agree" in v["why"]
    v = judge_verdict({**_both(True), "human_range": _range("inside", -0.05)})
    assert v["verdict"] == "inside_human_spread" and "not above zero" in v["why"]
    v = judge_verdict({**_both(False), "human_range": _range("inside")})
    assert v["verdict"] == "inside_human_spread"
    assert "-0.02 [-0.08, 0.04]" in v["why"] and "passes from epsilon 0.200" in v["why"]
    v = judge_verdict({**_both(False), "human_range": _range("below")})
    assert v["verdict"] == "not_trustworthy"
    # failing the alt-test alone is no evidence against the judge
    v = judge_verdict({**_both(False), "human_range": _range("undetermined")})
    assert v["verdict"] == "undetermined" and v["n_needed"] == 240
    assert "about 240 needed" in v["why"]
    v = judge_verdict(
        {"alt_test": None, "alt_test_note": "alt-test not run: x", "human_range": _range(None)}
    )
    assert v["verdict"] == "undetermined" and "alt-test not run: x" in v["why"]
    assert "needs kappas" in v["why"]
    v = judge_verdict({"same_scale": False, "alt_test": None, "alt_test_note": "x"})
    assert v["verdict"] == "undetermined" and "rubric's scale" in v["why"]


def _fig(e: float, lo: float, hi: float) -> dict:
    return {"estimate": e, "low": lo, "high": hi, "n": 30}


def test_summary_of_a_report() -> None:
    report = {
        "metrics": {
            "layout": {
                "label": "Layout",
                "judges": {"j": {**_both(True), "human_range": _range("inside")}},
            },
        },
        "verdict": {"label": "verdict", "judges": {"j": {"human_range": _range("above")}}},
        "generators": {
            "figures": {"verdict_pass_rate": "pass rate"},
            "by_generator": {
                "a": {"overall": {"verdict_pass_rate": _fig(0.8, 0.7, 0.9)}},
                "b": {"overall": {"verdict_pass_rate": _fig(0.5, 0.4, 0.6)}},
                "c": {"overall": {"verdict_pass_rate": _fig(0.6, 0.5, 0.7)}},
            },
            "comparable": True,
            "differences": {
                "a - b": {"verdict_pass_rate": _fig(0.3, 0.1, 0.5)},
                "a - c": {"verdict_pass_rate": _fig(0.2, 0.05, 0.35)},
                "b - c": {"verdict_pass_rate": _fig(-0.1, -0.25, 0.05)},
            },
        },
        "pairwise": {
            "bradley_terry": {
                "a": _fig(0.5, 0.3, 0.7),
                "b": _fig(0.1, 0, 0.2),
                "c": _fig(-0.6, -0.8, -0.4),
            }
        },
        "raters": {
            "r1": {
                "drift": {
                    "flagged": True,
                    "metric": "layout",
                    "direction": "up",
                    "first_flag_at": 12,
                }
            },
            "r2": {"drift": {"flagged": False}, "competence": {"layout": _fig(0.2, 0.1, 0.3)}},
            "r3": {"drift": {"flagged": False}, "competence": {"layout": _fig(0.8, 0.7, 0.9)}},
            "r4": {"drift": {"flagged": False}, "competence": {"layout": _fig(0.9, 0.8, 1.0)}},
        },
    }
    s = build_summary(report)
    assert s["judges"]["j"]["layout"]["verdict"] == "replaceable"
    assert s["judges"]["j"]["layout"]["label"] == "Layout"
    assert s["judges"]["j"]["verdict"]["verdict"] == "inside_human_spread"
    assert "above the humans' own agreement" in s["judges"]["j"]["verdict"]["why"]
    g = s["generators"]
    assert [r["generator"] for r in g["ranking"]] == ["a", "c", "b"]
    # b and c are not separated by their paired difference: they share rank 2
    assert [(r["rubric_rank"], r["pairwise_rank"]) for r in g["ranking"]] == [
        (1, 1),
        (2, 3),
        (2, 2),
    ]
    assert g["disagree"] == ["c"]
    report["generators"]["comparable"] = False
    assert all(r["rubric_rank"] is None for r in build_summary(report)["generators"]["ranking"])
    assert s["release_gate"]["set"] is False
    need = {x["rater"]: x["why"] for x in s["raters_needing_attention"]}
    assert set(need) == {"r1", "r2"}
    assert "drift on Layout (up)" in need["r1"][0]
    assert "low competence on Layout" in need["r2"][0]
    assert "competence" in GLOSSARY and "epsilon" in GLOSSARY


def test_a_carried_low_competence_says_when_it_was_fitted() -> None:
    """A live estimate carries the raters' competence from the last full computation, each fit
    stamped with its time: the summary's line about it says so, as the raters' table does."""
    from annotator.stats.live_estimate import carried, stamp_carried

    competence = {
        "r2": {"layout": carried(_fig(0.2, 0.1, 0.3))},
        "r3": {"layout": carried(_fig(0.8, 0.7, 0.9))},
        "r4": {"layout": carried(_fig(0.9, 0.8, 1.0))},
    }
    assert stamp_carried(competence, "14:02") == 3
    report = {"raters": {r: {"competence": c} for r, c in competence.items()}}
    (r2,) = build_summary(report)["raters_needing_attention"]
    assert r2["rater"] == "r2" and r2["low_competence"]["layout"]["as_of"] == "14:02"
    assert r2["why"] == [
        "low competence on layout: 0.20 [0.10, 0.30], others' median 0.85 (as of 14:02)"
    ]
    # the full computation's own fit: no time
    report = {
        "raters": {
            r: {
                "competence": {
                    "layout": {
                        k: v for k, v in c["layout"].items() if k not in ("carried", "as_of")
                    }
                }
            }
            for r, c in competence.items()
        }
    }
    (r2,) = build_summary(report)["raters_needing_attention"]
    assert "as of" not in r2["why"][0] and "as_of" not in r2["low_competence"]["layout"]


def test_dashboard_rater_columns_name_low_competence_by_label() -> None:
    from pathlib import Path

    from annotator.ingest.rubrics import load_rubric
    from annotator.reports.view_raters import competence_text, rater_view
    from annotator.stats.competence import low_competence

    rubric = load_rubric(Path(__file__).parents[2] / "rubrics" / "ui_mockup.toml")
    raters = {
        "r2": {"competence": {"layout_hierarchy": _fig(0.2, 0.1, 0.3)}},
        "r3": {"competence": {"layout_hierarchy": _fig(0.8, 0.7, 0.9)}},
        "r4": {"competence": {"layout_hierarchy": _fig(0.9, 0.8, 1.0)}},
    }
    # the report's labels (Rubric.key_label) and the summary's verdict (low_competence)
    labels = {"layout_hierarchy": rubric.key_label("layout_hierarchy")}
    low = low_competence({r: d["competence"] for r, d in raters.items()})
    text = competence_text(labels, "r2", raters, low)
    assert text.startswith("0.20 (median)") and "low on Layout" in text
    assert "low on" not in competence_text(labels, "r3", raters, low)
    rep = {"agreement_with_consensus": {"a": {"exact_agreement": _fig(0.7, 0.6, 0.8)}}}
    assert rater_view("r", rep)["agreement"] == "70% (median of 1 metrics)"


def test_rater_medians_skip_metrics_without_the_figure() -> None:
    """The dashboard's per-rater medians live in stats, over the metrics
    that have the figure: an undefined one (None) is left out, never counted as 0."""
    from annotator.domain.rater_medians import median_agreement, median_competence

    rater = {
        "agreement_with_consensus": {
            k: {"exact_agreement": _fig(v, v, v) if v is not None else {"estimate": None}}
            for k, v in (("a", 0.9), ("b", 0.5), ("c", None), ("d", 0.6))
        },
        "competence": {"a": _fig(0.4, 0.3, 0.5), "b": {"estimate": None, "note": "x"}},
    }
    assert median_agreement(rater) == (0.6, 3)
    assert median_competence(rater) == 0.4
    assert median_agreement({}) is None and median_competence({"competence": {}}) is None


def _small_study(with_sessions: bool):
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from annotator.ingest.rubrics import load_rubric
    from annotator.stats.frames import StudyFrames

    rng = np.random.default_rng(4)
    rubric = load_rubric(Path(__file__).parents[2] / "rubrics" / "ui_mockup.toml")
    n = 60
    ids = [f"it{i:03d}" for i in range(n)]
    items = pd.DataFrame(
        {
            "item_id": ids,
            "display_code": ids,
            "case_id": [f"c{i % 6}" for i in range(n)],
            "cell_id": [f"c{i % 6}" for i in range(n)],
            "generator": [f"g{i % 3}" for i in range(n)],
            "slice": None,
        }
    )
    truth = rng.random(n) < 0.6
    rows = []
    for r in range(5):
        flip = rng.random(n) < (0.5 if r == 4 else 0.1)  # rater 4 guesses half the time
        ans = np.where(truth ^ flip, "PASS", "FAIL")
        for i in range(n):
            rows.append(
                {
                    "item_id": ids[i],
                    "rater": f"r{r}",
                    "metric": "instruction_following",
                    "value": ans[i],
                    "reason": None,
                    "created_at": None,
                    "session_id": f"s{r}" if with_sessions else None,
                    "position": i if with_sessions else None,
                }
            )
    judge = pd.DataFrame(
        {
            "item_id": ids,
            "judge": "j",
            "metric": "instruction_following",
            "value": np.where(truth, "PASS", "FAIL"),
            "reason": None,
        }
    )
    return StudyFrames("s", rubric, items=items, judgements=pd.DataFrame(rows), judge_scores=judge)


def test_report_carries_alt_test_competence_and_summary() -> None:
    from annotator.stats.report_model import build_report

    rep = build_report(_small_study(True), n_boot=50, seed=0, n_perm=10)
    alt = rep["metrics"]["instruction_following"]["judges"]["j"]["alt_test"]
    assert alt["n_annotators"] == 5 and alt["n_items"] == 60 and alt["passed"] is True
    comp = {r: d["competence"]["instruction_following"] for r, d in rep["raters"].items()}
    assert min(comp, key=lambda r: comp[r]["estimate"]) == "r4"
    assert all(c["model"] == "mace" for c in comp.values())
    s = rep["summary"]
    assert s["judges"]["j"]["instruction_following"]["verdict"] == "replaceable"
    assert "r4" in {x["rater"] for x in s["raters_needing_attention"]}
    assert rep["metrics"]["instruction_following"]["label"] == "Instruction following"
    assert "early" in rep["raters"]["r0"]["fatigue"]


def test_no_fatigue_for_ratings_without_sessions() -> None:
    from annotator.stats.report_model import build_report

    rep = build_report(_small_study(False), n_boot=20, seed=0, n_perm=10)
    for d in rep["raters"].values():
        assert "early" not in d["fatigue"] and "no session order" in d["fatigue"]["note"]


def test_undefined_text_never_repeats_undefined() -> None:
    from annotator.reports.formatting import Est

    assert Est(None, note="undefined on these data").text != "undefined (undefined on these data)"
    assert "(undefined" not in Est(None, note="undefined: every answer is the same").text
    assert Est(None, note="undefined: every answer is the same").text == (
        "undefined (every answer is the same)"
    )
    assert (
        Est(None, note="every answer is identical").text == "undefined (every answer is identical)"
    )
    assert Est(None).text == "undefined"


def test_replaceable_needs_the_papers_test_and_the_class_balanced_variant() -> None:
    for paper, variant in ((True, False), (False, True)):
        v = judge_verdict(
            {
                "alt_test": _alt(paper),
                "alt_test_balanced": _alt(variant),
                "human_range": _range("inside"),
            }
        )
        assert v["verdict"] != "replaceable"
    v = judge_verdict({**_both(True), "human_range": _range("inside")})
    assert v["verdict"] == "replaceable"
    assert v["figure"]["alt_test"]["used"].startswith("the paper's alternative-annotator test")
