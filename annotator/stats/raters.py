"""Per-rater figures: agreement with the others (and, from fatigue.py, by place in the session).

Each answer is compared with the *leave-one-out consensus*: the consensus of
the other raters of the same item (majority for nominal metrics, a tie gives
none; median for scales). An answer agrees when it equals the majority, or for
a scale when it is within half a point of the median (so both neighbours of a
median that falls between two values count).

Per rater and metric: the share of agreeing answers and Krippendorff's alpha
between the rater and the leave-one-out consensus; those comparisons, pooled over
the metrics, are what fatigue.py splits by place in the session. Intervals
resample items.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .agreement import (
    IDENTICAL,
    MAX_ORDINAL_VALUES,
    ValueCounts,
    alpha_features,
    alpha_finalizer,
    ordinal_triangle,
    undefined_reason,
)
from .answers import at_rows, metric_rows
from .bootstrap import ItemBootstrap, Pending, Replicates, ratio, sliced_point, undefined
from .consensus import VERDICT_KEY, MetricSpec
from .distinct import distinct, position_in, present_positions, run_starts
from .fatigue import fatigue_figures
from .first_rows import first_rows
from .frames import StudyFrames
from .package_alpha import count_columns
from .row_codes import codes_kept


def leave_one_out(h: pd.DataFrame, spec: MetricSpec) -> pd.DataFrame:
    """Answers (idx, rater, code) with `loo` (others' consensus, NaN if none) and `agree`."""
    a = h[h["code"].notna()][["idx", "rater", "code"]].reset_index(drop=True)
    if not len(a):
        return a.assign(loo=np.nan, agree=np.nan)
    loo, agree = _loo_values(a["idx"].to_numpy(np.int64), a["code"].to_numpy(float), spec)
    return a.assign(loo=loo, agree=agree)


def _loo_values(
    idx: np.ndarray, code: np.ndarray, spec: MetricSpec
) -> tuple[np.ndarray, np.ndarray]:
    """`leave_one_out` on arrays (item idx and code of each answer, no NaN code, at least one
    answer): the others' consensus (NaN if none) and whether the answer agrees (NaN if none)."""
    out = _leave_one_out(idx, code, spec)
    return out.val, out.agree


class _LeftOut(NamedTuple):
    """`_loo_values`' consensus and agreement, and for a nominal metric whose answers are all
    values of its domain, where each answer and its consensus lie among the answers' distinct
    values `dom` (`own`, `at`; `at` has no meaning where the consensus is NaN)."""

    val: np.ndarray
    agree: np.ndarray
    dom: np.ndarray | None = None
    own: np.ndarray | None = None
    at: np.ndarray | None = None

    def positions(
        self, has: np.ndarray | None
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
        """present_positions(domain, code[has], val[has]) from the positions found (`has`: the
        answers with a consensus, None for all of them); None where none were found."""
        if self.dom is None or self.own is None or self.at is None:
            return None
        if has is None:
            return self.dom, (self.own, self.at)
        own, at = self.own[has], self.at[has]
        V = len(self.dom)
        seen = (np.bincount(own, minlength=V) > 0) | (np.bincount(at, minlength=V) > 0)
        if seen.all():
            return self.dom, (own, at)
        rank = np.cumsum(seen) - 1  # a value only dropped answers took: the others move down
        return self.dom[seen], (rank[own], rank[at])


def _leave_one_out(idx: np.ndarray, code: np.ndarray, spec: MetricSpec) -> _LeftOut:
    """`_loo_values`, with the positions it found on the way (`_LeftOut`)."""
    found = present_positions(spec.domain(), code) if spec.nominal else None
    if found is not None:
        dom, (own,) = found
    else:
        dom = np.unique(code) if spec.nominal else spec.domain()
        own = position_in(dom, code)
    V = len(dom)
    # item x value counts, one row per item index: a bincount instead of a sort of the items
    # (np.unique) and an np.add.at; item indexes too sparse for a row each are renumbered
    if idx.min() >= 0 and idx.max() < 2 * len(idx) + 1024:
        row = idx
    else:
        row = np.unique(idx, return_inverse=True)[1].reshape(-1)
    n_rows = int(row.max()) + 1
    counts = np.bincount(row * V + own, minlength=n_rows * V).reshape(n_rows, V).astype(float)
    if n_rows * V <= len(code):
        # the others' counts depend on the item and the answer's own value only: the consensus
        # is found once per (item, value) cell and read by each answer (ten raters: a fifth of
        # the rows for a yes/no metric)
        cell = row * V + own
        val, at = _consensus_of_columns(*_cell_columns(counts), dom, spec.nominal)
        val, at = val[cell], (at[cell] if at is not None else None)
    else:
        loo = counts[row]
        loo[np.arange(len(code)), own] -= 1.0
        val, at = _consensus_at(loo, dom, spec.nominal)
    if spec.nominal:
        agree = (code == val).astype(float)
    else:
        agree = (np.abs(code - val) <= 0.5).astype(float)
    agree[np.isnan(val)] = np.nan
    if found is None:
        return _LeftOut(val, agree)
    return _LeftOut(val, agree, dom, own, at)


def _cell_columns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The others' counts of every (item, own value) cell, as `count_columns` gives them for
    `(counts[:, None, :] - np.eye(V)).reshape(-1, V)`: its columns (V x items * V) and each
    cell's total, made as columns at once rather than as rows and then transposed (a 0-5
    scale: 5 -> 0.7 ms a metric at a million judgements). Whole numbers: the same sums."""
    n_rows, V = counts.shape
    cols = np.repeat(counts.T, V, axis=1)  # each item's counts once per own value
    for k in range(V):
        cols[k, k::V] -= 1.0  # the answer's own value, left out
    m = cols[0].copy()
    for c in cols[1:]:
        m += c
    return cols, m


def _consensus_values(spec: MetricSpec) -> np.ndarray:
    """Every value an answer or a leave-one-out consensus of `spec` can take, sorted: its
    domain, and for a median the midpoints of two values as `_consensus` computes them."""
    dom = spec.domain()
    if spec.nominal:
        return dom
    return np.unique(np.add.outer(dom, dom) / 2.0)


def _consensus_at(
    loo: np.ndarray, dom: np.ndarray, nominal: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The consensus of each row of others' counts over `dom` (NaN if none): the majority for
    a nominal metric (a tie gives none), else the median.

    Value by value over the counts' columns (a few), not reductions along rows of a few
    counts each, which numpy walks a row at a time: a tenth of the time on a yes/no metric's
    hundred thousand rows. The counts are whole numbers, so every sum is the same in any order.
    With it, for a nominal metric, the majority's position in `dom` (no meaning where the
    consensus is NaN); None for a median.
    """
    if not len(dom):
        return np.full(len(loo), np.nan), None
    return _consensus_of_columns(*count_columns(loo), dom, nominal)


def _consensus_of_columns(
    cols: np.ndarray, m: np.ndarray, dom: np.ndarray, nominal: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """`_consensus_at` of counts given as their columns (values x rows) and each row's total."""
    V = len(dom)
    if not V:
        return np.full(len(m), np.nan), None
    if nominal:
        top = cols[0].copy()
        for c in cols[1:]:
            np.maximum(top, c, out=top)
        n_top = np.zeros(len(top), dtype=np.int64)
        first = np.full(len(top), V - 1, dtype=np.int64)  # the first column at the top
        for k in range(V - 1, -1, -1):
            at_top = cols[k] == top
            n_top += at_top
            first[at_top] = k
        val = dom[first].astype(float)
        val[(m == 0) | (n_top > 1)] = np.nan
        return val, first
    k_lo = np.floor((m - 1) / 2.0)
    k_hi = np.floor(m / 2.0)
    # the median's two ranks: the values whose running count has not passed them
    n_lo = np.zeros(len(m), dtype=np.int64)
    n_hi = np.zeros(len(m), dtype=np.int64)
    cum = np.zeros(len(m))
    for c in cols:
        cum += c
        n_lo += cum <= k_lo
        n_hi += cum <= k_hi
    lo = dom[np.minimum(n_lo, V - 1)]
    hi = dom[np.minimum(n_hi, V - 1)]
    return np.where(m > 0, (lo + hi) / 2.0, np.nan), None


def rater_section(
    plan: ItemBootstrap,
    frames: StudyFrames,
    items: pd.DataFrame,
    specs: list[MetricSpec],
    human: pd.DataFrame,
    min_count: int,
) -> dict[str, Any]:
    j = frames.judgements
    # distinct names first: a set built from the column would walk a million strings in Python;
    # among the first row of each judgement (kept for the tiles and the fatigue figures), which
    # hold every name of the column, not among every answer
    names, counts = _judgement_raters(j, first_rows(j)) if len(j) else (set(), {})
    if len(frames.anchor_answers):
        names |= set(frames.anchor_answers["rater"].astype(str).unique())
    if len(frames.pair_votes):
        # a rater of one pair vote has no figure of their own (an arena's crowd: thousands)
        votes = frames.pair_votes["rater"].astype(str).value_counts()
        names |= set(votes.index[votes >= 2])
    raters = sorted(names)
    r_of = {r: i for i, r in enumerate(raters)}
    R = len(raters)
    out: dict[str, Any] = {
        r: {
            "n_judgements": 0,
            "anchors": 0,
            "drift": {"flagged": False, "metric": None, "direction": None, "first_flag_at": None},
            "agreement_with_consensus": {},
        }
        for r in raters
    }
    for r, n in counts.items():  # each rater's distinct items
        out[r]["n_judgements"] = n
    _add_drift(frames, out)
    if not R:
        return out
    pooled = []
    by_metric = metric_rows(human)
    if by_metric:  # each answer's item, code and rater, read once for every metric
        all_idx = human["idx"].to_numpy(np.int64)
        all_code = human["code"].to_numpy(float)
        rater_ids = _RaterIds.of(human["rater"], r_of)
    for spec in specs:
        rows = by_metric.get(spec.key)
        if rows is None:
            continue
        idx, code, rid = at_rows(all_idx, rows), at_rows(all_code, rows), rater_ids.at(rows)
        left = _leave_one_out(idx, code, spec)
        loo, agree = left.val, left.agree
        has = ~np.isnan(loo)
        if not has.any():
            continue
        if has.all():  # every answer has a consensus (no tie, no lone answer): nothing to drop
            known = left.positions(None)
        else:
            idx, code, loo, agree, rid = idx[has], code[has], loo[has], agree[has], rid[has]
            known = left.positions(has)
        n_per = np.bincount(rid, minlength=R)
        if plan.n_boot:
            share = plan.add_sliced(
                np.repeat(idx, 2),
                np.tile(np.arange(2), len(idx)),
                np.column_stack([np.ones(len(idx)), agree]).ravel(),
                2,
                ratio,
                np.repeat(rid, 2),
                R,
            )
        else:  # a live estimate: each rater's answers and agreements counted (whole numbers)
            sums = np.column_stack([n_per, np.bincount(rid, weights=agree, minlength=R)])
            share = sliced_point(sums, n_per > 0, ratio)
        alpha = _sliced_alpha(plan, idx, code, loo, rid, spec, R, known)
        for r, i in r_of.items():
            if n_per[i] == 0:
                continue
            n = int(n_per[i])
            out[r]["agreement_with_consensus"][spec.key] = {
                "n": n,
                "exact_agreement": Pending(share, n, col=i)
                if n >= min_count
                else undefined(n, f"fewer than {min_count} answers: a share is not shown"),
                "alpha": alpha[i],
            }
        if spec.key != VERDICT_KEY:
            pooled.append((idx, rid, agree))
    fatigue_figures(plan, frames, items, out, raters, pooled, min_count)
    return out


def _judgement_raters(j: pd.DataFrame, firsts: np.ndarray) -> tuple[set[str], dict[str, int]]:
    """The raters of the judgements whose first rows in `j` are `firsts`, by name as text (a
    missing one as astype(str) writes it), and each one's judgements of an item (a first row
    with an item id). From the codes the answers were coded with where they are kept for `j`
    (a live refresh: 100,000 names were taken and written as text twice), else the names."""
    with_item = j["item_id"].notna().to_numpy()[firsts]
    rc = codes_kept(j, "rater")
    codes = rc.who_codes[firsts] if rc is not None and len(rc.who_codes) == len(j) else None
    if rc is None or codes is None or (codes < 0).any():  # a missing name: written as text
        names = j["rater"].iloc[firsts].astype(str)
        counted = names[with_item].value_counts()
        return set(names.unique()), {str(r): int(n) for r, n in counted.items()}
    per_code = np.bincount(codes[with_item], minlength=len(rc.who_names))
    present = np.bincount(codes, minlength=len(rc.who_names)) > 0
    counts: dict[str, int] = {}
    for c in np.flatnonzero(present):  # distinct values may write as the same text
        name = str(rc.who_names[c])
        counts[name] = counts.get(name, 0) + int(per_code[c])
    return set(counts), {r: n for r, n in counts.items() if n}


class _RaterIds(NamedTuple):
    """Each answer's rater as its index in the section's sorted names (-1: a name outside it),
    read for a metric's rows at a time: through a categorical's codes where the column is one
    (a million answers, a handful of raters: each metric's rows looked up, not every answer's
    index made at once), else the names mapped once."""

    codes: np.ndarray  # the categorical's codes (-1: missing), else each row's index
    of_code: np.ndarray | None  # a code's index, the missing code's (-1) in the last slot

    @classmethod
    def of(cls, col: pd.Series, r_of: dict[str, int]) -> _RaterIds:
        if isinstance(col.dtype, pd.CategoricalDtype):
            of_code = [r_of[str(c)] for c in col.cat.categories] + [-1]
            return cls(col.cat.codes.to_numpy(), np.array(of_code, dtype=np.int64))
        return cls(col.astype(str).map(r_of).to_numpy(np.int64), None)

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The raters' indexes of the answers at `rows` (positions)."""
        if self.of_code is None:
            return at_rows(self.codes, rows)
        return self.of_code[at_rows(self.codes, rows)]


def _sliced_alpha(
    plan: ItemBootstrap,
    idx: np.ndarray,
    code: np.ndarray,
    loo: np.ndarray,
    rid: np.ndarray,
    spec: MetricSpec,
    R: int,
    known: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None,
) -> dict[int, Any]:
    """Alpha between each rater and the leave-one-out consensus, one block for all raters.
    `idx`, `code`, `loo`, `rid`: item index, answer, consensus and rater of each answer.
    `known`: what present_positions gives for the answers and their consensus, when the
    leave-one-out step found it (`_LeftOut.positions`)."""
    found = known or present_positions(_consensus_values(spec), code, loo)
    if found is None:
        dom, pos = np.unique(np.concatenate([code, loo])), None
    else:
        dom, (at_code, at_loo) = found
        pos = (at_code, at_loo)
    if not plan.n_boot and (live := _live_sliced_alpha(idx, code, loo, rid, dom, spec, R, pos)):
        return live
    parts: list[tuple[np.ndarray, ...]] = []
    out: dict[int, Pending | int] = {}
    for i, vc in zip(*_rater_value_counts(idx, code, loo, rid, dom), strict=True):
        reason = undefined_reason(vc)
        if reason:
            out[int(i)] = Pending(None, vc.n_pairable, undefined_note=reason)
            continue
        r, c, v, k, fin = alpha_features(vc, spec.level)
        parts.append((r, c, v, np.full(len(r), i)))
        out[int(i)] = int(vc.n_pairable)
    if parts:
        r = np.concatenate([p[0] for p in parts])
        reps = plan.add_sliced(
            r,
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            k,
            fin,
            np.concatenate([p[3] for p in parts]),
            R,
        )
        for i, n in list(out.items()):
            if isinstance(n, int):
                out[i] = Pending(reps, n, col=i, undefined_note=IDENTICAL)
    return out


def _live_sliced_alpha(
    idx: np.ndarray,
    code: np.ndarray,
    loo: np.ndarray,
    rid: np.ndarray,
    dom: np.ndarray,
    spec: MetricSpec,
    R: int,
    pos: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[int, Any] | None:
    """`_sliced_alpha`'s point estimates for a live estimate (nothing resampled), from each
    rater's summed features counted at once; None where it takes the long way (an interval
    alpha, or a rater with two answers on one item). `pos`: the answers' and the consensus'
    positions in `dom`, where they are known.

    Each unit (a rater's item) holds two values, the answer and the others' consensus, so its
    nominal features are both values once and, where they agree, 2 on the diagonal; its ordinal
    ones 1 in the triangle cell of the two values, or 2 on the diagonal where they agree. Those
    are whole numbers, summed exactly in any order: finalized as alpha_finalizer's, they are the
    long way's alphas bit for bit."""
    if spec.level not in ("nominal", "ordinal") or not len(idx) or rid.min() < 0:
        return None
    V = len(dom)
    if spec.level == "ordinal" and V > MAX_ORDINAL_VALUES:
        return None
    N = int(idx.max()) + 1
    if R * N <= 4 * len(idx) + 65536:
        if np.bincount(rid * N + idx, minlength=R * N).max() > 1:
            return None
    elif len(distinct(rid * N + idx)[0]) < len(idx):
        return None
    a, b = pos if pos is not None else (position_in(dom, code), position_in(dom, loo))
    same = a == b
    n_c = np.bincount(rid * V + a, minlength=R * V) + np.bincount(rid * V + b, minlength=R * V)
    n_c = n_c.reshape(R, V)
    n_of = np.bincount(rid, minlength=R)
    k, fin = alpha_finalizer(spec.level, dom)
    if spec.level == "nominal":
        diag = 2 * np.bincount(rid[same] * V + a[same], minlength=R * V).reshape(R, V)
        totals = np.concatenate([n_c, diag], axis=1).astype(float)
    else:
        cell = ordinal_triangle(V)[np.minimum(a, b), np.maximum(a, b)]
        totals = np.bincount(
            rid * k + cell, weights=np.where(same, 2.0, 1.0), minlength=R * k
        ).reshape(R, k)
    out: dict[int, Any] = {}
    defined: list[int] = []
    for r in np.flatnonzero(n_of).tolist():
        if (n_c[r] > 0).sum() < 2:  # one value among the answers and their consensus
            out[r] = Pending(None, int(n_of[r]), undefined_note=IDENTICAL)
        else:
            defined.append(r)
    if defined:
        point = np.asarray(fin(np.ascontiguousarray(totals[defined])), dtype=float)
        where = np.full(R, -1, dtype=np.int64)
        where[defined] = np.arange(len(defined))
        reps = Replicates(point=point.reshape(-1), where=where)
        for i in defined:
            out[i] = Pending(reps, int(n_of[i]), col=i, undefined_note=IDENTICAL)
    return dict(sorted(out.items()))


def _rater_value_counts(
    idx: np.ndarray, code: np.ndarray, loo: np.ndarray, rid: np.ndarray, dom: np.ndarray
) -> tuple[np.ndarray, list[ValueCounts]]:
    """The distinct raters (sorted) and, for each, what `value_counts` gives on the rater's
    answers and their consensus (each item once with both values) over `dom`: every rater's
    (item, value) triplets counted at once, by a bincount over (rater, item, value) cells when
    that table is small, else by one sort, instead of a filter and a sort per rater."""
    raters, r_pos = distinct(rid)  # -1: a name outside the section
    V = len(dom)
    N = int(idx.max()) + 1
    cell_of = (r_pos * N + idx) * V
    keys = np.concatenate([cell_of + position_in(dom, code), cell_of + position_in(dom, loo)])
    size = len(raters) * N * V
    if size <= 8 * len(keys) + 65536:
        table = np.bincount(keys, minlength=size)
        cell = np.flatnonzero(table)
        cnt = table[cell].astype(float)
    else:
        cell, n = np.unique(keys, return_counts=True)
        cnt = n.astype(float)
    t_val = cell % V
    t_rater, t_item = np.divmod(cell // V, N)
    bounds = np.searchsorted(t_rater, np.arange(len(raters) + 1))
    counts = []
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        item = t_item[s:e]
        first = run_starts(item)
        t_unit = np.cumsum(first) - 1
        c = cnt[s:e]
        m = np.bincount(t_unit, weights=c, minlength=int(first.sum()))
        counts.append(ValueCounts(item[first], dom, t_unit, t_val[s:e], c, m))
    return raters, counts


def _add_drift(frames: StudyFrames, out: dict[str, Any]) -> None:
    """Anchors and drift from the drift module when it exists, else anchor counts only."""
    summary: dict[str, Any] | None = None
    try:
        from .drift import rater_drift_summary
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.drift":
            raise
    else:
        summary = rater_drift_summary(frames)
    if summary is None:
        aa = frames.anchor_answers
        if len(aa):
            n = aa.groupby(aa["rater"].astype(str))["anchor_id"].nunique()
            for r, k in n.items():
                if r in out:
                    out[r]["anchors"] = int(k)
        for r in out:
            out[r]["drift"]["note"] = "drift not computed (drift module not available)"
        return
    for r, d in summary.items():
        r = str(r)
        if r not in out:
            continue
        out[r]["anchors"] = int(d.get("anchors", out[r]["anchors"]))
        if "drift" in d:
            out[r]["drift"] = d["drift"]
        for k, v in d.items():
            if k not in ("anchors", "drift"):
                out[r].setdefault(k, v)


__all__ = ["leave_one_out", "rater_section"]
