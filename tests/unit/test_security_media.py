"""Media is checked when it is read, never trusted as found: a link in `media/` is not followed
(a lead's private file does not reach a rater's package or an export), an image whose bytes no
longer match their name is the study's damage, said as such, and a package that carried such an
image as it was exported is not called altered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from factories import basic_rows, write_manifest

from annotator.cli import main
from annotator.domain.errors import DamagedStudy
from annotator.ingest.media import MEDIA_DAMAGED, MEDIA_LINK
from annotator.services.labeling import LabelSession
from annotator.services.packages import export_package, merge_package
from annotator.services.study import Study
from annotator.services.team import assign

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
}


@pytest.fixture
def lead(tmp_path):
    study = Study.create(tmp_path / "lead", "ui_mockup")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b"))))
    study.set_setting("anchor_every", 0)
    assign(study, ["ann"], overlap=1, pair_overlap=1, seed=1)
    yield study
    study.close()


def _one_image(study: Study) -> Path:
    return next(p for p in (Path(study.folder) / "media").rglob("*.png"))


def test_a_link_in_media_is_never_followed(lead, tmp_path, capsys):
    private = tmp_path / "lead-private.png"
    image = _one_image(lead)
    private.write_bytes(image.read_bytes())  # even bytes that match the name
    image.unlink()
    image.symlink_to(private)
    with pytest.raises(DamagedStudy, match="link or a special file"):
        export_package(lead, "ann", tmp_path / "ann.annot")
    assert not (tmp_path / "ann.annot").exists()
    folder = str(lead.folder)
    lead.close()
    out = tmp_path / "ls.json"
    assert main(["export", "label-studio", "--study", folder, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and MEDIA_LINK in err
    assert not out.exists()


def test_a_damaged_image_is_the_studys_not_a_packages(lead, tmp_path):
    image = _one_image(lead)
    data = image.read_bytes()
    image.write_bytes(data[: len(data) // 2])  # a disk error
    with pytest.raises(DamagedStudy) as exc:
        export_package(lead, "ann", tmp_path / "ann.annot")
    assert MEDIA_DAMAGED in str(exc.value) and "the file was altered" not in str(exc.value)


def test_a_package_that_carried_the_studys_damaged_image_is_not_called_altered(lead, tmp_path):
    """A package exported while the study's image was already damaged, by a version that did not
    check (its blob holds the damaged bytes under the image's package name): merge names the
    study's file, not the rater's package."""
    pkg = tmp_path / "ann.annot"
    export_package(lead, "ann", pkg)
    work = Study.open(pkg)
    try:
        session = LabelSession(work, "ann")
        session.submit(session.next(), ALL, 100)
    finally:
        work.close()
    image = _one_image(lead)
    sha = image.stem
    data = image.read_bytes()
    damaged = data[: len(data) // 2]
    image.write_bytes(damaged)
    from annotator.store.db import StudyDB
    from annotator.store.package_export import study_image_of

    name = study_image_of(StudyDB(pkg, mode="read"), [sha])
    key = next(iter(name))
    with sqlite3.connect(pkg) as c:
        assert c.execute(
            "UPDATE media_blobs SET data = ? WHERE sha256 = ?", (damaged, key)
        ).rowcount
    with pytest.raises(DamagedStudy) as exc:
        merge_package(lead, pkg)
    message = str(exc.value)
    assert "study's own image files are damaged" in message and sha in message
    assert "ask the rater" not in message
