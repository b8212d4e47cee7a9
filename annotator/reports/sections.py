"""The report's view-model of sections: plain tables, notes and chart PNGs, the shape every
output can lay out without knowing a figure: the dashboard renders it in ui/section_widgets.py,
the HTML report through one Jinja macro (templates/_section.html.j2), and `report --csv` writes
each Table as one CSV (csv_report.section_tables). Section builders are reports/section_*.py
(listed in reports/report_sections.py) and services/dashboard*.py.
Tested in tests/gui/test_dashboard_view.py and tests/unit/test_report_sections.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Table:
    name: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    flagged: frozenset[int] = frozenset()
    # columns of figures: the HTML report aligns them right (the dashboard ignores it)
    numeric: frozenset[int] = frozenset()
    # the CSV file the table is written as (csv_report.section_tables): None derives it from `name`
    # ("certifiedSplitTable" -> "certified_split"); "" writes none, for a table whose figures a
    # CSV of the contract already has as numbers (the cells here are formatted text)
    csv: str | None = None
    # the HTML report shows a long table folded under this line ("" shows it open): a reader
    # opens it when they want the detail (the app and the CSV show every row as they are)
    fold: str = ""

    def csv_name(self) -> str:
        if self.csv is not None:
            return self.csv
        stem = self.name.removesuffix("Table")
        return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


@dataclass(frozen=True)
class Chart:
    name: str
    png: bytes
    alt: str
    caption: str = ""
    flagged: bool = False


@dataclass(frozen=True)
class Note:
    text: str
    # how the HTML report sets it: a paragraph, a sub-heading of the section, or an aside in
    # small print (the explanation of a table); the dashboard shows every note as text
    style: Literal["", "heading", "aside"] = ""


Block = Table | Chart | Note


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    subtitle: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Tile:
    value: str
    label: str
    warn: bool = False


__all__ = ["Block", "Chart", "Note", "Section", "Table", "Tile"]
