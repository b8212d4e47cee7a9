"""Fixtures for the Qt tests: per-test app settings, real studies (built once per
session, copied per test), and a check that no worker thread outlives its test."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gui_support import BuiltStudy, build_study, study_templates  # noqa: E402 - after the platform


@pytest.fixture(scope="session", autouse=True)
def _study_templates(tmp_path_factory):
    """The studies `build_study` shares across the session live in a pytest temp folder."""
    with study_templates(tmp_path_factory.mktemp("study-templates")):
        yield


@pytest.fixture(autouse=True)
def _app_settings(tmp_path, monkeypatch):
    """Each test gets its own settings file (never the user's profile)."""
    monkeypatch.setenv("ANNOTATOR_SETTINGS", str(tmp_path / "settings" / "annotator.ini"))
    yield


@pytest.fixture(autouse=True)
def _keys_at_test_speed(request, monkeypatch):
    """Tests drive the views by keys a few milliseconds apart: the minimum exposure is off
    (0) in them. A test of the exposure rule is marked ``@pytest.mark.exposure`` and keeps its
    study's setting (250 ms by default); the app run in a subprocess keeps it too."""
    if request.node.get_closest_marker("exposure") is None:
        from annotator.ui.session_view import SessionView

        monkeypatch.setattr(SessionView, "exposure_minimum", staticmethod(lambda _snapshot: 0))


@pytest.fixture(autouse=True)
def _no_leaked_threads(qapp):
    """Fail a test that leaves a database worker, compute worker or decoder pool running."""
    from annotator.ui.worker import live_workers, stop_all

    yield
    leaked = [type(w).__name__ for w in live_workers()]
    stop_all()
    assert not leaked, f"worker threads left running: {leaked}"


@pytest.fixture
def db_worker():
    from annotator.ui.worker import DbWorker

    w = DbWorker()
    yield w
    w.stop()
    assert not w.running


@pytest.fixture
def ui_study(tmp_path) -> BuiltStudy:
    return build_study(tmp_path, "ui", anchor_every=0)


@pytest.fixture
def logo_study(tmp_path) -> BuiltStudy:
    return build_study(tmp_path, "logo", anchor_every=0)
