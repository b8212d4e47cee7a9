"""The study's answers as numbers: one row per rater (or judge) x item x metric spec.

`human_answers` and `judge_answers` turn the long judgement tables of a StudyFrames into coded
answers (see consensus.py for the metric specs and the coding), with each rater's verdict from
the rubric's rules. A study of a million judgements codes into several million rows, so the
output is built from integer row positions and categorical columns, never from per-row copies
of the input's strings. The rows themselves are coded in row_codes.py (from the last table's
codes where a live refresh only added rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..domain.rubric import Rubric
from .consensus import (
    VERDICT_KEY,
    MetricSpec,
    consensus,
    metric_specs,
)
from .first_rows import first_rows
from .frames import Grown, StudyFrames
from .last_table import LastTable
from .rater_verdicts import rater_verdicts
from .reasons import reason_rows
from .row_codes import by_base, codes_of

# the last item table, with the judgements it was made from (held weakly) and the items and
# judge scores (held while those judgements live)
_ITEMS = LastTable()


def item_table(frames: StudyFrames) -> pd.DataFrame:
    """Every item the figures can touch, with a 0-based `idx` (the bootstrap row).

    The last table is the table again (the very object: callers never change it) for the same
    items, judge scores and judgements, or judgements grown from those (a live refresh) whose
    added rows name items of `frames.items` only: an item added to the table is one that none
    of those names, so the table is the one made afresh. At a million judgements making it
    was 25 ms of a refresh, and the slicings made from it as much again (reconcile.Context)."""
    j = frames.judgements
    last = _ITEMS.get(None)
    if last is not None:
        table, (items, scores, ids), made = last
        grown = frames.judgements_grown
        if items is frames.items and scores is frames.judge_scores:
            if table is j:
                return made
            if (
                grown is not None
                and grown.table is j
                and grown.earlier is table
                and (ids.get_indexer(j["item_id"].iloc[len(table) :].unique()) >= 0).all()
            ):
                _ITEMS.put(None, j, last[1], made)
                return made
    made = _item_table(frames)
    ids = pd.Index(frames.items["item_id"])
    if ids.is_unique:  # get_indexer needs unique labels
        _ITEMS.put(None, j, (frames.items, frames.judge_scores, ids), made)
    return made


def _item_table(frames: StudyFrames) -> pd.DataFrame:
    cols = ["item_id", "display_code", "case_id", "generator", "slice"]
    items = frames.items.reindex(columns=cols).copy()
    seen = pd.Index(items["item_id"]).unique()
    extra = []
    for df in (frames.judgements, frames.judge_scores):
        col = df["item_id"]
        if df is frames.judgements and len(df):
            # an item's first row is the first row of one of its judgements (found once for the
            # tiles, the raters and the fatigue figures): the same ids in the same order, from
            # a fifth of the rows
            col = col.iloc[first_rows(df)]
        ids = col.unique()  # in order of first appearance
        # a hash lookup (isin on arrow strings took 1.2 s for 200,000 ids, a loop 0.3 s)
        extra += list(ids[seen.get_indexer(ids) < 0])
    if extra:
        add = pd.DataFrame({"item_id": list(dict.fromkeys(extra))}).reindex(columns=cols)
        items = pd.concat([items, add], ignore_index=True) if len(items) else add
    items = items.drop_duplicates("item_id").reset_index(drop=True)
    for c in ("display_code", "case_id", "generator"):
        items[c] = items[c].astype(object).where(items[c].notna(), None)
    items["idx"] = np.arange(len(items), dtype=np.int64)
    return items


def human_answers(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Long table of coded human answers, one row per rater x item x metric spec.

    Columns: idx, item_id, rater, metric, code (NaN = cannot judge), num, reason (a
    categorical: one text per (item, rater), repeated on each of its metric rows). Session
    order is read from the judgements themselves (fatigue._positions), not from here.
    """
    return _answers(
        frames.judgements, "rater", frames.rubric, specs, items, grown=frames.judgements_grown
    )


