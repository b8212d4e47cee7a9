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


def test_sigkill_mid_session_keeps_every_committed_answer(tmp_path):
    repo = HERE.parents[1]
    study = Study.create(tmp_path / "st", repo / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=6, gens=("a", "b", "c", "d", "e"))))
    study.add_rater("ann")
    study.close()

    child = subprocess.Popen([sys.executable, str(HERE / "durability_child.py"), str(tmp_path / "st")],
                             stdout=subprocess.PIPE, text=True)
    printed: list[int] = []
    deadline = time.monotonic() + 60
    while len(printed) < 12 and time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line, "child ended early"
        printed.append(int(line))
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert child.returncode == -signal.SIGKILL

    with sqlite3.connect(tmp_path / "st" / "study.sqlite") as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {r[0] for r in c.execute("select id from judgements")}
    assert set(printed) <= stored

    study = Study.open(tmp_path / "st")
    session = LabelSession(study, "ann")
    done, total = session.progress().done, session.progress().total
    assert done >= 10 and total == 30
    nxt = session.next()
    assert nxt is not None
    # resume point: the first queue position without an answer
    from annotator.store.answers import _answered_live  # noqa: PLC2701
    from annotator.store.models import QueueEntry

    with study.db.read() as s:
        answered = _answered_live(s, 1, study.rubric.version)
        order = [e.item_pk for e in s.query(QueueEntry).order_by(QueueEntry.position)]
    first_open = next(i for i in order if i not in answered)
    assert nxt.item_pk == first_open or nxt.context == "anchor"
    study.close()
