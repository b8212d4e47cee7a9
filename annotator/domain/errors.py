"""One error type for bad input, carrying where it came from.

Every importer and parser raises `InputError` with the file, the line and the
field, so the CLI and the UI can print one line that tells the user what to fix.
"""

from __future__ import annotations


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
        return " ".join(text.split())  # guarantee one line


class AlreadyAnswered(Exception):
    """A second first-answer for the same item or pair (a double submission)."""
