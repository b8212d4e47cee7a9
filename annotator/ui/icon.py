"""The app's icon (SVG source, PNG for window managers that take no SVG), shipped with the package."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "icons"


def icon_path(kind: str = "png") -> Path | None:
    """The icon file beside this module, or in the frozen bundle."""
    for folder in (HERE, Path(getattr(sys, "_MEIPASS", "")) / "annotator" / "ui" / "icons"):
        p = folder / f"annotator.{kind}"
        if p.exists():
            return p
    return None
