"""A rubric file (docs/design.md 5.1) read from disk: one regular file, UTF-8 (a BOM allowed),
parsed and validated by domain/rubric.py, every problem one line naming the file.
Tested in tests/unit/test_rubric.py.
"""

from __future__ import annotations

from pathlib import Path

from ..domain.rubric import Rubric, parse_rubric
from .readers import read_text

MAX_RUBRIC_BYTES = 16 << 20  # a rubric is a few KiB of TOML


def load_rubric(path: str | Path) -> Rubric:
    p = Path(path)
    text = read_text(p, str(p), what="rubric file", limit=MAX_RUBRIC_BYTES)
    return parse_rubric(text, source=str(p))
