"""Two versions of the code side by side, for the benchmarks that alternate them
(bench_live_versions.py, bench_live_refresh.py): the code before checked out in a temporary git
worktree, and a script run in a fresh process on one version's own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def checkout_before(rev: str, where: Path) -> Iterator[Path]:
    """`rev` checked out at `where` (a detached worktree), removed afterwards."""
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev],
        check=True,
        capture_output=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)],
            check=False,
            capture_output=True,
        )


def run_timed(checkout: Path, script: str, *args: str) -> dict[str, float]:
    """`script` run by a fresh Python in `checkout`, with that checkout's code first on the path
    (the editable install's finder comes after it); its last line of output, as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])
