"""The wheel carries everything the app reads at run time (rubrics, anchors, migrations,
templates), so a plain `pip install .` runs the demo without the repository."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
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
    ):
        assert needed in names, needed
    assert sum(n.startswith("annotator/store/migrations/versions/00") for n in names) >= 4
    assert not any(n.startswith(("tests/", "annotator.egg-info")) for n in names)


@pytest.mark.slow
def test_installed_wheel_builds_the_demo_outside_the_repository(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The app's dependencies come from the running interpreter's site-packages, whether it is a
    # base interpreter or itself a virtualenv (system_site_packages would see only the base one).
    # A plain path line adds the folder without running its .pth files, so the repository's
    # editable install stays out and the wheel's copy is the one imported.
    venv_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(venv_site) / "annotator-test-deps.pth").write_text("\n".join(sorted(here)) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
        check=True,
    )
    r = subprocess.run(
        [str(py), "-m", "annotator", "demo", "--headless", "--study", str(tmp_path / "demo")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert r.returncode == 0, r.stderr
    where = subprocess.run(
        [str(py), "-c", "import annotator; print(annotator.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert str(env_dir) in where  # the installed copy ran, not the repository's
    assert (tmp_path / "demo" / "study.sqlite").exists()
