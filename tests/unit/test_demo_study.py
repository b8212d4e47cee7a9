"""`annotator demo --headless` builds a real study whose report shows what was planted:
a lenient judge (and a rubber-stamp one that adds nothing), a drifting rater, generators with
known defects, pairwise votes."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import pytest

from annotator.cli import main


@pytest.fixture(scope="module")
def demo(demo_build, tmp_path_factory):
    """The session's demo (built by `annotator demo --headless`, tests/conftest.py) and its
    report. 200 resamples: these tests check the planted findings, not the intervals' digits."""
    d = tmp_path_factory.mktemp("demo-report")
    study = str(demo_build.folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["demo", "--headless", "--study", study]) == 0  # already there: reused
    assert out.getvalue().count("demo study ready at") == 1
    args = ["report", "--study", study, "--json", str(d / "r.json"), "--html", str(d / "r.html")]
    assert main([*args, "--csv", str(d / "csv"), "--boot", "200"]) == 0
    return d, json.loads((d / "r.json").read_text())


def test_lenient_judge_is_a_systematic_finding(demo):
    _, r = demo
    # the judge's offset is printed beside the humans' own: above every human's on the verdict
    # and the gates. The demo's raters include a planted lenient and a planted severe one, so
    # against "a human drawn from these raters" (the held-out comparison) it is not a systematic finding on 4
    # raters' spread; severe findings never appear for this judge
    for metric in ("verdict", "instruction_following", "text_rendering"):
        sec = r["verdict"] if metric == "verdict" else r["metrics"][metric]
        ho = sec["judges"]["demo-lenient-judge"]["vs_held_out_human"]
        assert ho["difference"]["estimate"] > ho["human_offset_range"][1], metric
        assert len(ho["human_offsets"]) == 4 and ho["p_value"] is not None
    assert not [f for f in r["systematic_findings"] if f["kind"] == "severe"]
    contradictions = [
        f
        for f in r["findings"]
        if f["judge"] == "PASS" and f["metric"] in ("instruction_following", "text_rendering")
    ]
    assert contradictions, "a judge PASS against a human FAIL consensus must be listed item by item"
    assert all(
        f.get("display_code") and f.get("case_id") and f.get("generator") for f in r["findings"]
    )


def test_judge_beats_its_permutation_baseline(demo):
    _, r = demo
    j = r["metrics"]["layout_hierarchy"]["judges"]["demo-lenient-judge"]
    assert j["alpha_vs_consensus"]["estimate"] > j["permutation_alpha"]["mean"] + 0.2
    assert abs(j["permutation_alpha"]["mean"]) < 0.15 and j["permutation_alpha"]["p_value"] < 0.05


