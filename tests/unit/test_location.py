"""Where a study lives (annotator/base/location.py): the one parse of folder, package and server
locations, and the one place a password is cut out of a URL before it is shown or remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.base.location import StudyLocation, as_location, without_password
from annotator.store.server import shown

URLS = [
    ("postgresql://lead:s3cret@db.example:5433/study", "postgresql://lead@db.example:5433/study"),
    ("postgres://ana:p%40ss%3Aw@host/s", "postgres://ana@host/s"),
    ("postgresql+psycopg://bo@host/s", "postgresql+psycopg://bo@host/s"),
    ("postgresql://host/s", "postgresql://host/s"),
]


@pytest.mark.parametrize("url,cut", URLS)
def test_a_password_never_survives_showing_or_remembering(url, cut):
    assert without_password(url) == cut
    loc = StudyLocation.parse(url)
    assert loc.kind == "server" and loc.shown == cut and loc.key == cut
    assert "s3cret" not in shown(url) and "p%40ss" not in shown(url)
    assert shown(url).startswith("postgresql://") and shown(url).endswith(url.rsplit("/", 1)[1])


def test_folders_packages_and_servers_parse_once(tmp_path):
    assert StudyLocation.parse(tmp_path / "s").kind == "folder"
    assert StudyLocation.parse(str(tmp_path / "ana.annot")).kind == "package"
    rel = StudyLocation.parse("study-x")
    assert rel.key == str(Path("study-x").resolve()) and rel.shown == "study-x"
    assert as_location("postgresql://h/s") == "postgresql://h/s"
    assert as_location("postgresql-notes") == Path("postgresql-notes")


def test_no_other_module_spells_the_server_schemes():
    """The schemes were spelled in five modules; a sixth spelling would drift from the parse."""
    root = Path(__file__).resolve().parents[2] / "annotator"
    spelled = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if '"postgresql+psycopg://"' in p.read_text(encoding="utf-8") and p.parent.name != "base"
    ]
    assert spelled == []
