"""The report's view-model of sections: plain tables, notes, lists, item cards and chart PNGs,
the shape every output can lay out without knowing a figure: the dashboard renders it in
ui/section_widgets.py, the HTML report through one Jinja macro (templates/_section.html.j2), and
`report --csv` writes each Table as one CSV (csv_report.section_tables; a list or a card is no
table and writes none). Section builders are reports/section_*.py
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
    # small print (the explanation of a table); the dashboard shows a sub-heading in bold and
    # every other note as text
    style: Literal["", "heading", "aside"] = ""


@dataclass(frozen=True)
class Bullets:
    """A list of short sentences, each its own point (a summary's verdicts, what is known)."""

    items: tuple[str, ...]
    # the HTML report sets the list in small print (the dashboard shows every list alike)
    small: bool = False


@dataclass(frozen=True)
class Answer:
    """One line of an item card: who answered, the answer, and the reason they gave."""

    who: str
    answer: str
    reason: str = ""
    # how the HTML report sets the line: a rater's, the pooled answer under them, or a judge's
    role: Literal["", "pooled", "judge"] = ""


@dataclass(frozen=True)
class ItemCard:
    """One item with its picture: a finding's answers side by side, the reasons beside them."""

    title: str
    # the item's picture: PNG or JPEG bytes, or a data: URI of one; None: the card says so
    image: bytes | str | None = None
    image_alt: str = ""
    # lines under the title: where the item comes from (case, generator, id)
    meta: tuple[str, ...] = ()
    answers: tuple[Answer, ...] = ()
    # a warning beside the title (what the card was flagged for), in words and a symbol
    flag: str = ""
    # small lines under the answers: anything else the report says of the item
    foot: tuple[str, ...] = ()


Block = Table | Chart | Note | Bullets | ItemCard


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


__all__ = ["Answer", "Block", "Bullets", "Chart", "ItemCard", "Note", "Section", "Table", "Tile"]
