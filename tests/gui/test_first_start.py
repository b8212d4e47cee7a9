"""A first start that explains itself: no display, or a display without the libraries Qt's xcb
plugin needs, is ONE line saying what to do (simulated here by the environment)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.ui import app

REPO = Path(__file__).resolve().parents[2]
LDD = """\tlinux-vdso.so.1 (0x00007ffc)
\tlibQt6XcbQpa.so.6 => /opt/annotator/_internal/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f)
\tlibxcb-icccm.so.4 => not found
"""


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    base["PYTHONPATH"] = str(REPO) + os.pathsep + base.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "annotator", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **env},
        cwd=REPO,
    )


def test_no_display_is_one_line_not_an_invisible_window():
    r = _run("gui")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"annotator: {app.NO_DISPLAY}"]


def test_missing_xcb_libraries_name_the_packages_and_the_command():
    r = _run(
        "gui", DISPLAY=":97", ANNOTATOR_SIMULATE_MISSING="libxcb-icccm.so.4,libxcb-keysyms.so.1"
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert (
        "libxcb-icccm.so.4" in lines[0]
        and "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in lines[0]
    )


def test_ldd_output_gives_the_missing_sonames_once():
    assert app.missing_from_ldd(LDD) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    line = app.missing_line(app.missing_from_ldd(LDD))
    assert line.endswith("sudo apt-get install libxcb-icccm4 libxcb-keysyms1")
    assert "libfoo.so.1" in app.missing_line(["libfoo.so.1"])  # an unknown one is still named


def test_offscreen_when_asked_for_explicitly(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert app.preflight() is None
    monkeypatch.delenv("QT_QPA_PLATFORM")
    assert app.preflight() == app.NO_DISPLAY


def test_the_real_check_reads_the_plugin(monkeypatch):
    """On this machine: the xcb plugin is found and ldd's answer is a list (empty when complete)."""
    monkeypatch.delenv("ANNOTATOR_SIMULATE_MISSING", raising=False)
    assert app.xcb_plugin() is not None
    missing = app.missing_libraries()
    assert isinstance(missing, list) and all(
        m.endswith(tuple(f".so.{n}" for n in range(10))) for m in missing
    )


def test_the_demo_checks_the_display_before_it_builds_anything(tmp_path):
    """`annotator demo` (the README's first command) on a display without Qt's libraries: the
    one line comes before the demo is built (it took a minute of building to learn it)."""
    folder = tmp_path / "demo"
    r = _run(
        "demo",
        "--study",
        str(folder),
        DISPLAY=":97",
        ANNOTATOR_SIMULATE_MISSING="libxcb-icccm.so.4,libxcb-keysyms.so.1",
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "annotator: " + app.missing_line(["libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    ]
    assert not folder.exists()  # nothing was built
    # without a display at all, the same: one line, nothing built
    r = _run("demo", "--study", str(folder))
    assert r.returncode == 2 and not folder.exists()
    assert r.stderr.strip().splitlines() == [f"annotator: {app.NO_DISPLAY}"]


def test_the_display_libraries_script_does_nothing_when_all_are_there():
    """packaging/display-libs.sh (the README's first command): on this machine, where CI installed
    the list, it installs nothing and succeeds."""
    r = subprocess.run(
        ["sh", str(REPO / "packaging" / "display-libs.sh")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "installing" not in r.stdout


def test_the_demo_on_a_machine_where_the_libraries_are_removed(tmp_path):
    """The real thing, not the simulation: in a mount namespace of its own, the system library
    folder is overlaid with libxcb-icccm and libxcb-keysyms deleted (whiteouts), so ldd really
    finds them missing; `annotator demo` then names them, before building anything. Needs root
    and overlayfs (CI has both); the machine's own files are untouched."""
    import shutil

    libdir = Path("/usr/lib/x86_64-linux-gnu")
    gone = sorted(p.name for p in libdir.glob("libxcb-icccm.so.4*") if p.exists()) + sorted(
        p.name for p in libdir.glob("libxcb-keysyms.so.1*") if p.exists()
    )
    if os.geteuid() != 0 or not shutil.which("unshare") or not gone:
        pytest.skip("needs root, unshare and Debian's multiarch library folder")
    upper, work = tmp_path / "upper", tmp_path / "work"
    upper.mkdir()
    work.mkdir()
    for name in gone:
        os.mknod(upper / name, 0o644 | 0o020000, os.makedev(0, 0))  # an overlayfs whiteout
    folder = tmp_path / "demo"
    script = (
        f"mount -t overlay overlay -o lowerdir={libdir},upperdir={upper},workdir={work} "
        f'{libdir} && exec "$0" -m annotator demo --study {folder}'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.pop("ANNOTATOR_SIMULATE_MISSING", None)
    r = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, sys.executable],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "DISPLAY": ":97", "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    if "mount" in r.stderr and r.returncode != 2:
        pytest.skip(f"overlayfs is not available here: {r.stderr.strip()[:120]}")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "annotator: " + app.missing_line(["libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    ]
    assert not folder.exists()
