"""Per-rater figures: agreement with the others (and, from fatigue.py, by place in the session).

Each answer is compared with the *leave-one-out consensus* (leave_one_out.py): the consensus of
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
from .leave_one_out import consensus_values, left_out
from .row_codes import codes_kept


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
        left = left_out(idx, code, spec)
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
    leave-one-out step found it (`LeftOut.positions`)."""
    found = known or present_positions(consensus_values(spec), code, loo)
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
    k, fin = alpha_finalizer(spec.level, dom)
    if R * V * V <= 4 * len(idx) + 65536:
        n_c, n_of, totals = _joint_totals(a, b, rid, R, V, spec.level)
    else:
        n_c, n_of, totals = _summed_totals(a, b, rid, R, V, k, spec.level)
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


def _joint_totals(
    a: np.ndarray, b: np.ndarray, rid: np.ndarray, R: int, V: int, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_summed_totals`' three arrays from one count of each rater's (answer, consensus)
    cells, R x V x V, where that table is small: one pass over the answers instead of four
    (the same whole numbers)."""
    t = np.bincount((rid * V + a) * V + b, minlength=R * V * V).reshape(R, V, V)
    n_c = t.sum(axis=2) + t.sum(axis=1)
    n_of = t.sum(axis=(1, 2))
    if level == "nominal":
        diag = 2 * np.einsum("rvv->rv", t)
        return n_c, n_of, np.concatenate([n_c, diag], axis=1).astype(float)
    # a triangle cell (i <= j) counts both orders of its pair, its diagonal twice
    upper = np.triu_indices(V)
    both = t + t.transpose(0, 2, 1)
    return n_c, n_of, both[:, upper[0], upper[1]].astype(float)


def _summed_totals(
    a: np.ndarray, b: np.ndarray, rid: np.ndarray, R: int, V: int, k: int, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rater: the count of each value among the answers and their consensus (R x V), the
    answers (R), and the features alpha_finalizer reads (R x k)."""
    same = a == b
    n_c = np.bincount(rid * V + a, minlength=R * V) + np.bincount(rid * V + b, minlength=R * V)
    n_c = n_c.reshape(R, V)
    n_of = np.bincount(rid, minlength=R)
    if level == "nominal":
        diag = 2 * np.bincount(rid[same] * V + a[same], minlength=R * V).reshape(R, V)
        return n_c, n_of, np.concatenate([n_c, diag], axis=1).astype(float)
    cell = ordinal_triangle(V)[np.minimum(a, b), np.maximum(a, b)]
    totals = np.bincount(rid * k + cell, weights=np.where(same, 2.0, 1.0), minlength=R * k)
    return n_c, n_of, totals.reshape(R, k)


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


__all__ = ["rater_section"]
