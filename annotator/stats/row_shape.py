"""What a metric's answers' items and raters alone decide, made once for the metrics whose
answers name the same items and raters in the same order.

A tags metric's options are a metric spec each, coded from the same rows, and every answer
carries each required gate and scale of its rubric: at a million judgements, ten of a report's
twelve metric sections read the same 200,000 (item, rater) pairs. Their item count, rater count
and the layout of their items x raters matrix follow from those pairs only, so a section whose
pairs equal the last section's (one comparison of each column) reads them from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .distinct import distinct, n_distinct
from .wide import Wide, WideLayout, wide_layout, wide_matrix


class RowShape:
    """One metric's (idx, rater) rows: their distinct items (`items_of`, where the items are
    row numbers), `n_items`, `n_raters`, and the wide matrix's layout (made when first read)."""

    def __init__(self, h: pd.DataFrame) -> None:
        self.idx = h["idx"].to_numpy()
        self.rater = h["rater"].array
        self.items_of = distinct(self.idx) if len(self.idx) and self.idx.dtype == np.int64 else None
        self.n_items = len(self.items_of[0]) if self.items_of is not None else n_distinct(h["idx"])
        self.n_raters = n_distinct(h["rater"])
        self._layout: WideLayout | None = None
        self._laid_out = False

    def names_same_rows(self, h: pd.DataFrame) -> bool:
        """Whether `h`'s rows name the same (item, rater) pairs in the same order; only rows
        whose raters are a categorical are compared (by their codes)."""
        idx, rater = h["idx"].to_numpy(), h["rater"].array
        mine = self.rater
        return (
            isinstance(rater, pd.Categorical)
            and isinstance(mine, pd.Categorical)
            and len(idx) == len(self.idx)
            and idx.dtype == self.idx.dtype
            and (rater.categories is mine.categories or rater.categories.equals(mine.categories))
            and np.array_equal(rater.codes, mine.codes)
            and np.array_equal(idx, self.idx)
        )

    def wide(self, h: pd.DataFrame, answered: np.ndarray) -> Wide:
        """wide_matrix(h, answered, items_of) for `h` with these rows."""
        if not answered.all():  # the cannot-judge rows left out: another set of rows
            return wide_matrix(h, answered, self.items_of)
        if not self._laid_out:
            self._layout = wide_layout(self.idx, self.rater, self.items_of)
            self._laid_out = True
        if self._layout is None:  # rows numpy cannot place: pandas' pivot
            return wide_matrix(h, answered, self.items_of)
        return self._layout.fill(h["code"].to_numpy(dtype=float))


class RowShapes:
    """The last metric's RowShape, given again for a metric with the same rows."""

    def __init__(self) -> None:
        self._last: RowShape | None = None

    def of(self, h: pd.DataFrame) -> RowShape:
        last = self._last
        if last is not None and last.names_same_rows(h):
            return last
        self._last = RowShape(h)
        return self._last


__all__ = ["RowShape", "RowShapes"]
