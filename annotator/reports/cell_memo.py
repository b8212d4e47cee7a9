"""The cells of a long table made once per content and reused by the next view of it.

The dashboard lays the generators' case-by-case tables out again at every live refresh: 25,000
cells at a million judgements, formatted twice (the view's `Est`, the section's text), which
was most of the view's time. A hundred new answers touch a few cases; every other cell holds
the figure it held at the last refresh. A cell is a pure function of its figure's content, so
one made from an earlier report's equal figure is the same cell; the memo keeps only the last
table's cells, so it never grows past one table.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar

from .formatting import Est, figure_content
from .section_judges import est_text
from .view_metrics import cell


class CellMemo:
    """`view_metrics.cell` of one table's figures, each made once per content across views.

    Use one per table: call it for each figure, then `keep()` so the next view reuses them.
    A figure that is the very object of the last view (a live estimate keeps the generators'
    unmoved rows whole: stats/live_cases.py) is found by identity first, without reading its
    content; a report's figures are never changed once made."""

    _last: ClassVar[dict[Hashable, Est | str]] = {}
    # id of a figure -> (the figure, held so the id stays its own; its content; its cell)
    _last_ids: ClassVar[dict[int, tuple[dict[str, Any], Hashable, Est | str]]] = {}

    def __init__(self) -> None:
        self._before, self._before_ids = CellMemo._last, CellMemo._last_ids
        self._made: dict[Hashable, Est | str] = {}
        self._made_ids: dict[int, tuple[dict[str, Any], Hashable, Est | str]] = {}

    def __call__(self, v: Any) -> Est | str:
        if type(v) is not dict:
            return cell(v)
        same = self._before_ids.get(id(v))
        if same is not None and same[0] is v:
            _, key, made = same
            self._made.setdefault(key, made)
        else:
            key = figure_content(v)
            if key is None:
                return cell(v)
            found = self._made.get(key)
            if found is None:
                found = self._before.get(key)
                if found is None:
                    found = cell(v)
                self._made[key] = found
            made = found
        self._made_ids[id(v)] = (v, key, made)
        return made

    def keep(self) -> None:
        """This table's cells for the next view (the ones before are dropped)."""
        CellMemo._last, CellMemo._last_ids = self._made, self._made_ids


class CaseRowMemo:
    """The generators' rows (a case: each figure's cells across the generators), each reused
    whole by the next view where every generator's cells of the case are the very dict of the
    last view (a live estimate keeps its unmoved rows whole: stats/live_cases.py). `layout`:
    the generators and figures in table order, which place the cells; another layout makes
    every row afresh."""

    # (layout, {case: (each generator's cells of the case, held; each figure's row of cells)})
    _last: ClassVar[tuple[Hashable, dict[str, tuple[tuple[Any, ...], list[list[Any]]]]]]
    _last = ((), {})

    def __init__(self, layout: Hashable) -> None:
        last_layout, rows = CaseRowMemo._last
        self._before = rows if last_layout == layout else {}
        self._layout = layout
        self._made: dict[str, tuple[tuple[Any, ...], list[list[Any]]]] = {}

    def get(self, case: str, refs: tuple[Any, ...]) -> list[list[Any]] | None:
        """The case's rows of the last view, if `refs` are the very objects it was made from."""
        before = self._before.get(case)
        if before is None or len(before[0]) != len(refs):
            return None
        if not all(a is b for a, b in zip(before[0], refs, strict=True)):
            return None
        self._made[case] = before
        return before[1]

    def put(self, case: str, refs: tuple[Any, ...], rows: list[list[Any]]) -> None:
        self._made[case] = (refs, rows)

    def keep(self) -> None:
        CaseRowMemo._last = (self._layout, self._made)


class TextMemo:
    """`est_text` of one table's cells, each made once per `Est` object across views: an `Est`
    is immutable and `CellMemo` hands the same one to every view with that figure, so the
    object itself is the key (held here, so its id is never another's). A whole row of them is
    kept by its cells' list (`row`): `CaseRowMemo` hands the next view the very list where no
    cell of the case moved, and reading 25,000 cells back one by one was most of the section."""

    _last: ClassVar[dict[int, tuple[Est, str]]] = {}
    # id of a row's cells -> (the cells, held; the row's text)
    _last_rows: ClassVar[dict[int, tuple[list[Any], tuple[str, ...]]]] = {}

    def __init__(self) -> None:
        self._before, self._before_rows = TextMemo._last, TextMemo._last_rows
        self._made: dict[int, tuple[Est, str]] = {}
        self._made_rows: dict[int, tuple[list[Any], tuple[str, ...]]] = {}

    def __call__(self, c: Est | str) -> str:
        if not isinstance(c, Est):
            return str(c)
        made = self._made.get(id(c)) or self._before.get(id(c))
        if made is None:
            made = (c, est_text(c))
        self._made[id(c)] = made
        return made[1]

    def row(self, head: tuple[str, ...], cells: list[Any]) -> tuple[str, ...]:
        """`(*head, *each cell's text)`, the last view's tuple where `cells` is its very list
        (the cells are never changed once made) under the same head."""
        made = self._before_rows.get(id(cells))
        if made is None or made[0] is not cells or made[1][: len(head)] != head:
            made = (cells, (*head, *map(self, cells)))
        self._made_rows[id(cells)] = made
        return made[1]

    def keep(self) -> None:
        TextMemo._last, TextMemo._last_rows = self._made, self._made_rows


__all__ = ["CaseRowMemo", "CellMemo", "TextMemo"]