def judge_answers(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Long table of judge answers with `code` (on the human scale, else NaN) and `num` (any
    numeric reading of the raw value)."""
    return _answers(frames.judge_scores, "judge", frames.rubric, specs, items, judge=True)


_ANSWER_COLS = [
    "idx",
    "item_id",
    "who",
    "metric",
    "code",
    "num",
    "reason",
]


def _answers(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    specs: list[MetricSpec],
    items: pd.DataFrame,
    judge: bool = False,
    grown: Grown | None = None,
) -> pd.DataFrame:
    if df is None or len(df) == 0:
        return _no_answers(who)
    # One row of the input becomes one row per metric spec (a tags answer: one per option), so
    # the output is built from integer row positions into the input and categorical columns:
    # nothing of the input's strings is copied per output row.
    item_index, item_rank = _item_order(items)
    rc = codes_of(df, who, rubric, specs, item_index, judge, grown)
    item_pos, who_codes, who_names = rc.item_pos, rc.who_codes, rc.who_names
    keys = [s.key for s in specs]
    # the categorical columns' codes gathered in the type their frame keeps (pandas narrows
    # them): a million rater and metric codes as bytes, not eight-byte numbers to narrow after
    who_type, metric_type = _code_type(len(who_names)), _code_type(len(keys))
    who_small = who_codes.astype(who_type)
    idx_parts: list[np.ndarray] = []
    who_parts: list[np.ndarray] = []
    spec_no: list[np.ndarray] = []
    codes_all: list[np.ndarray] = []
    nums_all: list[np.ndarray] = []
    for key, group in by_base(specs).items():
        rows = rc.rows_of.get(key)
        if key == VERDICT_KEY or rows is None:
            continue
        rows_idx, rows_who = item_pos[rows], who_small[rows]
        for s in group:
            c = rc.spec_codes[s.key]
            idx_parts.append(rows_idx)
            who_parts.append(rows_who)
            spec_no.append(np.full(len(rows), keys.index(s.key), dtype=metric_type))
            codes_all.append(c)
            if judge and s.directed:
                nums_all.append(np.where(np.isnan(c), rc.nums_of[key], c))
            else:  # unordered options: no numeric reading
                nums_all.append(c)
    verdict_spec = next((s for s in specs if s.key == VERDICT_KEY), None)
    if verdict_spec is not None:
        v = rater_verdicts(df, who, rubric, rc, item_rank, grown)
        if v is not None and len(v[0]):
            v_idx, v_who, v_code = v
            idx_parts.append(v_idx)
            who_parts.append(v_who.astype(who_type))
            spec_no.append(np.full(len(v_idx), keys.index(VERDICT_KEY), dtype=metric_type))
            codes_all.append(v_code)
            nums_all.append(v_code)
    if not idx_parts:
        return _no_answers(who)
    # each column is gathered once, in its final order (every concatenation copies it whole)
    idx = np.concatenate(idx_parts).astype(np.int64, copy=False)
    who_c = np.concatenate(who_parts)
    metric = np.concatenate(spec_no)
    code = np.concatenate(codes_all).astype(float, copy=False)
    if judge:
        num = np.concatenate(nums_all).astype(float, copy=False)
    else:  # a rater's numeric reading is the code: one array serves both columns, not a
        # second million floats; read-only, so a write into one column raises instead of
        # changing the other (copy on write does not see two columns share a buffer)
        num = code
        code.flags.writeable = False
    keep = idx >= 0
    if not keep.all():  # answers on items outside `items`
        idx, who_c, metric, code, num = (a[keep] for a in (idx, who_c, metric, code, num))
    # the codes are in range by construction: no check of millions of them; and the columns are
    # this function's own arrays, so the frame takes them as they are (copy=False: no copy and
    # no stacking of code and num into one block, a tenth of the time at a million answers)
    out = pd.DataFrame(
        {
            "idx": idx,
            "item_id": pd.Categorical.from_codes(idx, categories=item_index, validate=False),
            who: pd.Categorical.from_codes(who_c, categories=who_names, validate=False),
            "metric": pd.Categorical.from_codes(metric, categories=keys, validate=False),
            "code": code,
            "num": num,
            "reason": reason_rows(
                df, who, rubric, item_index, who_names, idx, who_c, rc.rows_of, grown
            ),
        },
        copy=False,
    )
    return out


def _no_answers(who: str) -> pd.DataFrame:
    """The table of no answers, with `_answers`' columns and types (made only where it is the
    answer: an empty frame of seven columns costs a millisecond)."""
    kinds = {"idx": np.int64, "code": float, "num": float}
    empty = pd.DataFrame({c: pd.Series(dtype=kinds.get(c, object)) for c in _ANSWER_COLS})
    return empty.rename(columns={"who": who})


def _code_type(n: int) -> type[np.signedinteger[Any]]:
    """The integer type pandas keeps a categorical's codes in for `n` categories (its
    coerce_indexer_dtype's choice)."""
    for kind in (np.int8, np.int16, np.int32):
        if n < np.iinfo(kind).max:
            return kind
    return np.int64


# the last item table's ids as an index, and each id's rank among them as text
_ORDER = LastTable()


def _item_order(items: pd.DataFrame) -> tuple[pd.Index, np.ndarray]:
    """The items' ids as an index (their codes' categories) and each one's rank in text order
    (the verdicts' order), kept for the same item table: the rater and judge tables of a
    report, and a live refresh's (item_table keeps its table), sorted 20,000 ids each time."""
    last = _ORDER.get(None)
    if last is not None and last[0] is items:
        return last[2]
    item_index = pd.Index(items["item_id"])
    rank = np.empty(len(item_index), dtype=np.int64)
    rank[np.argsort(item_index.astype(str).to_numpy(), kind="stable")] = np.arange(len(rank))
    _ORDER.put(None, items, None, (item_index, rank))
    return item_index, rank


