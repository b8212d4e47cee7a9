"""Fixtures for unit tests: real studies on real SQLite files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from factories import basic_rows, write_manifest

from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def study(tmp_path) -> Study:
    s = Study.create(tmp_path / "study", REPO / "rubrics" / "ui_mockup.toml")
    yield s
    s.close()


@pytest.fixture
def any_study(study_location) -> Study:
    """A new study on each engine: a SQLite folder, and a database on the PostgreSQL test server."""
    s = Study.create(study_location, REPO / "rubrics" / "ui_mockup.toml")
    yield s
    s.close()


@pytest.fixture
def any_populated(tmp_path, any_study) -> Study:
    src = tmp_path / "src"
    src.mkdir()
    any_study.import_items(write_manifest(src, basic_rows(src)))
    return any_study


@pytest.fixture
def populated(tmp_path, study) -> Study:
    src = tmp_path / "src"
    src.mkdir()
    study.import_items(write_manifest(src, basic_rows(src)))
    return study


# The demo study (`demo_study_dir`, `small_demo_dir`) is built once per session in tests/conftest.py,
# shared by the unit and the GUI tests.


def copy_study(src: Path, dest: Path) -> Path:
    """A writable copy of a shared study folder (the session's demo is read-only)."""
    import shutil

    shutil.copytree(src, dest)
    return dest


def answer_as(st: Study, rater: str, n: int) -> int:
    """`n` live answers of a new `rater` through the app's session, the same items and values
    every run; returns how many live items were answered."""
    from annotator.services.labeling import LabelSession

    rng = random.Random(7)
    st.add_rater(rater, seed=11)  # the same items every run
    s = LabelSession(st, rater)
    done = 0
    while done < n and (item := s.next()) is not None:
        answers: dict[str, Any] = {}
        for m in st.rubric.metrics:
            if m.kind == "gate":
                answers[m.key] = rng.choice(["PASS", "FAIL"])
            elif m.kind == "scale":
                answers[m.key] = rng.randint(2, 5)
            elif m.kind == "tags":
                answers[m.key] = []
        s.submit(item, answers, 500)
        done += int(item.context == "live")
    return done


LIVE_N_BOOT = 1000


@pytest.fixture(scope="session")
def demo_moved_on(demo_study_dir, tmp_path_factory) -> tuple[Any, dict, dict]:
    """The demo after 20 answers of a new rater, "zed": (its frames, the full report before
    them, the full report after them), n_boot LIVE_N_BOOT: what a live estimate is held to."""
    from annotator.services.reporting import study_frames
    from annotator.stats.report_model import build_report

    st = Study.open(copy_study(demo_study_dir, tmp_path_factory.mktemp("moved") / "demo"))
    try:
        before = build_report(study_frames(st), n_boot=LIVE_N_BOOT)
        assert answer_as(st, "zed", 20) == 20
        frames = study_frames(st)
    finally:
        st.close()
    return frames, before, build_report(frames, n_boot=LIVE_N_BOOT)
