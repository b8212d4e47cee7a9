"""Label Studio 1.23.2 itself (peers.py installs and starts it): our labeling configs validate,
our tasks with their annotations import, two raters annotate through its API (one relabels),
and both its default export and a snapshot import back with every value."""

from __future__ import annotations

import shutil
from pathlib import Path

import peers
import pytest
import roundtrip

from annotator.services.export_label_studio import export_label_studio
from annotator.services.importers import run_import
from annotator.services.study import Study

pytestmark = [pytest.mark.peers, pytest.mark.slow]


@pytest.fixture(scope="module")
def driven(label_studio, tmp_path_factory):
    ls, served = label_studio
    work = tmp_path_factory.mktemp("ls-roundtrip")
    source = roundtrip.source_study(work / "source")
    export_label_studio(source, served / "tasks.json", with_annotations=True)
    shutil.copytree(roundtrip.DATA / "label_studio" / "media", served / "media")
    got = peers.drive_label_studio(ls, served)
    yield source, got, served, work
    source.close()


def _back(work: Path, served: Path, got: dict, kind: str) -> tuple[Study, list[str]]:
    back = Study.create(work / f"back-{kind}", roundtrip.DATA / "rubric.toml")
    m = work / f"map-{kind}.toml"
    m.write_text(roundtrip.raters_map((served / "tasks.map.toml").read_text(), got["users"]))
    lines = []
    if kind == "default":  # it leaves out the tasks nobody annotated: the study holds them
        roundtrip.seed_items(back, served / "tasks.json", m, work)
    for part in ("items", "pairs"):
        f = work / f"{part}-{kind}.json"
        peers.write_json(f, got[f"{part}-{kind}"])
        # the images the tasks name are the ones Label Studio served (its local files)
        lines.append(run_import(back, "label-studio", f, map_path=str(m), media_root=served))
    return back, lines


def test_our_tasks_and_their_annotations_import_into_label_studio(driven):
    _, got, _, _ = driven
    # our annotations were refused before (completed_by 1..N: HTTP 400)
    assert got["imported"]["items"]["annotation_count"] > 0
    assert got["imported"]["pairs"]["task_count"] > 0


@pytest.mark.parametrize("kind", ["default", "snapshot"])
def test_label_studio_exports_come_back_with_every_value(driven, kind):
    source, got, served, work = driven
    back, lines = _back(work, served, got, kind)
    try:
        roundtrip.check_label_studio(source, back, snapshot=kind == "snapshot", lines=lines)
    finally:
        back.close()
