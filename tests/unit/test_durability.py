"""A rater's process killed with SIGKILL loses nothing it had committed."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from factories import basic_rows, write_manifest

from annotator.services.labeling import LabelSession
from annotator.services.study import Study

HERE = Path(__file__).resolve().parent


def _stored_ids(location) -> set[int]:
    from sqlalchemy import text

    study = Study.open(location, mode="read")
    try:
        with study.db.read() as s:
            return {r[0] for r in s.execute(text("SELECT id FROM judgements"))}
    finally:
        study.close()


def test_sigkill_mid_session_keeps_every_committed_answer(tmp_path, study_location):
    repo = HERE.parents[1]
    study = Study.create(study_location, repo / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    study.import_items(
        write_manifest(src, basic_rows(src, n_cases=6, gens=("a", "b", "c", "d", "e")))
    )
    study.add_rater("ann")
    study.close()

    child = subprocess.Popen(
        [sys.executable, str(HERE / "durability_child.py"), str(study_location)],
        stdout=subprocess.PIPE,
        text=True,
    )
    printed: list[int] = []
    deadline = time.monotonic() + 60
    while len(printed) < 12 and time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line, "child ended early"
        printed.append(int(line))
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert child.returncode == -signal.SIGKILL

    if not isinstance(study_location, str):
        with sqlite3.connect(study_location / "study.sqlite") as c:
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert set(printed) <= _stored_ids(study_location)

    study = Study.open(study_location)
    session = LabelSession(study, "ann")
    done, total = session.progress().done, session.progress().total
    assert done >= 10 and total == 30
    nxt = session.next()
    assert nxt is not None
    # resume point: the first queue position without an answer
    from annotator.store.answers import _answered_live  # noqa: PLC2701
    from annotator.store.models import QueueEntry

    with study.db.read() as s:
        rater = s.execute(
            __import__("sqlalchemy").text("SELECT id FROM raters WHERE name = 'ann'")
        ).scalar()
        answered = _answered_live(s, rater, study.rubric.version)
        order = [e.item_pk for e in s.query(QueueEntry).order_by(QueueEntry.position)]
    first_open = next(i for i in order if i not in answered)
    assert nxt.item_pk == first_open or nxt.context == "anchor"
    study.close()
