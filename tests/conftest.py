"""Test-wide set-up: Qt offscreen, settings redirected to a temp file per test,
screenshots to a temp folder (or `--screenshots DIR`), and the `slow` marker.

`python -m pytest` runs everything, slow simulations included (what CI runs);
`python -m pytest --quick` leaves the tests marked slow out, for the edit loop.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUBRICS = REPO / "rubrics"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--screenshots", metavar="DIR", default=None,
                     help="write the GUI and report screenshots to DIR (the README's are in "
                          "packaging/screenshots: refresh them with --screenshots packaging/screenshots)")
    parser.addoption("--quick", action="store_true", help="skip the tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--quick"):
        return
    skip = pytest.mark.skip(reason="slow: left out by --quick")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def screenshot_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: a temp folder unless --screenshots DIR (tests never touch tracked files)."""
    given = request.config.getoption("--screenshots")
    out = Path(given) if given else tmp_path_factory.mktemp("screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


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