def test_the_lenient_judge_adds_labels_and_the_rubber_stamp_adds_nothing(
    demo, demo_study_dir, capsys
):
    """A judge is worth human labels only where it tracks the truth: where the lenient judge's
    scores follow the truth (gen-gamma's layouts) its
    weight lambda is above 0 and the summary says how many human labels it is worth; the
    rubber-stamp judge beside it (PASS and 5 on everything) gets lambda 0 on every figure, and
    the report, the summary and `annotator plan` say it added nothing (humans only). Its one
    confidence separates nothing, so certified selective judging abstains on every item."""
    from annotator.demo.scenario import JUDGE_NAME, STAMP_JUDGE_NAME
    from annotator.stats.debiased_value import NOTHING

    _, r = demo
    judges = r["debiased"]["judges"]
    assert sorted(judges) == [JUDGE_NAME, STAMP_JUDGE_NAME]
    lay = judges[JUDGE_NAME]["by_generator"]["gen-gamma"]["layout_hierarchy"]
    worth = lay["judge_value"]
    assert lay["lambda"] > 0 and not worth["added_nothing"] and not worth["below_floor"]
    assert worth["n_eff"] > lay["n_sampled"]
    assert f"the judge is worth about {worth['n_eff']:.0f} human labels" in worth["words"]
    lines = r["summary"]["debiased"]["lines"]
    assert any(
        x.startswith(f"the judge {JUDGE_NAME} overstates gen-gamma's mean score on Layout")
        and "human labels' worth from 24 rated items" in x
        for x in lines
    ), lines
    # every gate, scale and verdict figure of every generator: the humans' sample alone
    stamp = [f for figs in judges[STAMP_JUDGE_NAME]["by_generator"].values() for f in figs.values()]
    assert len(stamp) == 3 * 5
    for f in stamp:
        assert f["lambda"] == 0 and f["judge_value"]["added_nothing"]
        assert f["judge_value"]["words"].startswith(NOTHING)
        assert [f["ppi"][k] for k in ("estimate", "low", "high")] == pytest.approx(
            [f["humans_only"][k] for k in ("estimate", "low", "high")]
        )
    said = [x for x in lines if x.startswith(f"the judge {STAMP_JUDGE_NAME} ")]
    # each figure named "humans only" once, then the verdict without saying it a second time
    assert said and all(
        "humans only " in x
        and "the judge added nothing here (" in x
        and NOTHING not in x
        and "worth from" not in x
        for x in said
    )
    steps = [e["text"] for e in r["summary"]["to_decide"] if STAMP_JUDGE_NAME in e["text"]]
    assert len(steps) == 3 and all(f"{STAMP_JUDGE_NAME}'s weight is 0" in x for x in steps)
    capsys.readouterr()
    assert main(["plan", "--study", str(demo_study_dir), "--width", "0.1"]) == 0
    plan = capsys.readouterr().out.splitlines()
    of_stamp = [ln for ln in plan if f"(judge {STAMP_JUDGE_NAME})" in ln]
    assert of_stamp and all(NOTHING in ln for ln in of_stamp)
    assert any(
        ln.startswith("gen-gamma\tlayout_hierarchy\t")
        and f"(judge {JUDGE_NAME})" in ln
        and "the judge is worth about" in ln
        for ln in plan
    )
    for section in ("certified", "conformal_alignment"):
        blocks = r[section]["judges"][STAMP_JUDGE_NAME].values()
        assert blocks and all(b["n_accepted"] == 0 and b["threshold"] is None for b in blocks)


def test_drifting_rater_is_named_and_operator_is_nowhere(demo, demo_study_dir):
    d, r = demo
    drift = r["raters"]["sim-drifting"]["drift"]
    assert drift["flagged"] and drift["direction"] == "up" and drift["first_flag_at"] >= 6
    assert not r["raters"]["sim-steady"]["drift"]["flagged"]
    assert "ops-check" not in json.dumps(r)
    import sqlite3

    with sqlite3.connect(demo_study_dir / "study.sqlite") as c:
        op = "select count(*) from {} t join raters r on r.id = t.rater_pk where r.name = 'ops-check'"
        assert c.execute(op.format("judgements")).fetchone()[0] > 0  # stored ...
        assert c.execute(op.format("pair_votes")).fetchone()[0] > 0
    # ... and counted nowhere: the pairwise tallies hold only the three simulated voters' votes
    assert set(r["pairwise"]["position_bias"]["by_rater"]) == {
        "sim-steady",
        "sim-severe",
        "sim-lenient",
    }
    with open(d / "csv" / "judgements.csv", newline="") as fh:
        assert "ops-check" not in {row["rater"] for row in csv.DictReader(fh)}


def test_the_drifting_rater_is_less_competent_than_the_steady_one_and_the_judge_fails(demo):
    _, r = demo
    rubric = ("instruction_following", "layout_hierarchy", "text_rendering", "ui_affordance")
    mean = {
        name: sum(r["raters"][name]["competence"][m]["estimate"] for m in rubric) / len(rubric)
        for name in ("sim-drifting", "sim-steady")
    }
    assert mean["sim-drifting"] < mean["sim-steady"] - 0.05, mean
    c = r["raters"]["sim-drifting"]["competence"]["instruction_following"]
    assert c["model"] == "mace" and c["low"] <= c["estimate"] <= c["high"]
    attention = {a["rater"] for a in r["summary"]["raters_needing_attention"]}
    assert "sim-drifting" in attention and "sim-steady" not in attention
    # the lenient judge cannot replace a rater on any metric where its leniency shows
    for metric in (*rubric, "verdict"):
        sec = r["verdict"] if metric == "verdict" else r["metrics"][metric]
        alt = sec["judges"]["demo-lenient-judge"]["alt_test"]
        assert alt["passed"] is False and alt["n_annotators"] == 4, metric


