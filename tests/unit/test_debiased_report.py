"""The random human sample (`annotator assign --sample`) and the report's debiased section:
a real study on a real SQLite file, imported through the CLI."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from factories import make_png, study_settings, write_manifest

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.domain.sampling import draw_sample
from annotator.services.demo import DEMO_SAMPLE
from annotator.services.study import Study
from annotator.stats.debiased import MIN_UNITS_FOR_INTERVAL

REPO = Path(__file__).resolve().parents[2]
GENS = ("gen-a", "gen-b")
N_CASES, PER_CELL = 10, 3  # 30 items per generator, three per case


def _build(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """A study where two humans rated every item (a census) and a lenient judge scored all;
    returns it and each item's human verdict on instruction_following (1 = PASS)."""
    src = tmp_path / "src"
    rows, truth = [], {}
    rng = np.random.default_rng(1)
    for c in range(N_CASES):
        for g, gen in enumerate(GENS):
            for k in range(PER_CELL):
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
                truth[item] = int(rng.random() < (0.7 if g == 0 else 0.4))
    study = tmp_path / "study"
    assert main(["new", str(study), "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(study)]) == 0
    ratings, judge = tmp_path / "ratings.csv", tmp_path / "judge.csv"
    with ratings.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "rater", "metric", "value", "partial"])
        for item, y in truth.items():
            for r in ("ann", "bob"):
                w.writerow([item, r, "instruction_following", "PASS" if y else "FAIL", "yes"])
    with judge.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "judge", "metric", "value", "reason"])
        for i, (item, _y) in enumerate(truth.items()):
            # lenient: PASS everywhere but on every fourth item the humans failed
            w.writerow(
                [
                    item,
                    "lenient",
                    "instruction_following",
                    "FAIL" if (not _y and i % 4 == 0) else "PASS",
                    "",
                ]
            )
    assert main(["import", "ratings", str(ratings), "--study", str(study)]) == 0
    assert main(["import", "judge", str(judge), "--study", str(study)]) == 0
    return study, truth


def record_llm_scores(study: Path, rows: list[tuple]) -> None:
    """A judge "llm" (version v1) with its answers and stated confidences on the study's items:
    rows of (item_id, answers, reason, raw, confidences), as judge_store.record_scores takes."""
    from annotator.store import judge_store

    s = Study.open(study)
    try:
        run = judge_store.start_run(
            s.db,
            judge="llm",
            model="m",
            prompt_sha256="0" * 64,
            schema="{}",
            base_url=None,
            rubric_version=s.rubric.version,
            version="v1",
        )
        judge_store.record_scores(s.db, run, "llm", "v1", rows)
    finally:
        s.close()


def _report(study: Path, tmp_path: Path, name: str) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["report", "--study", str(study), "--json", str(out), "--boot", "50"]) == 0
    return json.loads(out.read_text())


