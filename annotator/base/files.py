"""Reading a user's file without hanging or filling memory: one open, checked to be a regular
file of at most a given size before a byte is read.

A pipe named as a manifest (or an image, a CSV, a rubric, a mapping, `keys.toml`) blocks a plain
open for ever, `/dev/zero` never ends, and a sparse file of 5 GB is read whole: each is refused
from what `fstat` says of the one open file, so a path swapped after a check cannot slip by.
Tested in tests/unit/test_security_inputs.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_FILE_BYTES", "NotRegular", "TooLarge", "read_regular", "size_text"]

MAX_FILE_BYTES = 1 << 30  # 1 GiB: far above any manifest, table or image annotator reads


class NotRegular(OSError):
    """The path names a pipe, a device, a socket or a folder, not a file."""


class TooLarge(OSError):
    """The file is larger than the reader takes."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, more than {limit}")
        self.size, self.limit = size, limit


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def read_regular(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them. Raises NotRegular,
    TooLarge, or the OSError of opening it (FileNotFoundError, PermissionError, ...)."""
    fd = os.open(Path(path), os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        os.set_blocking(fd, True)
        chunks = []
        left = limit + 1  # a file grown since fstat is caught too
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise TooLarge(len(data), limit)
        return data
    finally:
        os.close(fd)