def test_pairwise_and_generators_show_the_planted_order(demo):
    _, r = demo
    bt = r["pairwise"]["bradley_terry"]
    assert bt["gen-alpha"]["estimate"] > bt["gen-beta"]["estimate"] > bt["gen-gamma"]["estimate"]
    assert r["pairwise"]["position_bias"]["left"] + r["pairwise"]["position_bias"]["right"] > 100
    gens = r["generators"]
    assert set(gens["by_generator"]) == {"gen-alpha", "gen-beta", "gen-gamma"}
    assert list(gens["by_generator"]["gen-alpha"]["by_case"]) == sorted(
        gens["by_generator"]["gen-alpha"]["by_case"]
    )


def test_html_report_is_self_contained_with_thumbnails(demo):
    d, _ = demo
    html = (d / "r.html").read_text()
    assert "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html


@pytest.mark.slow
def test_the_same_seed_builds_the_same_study_answer_for_answer(small_demo_dir, tmp_path):
    import sqlite3

    from annotator.services.demo import build_demo

    def answers(study_file):
        with contextlib.closing(sqlite3.connect(study_file)) as c:
            return [
                c.execute(sql).fetchall()
                for sql in (
                    "SELECT i.item_id, r.name, j.context, j.answers FROM judgements j "
                    "JOIN items i ON i.id = j.item_pk JOIN raters r ON r.id = j.rater_pk "
                    "ORDER BY 1, 2, 3",
                    "SELECT p.pair_id, r.name, v.judge, v.choice, i.item_id FROM pair_votes v "
                    "JOIN pairs p ON p.id = v.pair_pk LEFT JOIN raters r ON r.id = v.rater_pk "
                    "JOIN items i ON i.id = v.item_left ORDER BY 1, 2, 3, 5",
                    "SELECT i.item_id, a.metric, a.value FROM adjudications a "
                    "JOIN items i ON i.id = a.item_pk ORDER BY 1, 2",
                    "SELECT i.item_id, s.judge, s.version, s.metric, s.value, s.confidence "
                    "FROM judge_scores s JOIN items i ON i.id = s.item_pk ORDER BY 1, 2, 3, 4",
                )
            ]

    # the session's small demo is the first build (the same seed and size); one more to compare
    first = answers(small_demo_dir / "study.sqlite")
    second = answers(build_demo(tmp_path / "b", variants_per_case=2) / "study.sqlite")
    assert all(first) and first == second


def test_the_build_says_ready_once_and_shows_its_progress_by_stage(demo_build):
    """The build says it is ready once (stdout), and a build of minutes shows where it is: on a
    non-terminal a few plain progress lines per stage, never a line per answer (a terminal gets
    one redrawn line: test_demo_progress)."""
    from annotator.services.demo import STAGES

    out, err = demo_build.out, demo_build.err
    assert (out + err).count("demo study ready at") == 1
    lines = err.splitlines()
    assert all(ln.startswith("building the demo  [") for ln in lines), lines
    for stage in STAGES:
        of_stage = [ln for ln in lines if f" {stage} " in ln]
        assert 1 <= len(of_stage) <= 5, (stage, of_stage)
    assert lines[-1].split()[-1] == "1/1" and "#" * 24 in lines[-1]


