"""Each answer's reason: its text, from the judgements' reason column or a text metric, one
per (item, rater or judge), carried on every metric row of the answer as a categorical.

A live refresh that only added answers (the frames' `Grown`) reads the reasons of the added rows
only: the earlier table's are kept in two parts (the reason column's, the text metrics'), each
in table order, and the added rows' follow them, which is the order a read of the whole table
gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..domain.rubric import Rubric
from .frames import Grown
from .last_table import LastTable


def _reasons(
    df: pd.DataFrame,
    who: str,
    text_keys: set[str],
    rows_of: dict[str, np.ndarray] | None = None,
    grown: Grown | None = None,
) -> pd.Series:
    """One reason per (item, rater/judge): the reason column, else a text metric. `rows_of`:
    each metric's rows of `df` in table order where they are known (RowCodes.rows_of). Where
    `df` grew from an earlier table (`grown`) whose reasons were read, the added rows only are
    read: the reasons in table order are the earlier ones, then theirs."""
    keys = frozenset(text_keys)
    ours = grown is not None and grown.table is df
    kept = _REASONS.get(who) if ours else None
    if kept is not None and grown is not None and kept[0] is grown.earlier and kept[1] == keys:
        start = len(kept[0])
        parts = [
            pd.concat([old, new], ignore_index=True)
            for old, new in zip(kept[2], _reason_parts(df, who, keys, rows_of, start), strict=True)
        ]
    else:
        parts = _reason_parts(df, who, keys, rows_of, 0)
    if ours:
        _REASONS.put(who, df, keys, parts)
    parts = [p for p in parts if p is not None]
    if not parts:
        return pd.Series(dtype=object)
    allr = pd.concat(parts, ignore_index=True).drop_duplicates(["item_id", who])
    return allr.set_index(["item_id", who])["reason"].astype(str)


# the last grown table's reasons in parts (_reason_parts), per kind of table
_REASONS = LastTable()


def _reason_parts(
    df: pd.DataFrame,
    who: str,
    text_keys: frozenset[str],
    rows_of: dict[str, np.ndarray] | None,
    start: int,
) -> list[pd.DataFrame | None]:
    """The reasons of `df`'s rows from `start` on (item_id, who, reason), in table order: those
    of the reason column, and those of the text metrics (None where there is no such column or
    metric)."""
    # rows are picked before columns: a copy of the few rows with a text, not of every row
    r = t = None
    if "reason" in df.columns:
        tail = df.iloc[start:] if start else df
        r = tail.loc[tail["reason"].notna().to_numpy(), ["item_id", who, "reason"]]
        r = r[r["reason"].astype(str).str.strip() != ""]
    if text_keys:
        if rows_of is None:
            tail = df.iloc[start:] if start else df
            t = tail.loc[tail["metric"].isin(text_keys).to_numpy(), ["item_id", who, "value"]]
        else:  # the text metrics' rows in table order, without comparing every row's metric
            at = [rows_of[k] for k in text_keys if k in rows_of]
            rows = np.sort(np.concatenate(at)) if at else np.zeros(0, dtype=np.int64)
            rows = rows[np.searchsorted(rows, start) :]
            # taken from the added rows' slice: a take on the whole table joins its text
            # columns' chunks (one per refresh) first, a copy of every row
            tail = df.iloc[start:] if start else df
            t = tail.iloc[rows - start, tail.columns.get_indexer(["item_id", who, "value"])]
        t = t.rename(columns={"value": "reason"}).dropna(subset=["reason"])
        t = t[t["reason"].astype(str).str.strip() != ""]
    return [r, t]


def reason_rows(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    item_index: pd.Index,
    who_names: pd.Index,
    idx: np.ndarray,
    who_c: np.ndarray,
    rows_of: dict[str, np.ndarray] | None = None,
    grown: Grown | None = None,
) -> pd.Categorical:
    """Each output row's reason: the one of its (item, rater/judge), else missing. A categorical:
    one text serves every metric row of its answer."""
    text_keys = {m.key for m in rubric.metrics if not m.judgeable}
    reasons = _reasons(df, who, text_keys, rows_of, grown)
    if not len(reasons):  # int8: the codes' dtype for no category, so they are not cast again
        codes = np.full(len(idx), -1, dtype=np.int8)
        return pd.Categorical.from_codes(codes, categories=pd.Index([], dtype=object))
    codes = np.full(len(idx), -1, dtype=np.int32)
    n_who = len(who_names) + 1
    r_item = item_index.get_indexer(reasons.index.get_level_values(0))
    r_who = who_names.get_indexer(reasons.index.get_level_values(1).astype(str))
    keys = np.where((r_item >= 0) & (r_who >= 0), r_item * n_who + r_who, -1)
    order = np.argsort(keys, kind="stable")
    text_codes, texts = pd.factorize(reasons.to_numpy(dtype=object)[order])
    keys = keys[order]
    want = idx * n_who + who_c
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    hit = keys[at] == want
    codes[hit] = text_codes[at[hit]]
    return pd.Categorical.from_codes(codes, categories=pd.Index(texts, dtype=object))


__all__ = ["reason_rows"]
