"""What a user-given string may hold: ids and names one printable line, free text
without control characters other than tab and newline.

A NUL or ESC in an id ends up in file names, terminal output and CSV cells,
where it truncates or rewrites what the lead reads; refusing it at the door is
cheaper than escaping it everywhere.
"""

from __future__ import annotations

import re

from .errors import InputError

MAX_NAME = 200  # characters in an id or a name
# characters of one free-text answer or reason: the cell cap of an imported table (ingest/tables.py
# MAX_CELL), so whatever an import lets in the app, a package and a merge let in too, and no more
MAX_TEXT = 1 << 20
# C0 controls, DEL and C1 controls; free text keeps tab, newline and carriage return.
_NAME_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_TEXT_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def check_name(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """An id or a name: non-empty, one line, no control characters, at most MAX_NAME long."""
    name = value.strip()
    if not name:
        raise InputError(f"{what} is empty", source=source, line=line, field=field)
    bad = _NAME_BAD.search(name)
    if bad:
        raise InputError(
            f"{what} contains the control character {_describe(bad.group())}; remove it",
            source=source,
            line=line,
            field=field,
        )
    if len(name) > MAX_NAME:
        raise InputError(
            f"{what} is {len(name)} characters long; at most {MAX_NAME}",
            source=source,
            line=line,
            field=field,
        )
    return name


def check_text(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
    multiline: bool = True,
) -> str:
    """Free text (a prompt, a reason): no control characters but tab and line ends."""
    bad = (_TEXT_BAD if multiline else _NAME_BAD).search(value)
    if bad:
        raise InputError(
            f"{what} contains the control character {_describe(bad.group())}; remove it",
            source=source,
            line=line,
            field=field,
        )
    return value
