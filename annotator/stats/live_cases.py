"""A live estimate's generator cells: each (generator, case) row made again only where its
figures moved since the last live estimate.

At a million judgements the generators' section holds 25,000 cells (generator x case x figure),
each made from its point estimate and the last full computation's interval
(`live_estimate.carried_figure`), and the dashboard lays each out again. A hundred new answers
touch a few cases. A row is a pure function of its cells' point estimates, item and answer
counts, the full computation it carries from and the minimum count (and, for a cell the full
computation gave no interval, whether the live plan's one replicate is defined): where all of
them equal the last live estimate's, the row is the last one, the same object (the view reuses
its cells by identity too: reports/cell_memo.py). Only the last estimate's rows are kept,
against the full computation they carried from, and only while the figures' cells are laid out
as then (the same generators and cases in the same order): the signatures are then compared
figure by figure as arrays, where a tuple a cell took a third of the section's time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeGuard

import numpy as np

from .bootstrap import summarize
from .live_estimate import carried_figure, carry_intervals


@dataclass(frozen=True)
class _Figure:
    """One figure's cells, in the order of its cell keys."""

    name: str
    share: bool
    gens: list[str]
    cases: list[str]
    points: list[float]
    n_items: list[int]
    n_answers: list[int]
    reps: np.ndarray  # (replicates x cells): the live plan's one replicate
    bounds: list[tuple[float, float, int]]


@dataclass(frozen=True)
class _Layout:
    """Where each figure's cells go: the rows (generator, case) in order of first appearance,
    each row's cells (figure, cell), and per figure each cell's row."""

    figures: list[tuple[str, bool, list[str], list[str]]]
    keys: list[tuple[str, str]]
    cells: list[list[tuple[int, int]]]
    row_of: list[np.ndarray]


@dataclass(frozen=True)
class _Last:
    """A live estimate's rows, and what says whether the next one may keep each: its cells'
    signatures per figure (`_signatures`) and whether the row was a pure function of them."""

    layout: _Layout
    signatures: list[np.ndarray]
    rows: list[dict[str, Any]]
    pure: np.ndarray


