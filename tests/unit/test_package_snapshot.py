"""Merge records as merged exactly what it read: one private copy of the package (its -wal
included, checkpointed there) is hashed and read, so answers the rater's app left in the -wal
arrive, and a file swapped at the path while merge works cannot be recorded under another's hash.
Nothing is created beside the rater's file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.domain.errors import InputError
from annotator.services import packages
from annotator.services.labeling import LabelSession
from annotator.services.packages import export_package, merge_package
from annotator.services.study import Study
from annotator.services.team import assign
from annotator.store import package_merge as merge_store

REPO = Path(__file__).resolve().parents[2]
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
}


@pytest.fixture
def team(tmp_path):
    lead = Study.create(tmp_path / "lead", "ui_mockup")
    src = tmp_path / "src"
    lead.import_items(write_manifest(src, basic_rows(src, n_cases=6, gens=("a", "b"))))
    lead.set_setting("anchor_every", 0)
    assign(lead, ["ann", "ben"], overlap=1, pair_overlap=1, seed=4)
    yield lead
    lead.close()


def _answer(pkg: Path, rater: str, n: int) -> None:
    work = Study.open(pkg)
    try:
        session = LabelSession(work, rater)
        for _ in range(n):
            session.submit(session.next(), ALL, 100)
    finally:
        work.close()


def _answers_of(lead: Study, rater: str) -> int:
    with lead.db.read() as s:
        return s.execute(
            text(
                "SELECT count(*) FROM judgements j JOIN raters r ON r.id = j.rater_pk "
                "WHERE r.name = :n"
            ),
            {"n": rater},
        ).scalar()


DIE_AFTER_ANSWERS = """
import os, sys
from annotator.services.labeling import LabelSession
from annotator.services.study import Study
work = Study.open(sys.argv[1])
session = LabelSession(work, sys.argv[2])
for _ in range(int(sys.argv[3])):
    session.submit(session.next(), {ans}, 100)
os._exit(0)  # the app dies: no close, no checkpoint
"""


def test_answers_left_in_the_wal_arrive_on_the_next_merge(team, tmp_path):
    pkg = tmp_path / "ann.annot"
    export_package(team, "ann", pkg)
    _answer(pkg, "ann", 2)
    assert merge_package(team, pkg).added["judgements"] == 2
    before = pkg.read_bytes()
    script = DIE_AFTER_ANSWERS.replace("{ans}", repr(ALL))
    r = subprocess.run(
        [sys.executable, "-c", script, str(pkg), "ann", "4"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert pkg.read_bytes() == before  # the four answers are in the -wal only
    assert Path(f"{pkg}-wal").stat().st_size > 0
    again = merge_package(team, pkg)
    assert not again.already_merged and again.added["judgements"] == 4
    assert _answers_of(team, "ann") == 6


def test_a_file_swapped_at_the_path_during_the_merge_is_not_recorded_as_the_other(
    team, tmp_path, monkeypatch
):
    """File A's path is given; while merge hashes it, B is moved onto the path. Whatever merge
    records under a hash is what it read under that hash, so A's answers still arrive later."""
    a, b = tmp_path / "ann.annot", tmp_path / "ben.annot"
    export_package(team, "ann", a)
    export_package(team, "ben", b)
    _answer(a, "ann", 3)
    _answer(b, "ben", 2)
    keep_a = tmp_path / "ann-kept.annot"
    shutil.copy(a, keep_a)
    real = merge_store.sha256_file

    def hash_then_swap(path: Path) -> str:
        digest = real(path)
        if a.exists() and not (tmp_path / "swapped").exists():
            (tmp_path / "swapped").touch()
            os.replace(b, a)  # the path now holds ben's package
        return digest

    monkeypatch.setattr(merge_store, "sha256_file", hash_then_swap)
    merge_package(team, a)
    monkeypatch.setattr(merge_store, "sha256_file", real)
    merge_package(team, keep_a)  # ann's real file: must not be "already merged" as something else
    merge_package(team, a)  # ben's, now at ann's path
    assert _answers_of(team, "ann") == 3 and _answers_of(team, "ben") == 2


def test_a_refused_package_leaves_nothing_beside_the_raters_file(team, tmp_path):
    pkg = tmp_path / "ann.annot"
    export_package(team, "ann", pkg)
    _answer(pkg, "ann", 1)
    data = pkg.read_bytes()
    pkg.write_bytes(data[: len(data) // 2])  # truncated on the way
    with pytest.raises(InputError):
        merge_package(team, pkg)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ann")) == ["ann.annot"]


def test_a_folder_or_a_pipe_named_as_a_package_is_said_so(team, tmp_path):
    folder = tmp_path / "x.annot"
    folder.mkdir()
    with pytest.raises(InputError, match="is not a file"):
        merge_package(team, folder)
    fifo = tmp_path / "p.annot"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is not a file"):
        merge_package(team, fifo)
    with pytest.raises(InputError, match="no such package file"):
        merge_package(team, tmp_path / "none.annot")
    assert packages.NOT_A_FILE
