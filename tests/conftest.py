"""Test-wide set-up: Qt offscreen, settings redirected to a temp file per test,
screenshots to a temp folder (or `--screenshots DIR`), and the `slow` marker.

`python -m pytest` runs the suite without the tests marked slow (long simulations,
real-data round trips, the installed-wheel run): minutes, for the edit loop.
`python -m pytest --all` runs everything: what the README's command and CI run (on two
processes: `-n 2 --dist loadfile`, pytest-xdist).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUBRICS = REPO / "rubrics"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--screenshots",
        metavar="DIR",
        default=None,
        help="write the GUI and report screenshots to DIR (the README's are in "
        "packaging/screenshots: refresh them with --screenshots packaging/screenshots)",
    )
    parser.addoption(
        "--all",
        action="store_true",
        dest="run_all",
        help="also run the tests marked slow (the whole suite: what CI runs)",
    )
    parser.addoption(
        "--quick", action="store_true", help="(the default) leave the tests marked slow out"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("run_all"):
        return
    skip = pytest.mark.skip(reason="slow: run with --all (CI does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def screenshot_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
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


# ---- The demo study: built once per session, shared read-only ----------------------------------
# Building the full demo is the slowest set-up of the suite (minutes on two loaded cores): it is
# built once, as a user builds it, and every test that needs it reads that one folder or copies
# it. Its database's digest is checked at the end of the session, so a test that writes to the
# shared copy fails instead of silently changing what later tests see.


@dataclass(frozen=True)
class DemoBuild:
    folder: Path  # the study (read it, or copy it with shutil.copytree before changing it)
    out: str  # what `annotator demo --headless` printed on stdout ...
    err: str  # ... and on stderr (its progress lines) the one time it built the study


def _study_digest(folder: Path) -> str:
    """The database's bytes, and its write-ahead log's while it holds any (a write not yet
    checkpointed into the database is there; a reader leaves the log empty)."""
    import hashlib

    h = hashlib.sha256((folder / "study.sqlite").read_bytes())
    wal = folder / "study.sqlite-wal"
    if wal.exists() and wal.stat().st_size:
        h.update(wal.read_bytes())
    return h.hexdigest()


@contextmanager
def _shared_read_only(folder: Path) -> Iterator[Path]:
    before = _study_digest(folder)
    yield folder
    after = _study_digest(folder)
    assert after == before, f"a test wrote to the shared study {folder}: copy it first"


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoBuild]:
    """The full demo study, built once per session by `annotator demo --headless`."""
    import contextlib
    import io

    from annotator.cli import main

    folder = tmp_path_factory.mktemp("demo") / "demo-study"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["demo", "--headless", "--study", str(folder)])
    assert code == 0, err.getvalue()[-2000:]
    with _shared_read_only(folder):
        yield DemoBuild(folder, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def demo_study_dir(demo_build: DemoBuild) -> Path:
    """The full demo study's folder, shared by the session: copy it before changing it."""
    return demo_build.folder


@pytest.fixture(scope="session")
def small_demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo with two variants per case (a third of the items, the same planted findings),
    built once per session and shared like `demo_study_dir`: for tests that need the demo's
    kinds of data but not its size."""
    from annotator.services.demo import build_demo

    folder = build_demo(tmp_path_factory.mktemp("demo-small") / "demo", variants_per_case=2)
    with _shared_read_only(folder):
        yield folder


# ---- PostgreSQL: a scratch database per test, on the server ANNOTATOR_TEST_PG names -------------

PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/postgres"


def _pg_admin_url() -> tuple[str | None, str]:
    """(a URL to an existing database we may create databases from, or None; why not)."""
    url = os.environ.get("ANNOTATOR_TEST_PG", PG_DEFAULT)
    try:
        import psycopg

        with psycopg.connect(
            url.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=3
        ) as conn:
            conn.execute("SELECT 1")
        return url, ""
    except Exception as exc:  # noqa: BLE001 - any failure means: no server for these tests
        return (
            None,
            f"no PostgreSQL at {url.split('@')[-1]} ({type(exc).__name__}); set ANNOTATOR_TEST_PG",
        )


class PgServer:
    """Creates scratch databases (random names) and drops them when the test session ends."""

    def __init__(self, admin_url: str) -> None:
        import secrets

        self.admin_url = admin_url.replace("postgresql+psycopg://", "postgresql://")
        self.prefix = f"annotator_t_{secrets.token_hex(4)}"
        self.made: list[str] = []

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self) -> str:
        name = f"{self.prefix}_{len(self.made)}"
        self._admin(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        base = self.admin_url.rsplit("/", 1)[0]
        return f"{base}/{name}"

    def drop_all(self) -> None:
        for name in self.made:
            try:
                self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass


@pytest.fixture(scope="session")
def pg_server():
    url, why = _pg_admin_url()
    if url is None:
        pytest.skip(why)
    server = PgServer(url)
    yield server
    server.drop_all()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the test server."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def study_location(request, tmp_path) -> str | Path:
    """Where a new study goes: a folder, or an empty database on the PostgreSQL test server."""
    if request.param == "sqlite":
        return tmp_path / "study"
    return request.getfixturevalue("pg_url")
