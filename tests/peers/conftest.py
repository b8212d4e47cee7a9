"""The real peers for tests/peers/: each installed once per machine into its cache venv
(peers.py), its server started on a free loopback port for the test session and stopped by its
process at the end. A peer that cannot be installed or started skips its tests with the reason
(pytest -ra prints it), never silently.

Measured on a 2-core machine shared with other jobs: installing Label Studio 1.23.2 into a fresh
venv took 118 s on a quiet machine and about 12 min at load average 14, Potato 2.12.1 65-104 s;
Label Studio's first start (its migrations) 173-175 s; the whole of tests/peers with both venvs
already cached 219-235 s (CI's fresh machine adds the two installs once)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402


def _install(tool: tuple[str, str]) -> Path:
    t0 = time.monotonic()
    try:
        venv = peers.install(*tool)
    except Exception as exc:  # noqa: BLE001 - any failure to install is a skip with its reason
        pytest.skip(f"{tool[0]}=={tool[1]} could not be installed: {exc}")
    print(f"\n{tool[0]}=={tool[1]} ready in {venv} ({time.monotonic() - t0:.0f} s)")
    return venv


@pytest.fixture(scope="session")
def label_studio(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[peers.LabelStudio, Path]]:
    """(a Label Studio API client as the lead, the folder its local files are served from)."""
    venv = _install(peers.LABEL_STUDIO)
    work = tmp_path_factory.mktemp("label-studio")
    served = work / "served"
    served.mkdir()
    t0 = time.monotonic()
    try:
        srv = peers.start_label_studio(venv, work, served)
    except RuntimeError as exc:
        pytest.skip(f"Label Studio {peers.LABEL_STUDIO[1]} did not start: {exc}")
    print(f"\nLabel Studio up at {srv.base} in {time.monotonic() - t0:.0f} s")
    try:
        yield peers.LabelStudio(srv.base), served
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def potato_venv() -> Path:
    return _install(peers.POTATO)
