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

from .formatting import Est
from .section_judges import est_text
from .view_metrics import cell


def _content(v: dict[str, Any]) -> Hashable | None:
    """A figure's content as a key, each value with its type (1, 1.0 and True print apart);
    None when a value is not hashable (a nested note list: made afresh)."""
    values = tuple(v.values())
    key = (tuple(v), values, tuple(map(type, values)))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class CellMemo:
    """`view_metrics.cell` of one table's figures, each made once per content across views.

    Use one per table: call it for each figure, then `keep()` so the next view reuses them."""

    _last: ClassVar[dict[Hashable, Est | str]] = {}

    def __init__(self) -> None:
        self._before = CellMemo._last
        self._made: dict[Hashable, Est | str] = {}

    def __call__(self, v: Any) -> Est | str:
        if type(v) is not dict:
            return cell(v)
        key = _content(v)
        if key is None:
            return cell(v)
        made = self._made.get(key)
        if made is None:
            made = self._before.get(key)
            if made is None:
                made = cell(v)
            self._made[key] = made
        return made

    def keep(self) -> None:
        """This table's cells for the next view (the ones before are dropped)."""
        CellMemo._last = self._made


class TextMemo:
    """`est_text` of one table's cells, each made once per `Est` object across views: an `Est`
    is immutable and `CellMemo` hands the same one to every view with that figure, so the
    object itself is the key (held here, so its id is never another's)."""

    _last: ClassVar[dict[int, tuple[Est, str]]] = {}

    def __init__(self) -> None:
        self._before = TextMemo._last
        self._made: dict[int, tuple[Est, str]] = {}

    def __call__(self, c: Est | str) -> str:
        if not isinstance(c, Est):
            return str(c)
        made = self._made.get(id(c)) or self._before.get(id(c))
        if made is None:
            made = (c, est_text(c))
        self._made[id(c)] = made
        return made[1]

    def keep(self) -> None:
        TextMemo._last = self._made


__all__ = ["CellMemo", "TextMemo"]
