"""The report as JSON (docs/design.md 5.5, a contract): keys in the order the report
model built them, UTF-8, and no NaN/Infinity (an undefined statistic is `null`
with a note, never a number a JSON reader would choke on or misread)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_write_text

__all__ = ["to_json_text", "write_json", "read_json"]


def _default(obj: Any) -> Any:
    """Accept numpy / pandas scalars and arrays the stats hand over; refuse anything else.

    Imported lazily so this module does not pull numpy in for plain dicts.
    """
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a hard dependency
        np = None  # type: ignore[assignment]
    if np is not None:
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            value = float(obj)
            if not math.isfinite(value):
                raise ValueError(f"non-finite number {value!r} in report; undefined must be null")
            return value
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"report value of type {type(obj).__name__} is not JSON serialisable")


def to_json_text(report: dict[str, Any]) -> str:
    """The report as indented JSON text (ends with a newline).

    Raises TypeError for a value JSON cannot carry and ValueError for NaN/Infinity.
    """
    return (
        json.dumps(
            report, indent=2, ensure_ascii=False, allow_nan=False, sort_keys=False, default=_default
        )
        + "\n"
    )


def write_json(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the report atomically. Serialisation happens before anything touches
    the disk, so a bad value raises and leaves the previous file as it was."""
    text = to_json_text(report)
    return atomic_write_text(path, text, encoding="utf-8")


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a report written by `write_json`."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
