"""The wheel carries everything the app reads at run time (rubrics, anchors, migrations,
templates), so a plain `pip install .` runs the demo without the repository."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {r.stderr.strip().splitlines()[-1:]}")
    return next(out.glob("annotator-*.whl"))


def test_wheel_carries_the_run_time_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "annotator/rubrics/ui_mockup.toml",
        "annotator/rubrics/logo_edit.toml",
        "annotator/anchors/ui_mockup/anchors.jsonl",
        "annotator/anchors/ui_mockup/images/anchor-ui-01.png",
        "annotator/store/migrations/env.py",
        "annotator/reports/templates/report.html.j2",
        "annotator/reports/templates/_section.html.j2",
    ):
        assert needed in names, needed
    assert sum(n.startswith("annotator/store/migrations/versions/00") for n in names) >= 4
    assert not any(n.startswith(("tests/", "annotator.egg-info")) for n in names)


def dependency_paths() -> list[str]:
    """The folders the running interpreter imports from, but the repository (whose copy of the
    app must not shadow the installed one) and the current folder."""
    out: list[str] = []
    for entry in sys.path:
        if not entry or not Path(entry).is_dir():
            continue
        where = Path(entry).resolve()
        if where in (REPO, Path.cwd().resolve()) or str(where) in out:
            continue
        out.append(str(where))
    return out


def test_the_venv_is_given_every_folder_the_app_imports_from(monkeypatch, tmp_path):
    """Whatever the interpreter running the tests (a base one, a virtualenv, one with a user
    site), the folders its dependencies come from are passed on, and the repository is not."""
    user_site = tmp_path / "user-site"
    user_site.mkdir()
    monkeypatch.setattr(sys, "path", [str(REPO), "", str(user_site), *sys.path, str(REPO)])
    paths = dependency_paths()
    import platformdirs

    assert str(Path(platformdirs.__file__).resolve().parent.parent) in paths
    assert str(user_site.resolve()) in paths and str(REPO) not in paths


@pytest.mark.slow
def test_installed_wheel_builds_the_demo_outside_the_repository(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The app's dependencies come from wherever the running interpreter finds them: its sys.path
    # (a base interpreter's site-packages, a virtualenv's, a user site, the system's seen
    # through a virtualenv). system_site_packages=True would see only the base interpreter's,
    # which in a virtualenv lacks them ("No module named 'platformdirs'"). A plain path line
    # adds the folder without running its .pth files, so the repository's editable install
    # stays out; the lines come after the new venv's own site-packages, so the wheel installed
    # there is the copy imported (checked below).
    venv_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(venv_site) / "annotator-test-deps.pth").write_text(
        "".join(f"{p}\n" for p in dependency_paths())
    )
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
    )
    # outside the repository: no PYTHONPATH (a checkout's tests may run with it) nor its folder
    outside = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run(
        [str(py), "-m", "annotator", "demo", "--headless", "--study", str(tmp_path / "demo")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=outside,
    )
    assert r.returncode == 0, r.stderr
    where = subprocess.run(
        [str(py), "-c", "import annotator; print(annotator.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=outside,
    ).stdout
    assert str(env_dir) in where  # the installed copy ran, not the repository's
    assert (tmp_path / "demo" / "study.sqlite").exists()
