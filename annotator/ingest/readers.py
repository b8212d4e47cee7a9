"""Reading user files: one-line errors for every way a path or its bytes can be wrong.

JSON Lines are split on "\\n" only: U+2028, U+0085 and the other characters
`str.splitlines` treats as line ends are valid inside JSON strings.
Tested in tests/unit/test_ingest_bad_input.py and tests/unit/test_security_inputs.py.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

from ..base.files import MAX_FILE_BYTES, NotRegular, TooLarge, read_regular, size_text
from ..domain.errors import DiskFull, InputError

MAX_JSON_DEPTH = 64  # nesting of one JSON value; deeper is refused before the parser recurses


def read_bytes(
    path: Path,
    source: str,
    *,
    what: str = "file",
    field: str | None = None,
    limit: int = MAX_FILE_BYTES,
) -> bytes:
    """The file's bytes, or one line naming what is wrong with the path: a pipe, a device or a
    file over `limit` is refused before a byte is read (base/files.py)."""
    try:
        return read_regular(path, limit)
    except NotRegular:
        raise InputError(
            f"{what} is not a regular file (a pipe, a device or a socket): give a file",
            source=source,
            field=field,
        ) from None
    except TooLarge as exc:
        raise InputError(
            f"{what} is {size_text(exc.size)}, more than the {size_text(exc.limit)} annotator "
            "reads; split or shrink it",
            source=source,
            field=field,
        ) from None
    except FileNotFoundError:
        raise InputError(f"{what} not found", source=source, field=field) from None
    except IsADirectoryError:
        raise InputError(f"{what} is a folder, not a file", source=source, field=field) from None
    except PermissionError:
        raise InputError(
            f"{what} cannot be read (permission denied)", source=source, field=field
        ) from None
    except ValueError as exc:  # embedded NUL
        raise InputError(f"{what}: {exc}; fix the path", source=source, field=field) from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputError(
                f"{what}: the file name is too long for this system; shorten it",
                source=source,
                field=field,
            ) from None
        if exc.errno == errno.ENOSPC:
            raise DiskFull("the disk is full", source=source) from None
        raise InputError(
            f"{what} cannot be read ({exc.strerror})", source=source, field=field
        ) from None


def read_text(path: Path, source: str, *, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """UTF-8 text (a BOM is allowed), or one line."""
    raw = read_bytes(path, source, what=what, limit=limit)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not UTF-8 text (byte {exc.start}); save it as UTF-8", source=source
        ) from None


def _depth_ok(line: str) -> bool:
    """Cheap upper bound of the nesting depth, ignoring brackets inside strings."""
    depth = deepest = 0
    in_str = esc = False
    for ch in line:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    return False
        elif ch in "]}":
            depth -= 1
    return True


def parse_json(text: str, source: str, line: int | None = None) -> Any:
    if (
        ("[" in text or "{" in text)
        and text.count("[") + text.count("{") > MAX_JSON_DEPTH
        and not _depth_ok(text)
    ):
        raise InputError(
            f"JSON nested more than {MAX_JSON_DEPTH} levels deep; flatten it",
            source=source,
            line=line,
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg} at column {exc.colno})",
            source=source,
            line=line if line is not None else exc.lineno,
        ) from None
    except RecursionError:
        raise InputError("JSON nested too deep; flatten it", source=source, line=line) from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed object) for every non-blank line; one-line errors."""
    src = str(path)
    text = read_text(path, src)
    rows = []
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        rows.append((n, parse_json(line, src, n)))
    return rows
