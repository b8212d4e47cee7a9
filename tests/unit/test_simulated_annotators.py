"""Simulated annotators (`judge run --simulated-annotators N --shots K`): N calls per item through
the real openai client against a local server, each after K examples a human rater answered;
the majority answer stored with its share as the confidence, a version of its own, the cost
printed first."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.base.task import TaskState
from annotator.cli import main
from annotator.judge.simulated import majority
from annotator.services.judging import JudgeConfig, few_shot_panels, judge_study
from annotator.services.reporting import study_frames
from annotator.services.study import Study

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
        r["prompt"] += f" [[{r['item_id']}]]"  # the server answers by the markers it sees
    study.import_items(write_manifest(src, rows))
    ratings = tmp_path / "ratings.csv"
    with ratings.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rater", "metric", "value"])
        for r in rows[:6]:
            for rater in ("r1", "r2"):
                w.writerow([r["item_id"], rater, "instruction_following", "PASS"])
                w.writerow([r["item_id"], rater, "text_rendering", "PASS"])
                w.writerow([r["item_id"], rater, "layout_hierarchy", 4])
                w.writerow([r["item_id"], rater, "ui_affordance", 3])
    study.import_ratings(ratings)
    return study


def test_majority_and_its_share() -> None:
    assert majority(["PASS", "FAIL", "PASS"]) == ("PASS", 2 / 3)
    assert majority([3, 4]) == (3, 0.5)  # a tie goes to the earliest annotator's answer
    assert majority([("a", "b"), ("a", "b"), ()]) == (("a", "b"), 2 / 3)


def test_each_item_asked_once_per_annotator_and_the_share_is_the_confidence(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    study = _study(tmp_path)
    try:
        panels = few_shot_panels(study, 3, 2)
        assert [len(p) for p in panels] == [2, 2, 2]
        # annotators 0 and 2 show r1's answers, 1 r2's; r1 never shows one item twice
        assert not {e.request.item_id for e in panels[0]} & {e.request.item_id for e in panels[2]}
        dissenter = panels[2][0].request.item_id
        in_panels = {e.request.item_id for p in panels for e in p}

        def decide(raw: str) -> dict:
            found = MARKER.findall(raw)
            # the third annotator (its first example is `dissenter`) fails every item
            return {"instruction_following": "FAIL" if found[0] == dissenter else "PASS"}

        with JudgeServer() as server:
            server.decide = decide
            cfg = JudgeConfig(
                model="m",
                base_url=server.base_url,
                api="chat",
                judge_name="sim",
                simulated_annotators=3,
                shots=2,
            )
            lines: list[str] = []  # what the task is told without a fraction: the cost first
            task = TaskState(lambda fraction, m: lines.append(m) if fraction is None else None)
            summary = judge_study(study, cfg, task=task)
            assert summary.n_scored == 9
            assert lines == [
                "simulated annotators: 3 prompts x 2 examples each: 3 calls per item (each "
                "carrying 2 examples' text and images); 9 of 9 items to score: 27 calls"
            ]
            assert len(server.calls) == 27
            for call in server.calls:
                markers = MARKER.findall(json.dumps(call.body))
                judged = markers[-1]  # the item comes after its examples
                assert markers.count(judged) == 1  # never shown its own human answer
            # a second run of the same version has nothing left to ask
            assert judge_study(study, cfg).n_skipped == 9 and len(server.calls) == 27
        v = study_frames(study).judge_score_versions
        gate = v[v["metric"] == "instruction_following"].set_index("item_id")
        for item_id, row in gate.iterrows():
            assert row["value"] == "PASS"
            if item_id == dissenter:
                assert row["confidence"] == 1.0  # asked without it, the third agrees
            elif item_id not in in_panels:
                assert row["confidence"] == pytest.approx(2 / 3)
        # the other metrics: every annotator gave the server's default
        assert (v.loc[v["metric"] == "layout_hierarchy", "confidence"] == 1.0).all()
        with study.db.read() as s:
            settings = json.loads(s.execute(text("SELECT settings FROM judge_runs")).scalar())
        assert settings["simulated_annotators"] == 3 and settings["shots"] == 2
        assert len(settings["examples"]) == 64
    finally:
        study.close()


def test_cli_prints_the_cost_first_and_refuses_what_cannot_be(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    study = _study(tmp_path)
    where = str(study.folder)
    study.close()
    with JudgeServer() as server:
        base = ["judge", "run", "--study", where, "--model", "m", "--base-url", server.base_url]
        base += ["--api", "chat"]
        assert main([*base, "--simulated-annotators", "2", "--shots", "1"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("simulated annotators: 2 prompts x 1 examples each")
        assert out[-1].startswith("scored 9")
        bad = [*base, "--simulated-annotators", "2", "--confidence", "field"]
        assert main(bad) == 2
        assert "without --confidence" in capsys.readouterr().err
        assert main([*base, "--simulated-annotators", "2", "--pairs"]) == 2
        assert "pair votes keep no confidence" in capsys.readouterr().err
        # r1 answered 6 items: 4 annotators of 2 raters need 2 x 4 = 8 of theirs
        assert main([*base, "--simulated-annotators", "4", "--shots", "4"]) == 2
        err = capsys.readouterr().err
        assert "--shots" in err and len(err.strip().splitlines()) == 1
