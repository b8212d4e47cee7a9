"""Calibration through the service and the CLI: feedback, verdict, stored record, history."""

from __future__ import annotations

from pathlib import Path

from annotator.cli import main
from annotator.services.calibration import CalibrationSession
from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]


def test_calibration_qualifies_on_reference_answers_and_not_on_wrong_ones(tmp_path, capsys):
    study = Study.create(tmp_path / "st", REPO / "rubrics" / "ui_mockup.toml")
    study.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
    study.add_rater("ann")
    from annotator.store.anchors import anchors

    refs = {pk: ref for pk, _s, ref, _r in anchors(study.db)}
    good = CalibrationSession(study, "ann")
    while (item := good.next()) is not None:
        fb = good.submit(item, dict(refs[item.item_pk]), 1000)
        assert all(f.match for f in fb) and all(f.rationale for f in fb)
    result = good.finish()
    assert result["qualified"] and result["verdict"] == "qualified"
    assert result["metrics"]["layout_hierarchy"]["rule"] == "within one point"

    bad = CalibrationSession(study, "ann")
    while (item := bad.next()) is not None:
        wrong = dict(refs[item.item_pk])
        wrong["instruction_following"] = (
            "FAIL" if wrong["instruction_following"] == "PASS" else "PASS"
        )
        wrong["layout_hierarchy"] = 0 if wrong["layout_hierarchy"] >= 3 else 5
        fb = bad.submit(item, wrong, 800)
        assert {f.key: f.match for f in fb}["instruction_following"] is False
    result = bad.finish()
    assert not result["qualified"] and result["metrics"]["instruction_following"]["share"] == 0.0
    assert len(bad.history()) == 2
    study.close()

    assert main(["calibrate", "--study", str(tmp_path / "st"), "--rater", "ann", "--history"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and lines[1].endswith("qualified") and lines[2].endswith("not yet")


def test_settings_command_checks_values(tmp_path, capsys):
    st = str(tmp_path / "st")
    assert main(["new", st, "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    assert main(["set", "pair_question", "Which mockup would you ship?", "--study", st]) == 0
    assert main(["set", "anchor_every", "10", "--study", st]) == 0
    assert main(["set", "anchor_every", "1", "--study", st]) == 2
    assert main(["set", "qualification", '{"gate_exact": 1.5}', "--study", st]) == 2
    assert main(["set", "colour", "red", "--study", st]) == 2
    capsys.readouterr()
    assert main(["set", "anchor_every", "--study", st]) == 0
    assert capsys.readouterr().out.strip() == "10"
    study = Study.open(st)
    assert study.setting("pair_question") == "Which mockup would you ship?"
    study.close()
