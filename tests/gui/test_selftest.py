"""`annotator --selftest` in this installation (the built bundle runs the same command:
packaging/README.md): every check passes, one line each, exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_selftest_passes_one_line_per_check(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "ANNOTATOR_SELFTEST_OUT": str(tmp_path),
    }
    env.pop("DISPLAY", None)  # it needs no display (offscreen by itself)
    r = subprocess.run(
        [sys.executable, "-m", "annotator", "--selftest"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0, r.stdout + r.stderr
    names = [line.split(":")[0].split(None, 1)[1] for line in lines[:-1]]
    assert names == [
        "resources",
        "migrations",
        "statistics",
        "qt plugins",
        "translations",
        "window",
    ]
    assert all(line.startswith("ok ") for line in lines[:-1]) and lines[-1].startswith(
        "selftest: 6 of 6"
    )
    assert (tmp_path / "selftest-window.png").stat().st_size > 10_000
