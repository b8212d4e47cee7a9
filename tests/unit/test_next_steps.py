"""The summary leads with what is known and says what data would decide the rest: on a team study made from scratch (12 items, 3 raters at overlap 2, a lenient judge)
and on hand-built report entries for the rules the team study does not reach."""

from __future__ import annotations

import re

import pytest
from team_study import build_team_study

from annotator.services.reporting import build_study_report
from annotator.stats.competence import MAX_FLAG_WIDTH, low_competence
from annotator.stats.next_steps import to_decide


@pytest.fixture(scope="module")
def team_report(tmp_path_factory):
    study = build_team_study(tmp_path_factory.mktemp("team") / "team")
    try:
        yield study, build_study_report(study, n_boot=50, seed=1)
    finally:
        study.close()


def test_the_summary_leads_with_the_lenient_judge_and_its_interval(team_report):
    _, report = team_report
    known = report["summary"]["known"]
    first = known[0]["text"]
    assert first.startswith("The judge lenient-judge is lenient"), first
    # every scale it is lenient on, with the interval of its offset
    assert re.search(r"Layout & hierarchy \+\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", first), first
    fig = next(f for f in known[0]["figures"] if f["metric"] == "layout_hierarchy")
    assert fig["difference"]["low"] > 0.5 and fig["q_value"] < 0.05


def test_the_summary_says_what_data_would_decide_the_rest(team_report):
    _, report = team_report
    steps = report["summary"]["to_decide"]
    alt = next(s for s in steps if "can replace a rater" in s["text"])
    assert alt["command"] == "annotator assign --study team --overlap 3"
    assert alt["figures"]["items_needed"] == 30 and alt["figures"]["items_now"] == 12
    assert "overlap 3 on at least 30 items" in alt["text"] and "18 more items rated" in alt["text"]
    comp = next(s for s in steps if "competence" in s["text"])
    # 3 raters at overlap 2 share 2 x 15 / 3 = 10 items each: the MACE minimum
    assert comp["figures"]["items_needed"] == 15 and comp["figures"]["shared_now"]["ana"] == 8
    sample = next(s for s in steps if "random human sample" in s["text"])
    # 4 items a generator, a debiased figure needs 10 sampled: the study is short of items
    assert sample["command"].endswith("--sample 10") and "import 6 more each" in sample["text"]


def test_a_carried_competence_step_says_when_it_was_fitted(team_report):
    """A live estimate carries the competence fits, each stamped with the time of the full
    computation: the step that reads their overlap says so."""
    import copy

    from annotator.stats.live_estimate import carried, stamp_carried
    from annotator.stats.summary import build_summary

    _, report = team_report
    live = copy.deepcopy(report)
    for entry in live["raters"].values():
        entry["competence"] = {k: carried(f) for k, f in entry["competence"].items()}
    assert stamp_carried(live["raters"], "14:02") > 0
    (step,) = (s for s in build_summary(live)["to_decide"] if "competence" in s["text"])
    assert step["text"].endswith(" (as of 14:02)")
    (full,) = (s for s in report["summary"]["to_decide"] if "competence" in s["text"])
    assert "as of" not in full["text"] and step["text"] == full["text"] + " (as of 14:02)"


def test_no_competence_figure_the_fit_cannot_support_and_no_flag(team_report):
    _, report = team_report
    for rater, entry in report["raters"].items():
        for key, fig in entry["competence"].items():
            # a degenerate fit has no number; a number comes with its interval or a note
            assert fig["estimate"] is None or fig["low"] is not None or fig.get("note"), (
                rater,
                key,
                fig,
            )
    assert report["summary"]["raters_needing_attention"] == []
    assert not any("low competence" in k["text"] for k in report["summary"]["known"])


def test_the_html_summary_and_the_dashboard_lead_with_it(team_report):
    from annotator.reports.html_report import render_html
    from annotator.services.dashboard import Bullets, compute, read_inputs

    study, report = team_report
    html = render_html(report, generated_at="-")
    summary = html[html.index('id="summary"') :]
    trust = summary.index("Can I trust the judge?")  # one sentence per judge, first
    known = summary.index("What is known")
    assert trust < known < summary.index("What would decide the rest")
    assert summary.index("What would decide the rest") < summary.index("metric by metric")
    assert "The judge lenient-judge: " in summary[trust:known]
    assert "lenient-judge is lenient" in summary[known : known + 2000]
    assert "<code>annotator assign --study team --overlap 3</code>" in summary

    model = compute(read_inputs(study, n_boot=20, seed=1, use_cache=False))
    first = next(s for s in model.sections if s.key != "team")
    assert first.key == "summary"
    lists = [b.items for b in first.blocks if isinstance(b, Bullets)]
    assert lists[0][0].startswith("The judge lenient-judge: ")  # its verdict, first
    assert lists[1][0].startswith("The judge lenient-judge is lenient")  # what is known
    assert any("annotator assign --study team --overlap 3" in t for t in lists[2])
    raters = next(s for s in model.sections if s.key == "raters")
    competence = {r[0]: r[6] for r in raters.blocks[0].rows}
    assert competence == dict.fromkeys(("ana", "ben", "cy"), "not estimable: too little overlap")


def _fig(est: float, low: float, high: float) -> dict:
    return {"estimate": est, "low": low, "high": high, "n": 40}


