"""Where an export goes when no output path is given: `exports/<study name>/<YYYY-MM-DD>/`
under the current folder, so repeated exports of one study sort by day and never land
among the lead's own files."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

EXPORTS = "exports"
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def folder_name(name: str) -> str:
    """A study name as one safe folder name (no separators, no leading dots)."""
    safe = _UNSAFE.sub("_", name).strip(" ._")
    return safe[:100] or "study"


def default_output(
    study: Any, filename: str, *, today: date | None = None, base: Path | None = None
) -> Path:
    """`<base or cwd>/exports/<study name>/<YYYY-MM-DD>/<filename>`; `study` is a Study or its name."""
    name = study if isinstance(study, str) else study.name
    day = (today or date.today()).isoformat()
    return (base if base is not None else Path.cwd()) / EXPORTS / folder_name(name) / day / filename


def default_report_paths(location: Any) -> tuple[str, str, str]:
    """(json, html, csv folder) under the study's default output folder."""
    from .study import Study

    study = Study.open(location, mode="read")
    try:
        name = study.name
    finally:
        study.close()
    folder = default_output(name, "")
    return str(folder / "report.json"), str(folder / "report.html"), str(folder / "tables")
