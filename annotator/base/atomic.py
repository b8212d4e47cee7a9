"""Atomic file writes: a file on disk is either the old one or the new one, never half.

The content is written to a `.tmp` sibling in the same folder (so `os.replace`
stays on one file system and is atomic), flushed and fsynced, then renamed over
the target; the folder is fsynced so the rename itself survives a power cut.
On any error the `.tmp` file is removed and the old target is untouched.

One home for every writer (reports, exports, settings, key files, translations, rater
packages, media files, study backups): `atomic_open` when the caller writes the bytes,
`atomic_path` when something else fills a path (lrelease, SQLite's `VACUUM INTO` or backup),
`atomic_files` when a command writes several files into a folder (a report's tables, an export):
all of them land, or none.
Tested in tests/unit/test_atomic.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "atomic_files",
    "atomic_open",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "tmp_path_for",
]


def tmp_path_for(path: str | os.PathLike[str]) -> Path:
    """The `.tmp` sibling used while `path` is being written (qualified by process and thread so
    two writers of the same file, e.g. two decoder threads storing one image, never share one)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}-{threading.get_ident()}.tmp")


def _fsync_dir(folder: Path) -> None:
    # Directory fsync makes the rename durable on POSIX; Windows cannot open a folder.
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _replacing(path: str | os.PathLike[str], *, fresh: bool = False) -> Iterator[Path]:
    """The `.tmp` sibling of `path` (`fresh`: a leftover one removed first), which replaces `path`
    when the block ends cleanly (the block has fsynced it) and is removed when the block raises,
    leaving the target as it was. `atomic_open` and `atomic_path` differ only in who fills it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path_for(target)
    if fresh:
        tmp.unlink(missing_ok=True)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str | None = "utf-8",
    newline: str | None = None,
) -> Iterator[IO]:
    """Open a `.tmp` sibling of `path` for writing; on a clean exit it replaces `path`.

    `mode` is "w" (text) or "wb" (bytes). If the block raises, the target is left
    as it was and the temporary file is removed.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open supports 'w' and 'wb', not {mode!r}")
    binary = "b" in mode
    with (
        _replacing(path) as tmp,
        open(
            tmp, mode, encoding=None if binary else encoding, newline=None if binary else newline
        ) as fh,
    ):
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A `.tmp` path for something else to fill (a tool, SQLite's `VACUUM INTO` or backup); on a
    clean exit the file is fsynced and replaces `path`. If the block raises, or leaves no file,
    the target stays as it was and nothing is left behind (a missing file raises FileNotFoundError).
    """
    with _replacing(path, fresh=True) as tmp:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` atomically; returns the path."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` atomically (no newline translation); returns the path."""
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(path)


@contextlib.contextmanager
def atomic_files(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """A private folder beside `folder` for a command to write its files into; on a clean exit
    each file is moved to the same place under `folder` (renames on one file system: no space
    needed, nothing half-written), so a full disk or an error leaves `folder` as it was, with no
    partial set of files. Other files already in `folder` are kept."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        for src in sorted(p for p in tmp.rglob("*") if p.is_file()):
            dest = target / src.relative_to(tmp)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
        _fsync_dir(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