def test_no_flag_on_an_interval_wider_than_half() -> None:
    """A tag rater flagged at [0.01, 0.99] beside peers at 1.00: no flag, in the
    summary and in the dashboard (one rule: competence.low_competence)."""
    from pathlib import Path

    from annotator.ingest.rubrics import load_rubric
    from annotator.reports.view_raters import competence_text

    comp = {
        "r1": {"failure_tags:broken_layout": _fig(0.2, 0.01, 0.99)},
        "r2": {"failure_tags:broken_layout": _fig(1.0, 0.98, 1.0)},
        "r3": {"failure_tags:broken_layout": _fig(1.0, 0.97, 1.0)},
    }
    assert 0.99 - 0.01 > MAX_FLAG_WIDTH and low_competence(comp) == {}
    comp["r1"]["failure_tags:broken_layout"] = _fig(0.2, 0.05, 0.5)  # narrow: still flagged
    assert set(low_competence(comp)) == {"r1"}
    rubric = load_rubric(Path(__file__).parents[2] / "rubrics" / "ui_mockup.toml")
    comp["r1"]["failure_tags:broken_layout"] = _fig(0.2, 0.01, 0.99)
    raters = {r: {"competence": c} for r, c in comp.items()}
    labels = {k: rubric.key_label(k) for k in comp["r1"]}
    assert "low on" not in competence_text(labels, "r1", raters, low_competence(comp))


def test_rules_the_team_study_does_not_reach() -> None:
    """Spread test short of items, generators apart with an interval, a gate short of cases and a
    debiased figure too wide: each with its number."""
    hr = {"n_needed": 240}
    judges = {"j": {"layout": {"verdict": "undetermined", "n_needed": 240, "why": "..."}}}
    report = {
        "study": "my study",
        "metrics": {
            "layout": {"n_items": 60, "n_judgements": 120, "judges": {"j": {"human_range": hr}}}
        },
        "raters": {"a": {}, "b": {}},
        "generators": {
            "by_generator": {"g1": {}, "g2": {}},
            "differences": {
                "g1 - g2": {
                    "verdict_pass_rate": {"estimate": 0.1, "low": -0.1, "high": 0.3, "n_cases": 6}
                }
            },
            "release_gate": {"min_cases": 5, "min_items": 30},
        },
        "debiased": {
            "recorded": True,
            "figures": {"verdict_pass_rate": "pass rate"},
            "judges": {
                "j": {
                    "by_generator": {
                        "g1": {
                            "verdict_pass_rate": {
                                "n_sampled": 40,
                                "ppi": {"estimate": 0.6, "low": 0.5, "high": 0.7},
                            }
                        }
                    }
                }
            },
        },
    }
    generators = {
        "rubric_figure": "verdict_pass_rate",
        "ranking": [
            {"generator": "g1", "rubric_rank": 1},
            {"generator": "g2", "rubric_rank": 1},
        ],
    }
    gate = {"set": True, "generators": {"g2": {"pass": False, "note": "rated on 3 cases ..."}}}
    steps = {s["text"].split(" ")[0]: s for s in to_decide(report, judges, generators, gate)}
    assert steps["Whether"]["figures"]["items_needed"] == {"layout": 240}
    assert steps["Whether"]["command"] == "annotator assign --study 'my study' --overlap 3"
    # half-width 0.2 over a difference of 0.1 on 6 cases: 6 x 2^2 = 24 cases
    assert steps["The"]["figures"][0]["cases_needed"] == 24
    assert steps["Release"]["figures"]["cases_needed"] == 5
    # +/-0.10 from 40 labels to +/-0.05: 40 x (2^2 - 1) = 120 more
    assert steps["About"]["figures"]["labels_more"] == 120
    assert steps["About"]["command"] == "annotator assign --study 'my study' --sample 160"
    # a sample topped up by strata grows by strata (a uniform top-up is refused)
    report["debiased"]["sample"] = {"by_strata": True}
    steps = {s["text"].split(" ")[0]: s for s in to_decide(report, judges, generators, gate)}
    assert steps["About"]["command"] == (
        "annotator assign --study 'my study' --sample 160 --by-strata verdict_pass_rate --judge j"
    )
    assert "(by strata)" in steps["About"]["text"]


def test_a_judge_short_of_scores_and_a_sample_short_of_items() -> None:
    """The raters' design is there (4 raters at overlap 4 on 36 items) but the judge scored the
    tags on 11 items: no `assign`, the judge's scores are what is short. A debiased figure that
    would need more labels than the generator has items says what all of them give."""
    needs = {"annotators": 3, "annotators_now": 0, "items_per_annotator": 30}
    report = {
        "study": "s",
        "metrics": {
            "tags:x": {
                "n_items": 36,
                "n_judgements": 144,
                "judges": {"j": {"n_items": 11, "alt_test_needs": needs}},
            }
        },
        "raters": {r: {} for r in "abcd"},
        "debiased": {
            "recorded": True,
            "figures": {"verdict_pass_rate": "pass rate"},
            "judges": {
                "j": {
                    "by_generator": {
                        "g": {
                            "verdict_pass_rate": {
                                "n_sampled": 10,
                                "n_items": 12,
                                "ppi": {"estimate": 0.2, "low": 0.0, "high": 0.4},
                            }
                        }
                    }
                }
            },
        },
    }
    judges = {"j": {"tags:x": {"verdict": "undetermined", "why": "..."}}}
    steps = to_decide(report, judges, {}, {})
    alt = steps[0]
    assert "command" not in alt and "it scored 11" in alt["text"]
    assert alt["figures"]["items_needed"] == 30 and alt["figures"]["judge_items_now"] == 11
    deb = steps[-1]
    # +/-0.2 from 10 labels, 12 items: all of them give 0.2 x sqrt(10 / 12) = 0.18
    assert "more than its 12 items" in deb["text"] and "+/-0.18" in deb["text"]
    assert deb["command"] == "annotator assign --study s --sample 12"
