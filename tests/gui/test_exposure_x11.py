"""Bursts of keys sent faster than the screen changes, replayed as a rater's keyboard sends them: the app runs in its own
process in a real X11 window (Xvfb, openbox when installed) with the study's real 250 ms minimum
exposure, and xdotool types. ``p 4 p 3 Return Return p 4 p 3 Return`` with no delay stores one
answer (the first item's, seen for a second), never the second burst on an item not yet seen; the
same keys 30 ms apart on an item seen for a second count; ``4 4`` 30 ms apart on the pairwise
view stores one vote. Every stored time is at least the minimum.

CI runs it (Xvfb and xdotool are installed by .ci/run); elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gui_support import RATER, free_display, with_minimum_exposure

MINIMUM = 250


@pytest.fixture()
def x_display():
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            print(f"\nskipped: {tool} is not installed (apt-get install xvfb xdotool)")
            pytest.skip(f"{tool} is not installed (apt-get install xvfb xdotool)")
    n = free_display(140, 190)
    procs = [
        subprocess.Popen(
            ["Xvfb", f":{n}", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    sock = Path(f"/tmp/.X11-unix/X{n}")
    deadline = time.monotonic() + 10
    while not sock.exists() and procs[0].poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not sock.exists():
        procs[0].kill()
        pytest.skip("Xvfb did not start")
    env = dict(os.environ, DISPLAY=f":{n}")
    if shutil.which("openbox"):  # a window manager: focus and activation as on a desktop
        procs.append(
            subprocess.Popen(
                ["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )
    try:
        yield f":{n}"
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def _xdo(display: str, *args: str) -> str:
    r = subprocess.run(
        ["xdotool", *args],
        env=dict(os.environ, DISPLAY=display),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _count(folder: Path, table: str) -> list[int]:
    with sqlite3.connect(folder / "study.sqlite") as con:
        return [t for (t,) in con.execute(f"SELECT time_ms FROM {table} ORDER BY id")]


def _wait(predicate, timeout: float = 20.0) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_bursts_on_a_real_keyboard_store_only_seen_answers(tmp_path, x_display):
    folder = with_minimum_exposure(tmp_path, MINIMUM)
    env = dict(
        os.environ,
        DISPLAY=x_display,
        QT_QPA_PLATFORM="xcb",
        ANNOTATOR_SETTINGS=str(tmp_path / "settings" / "annotator.ini"),
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "annotator", "gui", "--study", str(folder), "--rater", RATER],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--name", "rating as"],
            env=dict(os.environ, DISPLAY=x_display),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if app.poll() is not None and "xcb" in (app.stderr.read() if app.stderr else ""):
            pytest.skip("the xcb platform plugin cannot load here")
        assert found.returncode == 0, "the app's window did not appear"
        win = found.stdout.split()[0]
        _xdo(x_display, "windowactivate", "--sync", win)
        time.sleep(2.0)  # the first item is on screen and seen
        # a burst with no delay: the first item's answer, Enter twice, the next item's keys
        _xdo(x_display, "key", "--delay", "0", *"p 4 p 3 Return Return p 4 p 3 Return".split())
        assert _wait(lambda: len(_count(folder, "judgements")) >= 1)
        time.sleep(1.5)  # anything the burst could still store, stored
        assert len(_count(folder, "judgements")) == 1
        # the same keys 30 ms apart on an item seen for a second and a half: they count
        _xdo(x_display, "key", "--delay", "30", *"p 4 p 3 Return".split())
        assert _wait(lambda: len(_count(folder, "judgements")) == 2)
        # the pairwise view: "4 4" 30 ms apart stores one vote (the second pair was not seen)
        _xdo(x_display, "key", "ctrl+shift+p")
        time.sleep(2.5)
        _xdo(x_display, "key", "--delay", "30", "4", "4")
        assert _wait(lambda: len(_count(folder, "pair_votes")) >= 1)
        time.sleep(1.5)
        votes = _count(folder, "pair_votes")
        assert len(votes) == 1, votes
        times = _count(folder, "judgements") + votes
        assert all(t >= MINIMUM for t in times), times
    finally:
        app.terminate()
        try:
            app.wait(10)
        except subprocess.TimeoutExpired:
            app.kill()
