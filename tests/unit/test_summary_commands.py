"""Every command the summary prints runs as printed: on a copy of the demo,
from the folder that holds it (the commands name the study as the report does), each
`summary.to_decide` command exits 0."""

from __future__ import annotations

import shlex
import shutil

from annotator.cli import main
from annotator.services.reporting import build_study_report
from annotator.services.study import Study


def test_each_suggested_command_runs_on_the_demo(small_demo_dir, tmp_path, monkeypatch):
    study_dir = tmp_path / "demo"
    shutil.copytree(small_demo_dir, study_dir)
    for p in study_dir.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    study = Study.open(study_dir, mode="read")
    try:
        report = build_study_report(study, n_boot=50, seed=0)
    finally:
        study.close()
    commands = [e["command"] for e in report["summary"]["to_decide"] if e.get("command")]
    assert commands, report["summary"]["to_decide"]
    monkeypatch.chdir(tmp_path)
    for cmd in commands:
        args = shlex.split(cmd)
        assert args[0] == "annotator", cmd
        assert "--study" in args, cmd
        assert main(args[1:]) == 0, cmd
