"""Atomic file writes: a report on disk is either the old one or the new one, never half.

The content is written to a `.tmp` sibling in the same folder (so `os.replace`
stays on one file system and is atomic), flushed and fsynced, then renamed over
the target; the folder is fsynced so the rename itself survives a power cut.
On any error the `.tmp` file is removed and the old target is untouched.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_open", "tmp_path_for"]


def tmp_path_for(path: str | os.PathLike[str]) -> Path:
    """The `.tmp` sibling used while `path` is being written (pid-qualified so two
    processes writing the same report do not write into each other's file)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.tmp")


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
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path_for(target)
    kwargs = {} if "b" in mode else {"encoding": encoding, "newline": newline}
    try:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)


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
