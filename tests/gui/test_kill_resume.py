"""SIGKILL the app mid-session: every answer it reported is on disk, the file is
sound, and a new session resumes at the first unanswered item."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gui_support import RATER

from annotator.services.labeling import LabelSession
from annotator.services.study import Study

DRIVER = Path(__file__).with_name("label_driver.py")
KILL_AFTER = 6


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_session_loses_nothing_reported(ui_study, tmp_path):
    env = dict(
        os.environ, QT_QPA_PLATFORM="offscreen", ANNOTATOR_SETTINGS=str(tmp_path / "child.ini")
    )
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(ui_study.folder), RATER, "--delay-ms", "15"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    printed: list[int] = []
    deadline = time.monotonic() + 60
    try:
        for line in proc.stdout:
            if line.startswith("J "):
                printed.append(int(line.split()[1]))
            if len(printed) >= KILL_AFTER or line.startswith("DONE") or time.monotonic() > deadline:
                break
        os.kill(proc.pid, signal.SIGKILL)  # no shutdown code runs: a crash, not a quit
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        err = proc.stderr.read()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, err
    assert len(printed) >= KILL_AFTER, err
    db = ui_study.folder / "study.sqlite"
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {r[0] for r in con.execute("SELECT id FROM judgements")}
        answered = {r[0] for r in con.execute("SELECT item_pk FROM judgements")}
        queue = [
            r[0]
            for r in con.execute(
                "SELECT q.item_pk FROM queue q JOIN raters r ON r.id = q.rater_pk WHERE r.name = ? "
                "ORDER BY q.position",
                (RATER,),
            )
        ]
    assert set(printed) <= stored  # every reported commit survived the kill
    assert len(stored) - len(printed) <= 1  # at most the one committing at the kill went unreported
    assert len(answered) < len(queue)  # killed mid-session indeed
    first_unanswered = next(pk for pk in queue if pk not in answered)
    study = Study.open(ui_study.folder)
    try:
        nxt = LabelSession(study, RATER).next()
        assert nxt is not None and nxt.item_pk == first_unanswered
    finally:
        study.close()
