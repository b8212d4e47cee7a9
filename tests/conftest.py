"""Test-wide set-up: Qt offscreen, settings redirected to a temp file per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUBRICS = REPO / "rubrics"


@pytest.fixture(autouse=True)
def _fresh_settings(tmp_path_factory, monkeypatch):
    """Every test gets its own settings file and its own data folder."""
    d = tmp_path_factory.mktemp("settings")
    monkeypatch.setenv("ANNOTATOR_SETTINGS", str(d / "annotator.ini"))
    monkeypatch.setenv("XDG_DATA_HOME", str(d / "data"))
    yield


@pytest.fixture
def rubric_path() -> Path:
    return RUBRICS / "ui_mockup.toml"
