"""Fixtures for unit tests: real studies on real SQLite files."""

from __future__ import annotations

from pathlib import Path

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
