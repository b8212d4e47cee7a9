"""One error type for bad input, carrying where it came from.

Every importer and parser raises `InputError` with the file, the line and the
field, so the CLI and the UI can print one line that tells the user what to fix.
"""

from __future__ import annotations

import unicodedata


def _escaped(text: str) -> str:
    """Control and invisible formatting characters (ESC, U+202E...) as \\uXXXX: the line names
    what was wrong without a terminal obeying it (recolouring, or reordering the line)."""
    return "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf") else c for c in text
    )


class InputError(ValueError):
    """Bad input from a user-supplied file; `str()` is a one-line message."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = []
        if self.source:
            where.append(str(self.source) + (f":{self.line}" if self.line is not None else ""))
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        text = f"{prefix}: {self.message}" if prefix else self.message
        return _escaped(" ".join(text.split()))  # guarantee one line, shown as written


class AlreadyAnswered(Exception):
    """A second first-answer for the same item or pair (a double submission).

    `current` is the id of the answer already there, so a caller can keep the new
    answer as a correction of it instead of losing it.
    """

    def __init__(self, message: str = "already answered", current: int | None = None) -> None:
        super().__init__(message)
        self.current = current


class StudyError(InputError):
    """The study itself cannot do what was asked (damaged, busy, read-only, disk full).

    A subclass of InputError so every caller that prints one line for bad input
    prints one line for these too; the message says what to do.
    """


class DamagedStudy(StudyError):
    """The study file fails SQLite's integrity check or is not a study at all."""


class StudyBusy(StudyError):
    """Another process held the write lock longer than we wait; nothing was written."""


class StudyReadOnly(StudyError):
    """The study's folder or file cannot be written."""


class DiskFull(StudyError):
    """The disk filled up during a write; the transaction was rolled back whole."""


class NewerStudy(StudyError):
    """The study was written by a newer annotator (unknown schema revision)."""
