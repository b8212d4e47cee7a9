"""The report's view-model of sections: plain tables, notes and chart PNGs, the shape every
output can lay out without knowing a figure (the dashboard renders it in ui/dashboard_view.py;
its section builders are reports/section_*.py and services/dashboard*.py).
Tested in tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    flagged: frozenset[int] = frozenset()


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
