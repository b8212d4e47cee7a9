"""A table of answers coded row by row (`RowCodes`): each row's item, rater (or judge) and
metric as integers, and each metric's answers as codes of their distinct values.

Coding a million answers is hashing a million Python objects (0.3 s of a report). A live
dashboard's refresh adds a hundred answers to a table it coded seconds before: there the
earlier table's codes are kept (`codes_of`, one table a kind) and only the added rows are
coded and merged in (`StudyFrames.judgements_grown`, which the live frames set when a refresh
only added rows). The merge gives what coding the whole table gives, array for array: the distinct values
keep their order of first appearance (the earlier table's first, then the new ones), the
raters their sorted order, and a value the added rows write as a key-equal value of another
type (1.0 where the table had 1) codes the whole table again, since its first writing is what
is typed. tests/unit/test_row_codes.py holds the merge to the whole table's codes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..domain.rubric import Rubric
from .consensus import VERDICT_KEY, MetricSpec, _factorize, encode_series
from .frames import Grown
from .last_table import LastTable

# numbers the codes made in the process (RowCodes.serial)
_SERIALS = itertools.count()


@dataclass(frozen=True)
class RowCodes:
    """Per row of a table of answers: its item's place in `item_index` (-1: none), its rater's
    (judge's) code in the sorted `who_names` (-1: missing); per metric, its rows in table
    order (`rows_of`); for each metric the specs code, its rows' distinct answers and each
    row's code among them (`answers_of`, consensus._factorize's), each spec's code per row
    (`spec_codes`, NaN: no code) and, for a judge, any numeric reading (`nums_of`).

    `serial` names these codes among all made in the process, and `grown_from` the codes they
    were merged from (grown_codes: their rows are these codes' first rows, coded alike), so
    a reader that kept something per row of the earlier codes knows it may keep it again
    (rater_verdicts.py)."""

    n: int
    item_index: pd.Index
    item_pos: np.ndarray
    who_codes: np.ndarray
    who_names: pd.Index
    rows_of: dict[str, np.ndarray]
    answers_of: dict[str, tuple[np.ndarray, list[Any]]]
    spec_codes: dict[str, np.ndarray]
    nums_of: dict[str, np.ndarray]
    grown_from: int | None = None
    serial: int = field(default_factory=lambda: next(_SERIALS))


def row_codes(
    df: pd.DataFrame, who: str, specs: list[MetricSpec], item_index: pd.Index, judge: bool
) -> RowCodes:
    """Every row of `df` coded."""
    who_codes, who_names = _categories(df[who])
    m_codes, m_names = pd.factorize(df["metric"])
    rows_of = {str(m): np.flatnonzero(m_codes == i) for i, m in enumerate(m_names)}
    answers_of: dict[str, tuple[np.ndarray, list[Any]]] = {}
    spec_codes: dict[str, np.ndarray] = {}
    nums_of: dict[str, np.ndarray] = {}
    values = df["value"]
    for key, group in by_base(specs).items():
        rows = rows_of.get(key)
        if key == VERDICT_KEY or rows is None:
            continue
        raw = values.iloc[rows]
        answer, uniques = answers_of[key] = _factorize(raw)
        # coding the distinct answers codes every row (encode_series types each one alone)
        codes = encode_series(group, _objects(uniques))
        for s in group:
            spec_codes[s.key] = np.append(codes[s.key], np.nan)[answer]  # -1: the NaN slot
        if judge:
            nums_of[key] = _numbers(raw, answer, uniques)
    return RowCodes(
        n=len(df),
        item_index=item_index,
        item_pos=index_positions(item_index, df["item_id"]),
        who_codes=who_codes,
        who_names=who_names,
        rows_of=rows_of,
        answers_of=answers_of,
        spec_codes=spec_codes,
        nums_of=nums_of,
    )


def _numbers(raw: pd.Series, answer: np.ndarray, uniques: list[Any]) -> np.ndarray:
    """pd.to_numeric(raw, errors="coerce") as floats, where `answer` and `uniques` factorize raw.

    A column of texts is parsed once per distinct text (parsing a million texts one by one
    took most of a judge's table): a text's number depends on the text alone, and the column's
    choices (ints, floats, missing) on which texts it holds, the very set parsed here (with a
    missing one when any row misses). Any other column is converted as a whole."""
    if raw.dtype == object and all(isinstance(u, str) for u in uniques):
        texts = uniques + ([None] if (answer < 0).any() else [])
        per = pd.to_numeric(_objects(texts), errors="coerce").to_numpy(dtype=float)
        return np.append(per[: len(uniques)], np.nan)[answer]
    return pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)


def _objects(values: list[Any]) -> pd.Series:
    """A Series of objects holding `values` as they are (tuples stay whole)."""
    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = v
    return pd.Series(arr, dtype=object)


def index_positions(index: pd.Index, col: pd.Series) -> np.ndarray:
    """index.get_indexer(col), looked up once per distinct value: a million arrow strings are
    factorized in a fraction of the time get_indexer takes to convert them to objects."""
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    return index.get_indexer(uniques)[codes]


def _categories(col: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes (-1 for a missing value) and sorted distinct values as str: a categorical column
    that sorts and compares like the strings it stands for."""
    codes, uniques = pd.factorize(col, sort=False)
    names = pd.Index([str(u) for u in uniques], dtype=object)
    order = np.argsort(names.to_numpy(dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    if not len(rank):
        return np.full(len(codes), -1, dtype=np.int64), names
    return np.where(codes >= 0, rank[np.maximum(codes, 0)], -1), names[order]


def by_base(specs: list[MetricSpec]) -> dict[str, list[MetricSpec]]:
    """The specs of each rubric metric (a tags metric has one an option), in the specs' order."""
    out: dict[str, list[MetricSpec]] = {}
    for s in specs:
        out.setdefault(s.base, []).append(s)
    return out


def grown_codes(
    earlier: RowCodes, df: pd.DataFrame, who: str, specs: list[MetricSpec]
) -> RowCodes | None:
    """The codes of `df`, whose first `earlier.n` rows are the rows `earlier` coded (with the
    same items and specs), from `earlier` and the added rows alone; None when they cannot be
    the whole table's (an added answer key-equal to a known one but written otherwise)."""
    if earlier.nums_of:  # a judge's numeric readings depend on the whole column's values
        return None
    n0 = earlier.n
    added = row_codes(df.iloc[n0:], who, specs, earlier.item_index, judge=False)
    answers_of: dict[str, tuple[np.ndarray, list[Any]]] = {}
    for key in earlier.answers_of.keys() | added.answers_of.keys():
        merged = _merged_answers(earlier.answers_of.get(key), added.answers_of.get(key))
        if merged is None:
            return None
        answers_of[key] = merged
    names = pd.Index(sorted(set(earlier.who_names) | set(added.who_names)), dtype=object)
    return RowCodes(
        n=len(df),
        item_index=earlier.item_index,
        item_pos=np.concatenate([earlier.item_pos, added.item_pos]),
        who_codes=np.concatenate(
            [
                _recoded(earlier.who_codes, earlier.who_names, names),
                _recoded(added.who_codes, added.who_names, names),
            ]
        ),
        who_names=names,
        rows_of={
            key: np.concatenate(
                [earlier.rows_of.get(key, _NONE), added.rows_of.get(key, _NONE) + n0]
            )
            for key in earlier.rows_of.keys() | added.rows_of.keys()
        },
        answers_of=answers_of,
        spec_codes={
            key: np.concatenate(
                [earlier.spec_codes.get(key, _NO_CODE), added.spec_codes.get(key, _NO_CODE)]
            )
            for key in earlier.spec_codes.keys() | added.spec_codes.keys()
        },
        nums_of={},
        grown_from=earlier.serial,
    )


_NONE = np.zeros(0, dtype=np.int64)
_NO_CODE = np.zeros(0, dtype=float)


def _recoded(codes: np.ndarray, names: pd.Index, into: pd.Index) -> np.ndarray:
    """Codes into `names` as codes into `into` (which holds every name); -1 stays -1."""
    at = np.append(into.get_indexer(names), -1)  # code -1: the last slot
    return at[codes]


def _merged_answers(
    earlier: tuple[np.ndarray, list[Any]] | None, added: tuple[np.ndarray, list[Any]] | None
) -> tuple[np.ndarray, list[Any]] | None:
    """Two factorizations of a column's two parts as one of the whole column (pd.factorize's
    codes and uniques in order of first appearance); None when an added value is a known one
    written otherwise (its first writing, the earlier one, is what the whole column keeps)."""
    if added is None:
        assert earlier is not None
        return earlier
    if earlier is None:
        return added
    codes, uniques = earlier
    uniques = list(uniques)
    known = {u: i for i, u in enumerate(uniques)}
    at = np.empty(len(added[1]) + 1, dtype=np.int64)
    at[-1] = -1  # missing stays missing
    for j, u in enumerate(added[1]):
        i = known.get(u)
        if i is None:
            i = len(uniques)
            uniques.append(u)
        elif not _written_alike(uniques[i], u):
            return None
        at[j] = i
    return np.concatenate([codes, at[added[0]]]), uniques


def _written_alike(a: Any, b: Any) -> bool:
    """Whether two equal answers are written alike (1 and 1.0 are equal keys, typed apart)."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:  # an answer of tags: its options too
        return all(type(x) is type(y) for x, y in zip(a, b, strict=True))
    return True


# the last grown table coded, per kind of table (rater or judge answers)
_KEPT = LastTable()


def codes_kept(df: pd.DataFrame, who: str, judge: bool = False) -> RowCodes | None:
    """The codes `codes_of` keeps for `df` (a live refresh's grown table), else None: for a
    reader of the same table after the coding (the fatigue figures)."""
    last = _KEPT.get((who, judge))
    return last[2] if last is not None and last[0] is df else None


def codes_of(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    specs: list[MetricSpec],
    item_index: pd.Index,
    judge: bool,
    grown: Grown | None = None,
) -> RowCodes:
    """`row_codes(df, ...)`. Where `df` grew from an earlier table (`grown`: a live refresh
    that only added rows), from that table's codes when they were kept, and kept in turn for
    the next table that grows from `df`. A table read whole keeps nothing (a full report on a
    million answers would hold 50 MB of codes it never reads again)."""
    if grown is None or grown.table is not df:
        return row_codes(df, who, specs, item_index, judge)
    kind = (who, judge)
    last = _KEPT.get(kind)
    codes = None
    if last is not None:
        table, (made_by, made_for), kept = last
        if made_by is rubric and made_for == specs and kept.item_index.equals(item_index):
            if table is df:  # the same frames again (the full computation after an estimate)
                codes = kept
            elif grown.earlier is table:
                codes = grown_codes(kept, df, who, specs)
    if codes is None:
        codes = row_codes(df, who, specs, item_index, judge)
    _KEPT.put(kind, df, (rubric, specs), codes)
    return codes
