"""base/atomic.py on real files: a target is the old file or the new one, never half, and no
temporary file is left behind, whatever the writer does."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from annotator.base.atomic import (
    atomic_files,
    atomic_open,
    atomic_path,
    atomic_write_bytes,
    atomic_write_text,
    tmp_path_for,
)


class Boom(RuntimeError):
    pass


def test_a_failure_in_the_middle_of_a_write_keeps_the_old_file_and_no_tmp(tmp_path: Path) -> None:
    path = atomic_write_text(tmp_path / "report.json", "the old report")
    with pytest.raises(Boom), atomic_open(path, "w") as fh:
        fh.write("half a report")
        raise Boom
    assert path.read_text() == "the old report"
    assert not tmp_path_for(path).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_write_replaces_and_creates_folders_without_newline_translation(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "out.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two\r\nlines")
    assert path.read_bytes() == b"two\r\nlines"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.txt"]
    assert atomic_write_bytes(path, b"\x00\xff") == path and path.read_bytes() == b"\x00\xff"


def test_only_write_modes_are_taken(tmp_path: Path) -> None:
    for mode in ("a", "r", "w+"):
        with (
            pytest.raises(ValueError, match="supports 'w' and 'wb'"),
            atomic_open(tmp_path / "x", mode),
        ):
            pass
    assert list(tmp_path.iterdir()) == []


def test_the_tmp_name_is_private_to_a_process_and_a_thread(tmp_path: Path) -> None:
    names: list[Path] = []
    t = threading.Thread(target=lambda: names.append(tmp_path_for(tmp_path / "a.png")))
    t.start()
    t.join()
    mine = tmp_path_for(tmp_path / "a.png")
    assert mine != names[0] and mine.parent == tmp_path
    assert mine.name.startswith(".a.png.") and f".{os.getpid()}-" in mine.name
    assert mine.suffix == ".tmp"


def test_a_path_another_writer_fills_lands_whole_or_not_at_all(tmp_path: Path) -> None:
    path = atomic_write_text(tmp_path / "backup.db", "old")
    with atomic_path(path) as tmp:
        assert tmp != path
        tmp.write_text("new")
    assert path.read_text() == "new"
    with pytest.raises(Boom), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise Boom
    with pytest.raises(FileNotFoundError), atomic_path(path):
        pass  # the tool wrote nothing
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["backup.db"]


def test_a_set_of_files_lands_together_and_keeps_the_others(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    atomic_write_text(out / "kept.csv", "kept")
    atomic_write_text(out / "a.csv", "old a")
    with pytest.raises(Boom), atomic_files(out) as tmp:
        (tmp / "a.csv").write_text("new a")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.csv").write_text("b")
        raise Boom
    assert sorted(p.name for p in out.rglob("*")) == ["a.csv", "kept.csv"]
    assert (out / "a.csv").read_text() == "old a"
    with atomic_files(out) as tmp:
        (tmp / "a.csv").write_text("new a")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.csv").write_text("b")
    assert (out / "a.csv").read_text() == "new a" and (out / "sub" / "b.csv").read_text() == "b"
    assert (out / "kept.csv").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"]  # no private folder left
