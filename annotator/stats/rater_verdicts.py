"""Each rater's (judge's) verdict per item, from their own answers and the rubric's rules.

A verdict reads one (item, rater)'s answers to the metrics the rules use, and nothing else. A
live refresh that only added answers to a table whose verdicts were computed keeps them and
computes only those of the (item, rater)s its added rows touch (at a million judgements, a
hundred of 200,000: a rater's hundred new answers). Where an added row would change what a
kept verdict read (a second answer to a metric of the same item and rater: the last one
counts, and a distinct answer is typed from its first kept row), all are computed again. The
two ways give the same arrays: tests/unit/test_rater_verdicts.py holds them to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..domain.rubric import FAIL, PASS, Rubric
from ..domain.verdict import compile_rules
from .consensus import _factorize, typed_answer
from .distinct import distinct
from .frames import Grown
from .last_table import LastTable
from .row_codes import RowCodes

Verdicts = tuple[np.ndarray, np.ndarray, np.ndarray]

# a never-kept distinct answer: typed by no row yet (typed_answer may type an answer as None)
_UNTYPED = object()


@dataclass(frozen=True)
class _Kept:
    """A table's verdicts as a refresh keeps them: every (item, rater) with an answer the
    rules read, by item rank then rater (the output's order), with its verdict and, per metric
    the rules use, the code of its kept answer (-1: none); and each distinct answer typed."""

    rubric: Rubric
    item_rank: np.ndarray
    who_names: pd.Index
    n_rows: tuple[int, ...]  # per metric used: its rows in the codes' rows_of
    p_item: np.ndarray
    p_who: np.ndarray
    code: np.ndarray
    cols: Sequence[np.ndarray]
    typed: Sequence[list[Any]]
    out: Verdicts | None


# per kind of table (rater or judge answers): the last table's verdicts, with the serial of
# the codes they were read from
_KEPT = LastTable()


def rater_verdicts(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    rc: RowCodes,
    item_rank: np.ndarray,
    grown: Grown | None = None,
) -> Verdicts | None:
    """Each rater's (judge's) verdict per item from their own answers and the rules.

    Complete answers only, for humans and judges alike: a verdict needs a known
    answer to every metric the rules use. Otherwise it is *undetermined* (code
    NaN, counted like "cannot judge"): keeping the verdicts that come out FAIL
    whatever the unknown answer would be, and dropping the rest, is a one-sided
    selection that biased pass rates down (0.578 against a true 0.626 in
    simulation). An answer off the rubric's scale (a judge scoring 0.7 on a 1-5
    scale) is unknown too.

    Rows of `df` are addressed by `rc`'s integer codes (item position, rater code), never by
    their strings. Returns idx, who_code and code (1 PASS, 0 FAIL, NaN undetermined), ordered
    by item id (`item_rank`: each item position's rank in id order) then rater, or None when
    no answer reaches the rules. Where `df` grew from a table whose verdicts were kept
    (`grown`: a live refresh), from those and the added rows.
    """
    rules = compile_rules(rubric)
    used = sorted(rules.metrics_used())
    keep = (
        grown is not None
        and grown.table is df
        and all(k in rc.answers_of or k not in rc.rows_of for k in used)
    )
    kept = None
    if keep:
        last = _KEPT.get(who)
        if last is not None:
            table, serial, before = last
            if before.rubric is rubric and before.item_rank is item_rank:
                if table is df and serial == rc.serial:  # the same frames again
                    return before.out
                if grown is not None and table is grown.earlier and rc.grown_from == serial:
                    kept = _grown(before, df, rules, used, rc, item_rank, len(table))
    if kept is None:
        kept = _all(df, rubric, rules, used, rc, item_rank, keep)
    if keep:
        _KEPT.put(who, df, rc.serial, kept)
    return kept.out


def _all(
    df: pd.DataFrame,
    rubric: Rubric,
    rules: Any,
    used: list[str],
    rc: RowCodes,
    item_rank: np.ndarray,
    keep: bool,
) -> _Kept:
    """Every verdict of `df`; their per-pair inputs too where they are kept (`keep`)."""
    values = df["value"]
    item_pos, who_codes, rows_of = rc.item_pos, rc.who_codes, rc.rows_of
    answers_of = dict(rc.answers_of)
    for k in used:  # a metric the rules read but no spec codes
        if k not in answers_of and k in rows_of:
            answers_of[k] = _factorize(values.iloc[rows_of[k]])
    ok = (item_pos >= 0) & (who_codes >= 0)
    rows, answers = [], []
    for k in used:
        r = rows_of.get(k, np.zeros(0, dtype=np.int64))
        mine = ok[r]
        rows.append(r[mine])
        answers.append(answers_of[k][0][mine] if k in answers_of else np.zeros(0, np.int64))
    n_rows = tuple(len(rows_of.get(k, ())) for k in used)
    none = _Kept(rubric, item_rank, rc.who_names, n_rows, *_NO_PAIRS, (), (), None)
    if not sum(len(r) for r in rows):
        return none  # no pair: an added row makes the first
    n_who = int(who_codes.max()) + 1
    # (item, rater) pairs as one integer, numbered 0.. in their sorted order
    pairs = [item_pos[r].astype(np.int64) * n_who + who_codes[r] for r in rows]
    upairs, pinv = distinct(np.concatenate(pairs))
    pair_no = np.split(pinv, np.cumsum([len(r) for r in rows])[:-1])
    # the rules run once per distinct combination of typed answers, not once per pair
    cols, typed_of = [], []
    for k, r, a, p in zip(used, rows, answers, pair_no, strict=True):
        # one answer per (item, rater, metric): the last one in table order
        last = np.full(len(upairs), -1, dtype=np.int64)
        np.maximum.at(last, p, np.arange(len(p)))
        kept = np.zeros(len(p), dtype=bool)
        kept[last[last >= 0]] = True
        sub = np.flatnonzero(kept)
        codes = np.full(len(upairs), -1, dtype=np.int64)
        codes[p[sub]] = a[sub]
        cols.append(codes)
        # each distinct answer is typed from its first kept row: answers equal as keys but
        # written apart (1 and 1.0) type as that row's, as when the kept rows alone were
        # factorized
        n_u = len(answers_of[k][1]) if k in answers_of else 0
        first = np.full(n_u + 1, len(sub), dtype=np.int64)  # slot n_u: missing (-1)
        np.minimum.at(first, a[sub], np.arange(len(sub)))
        seen = np.flatnonzero(first[:n_u] < len(sub))
        typed: list[Any] = [_UNTYPED] * n_u
        reps = pd.Series(values.iloc[r[sub[first[seen]]]], dtype=object).tolist()
        for u, v in zip(seen, reps, strict=True):
            typed[u] = typed_answer(rubric.metric(k), v)
        typed_of.append(typed)
    combos, inv = _unique_rows(cols)
    evaluate = _Evaluate(rules, used, typed_of)
    per_combo = np.array([evaluate(combo) for combo in combos])
    code = per_combo[inv]
    p_item, p_who = upairs // n_who, upairs % n_who
    # by item id, then rater: one integer per pair, so its rank is the order
    _, rank = distinct(item_rank[p_item] * n_who + p_who)
    order = np.empty(len(rank), dtype=np.int64)
    order[rank] = np.arange(len(rank))
    p_item, p_who, code = p_item[order], p_who[order], code[order]
    out = _out(p_item, p_who, code, n_who)
    if not keep:  # only the output: a table read whole keeps nothing
        return replace(none, out=out)
    cols = [c[order] for c in cols]
    return replace(none, p_item=p_item, p_who=p_who, code=code, cols=cols, typed=typed_of, out=out)


_NO_PAIRS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


def _grown(
    kept: _Kept,
    df: pd.DataFrame,
    rules: Any,
    used: list[str],
    rc: RowCodes,
    item_rank: np.ndarray,
    n0: int,
) -> _Kept | None:
    """`kept` (the verdicts of `df`'s first `n0` rows, coded by the codes `rc` grew from) with
    the verdicts of the pairs `df`'s added rows touch computed again; None where an added row
    answers a metric a pair had answered already (the last answer counts, and a kept row may
    have typed its distinct answer)."""
    to_new = rc.who_names.get_indexer(kept.who_names)
    if (to_new < 0).any():
        return None
    n_who = max(len(rc.who_names), 1)
    # rater codes follow the sorted names: a new rater renumbers the codes, never their order
    old_who = to_new[kept.p_who] if len(to_new) else kept.p_who
    old_key = item_rank[kept.p_item] * n_who + old_who
    item_pos, who_codes = rc.item_pos, rc.who_codes
    rows, answers, keys = [], [], []
    for k, n_old in zip(used, kept.n_rows, strict=True):
        r = rc.rows_of.get(k, _NONE)[n_old:]
        if len(r) and r[0] < n0:
            return None
        a = rc.answers_of[k][0][n_old:] if len(r) else _NONE
        mine = (item_pos[r] >= 0) & (who_codes[r] >= 0)
        r, a = r[mine], a[mine]
        key = item_rank[item_pos[r]] * n_who + who_codes[r]
        if len(np.unique(key)) < len(key):  # two added answers to one metric of a pair
            return None
        rows.append(r)
        answers.append(a)
        keys.append(key)
    every = np.concatenate(keys)
    added, first = np.unique(every, return_index=True)
    at = np.searchsorted(old_key, added)
    known = at < len(old_key)
    known[known] = old_key[at[known]] == added[known]
    new, where = ~known, at[~known]
    first_row = np.concatenate(rows)[first[new]]
    key = np.insert(old_key, where, added[new])
    p_item = np.insert(kept.p_item, where, item_pos[first_row])
    p_who = np.insert(old_who, where, who_codes[first_row])
    code = np.insert(kept.code, where, np.nan)
    values = df["value"]
    cols, typed_of, touched = [], [], []
    for j, k in enumerate(used):
        col = np.insert(kept.cols[j], where, -1) if len(kept.cols) else np.full(len(key), -1)
        typed = list(kept.typed[j]) if len(kept.typed) else []
        r, a = rows[j], answers[j]
        if len(r):
            pos = np.searchsorted(key, keys[j])
            if (col[pos] >= 0).any():
                return None
            col[pos] = a
            touched.append(pos)
            uniques = rc.answers_of[k][1]
            typed += [_UNTYPED] * (len(uniques) - len(typed))
            # a distinct answer no kept row had: typed from its first row, an added one
            codes, firsts = np.unique(a, return_index=True)
            fresh = [i for c, i in zip(codes, firsts, strict=True) if c >= 0]
            fresh = [i for i in fresh if typed[a[i]] is _UNTYPED]
            reps = pd.Series(values.iloc[r[fresh]], dtype=object).tolist()
            metric = kept.rubric.metric(k)
            for i, v in zip(fresh, reps, strict=True):
                typed[a[i]] = typed_answer(metric, v)
        cols.append(col)
        typed_of.append(typed)
    if touched:
        evaluate = _Evaluate(rules, used, typed_of)
        at_pairs = np.unique(np.concatenate(touched))
        code[at_pairs] = [evaluate([c[p] for c in cols]) for p in at_pairs]
    n_rows = tuple(len(rc.rows_of.get(k, ())) for k in used)
    out = _out(p_item, p_who, code, n_who) if len(code) else None
    return _Kept(
        kept.rubric, item_rank, rc.who_names, n_rows, p_item, p_who, code, cols, typed_of, out
    )


_NONE = np.zeros(0, dtype=np.int64)


class _Evaluate:
    """The rules' verdict (1.0 PASS, 0.0 FAIL, NaN undetermined) of a combination of answer
    codes, one per metric used; each combination evaluated once."""

    def __init__(self, rules: Any, used: list[str], typed_of: Sequence[list[Any]]) -> None:
        self._rules, self._used, self._typed = rules, used, typed_of
        self._done: dict[tuple[int, ...], float] = {}

    def __call__(self, combo: Sequence[Any]) -> float:
        at = tuple(int(c) for c in combo)
        done = self._done.get(at)
        if done is not None:
            return done
        row = [None if c < 0 else t[c] for t, c in zip(self._typed, at, strict=True)]
        if any(x is None or x is _UNTYPED for x in row):
            result = math.nan
        else:
            verdict = self._rules.evaluate(dict(zip(self._used, row, strict=True)))
            result = 1.0 if verdict == PASS else 0.0 if verdict == FAIL else math.nan
        self._done[at] = result
        return result


def _out(p_item: np.ndarray, p_who: np.ndarray, code: np.ndarray, n_who: int) -> Verdicts:
    """The verdicts of the raters with any: someone who never gives the rules a complete set
    of answers (a judge scoring only some metrics) has no verdict at all, rather than a column
    of undetermined ones."""
    some = np.bincount(p_who[~np.isnan(code)], minlength=n_who) > 0
    mine = some[p_who]
    if mine.all():
        return p_item, p_who, code
    return p_item[mine], p_who[mine], code[mine]


def _unique_rows(cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(np.column_stack(cols), axis=0, return_inverse=True) for codes >= -1, through one
    integer key per row (a 1-d key is many times faster than rows)."""
    sizes = [int(c.max(initial=-1)) + 2 for c in cols]
    if not cols or math.prod(sizes) >= 2**62:
        combos, inv = np.unique(np.column_stack(cols), axis=0, return_inverse=True)
        return combos, inv.ravel()
    key = np.zeros(len(cols[0]), dtype=np.int64)
    for c, size in zip(cols, sizes, strict=True):
        key = key * size + (c.astype(np.int64) + 1)
    uk, inv = distinct(key)
    combos = np.empty((len(uk), len(cols)), dtype=np.int64)
    for j in range(len(cols) - 1, -1, -1):
        combos[:, j] = uk % sizes[j] - 1
        uk = uk // sizes[j]
    return combos, inv


__all__ = ["Verdicts", "rater_verdicts"]