def coded_answers(
    df: pd.DataFrame, who: str, rubric: Rubric, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Any long table of answers (item_id, `who`, metric, value) coded exactly as the raters'
    are: the lead's adjudications read through this, so "equal" means the same thing."""
    return _answers(df, who, rubric, specs, items)


# a table's metric rows, per kind of table (rater or judge answers) and coded only or all: the
# report reads both kinds in turn, and one slot for both dropped each for the other
_METRIC_ROWS = LastTable()


def metric_rows(answers: pd.DataFrame, *, coded_only: bool = True) -> dict[str, np.ndarray]:
    """Per metric of a coded table (human_answers, judge_answers), the positions of its rows in
    the table's order: those with a code (`coded_only`; NaN is cannot judge), or all of them; a
    metric without one is left out. From the metric column's codes once (a groupby, or a
    comparison per metric, went over every row for each metric): the tables are written one
    metric after another, so a metric's rows are one slice unless they were reordered."""
    if not len(answers):
        return {}
    # the report's sections each ask for a table's rows (the raters, the generators, the
    # split, certification): found once a table, as the frames, it is never changed in place
    slot = ("rater" in answers.columns, coded_only)
    last = _METRIC_ROWS.get(slot)
    if last is not None and last[0] is answers:
        return dict(last[2])
    metric = pd.Categorical(answers["metric"])
    m_code = np.asarray(metric.codes)
    unsorted = bool((m_code[1:] < m_code[:-1]).any())
    order = np.argsort(m_code, kind="stable") if unsorted else None
    answered = ~np.isnan(answers["code"].to_numpy(float)) if coded_only else None
    # code -1 (no metric) sorts first and is left out, as a groupby leaves it out; the codes'
    # own type for the bounds sought (another type copies the million codes into it)
    sought = np.arange(len(metric.categories) + 1, dtype=m_code.dtype)
    bounds = np.searchsorted(m_code if order is None else m_code[order], sought)
    out: dict[str, np.ndarray] = {}
    for key, start, end in zip(metric.categories, bounds[:-1], bounds[1:], strict=True):
        rows = np.arange(start, end) if order is None else order[start:end]
        if answered is not None:
            rows = rows[answered[start:end] if order is None else answered[rows]]
        if len(rows):
            out[str(key)] = rows
    _METRIC_ROWS.put(slot, answers, None, out)
    return dict(out)


def at_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`values[rows]` for a metric's rows (`metric_rows`: increasing positions): where they are
    one run, as a metric's rows of a table written metric after metric are, a read-only view
    instead of a copy (three columns of 200,000 answers a metric, in each section that reads
    them)."""
    if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
        view = values[int(rows[0]) : int(rows[-1]) + 1]
        view.flags.writeable = False  # the table's own column: never written through
        return view
    return values[rows]


def split_by_metric(answers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each metric's rows of a coded table, as `dict(tuple(answers.groupby("metric",
    sort=False)))` gives them (the metrics in order of first appearance, each one's rows in
    table order, index kept), without copying them: the tables are written one metric after
    another, so a metric's rows are one slice of the table (a view; the groupby copied a
    million rows, 60 ms, in each of the four sections that split a table)."""
    rows = metric_rows(answers, coded_only=False)
    out: dict[str, pd.DataFrame] = {}
    for key in sorted(rows, key=lambda k: int(rows[k][0])):
        at = rows[key]
        one_run = int(at[-1]) - int(at[0]) + 1 == len(at)
        out[key] = answers.iloc[int(at[0]) : int(at[-1]) + 1] if one_run else answers.iloc[at]
    return out


def consensus_table(frames: StudyFrames) -> pd.DataFrame:
    """Human consensus of every item and metric, in readable form.

    Columns: item_id, metric, value (label), tie, n, n_cannot_judge.
    """
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    ans = human_answers(frames, specs, items)
    parts = []
    for s in specs:
        sub = ans[ans["metric"] == s.key]
        if not len(sub):
            continue
        c = consensus(sub, s)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": items["item_id"].to_numpy()[c.index.to_numpy()],
                    "metric": s.key,
                    "value": [None if np.isnan(v) else s.label(v) for v in c["value"]],
                    "tie": c["tie"].to_numpy(),
                    "n": c["n"].to_numpy(),
                    "n_cannot_judge": c["n_cannot_judge"].to_numpy(),
                }
            )
        )
    cols = ["item_id", "metric", "value", "tie", "n", "n_cannot_judge"]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    return pd.concat(parts, ignore_index=True)[cols]