def test_an_interrupted_build_leaves_no_half_built_demo(tmp_path):
    """The demo is built aside and moved in whole: a build stopped midway (cancelled, Ctrl+C, a
    crash) used to leave a study file that the next `annotator demo` reopened as if it were done."""
    from annotator.base.task import Cancelled, TaskState
    from annotator.services.demo import build_demo

    # cancelled a few mockups in: the next count raises
    task = TaskState(lambda fraction, _m: task.cancel() if fraction and fraction > 0.05 else None)
    with pytest.raises(Cancelled):
        build_demo(tmp_path / "demo-study", task=task)
    assert not (tmp_path / "demo-study").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing left beside it either


def test_the_sample_is_drawn_over_every_item_and_the_team_answers_it(demo_study_dir):
    """The judge-only set comes in before the random human sample, so the sample is drawn
    over all of a generator's items; the simulated team answers its judge-only items (two
    raters each, every metric) and votes on its judge-only pairs (all three voters); the
    newcomer's queue is the 36 items the team rated first, in the order it had."""
    import sqlite3
    from collections import Counter

    from annotator.services.demo import (
        DEMO_RATER,
        DEMO_SAMPLE,
        PAIR_VOTERS,
        SAMPLE_OVERLAP,
        SIMULATED,
    )

    with contextlib.closing(sqlite3.connect(demo_study_dir / "study.sqlite")) as c:
        settings = {k: json.loads(v) for k, v in c.execute("SELECT key, value FROM settings")}
        sample = settings["human_sample"]
        gen_of = dict(c.execute("SELECT item_id, generator FROM items WHERE is_anchor = 0"))
        assert sample["strata"] == {
            g: {"n_live": 102, "n_drawn": DEMO_SAMPLE} for g in sorted(set(gen_of.values()))
        }
        assert "imported_after" not in sample or not sample["imported_after"]
        first = {i for i in gen_of if int(i.split("-")[1]) < 1000}  # demo-001 ... demo-036
        assert len(first) == 36 and len(gen_of) == 306
        sims = {s.name for s in SIMULATED}
        raters: dict[str, set[str]] = {}
        for item_id, name in c.execute(
            "SELECT i.item_id, r.name FROM judgements j JOIN items i ON i.id = j.item_pk "
            "JOIN raters r ON r.id = j.rater_pk WHERE j.context = 'live'"
        ):
            raters.setdefault(item_id, set()).add(name)
        judge_only_sampled = set(sample["items"]) - first
        assert judge_only_sampled and all(
            len(raters[i]) == SAMPLE_OVERLAP and raters[i] <= sims for i in judge_only_sampled
        )
        # no human answered a judge-only item outside the sample; everyone rated the first 36
        assert set(raters) == first | judge_only_sampled
        assert all(sims <= raters[i] for i in first)
        # the load is spread: every simulated rater took a share of the sampled items
        load = Counter(n for i in judge_only_sampled for n in raters[i])
        assert set(load) == sims and max(load.values()) - min(load.values()) <= 1
        # every metric answered on each of them
        for (answers,) in c.execute(
            "SELECT j.answers FROM judgements j JOIN items i ON i.id = j.item_pk "
            "WHERE j.context = 'live' AND i.item_id LIKE 'demo-1%'"
        ):
            assert {
                "instruction_following",
                "layout_hierarchy",
                "text_rendering",
                "ui_affordance",
            } <= set(json.loads(answers))
        pairs = settings["human_pair_sample"]
        assert all(s["n_drawn"] == DEMO_SAMPLE for s in pairs["strata"].values())
        voters: dict[str, set[str]] = {}
        for pid, name in c.execute(
            "SELECT p.pair_id, r.name FROM pair_votes v JOIN pairs p ON p.id = v.pair_pk "
            "JOIN raters r ON r.id = v.rater_pk"
        ):
            voters.setdefault(pid, set()).add(name)
        assert all({v.name for v in PAIR_VOTERS} <= voters[p] for p in pairs["items"])
        queue = [
            item_id
            for (item_id,) in c.execute(
                "SELECT i.item_id FROM queue q JOIN items i ON i.id = q.item_pk "
                "JOIN raters r ON r.id = q.rater_pk WHERE r.name = ? ORDER BY q.position",
                (DEMO_RATER,),
            )
        ]
        assert set(queue) == first and len(queue) == 36