def test_no_sample_says_how_to_draw_one_then_only_sampled_answers_count(tmp_path, capsys):
    study, truth = _build(tmp_path)
    before = _report(study, tmp_path, "before")
    assert before["debiased"]["recorded"] is False
    assert "assign --sample N" in before["debiased"]["note"]
    assert before["summary"]["debiased"]["lines"] == []
    from annotator.reports.html_report import render_html

    assert "no random human sample recorded" in render_html(before)

    assert (
        main(
            [
                "assign",
                "--study",
                str(study),
                "--raters",
                "ann,bob",
                "--sample",
                "10",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert "human sample: 20 items" in said and "gen-a 10/30" in said
    sample = study_settings(study)["human_sample"]
    assert sample["rates"] == {"gen-a": pytest.approx(1 / 3), "gen-b": pytest.approx(1 / 3)}
    assert len(sample["items"]) == 20 and list(sample["items"].values()) == pytest.approx(
        [1 / 3] * 20
    )
    # spread over the cases: 10 of 30 items, three per case, so one from each case
    per_case = Counter(i.rsplit("-", 1)[0] for i in sample["items"])
    assert set(per_case.values()) == {1}

    rep = _report(study, tmp_path, "after")
    sec = rep["debiased"]
    assert sec["recorded"] and sec["sample"]["n_drawn"] == 20
    assert sec["sample"]["n_human_items_outside_sample"] == 40  # rated, never used
    for gen in GENS:
        fig = sec["judges"]["lenient"]["by_generator"][gen]["instruction_following"]
        drawn = [i for i in sample["items"] if f"-{gen}-" in i]
        # humans-only on the sampled items alone (one item per case: every case weighs the same)
        assert fig["humans_only"]["estimate"] == pytest.approx(np.mean([truth[i] for i in drawn]))
        assert fig["humans_only"]["n"] == 10 and fig["n_items"] == 30
        assert fig["judge_minus_humans"]["estimate"] > 0  # lenient
        # ten labels: an interval there covers less than it claims (validity.md), so none
        assert fig["effective_sampled_units"] == 10
        for part in ("ppi", "humans_only", "judge_minus_humans"):
            assert fig[part]["low"] is None and fig[part]["high"] is None
            assert "counts as 10 labels (fewer than 20" in fig[part]["note"]
    lines = rep["summary"]["debiased"]["lines"]
    assert lines and all("`annotator assign --sample N` draws more" in x for x in lines)

    # topped up to 20 per generator: the intervals are printed and read
    args = ["assign", "--study", str(study), "--raters", "ann,bob", "--sample", "20"]
    assert main([*args, "--seed", "3"]) == 0
    rep = _report(study, tmp_path, "topped")
    for gen in GENS:
        fig = rep["debiased"]["judges"]["lenient"]["by_generator"][gen]["instruction_following"]
        assert fig["n_sampled"] == 20
        assert fig["ppi"]["low"] <= fig["ppi"]["estimate"] <= fig["ppi"]["high"]
    lines = rep["summary"]["debiased"]["lines"]
    label = rep["metrics"]["instruction_following"]["label"]
    assert any(f"the judge lenient overstates gen-b's pass rate on {label}" in x for x in lines)


def test_sample_tops_up_keeps_drawn_items_and_deals_only_the_sample(tmp_path, capsys):
    study, _ = _build(tmp_path)
    assert (
        main(
            [
                "assign",
                "--study",
                str(study),
                "--raters",
                "ann",
                "--overlap",
                "1",
                "--sample",
                "6",
                "--seed",
                "9",
            ]
        )
        == 0
    )
    first = set(study_settings(study)["human_sample"]["items"])
    assert (
        main(
            ["assign", "--study", str(study), "--raters", "ann", "--overlap", "1", "--sample", "15"]
        )
        == 0
    )
    second = study_settings(study)["human_sample"]
    with sqlite3.connect(study / "study.sqlite") as con:
        dealt = con.execute("SELECT count(*) FROM assignments").fetchone()[0]
    assert first <= set(second["items"]) and len(second["items"]) == 30
    assert second["seed"] == 9  # the top-up keeps the sample's seed
    assert list(second["items"].values()) == pytest.approx([0.5] * 30)
    assert dealt == 30  # the sample's items only, not all 60
    # the sample names items and generators: it stays in the study, never in a rater package
    from annotator.services.packages import export_package

    s = Study.open(study)
    try:
        export_package(s, "ann", tmp_path / "ann.annot")
    finally:
        s.close()
    with sqlite3.connect(tmp_path / "ann.annot") as con:
        keys = {k for (k,) in con.execute("SELECT key FROM settings")}
    assert "human_sample" not in keys and "name" in keys
    assert b"human_sample" not in (tmp_path / "ann.annot").read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ["--sample", "0"],
        ["--sample", "5", "--sample-share", "0.5"],
        ["--sample-share", "1.5"],
        ["--on-demand", "--sample", "5"],
    ],
)
def test_bad_sample_requests_are_one_line_and_exit_2(tmp_path, capsys, args):
    study, _ = _build(tmp_path)
    capsys.readouterr()
    assert main(["assign", "--study", str(study), "--raters", "ann", "--overlap", "1", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--sample" in err
    assert "human_sample" not in study_settings(study)


def test_every_item_has_the_recorded_chance_of_being_drawn():
    """Systematic selection over items ordered by case: over 2000 seeds each item is drawn at
    its recorded rate (7 of 25, uneven cases), and each case gets its share rounded down or up."""
    live = [(k, f"i{k}", "g", f"c{k % 4 if k < 20 else 9}") for k in range(25)]
    counts: Counter[str] = Counter()
    for seed in range(2000):
        s = draw_sample(live, n=7, share=None, seed=seed, before=None, created_at="t")
        assert list(s["items"].values()) == pytest.approx([7 / 25] * 7)
        counts.update(list(s["items"]))
        per_case = Counter(c for _, i, _, c in live if i in s["items"])
        sizes = Counter(c for *_, c in live)
        for c, size in sizes.items():
            assert abs(per_case.get(c, 0) - 7 * size / 25) < 1
    share = np.array([counts[f"i{k}"] / 2000 for k in range(25)])
    assert np.all(np.abs(share - 7 / 25) < 4 * np.sqrt(0.28 * 0.72 / 2000))
    with pytest.raises(InputError, match="--sample"):
        draw_sample([], n=3, share=None, seed=1, before=None, created_at="t")


def test_the_demo_records_a_sample_and_its_report_has_the_section(demo_study_dir):
    from annotator.services.reporting import build_study_report

    s = Study.open(demo_study_dir, mode="read")
    try:
        rep = build_study_report(s, n_boot=20)
    finally:
        s.close()
    sec = rep["debiased"]
    assert sec["recorded"] and sec["sample"]["n_drawn"] == 3 * DEMO_SAMPLE
    judge = sec["judges"]["demo-lenient-judge"]["by_generator"]
    assert sorted(judge) == ["gen-alpha", "gen-beta", "gen-gamma"]
    fig = judge["gen-gamma"]["verdict_pass_rate"]
    assert fig["n_sampled"] == DEMO_SAMPLE and fig["ppi"]["estimate"] is not None
    # the judge-only set came in before the draw: the sample was drawn over all of a
    # generator's 102 items (12 everyone rated, 90 judge-only), so the figure covers them all
    assert fig["n_items"] == 102 and "outside_frame" not in fig
    assert all("outside_frame" not in f for figs in judge.values() for f in figs.values())
    # and the judge's pair votes on every pair, corrected by the voters on the pair sample
    pairs = sec["pairs"]
    assert pairs["recorded"] and pairs["sample"]["n_drawn"] == 3 * DEMO_SAMPLE
    win = pairs["judges"]["demo-lenient-judge"]["by_pair"]["gen-alpha vs gen-gamma"]
    assert win["n_sampled"] == DEMO_SAMPLE and win["n_items"] == 114
    assert win["ppi"]["estimate"] > 0.5  # the voters prefer gen-alpha
    # enough labels for intervals that hold (validity.md): every generator's pass rate, gates
    # and scales, and every generator pair's win rate has one (a tag's figure reads the items
    # the judge tagged, a judge's empty tag cell being no answer: 71-80 a generator, too few
    # of them sampled)
    assert fig["effective_sampled_units"] == DEMO_SAMPLE >= MIN_UNITS_FOR_INTERVAL
    for g, figs in judge.items():
        for name, f in figs.items():
            if not name.startswith("failure_tags:"):
                assert f["ppi"]["low"] <= f["ppi"]["estimate"] <= f["ppi"]["high"], (g, name)
    for k, w in pairs["judges"]["demo-lenient-judge"]["by_pair"].items():
        assert w["ppi"]["low"] <= w["ppi"]["estimate"] <= w["ppi"]["high"], k
    # the judge adds to the humans where it varies with the truth (gen-gamma's layouts, 2 or
    # 3 and never 5, read 1 point high on average): a tuned lambda above 0, and more labels'
    # worth than the humans gave; the worth is the humans-only interval's width over the
    # debiased one's, squared, times the labels (the two share a t quantile), checked where
    # neither interval is cut at the scale's ends
    lay = judge["gen-gamma"]["layout_hierarchy"]
    h, p = lay["humans_only"], lay["ppi"]
    assert lay["lambda"] > 0 and lay["effective_human_labels"] > lay["n_sampled"] == DEMO_SAMPLE
    assert 1 < min(h["low"], p["low"]) and max(h["high"], p["high"]) < 5
    ratio = (h["high"] - h["low"]) / (p["high"] - p["low"])
    assert lay["effective_human_labels"] == pytest.approx(DEMO_SAMPLE * ratio**2, abs=0.1)
    # the summary says how far the judge was off, with intervals, and what it was worth
    lines = rep["summary"]["debiased"]["lines"]
    assert lines and not any("no interval" in x for x in lines)
    assert any(
        x.startswith("the judge demo-lenient-judge overstates gen-alpha's pass rate by")
        for x in lines
    ), lines
    # the HTML shows the section with the summary's sentences; the CSV has a row per figure
    import html as html_lib

    from annotator.reports.html_report import render_html
    from annotator.reports.view_debiased import debiased_table

    page = html_lib.unescape(render_html(rep))
    assert 'id="debiased"' in page and lines[0] in page
    assert "no random human sample recorded" not in page
    table = debiased_table(rep)
    per_item = ~table["figure"].isin(["win_rate", "bt_strength"])
    # both judges' figures: the lenient judge's and the rubber stamp's (gates, scales, verdict)
    assert per_item.sum() == sum(
        len(f) for j in sec["judges"].values() for f in j["by_generator"].values()
    )
    assert (table["figure"] == "win_rate").sum() == 3  # one per generator pair
    assert (table["figure"] == "bt_strength").sum() == 3  # one per generator
    row = table[(table["generator"] == "gen-gamma") & (table["figure"] == "verdict_pass_rate")]
    assert row["ppi"].iloc[0] == pytest.approx(fig["ppi"]["estimate"])
    # the reader sees the rubric's labels, never a report key (the CSV keeps the keys, for
    # machines): in the summary's sentences, the next steps and the HTML table's figure column
    from annotator.reports.view_debiased import debiased_view

    keys = [k for k in sec["figures"] if k != "verdict_pass_rate"]
    labels = {k: rep["metrics"][k]["label"] for k in keys}
    steps = [s["text"] for s in rep["summary"]["known"] if "debiased" in s["text"]]
    shown = [r["figure"] for j in debiased_view(rep)["judges"] for r in j["rows"]]
    for text in lines + steps + shown:
        assert not any(k in text for k in keys), text
    assert "Verdict (pass rate)" in shown and f"{labels['layout_hierarchy']} (mean score)" in shown
    # each figure with an interval says what the judge was worth, or that it cannot help yet
    # or added nothing
    worth = ("human labels' worth from", "the judge cannot help yet", "the judge added nothing")
    assert all(any(w in line for w in worth) for line in lines if "no interval" not in line)


def test_a_judge_off_the_rubric_scale_is_summarised_by_its_worth():
    from annotator.stats.debiased import debiased_summary

    fig = {
        "n_sampled": 40,
        "judge_only": None,
        "ppi": {"estimate": 3.9, "low": 3.7, "high": 4.1, "n": 160},
        "effective_human_labels": 52.4,
    }
    sec = {
        "recorded": True,
        "figures": {"faithfulness": "mean score"},
        "judges": {"clip": {"by_generator": {"sd": {"faithfulness": fig}}}},
    }
    (line,) = debiased_summary(sec, {"faithfulness": "Faithful to the prompt"})["lines"]
    assert line == (
        "sd's mean score on Faithful to the prompt debiased with the judge clip (not on the "
        "rubric's scale): 3.90 [3.70, 4.10], 52 human labels' worth from 40 rated items"
    )


@pytest.mark.parametrize(
    "err,says",
    [
        (
            {"estimate": 0.12, "low": 0.05, "high": 0.19},
            "overstates sd's pass rate by 0.12 [0.05, 0.19]",
        ),
        (
            {"estimate": -0.12, "low": -0.19, "high": -0.05},
            "understates sd's pass rate by 0.12 [0.05, 0.19]",
        ),
        (
            {"estimate": -0.03, "low": -0.10, "high": 0.04},
            "is off the humans on sd's pass rate by -0.03 [-0.10, +0.04] (no clear bias)",
        ),
    ],
)
def test_how_far_the_judge_was_off_reads_with_its_sign(err, says):
    """The sign is in the verb and the size with its interval is positive (an understatement
    read 'by 0.12 [-0.19, -0.05]' before)."""
    from annotator.stats.debiased import debiased_summary

    fig = {"n_sampled": 40, "judge_minus_humans": err, "ppi": {}}
    sec = {
        "recorded": True,
        "figures": {"verdict_pass_rate": "pass rate"},
        "judges": {"j": {"by_generator": {"sd": {"verdict_pass_rate": fig}}}},
    }
    (line,) = debiased_summary(sec)["lines"]
    assert line == f"the judge j {says}"


def test_active_probabilities_follow_the_predicted_error_with_a_uniform_share_and_are_kept():
    from annotator.domain.sampling_active import draw_active

    u = np.array([0.0] * 10 + [0.25] * 10 + [1.0] * 5)
    # the design written out (no loss budget to hold it): 0.9 of n in proportion to the size
    # of the figure's error, sqrt(u (1 - u) + (mean u - u)^2), 0.1 of n uniform
    root = np.sqrt(u * (1 - u) + (u.mean() - u) ** 2)
    pi = 0.9 * 8 * root / root.sum() + 0.1 * 8 / 25
    live = [(k, f"i{k}", "g", f"c{k % 5}") for k in range(25)]
    unc = {f"i{k}": float(x) for k, x in enumerate(u)}
    counts: Counter[str] = Counter()
    for seed in range(3000):
        s = draw_active(live, unc, n=8, share=None, seed=seed, created_at="t", max_loss=10)
        assert set(s["items"]) | set(s["unsampled"]) == {f"i{k}" for k in range(25)}
        assert s["batches"][0]["p"] == pytest.approx({f"i{k}": p for k, p in enumerate(pi)})
        counts.update(list(s["items"]))
    for k in (0, 10, 20):  # drawn at the recorded rate
        assert counts[f"i{k}"] / 3000 == pytest.approx(pi[k], abs=4 * np.sqrt(0.25 / 3000))
    # a uniform top-up of an active sample would mix designs: refused
    with pytest.raises(InputError, match="--active"):
        draw_sample(live, n=3, share=None, seed=1, before=s, created_at="t")


def test_assign_active_weights_the_judges_uncertain_items_and_the_report_reweights(
    tmp_path, capsys
):
    study, truth = _build(tmp_path)
    args = ["assign", "--study", str(study), "--raters", "ann", "--overlap", "1"]
    assert main([*args, "--sample", "10", "--active"]) == 2  # no confidences yet
    assert "--confidence" in capsys.readouterr().err
    assert main([*args, "--active"]) == 2
    # the judge is sure on the first case of every ten items and unsure elsewhere
    record_llm_scores(
        study,
        [
            (
                item,
                {"instruction_following": "PASS" if y else "FAIL"},
                "",
                "",
                {"instruction_following": 0.99 if i % 3 == 0 else 0.6},
            )
            for i, (item, y) in enumerate(truth.items())
        ],
    )
    assert main([*args, "--sample", "14", "--active", "--seed", "4"]) == 0
    sample = study_settings(study)["human_sample"]
    pis = {**sample["items"], **sample["unsampled"]}
    assert len(pis) == 60 and sample["request"]["active"] is True
    sure = [p for i, (item, _) in enumerate(truth.items()) if i % 3 == 0 for p in [pis[item]]]
    unsure = [p for i, (item, _) in enumerate(truth.items()) if i % 3 != 0 for p in [pis[item]]]
    assert max(sure) < min(unsure)  # drawn where the judge is least sure, never never
    rep = _report(study, tmp_path, "active")
    fig = rep["debiased"]["judges"]["llm"]["by_generator"]["gen-a"]["instruction_following"]
    drawn = [i for i in sample["items"] if "-gen-a-" in i]
    assert len(drawn) >= 10  # this seed draws enough for a figure
    # the humans-only figure is the 1/pi-weighted mean of the drawn items
    w = np.array([1 / sample["items"][i] for i in drawn])
    y = np.array([truth[i] for i in drawn], float)
    assert fig["humans_only"]["estimate"] == pytest.approx(float(w @ y / w.sum()))
    # again --active on a study with a sample: refused, nothing changed
    assert main([*args, "--sample", "10", "--active"]) == 2
    assert study_settings(study)["human_sample"] == sample


def test_the_demos_judge_only_set_outnumbers_the_sample_and_is_drawn_small(tmp_path):
    """The demo's judge scores four times the items its humans sample, further variants of
    its cases drawn as small wireframes (the build stays short)."""
    from PIL import Image

    from annotator.demo import scenario

    files = scenario.write_judge_only_inputs(tmp_path, variants=1)
    items = [json.loads(line) for line in files.manifest.read_text().splitlines()]
    assert len(items) == len(scenario.DEMO_CASES) * len(scenario.GENERATORS)
    assert items[0]["item_id"].startswith("demo-1") and len({i["item_id"] for i in items}) == 18
    with Image.open(tmp_path / items[0]["images"][0]) as im:
        assert im.size == (180, 380)
    with files.judge_csv.open() as fh:
        judged = {r["item_id"] for r in csv.DictReader(fh)}
    assert judged == {i["item_id"] for i in items}
    n = len(scenario.DEMO_CASES) * len(scenario.GENERATORS) * scenario.JUDGE_ONLY_VARIANTS
    # with the 36 items everyone rated, the sample's frame: four times the sample
    assert n + 36 >= 4 * 3 * DEMO_SAMPLE


def test_the_summary_says_both_readings_of_worth_where_they_part():
    """The labels' worth the sample's interval reached and what rho gives at the best weight
    (the figure's own words) are one sentence apart: where they differ by more than a tenth,
    the summary names both, so it never contradicts the figure."""
    from annotator.stats.debiased import worth_words

    value = {"rho": 0.63, "rho_low": 0.2, "rho_high": 0.86, "n_eff": 35.2}
    fig = {"effective_human_labels": 22.3, "n_sampled": 24, "judge_value": value}
    assert worth_words(fig) == (
        "22 human labels' worth from 24 rated items (rho 0.63 [0.20, 0.86]; by rho alone about "
        "35 at the best weight)"
    )
    close = {**fig, "effective_human_labels": 33.0}
    assert worth_words(close).endswith("(rho 0.63 [0.20, 0.86])")
