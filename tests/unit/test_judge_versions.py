"""Judge versions: a new prompt or setting is a new version stored beside the old one, resumable
per version; the report and `annotator judge compare` compare two versions on the same items
against the human consensus (checked against a hand count), and the migration carries data."""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path

import pytest
from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.cli import main
from annotator.services.judging import JudgeConfig, judge_study
from annotator.services.reporting import study_frames
from annotator.services.study import DB_NAME, Study
from annotator.stats.report_model import build_report
from annotator.store.engine import current_revision, downgrade, head_revision, make_engine

try:
    from .judge_server import JudgeServer
except ImportError:
    from judge_server import JudgeServer

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"\[\[(it-\d-\d)\]\]")


def _study(tmp_path: Path) -> Study:
    study = Study.create(tmp_path / "st", REPO / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    rows = basic_rows(src)
    for r in rows:
        r["prompt"] += f" [[{r['item_id']}]]"  # the test server answers per item by it
    study.import_items(write_manifest(src, rows))
    # three raters agree: generator 2 misses a section; every layout is a 4
    ratings = tmp_path / "ratings.csv"
    with ratings.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rater", "metric", "value"])
        for r in rows:
            g = int(r["item_id"][-1])
            for rater in ("r1", "r2", "r3"):
                w.writerow(
                    [r["item_id"], rater, "instruction_following", "FAIL" if g == 2 else "PASS"]
                )
                w.writerow([r["item_id"], rater, "text_rendering", "PASS"])
                w.writerow([r["item_id"], rater, "layout_hierarchy", 4])
                w.writerow([r["item_id"], rater, "ui_affordance", 3])
    study.import_ratings(ratings)
    return study


def _careful(raw: str) -> dict:
    """The second version: catches generator 2's missing section, scores layouts 4."""
    item = MARKER.search(raw).group(1)
    return {
        "instruction_following": "FAIL" if item.endswith("-2") else "PASS",
        "layout_hierarchy": 4,
    }


@pytest.fixture
def two_versions(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    study = _study(tmp_path)
    with JudgeServer() as server:
        # version 1: the server's default answers (every gate PASS, every scale 5)
        v1 = JudgeConfig(model="m", base_url=server.base_url, api="chat", judge_name="j")
        assert judge_study(study, v1).n_scored == 9
        server.decide = _careful
        v2 = JudgeConfig(
            model="m", base_url=server.base_url, api="chat", judge_name="j", confidence="field"
        )
        assert judge_study(study, v2).n_scored == 9
        calls = len(server.calls)
        # each version resumes on its own: nothing left to ask either
        assert judge_study(study, v2).n_skipped == 9 and judge_study(study, v1).n_skipped == 9
        assert len(server.calls) == calls
    yield study
    study.close()


def test_versions_are_stored_side_by_side_and_figures_read_the_latest(two_versions):
    with two_versions.db.read() as s:
        versions = s.execute(
            text("SELECT version, count(*) FROM judge_scores GROUP BY version ORDER BY min(id)")
        ).all()
        runs = s.execute(text("SELECT DISTINCT version FROM judge_runs ORDER BY id")).all()
    assert len(versions) == 2 and [n for _v, n in versions] == [45, 45]
    assert [r[0] for r in runs] == [v for v, _n in versions]
    frames = study_frames(two_versions)
    assert len(frames.judge_score_versions) == 90 and len(frames.judge_scores) == 45
    latest = frames.judge_score_versions[frames.judge_score_versions["order"] == 1]
    assert sorted(frames.judge_scores["value"].astype(str)) == sorted(latest["value"].astype(str))


def test_report_compares_the_versions_against_a_hand_count(two_versions):
    two_versions.set_setting("min_count_for_share", 5)  # nine items: shares from five
    report = build_report(study_frames(two_versions), n_boot=300, seed=0)
    entry = report["judge_versions"]["j"]
    assert [v["with_confidence"] for v in entry["versions"]] == [False, True]
    per_version = [v["agreement"]["instruction_following"] for v in entry["versions"]]
    assert [a["estimate"] for a in per_version] == [pytest.approx(6 / 9), 1.0]
    m = entry["comparison"]["metrics"]
    # instruction_following: version 1 calls all 9 PASS, right on the 6 of generators 0 and 1;
    # version 2 is right on all 9; the 3 of generator 2 got better
    inst = m["instruction_following"]
    assert inst["a"]["estimate"] == pytest.approx(6 / 9) and inst["b"]["estimate"] == 1.0
    assert inst["difference"]["estimate"] == pytest.approx(3 / 9)
    # paired: the same items in every resample, so it never goes below 0 (3 of 9 items differ,
    # all in one direction; a resample without them, about e^-3 of the Poisson resamples, is 0)
    assert inst["difference"]["low"] >= 0
    assert inst["changed"]["n_better"] == 3 and inst["changed"]["n_worse"] == 0
    assert sorted(c["item_id"] for c in inst["changed"]["better"]) == ["it-0-2", "it-1-2", "it-2-2"]
    assert inst["changed"]["better"][0] == {
        "item_id": inst["changed"]["better"][0]["item_id"],
        "a": "PASS",
        "b": "FAIL",
        "humans": "FAIL",
    }
    # layout: a mean absolute error of 1 (5 against 4) falls to 0 on every item
    lay = m["layout_hierarchy"]
    assert (lay["measure"], lay["better_if"]) == ("mean_abs_error", "lower")
    assert (lay["a"]["estimate"], lay["b"]["estimate"], lay["difference"]["estimate"]) == (1, 0, -1)
    assert lay["changed"]["n_better"] == 9
    # text_rendering never changed: no difference, nothing listed
    tr = m["text_rendering"]
    assert tr["changed"]["n"] == 0 and tr["difference"]["estimate"] == 0
    # the figures of today read the latest version: its exact agreement on the gate is 1
    assert report["metrics"]["instruction_following"]["judges"]["j"]["exact_agreement"] == 1.0
    # `judge compare` prints the report's own figures: the same resamples of the same items
    from annotator.services.judging import compare_judges

    versions = [v["version"] for v in entry["versions"]]
    cli = compare_judges(
        str(two_versions.folder), f"j@{versions[0]}", f"j@{versions[1]}", n_boot=300, seed=0
    )
    assert cli["metrics"] == entry["comparison"]["metrics"]


def test_judge_compare_prints_the_comparison_and_refuses_bad_refs(two_versions, capsys):
    folder = str(two_versions.folder)
    frames = study_frames(two_versions)
    v1 = frames.judge_score_versions.query("order == 0")["version"].iloc[0]
    two_versions.close()
    assert (
        main(
            [
                "judge",
                "compare",
                "--study",
                folder,
                "--judge",
                f"j@{v1[:6]}",
                "--judge",
                "j",
                "--boot",
                "200",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert f"A = j@{v1}" in out
    line = next(x for x in out.splitlines() if x.startswith("instruction_following"))
    assert "changed 3: better 3, worse 0" in line and "B-A 0.333" in line
    assert out.count("\n  better\tit-") == 3 + 9 + 3  # instruction, layout and verdict items
    for refs, message in (
        (["nobody", "j"], "has no judge 'nobody'"),
        (["j@ffff", "j"], "'j@ffff' matches no version of judge 'j'"),
        (["j@", "j"], "is not a judge"),
        (["j"], "give --judge exactly twice"),
    ):
        argv = ["judge", "compare", "--study", folder]
        for r in refs:
            argv += ["--judge", r]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, err


def test_going_back_to_0006_keeps_every_row_under_its_own_name(two_versions, tmp_path):
    folder = two_versions.folder
    two_versions.close()
    engine = make_engine(folder / DB_NAME)
    downgrade(engine, "0006")
    assert current_revision(engine) == "0006"
    engine.dispose()
    with sqlite3.connect(folder / DB_NAME) as c:
        judges = dict(c.execute("SELECT judge, count(*) FROM judge_scores GROUP BY judge"))
    assert judges["j"] == 45 and sum(judges.values()) == 90
    assert [k for k in judges if k != "j"][0].startswith("j@")
    study = Study.open(folder)  # and up again
    try:
        assert current_revision(study.db.engine) == head_revision()
        with study.db.read() as s:
            assert s.execute(text("SELECT count(*) FROM judge_scores")).scalar() == 90
    finally:
        study.close()


def test_the_demo_shows_versions_calibration_and_the_judges_position_bias(demo_study_dir):
    study = Study.open(demo_study_dir, mode="read")
    try:
        report = build_report(study_frames(study), n_boot=200, seed=0)
    finally:
        study.close()
    entry = report["judge_versions"]["demo-lenient-judge"]
    assert entry["latest"] == "import" and entry["versions"][0]["with_confidence"]
    verdict = entry["comparison"]["metrics"]["verdict"]
    # the lenient latest version is a regression: worse on the verdict, beyond its interval
    assert verdict["difference"]["high"] < 0
    assert verdict["changed"]["n_worse"] > verdict["changed"]["n_better"]
    cal = report["judge_calibration"]["demo-lenient-judge"]
    # both versions state confidences: the calibration is the latest's, as certified judging's
    assert entry["versions"][-1]["with_confidence"] and cal["version"] == entry["latest"]
    gate = cal["metrics"]["instruction_following"]
    assert gate["ece"]["low"] is not None and gate["bins"]
    judge = report["pairwise"]["judges"]["demo-lenient-judge"]
    assert judge["position_bias"]["flagged"] and judge["swap_consistency"]["estimate"] < 0.8


def test_a_run_from_before_versions_resumes_after_the_upgrade(tmp_path, monkeypatch):
    """Migration 0007 gives an old run the version a run with default settings gets now, so
    running the same judge again after the upgrade asks nothing."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    study = _study(tmp_path)
    folder = study.folder
    with JudgeServer() as server:
        cfg = JudgeConfig(model="m", base_url=server.base_url, judge_name="j")
        assert judge_study(study, cfg).n_scored == 9
        study.close()
        engine = make_engine(folder / DB_NAME)
        downgrade(engine, "0006")  # as if scored before versions existed
        engine.dispose()
        study = Study.open(folder)
        try:
            calls = len(server.calls)
            assert judge_study(study, cfg).n_skipped == 9
            assert len(server.calls) == calls
            with study.db.read() as s:
                assert (
                    s.execute(text("SELECT count(DISTINCT version) FROM judge_runs")).scalar() == 1
                )
        finally:
            study.close()


def test_the_judge_scores_export_holds_the_latest_version_and_imports_back_unchanged(
    two_versions, tmp_path
):
    from annotator.services.exports import export_table

    path, n = export_table(two_versions, "judge-scores", tmp_path / "judge.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert n == len(rows) == 45  # one row per judge x item x metric, not one per version
    frames = study_frames(two_versions)
    latest = {(r.item_id, r.metric): str(r.value) for r in frames.judge_scores.itertuples()}
    assert {(r["item_id"], r["metric"]): r["value"] for r in rows}.keys() == latest.keys()
    # imported back, the file is one more version ("import") with the latest one's answers:
    # every figure reads the same values as before
    assert two_versions.import_judge(path) == 45
    after = study_frames(two_versions).judge_scores
    assert {(r.item_id, r.metric): str(r.value) for r in after.itertuples()} == latest


def test_a_run_stores_the_schema_text_its_version_was_hashed_from(two_versions):
    """The judge's schema has two texts on purpose (judge/schema.py): each score is asked with,
    and its prompt hash covers, the compact `schema_json`; a run stores, and its version hashes,
    `version_schema_text`, the text every stored version (and migration 0007) was hashed from.
    Both are the same schema; and the pair task's canonical text is the recipe its stored
    versions were hashed with."""
    import json

    from annotator.judge.pairs import pair_schema, pair_task
    from annotator.judge.schema import judge_schema, schema_json, version_schema_text
    from annotator.judge.versions import judge_version

    rubric = two_versions.rubric
    with sqlite3.connect(two_versions.folder / DB_NAME) as c:
        runs = c.execute(
            "SELECT model, prompt_sha256, schema, settings, version FROM judge_runs "
            "WHERE kind != 'import' ORDER BY id"
        ).fetchall()
    assert len({r[-1] for r in runs}) == 2  # each version resumed once: four runs, two versions
    for model, sha, schema, settings, version in runs:
        field = json.loads(settings)["confidence"] == "field"
        assert schema == version_schema_text(rubric, field)
        assert (
            json.loads(schema)
            == json.loads(schema_json(rubric, field))
            == judge_schema(rubric, field)
        )
        assert version == judge_version(model, sha, schema, json.loads(settings))
    task = pair_task(rubric, JudgeConfig(model="m"), None)
    assert task.schema_text == json.dumps(pair_schema(), sort_keys=True, separators=(",", ":"))
