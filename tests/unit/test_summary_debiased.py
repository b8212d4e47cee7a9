"""The summary and the release gate on debiased figures: where the report has them the
summary ranks generators by them (and says so), says how far the judge's own figures were off
with the sign, and the release gate can read the debiased lower bound."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from factories import make_png, write_manifest

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.reports.html_report import render_html
from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]
GENS = ("gen-a", "gen-b")
# every metric but the gate passes, so the verdict is the gate: its pass rate by generator
PASSING = {"layout_hierarchy": "4", "text_rendering": "PASS", "ui_affordance": "4"}


def _build(tmp_path: Path) -> Path:
    """Two generators on 10 cases (3 items a cell), two humans on every item, a judge lenient on
    instruction following (PASS where the humans fail on three items of four), a random sample
    of 20 items per generator."""
    src = tmp_path / "src"
    rows, truth = [], {}
    rng = np.random.default_rng(1)
    for c in range(10):
        for g, gen in enumerate(GENS):
            for k in range(3):
                item = f"it-{gen}-{c}-{k}"
                img = make_png(src / "out" / f"{item}.png", colour=(20 * c, 80 * g, 10 * k))
                rows.append(
                    {
                        "item_id": item,
                        "case_id": f"case{c:02d}",
                        "prompt": f"Draw screen {c}",
                        "generator": gen,
                        "images": [str(img.relative_to(src))],
                    }
                )
                truth[item] = int(rng.random() < (0.8 if g == 0 else 0.35))
    study = tmp_path / "study"
    assert main(["new", str(study), "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(study)]) == 0
    ratings, judge = tmp_path / "ratings.csv", tmp_path / "judge.csv"
    with ratings.open("w", newline="") as f, judge.open("w", newline="") as j:
        w, wj = csv.writer(f), csv.writer(j)
        w.writerow(["item_id", "rater", "metric", "value", "partial"])
        wj.writerow(["item_id", "judge", "metric", "value", "reason"])
        for i, (item, y) in enumerate(truth.items()):
            for r in ("ann", "bob"):
                w.writerow([item, r, "instruction_following", "PASS" if y else "FAIL", "yes"])
                for key, value in PASSING.items():
                    w.writerow([item, r, key, value, "yes"])
            wj.writerow(
                [item, "lenient", "instruction_following", "PASS" if y or i % 4 else "FAIL", ""]
            )
            for key, value in PASSING.items():
                wj.writerow([item, "lenient", key, value, ""])
    assert main(["import", "ratings", str(ratings), "--study", str(study)]) == 0
    assert main(["import", "judge", str(judge), "--study", str(study)]) == 0
    assert main(["assign", "--study", str(study), "--raters", "ann,bob", "--sample", "20",
                 "--seed", "3"]) == 0  # fmt: skip
    return study


def _report(study: Path, tmp_path: Path, name: str) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["report", "--study", str(study), "--json", str(out), "--boot", "50"]) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("debiased-summary"))


def test_the_summary_ranks_by_the_debiased_figures_and_says_so(sampled, tmp_path):
    rep = _report(sampled, tmp_path, "r")
    g = rep["summary"]["generators"]
    assert g["ranked_by"] == "debiased" and g["debiased_judge"] == "lenient"
    assert "ranked by the debiased verdict pass rate" in g["ranked_by_note"]
    ppi = {
        gen: rep["debiased"]["judges"]["lenient"]["by_generator"][gen]["verdict_pass_rate"]["ppi"]
        for gen in GENS
    }
    assert [r["generator"] for r in g["ranking"]] == sorted(GENS, key=lambda x: -ppi[x]["estimate"])
    assert all(r["debiased"] == ppi[r["generator"]] and r["debiased_rank"] for r in g["ranking"])
    html = render_html(rep)
    summary = html[html.index('id="summary"') :]
    assert "debiased: verdict pass rate (rank)" in summary
    assert "Ranked by the debiased verdict pass rate" in summary


def test_the_summary_says_how_far_the_judge_was_off_with_the_sign(sampled, tmp_path):
    rep = _report(sampled, tmp_path, "r")
    clear = [
        r
        for r in rep["summary"]["debiased"]["off_by"]
        if r["clear"] and r["figure"] == "verdict_pass_rate"
    ]
    assert clear, rep["summary"]["debiased"]
    row = clear[0]
    err = row["judge_minus_humans"]
    known = [k["text"] for k in rep["summary"]["known"]]
    # the size as a positive interval, the sign in the verb
    want = (
        f"The judge lenient overstates {row['generator']}'s pass rate by "
        f"{err['estimate']:.2f} [{err['low']:.2f}, {err['high']:.2f}]"
    )
    assert any(k.startswith(want) for k in known), known


def test_understating_reads_as_a_positive_interval() -> None:
    from annotator.stats.next_steps import known

    err = {"estimate": -0.12, "low": -0.19, "high": -0.05}
    off = {"judge": "J", "generator": "gen-g", "figure": "verdict_pass_rate",
           "judge_minus_humans": err, "clear": True, "debiased": None}  # fmt: skip
    out = known({}, {}, {}, {}, [], {"off_by": [off]})
    assert out[0]["text"].startswith(
        "The judge J understates gen-g's pass rate by 0.12 [0.05, 0.19]"
    )


def test_the_release_gate_reads_the_debiased_lower_bound(sampled, tmp_path):
    s = Study.open(sampled)
    try:
        s.set_setting("release_gate", {"source": "debiased", "verdict_pass_rate": 0.5})
        s.set_setting("release_gate_min_items", 10)
    finally:
        s.close()
    rep = _report(sampled, tmp_path, "gate")
    gens = rep["generators"]
    assert (
        gens["release_gate"]["source"] == "debiased" and gens["release_gate"]["judge"] == "lenient"
    )
    for gen in GENS:
        gate = gens["by_generator"][gen]["release_gate"]
        ppi = rep["debiased"]["judges"]["lenient"]["by_generator"][gen]["verdict_pass_rate"]["ppi"]
        check = gate["checks"]["verdict_pass_rate"]
        assert check["bound"] == "debiased" and check["low"] == ppi["low"]
        assert gate["pass"] is (ppi["low"] >= 0.5) and "note" not in gate
    summary_gate = rep["summary"]["release_gate"]
    assert summary_gate["source"] == "debiased" and summary_gate["judge"] == "lenient"
    assert "on the debiased lower bounds (the judge lenient)" in render_html(rep)
    # 10 sampled labels a generator is short of the default 30: no pass, and it says why
    s = Study.open(sampled)
    try:
        s.set_setting("release_gate_min_items", 30)
    finally:
        s.close()
    rep = _report(sampled, tmp_path, "few")
    for gen in GENS:
        gate = rep["generators"]["by_generator"][gen]["release_gate"]
        assert gate["pass"] is False and "20 sampled human labels" in gate["note"]


@pytest.mark.parametrize(
    "value, needle",
    [
        ({"source": "judges", "verdict_pass_rate": 0.5}, '\'source\' is "humans" or "debiased"'),
        ({"judge": "lenient", "verdict_pass_rate": 0.5}, 'goes with "source": "debiased"'),
        ({"source": "debiased"}, "thresholds by figure"),
        ({"source": "debiased", "verdict_pass_rate": "high"}, "thresholds by figure"),
    ],
)
def test_a_bad_release_gate_is_one_line(value, needle) -> None:
    from annotator.services.study import check_setting

    with pytest.raises(InputError) as e:
        check_setting("release_gate", value)
    assert needle in str(e.value) and "\n" not in str(e.value) and "release_gate" in str(e.value)
    check_setting("release_gate", {"source": "debiased", "judge": "j", "verdict_pass_rate": 0.7})


def test_a_figure_covers_only_the_items_its_sample_could_reach(sampled, tmp_path):
    """Items imported after the draw had no chance of being sampled, so a debiased figure may not
    reach over them (giving each its generator's sampling rate would claim a chance they never
    had): the figure covers the draw's frame and says how many came since; a top-up brings them
    in."""
    import shutil

    study = tmp_path / "study"
    shutil.copytree(sampled, study)
    before = _report(study, tmp_path, "before")["debiased"]["judges"]["lenient"]["by_generator"]
    src = tmp_path / "late"
    rows, scores = [], ["item_id,judge,metric,value,reason"]
    for k in range(6):
        for g, gen in enumerate(GENS):
            item = f"late-{gen}-{k}"
            img = make_png(src / "out" / f"{item}.png", colour=(5 * k, 90 * g, 200))
            rows.append(
                {
                    "item_id": item,
                    "case_id": f"late{k}",
                    "prompt": f"Draw late screen {k}",
                    "generator": gen,
                    "images": [str(img.relative_to(src))],
                }
            )
            scores.append(f"{item},lenient,instruction_following,PASS,")
            scores += [f"{item},lenient,{key},{value}," for key, value in PASSING.items()]
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(study)]) == 0
    (tmp_path / "late.csv").write_text("\n".join(scores) + "\n", encoding="utf-8")
    assert main(["import", "judge", str(tmp_path / "late.csv"), "--study", str(study)]) == 0
    after = _report(study, tmp_path, "after")["debiased"]["judges"]["lenient"]["by_generator"]
    for gen in GENS:
        fig, was = after[gen]["verdict_pass_rate"], before[gen]["verdict_pass_rate"]
        assert fig["outside_frame"]["n_items"] == 6, fig
        assert "imported since could not have been drawn" in fig["outside_frame"]["note"]
        assert fig["n_items"] == was["n_items"]  # the six late ones are not in the figure
        assert fig["ppi"] == was["ppi"]
    # a top-up gives them the chance the others had: then the figure covers them
    assert main(["assign", "--study", str(study), "--raters", "ann,bob", "--sample", "20",
                 "--seed", "3"]) == 0  # fmt: skip
    topped = _report(study, tmp_path, "topped")["debiased"]["judges"]["lenient"]["by_generator"]
    for gen in GENS:
        fig = topped[gen]["verdict_pass_rate"]
        assert (
            "outside_frame" not in fig
            and fig["n_items"] == before[gen]["verdict_pass_rate"]["n_items"] + 6
        )