class LiveCases:
    """The rows (generator, case) of one live estimate's generators section: `add` each figure's
    cells, then `fill` the section's `by_case` tables."""

    # (the full computation's section, min count, the last estimate's rows)
    _last: ClassVar[tuple[Any, int, _Last | None]] = (None, 0, None)
    _lock = threading.Lock()

    def __init__(self, carry_from: Mapping[str, Any], min_count: int) -> None:
        last_from, last_min, rows = LiveCases._last
        self._before = rows if last_from is carry_from and last_min == min_count else None
        self._from, self._min_count = carry_from, min_count
        self._figures: list[_Figure] = []

    def add(
        self,
        name: str,
        share: bool,
        gens: list[str],
        cases: list[str],
        points: list[float],
        n_items: list[int],
        n_answers: list[int],
        reps: np.ndarray,
        bounds: list[tuple[float, float, int]],
    ) -> None:
        self._figures.append(
            _Figure(name, share, gens, cases, points, n_items, n_answers, reps, bounds)
        )

    def fill(self, by_generator: Mapping[str, Mapping[str, Any]]) -> None:
        """Each generator's `by_case` rows: {"n_items": the most items of its figures, then each
        figure's cell in the figures' order}, as `generators._figure` makes them. A row is the
        last estimate's, the same object, where the figures and their cells are laid out as
        then and none of its cells' signatures moved (compared figure by figure, as arrays:
        25,000 cells at a million judgements)."""
        figures = [(f.name, f.share, f.gens, f.cases) for f in self._figures]
        signatures = [_signatures(f) for f in self._figures]
        before = self._before
        if before is not None and before.layout.figures == figures:
            layout = before.layout
            reuse = before.pure.copy()
            for f, (now, then) in enumerate(zip(signatures, before.signatures, strict=True)):
                moved = ~(now == then).all(axis=1)  # a NaN point is never equal: made again
                reuse[layout.row_of[f][moved]] = False
        else:
            layout, reuse = _layout(figures), np.zeros(0, dtype=bool)
        exact_gens = self._from.get("by_generator")
        exact_of: dict[str, Mapping[str, Any] | None] = {}
        rows: list[dict[str, Any]] = []
        pure = np.zeros(len(layout.keys), dtype=bool)
        for r, (g, case) in enumerate(layout.keys):
            if len(reuse) and reuse[r]:
                assert before is not None
                row, pure[r] = before.rows[r], True
            else:
                if g not in exact_of:
                    exact_of[g] = _exact_cells(exact_gens, g)
                row, pure[r] = self._row(layout.cells[r], exact_of[g], case)
            rows.append(row)
            by_generator[g]["by_case"][case] = row
        with LiveCases._lock:
            LiveCases._last = (self._from, self._min_count, _Last(layout, signatures, rows, pure))

    def _row(
        self, at: list[tuple[int, int]], exact_cases: Mapping[str, Any] | None, case: str
    ) -> tuple[dict[str, Any], bool]:
        """A row made afresh, and whether it is a pure function of its signature (kept for the
        next estimate): every cell carried whole from the full computation, undefined, or
        summarised from the live plan's one replicate, whose interval is then none whatever
        its value (`summarize`: every resample the same, or the one undefined); a plan of more
        replicates reads their values, and its rows are made again."""
        row: dict[str, Any] = {"n_items": max(self._figures[f].n_items[c] for f, c in at)}
        pure = True
        ec = exact_cases.get(case) if exact_cases is not None else None
        for f, c in at:
            fig = self._figures[f]
            n = fig.n_items[c]
            if fig.share and fig.n_answers[c] < self._min_count:
                row[fig.name] = summarize(
                    None,
                    None,
                    n,
                    f"{fig.n_answers[c]} answers, fewer than {self._min_count}: a share is not "
                    "shown",
                )
                continue
            exact = None
            if _is_map(ec):
                exact = ec.get(fig.name)
                if (carried := carried_figure(fig.points[c], n, exact)) is not None:
                    row[fig.name] = carried
                    continue
            pure = pure and len(fig.reps) == 1
            row[fig.name] = summarize(fig.points[c], fig.reps[:, c], n, _bounds=fig.bounds[c])
            if isinstance(exact, Mapping):
                carry_intervals(row[fig.name], exact)
        return row, pure


def _signatures(fig: _Figure) -> np.ndarray:
    """Each cell's inputs besides its figure's name and kind (the layout's): estimate, items,
    answers, and whether the live plan's one replicate is defined (what a cell without a full
    interval reads); cells x 4. Counts and the flag are whole numbers, exact as floats."""
    out = np.empty((len(fig.points), 4))
    out[:, 0] = fig.points
    out[:, 1] = fig.n_items
    out[:, 2] = fig.n_answers
    out[:, 3] = [b[2] for b in fig.bounds]
    return out


def _layout(figures: list[tuple[str, bool, list[str], list[str]]]) -> _Layout:
    keys: list[tuple[str, str]] = []
    cells: list[list[tuple[int, int]]] = []
    place: dict[tuple[str, str], int] = {}
    row_of: list[np.ndarray] = []
    for f, (_, _, gens, cases) in enumerate(figures):
        rows = np.empty(len(gens), dtype=np.int64)
        for c, key in enumerate(zip(gens, cases, strict=True)):
            r = place.get(key)
            if r is None:
                r = place[key] = len(keys)
                keys.append(key)
                cells.append([])
            cells[r].append((f, c))
            rows[c] = r
        row_of.append(rows)
    return _Layout(figures, keys, cells, row_of)


def _is_map(x: Any) -> TypeGuard[Mapping[str, Any]]:
    return type(x) is dict or isinstance(x, Mapping)  # the plain type first: 25,000 cells


def _exact_cells(exact_gens: Any, g: str) -> Mapping[str, Any] | None:
    """Generator `g`'s cells (by case) in the last full report, where it has them."""
    if not isinstance(exact_gens, Mapping) or not isinstance(entry := exact_gens.get(g), Mapping):
        return None
    cells = entry.get("by_case")
    return cells if isinstance(cells, Mapping) else None


__all__ = ["LiveCases"]
