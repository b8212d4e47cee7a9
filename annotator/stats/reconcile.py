"""Human agreement per metric, and each judge reconciled with the humans.
(Over 500 lines on purpose: every figure of one metric (humans, then each judge against them) is
computed from the same coded tables in one pass.)

For every metric spec (see consensus.py) the humans get Krippendorff's alpha at
the metric's level (and, for scales, interval and nominal alpha too), percent
agreement, Fleiss' kappa, Gwet's AC1 (nominal metrics) and Cohen's kappas for
every pair of raters. Each judge then gets, on the items it scored:

- alpha and Cohen's kappas against the human consensus (ties left out), with a
  permutation baseline (the judge's values shuffled across items);
- alpha with the judge as one more rater, next to the humans alone on the same
  items, and the difference;
- its kappa with each human against the human-human range on the same items;
- exact agreement on items with a clear (untied) consensus, shown only from
  the minimum count up; the mean signed difference judge - consensus (leniency
  when positive for gates, scales and the verdict; nominal ties left out, scale
  medians kept); a confusion matrix (nominal);
- Pearson, Spearman and Kendall tau-b between its value and the human mean per
  item: the only figures kept when the judge scores on a scale of its own;
- a judge between the points (`judge_scale = "interval"`) gets the figures of an interval
  scale (alphas at interval level, its differences) and none that need the points;
- the same figures per case and per generator slice.

Figures are registered on the shared item bootstrap and come back as Pending
leaves; report_model resolves them after one bootstrap run.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, NamedTuple, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .agreement import (
    IDENTICAL,
    NO_PAIRS,
    ValueCounts,
    alpha_features,
    permutation_alpha,
    register_alpha,
    register_alpha_pair,
    two_way_alpha,
    value_counts,
)
from .bootstrap import ItemBootstrap, Pending, Replicates, _interval, ratio, rng_for, undefined
from .consensus import VERDICT_KEY, MetricSpec, consensus
from .correlation import (
    CORRELATIONS,
    pearson_from_moments,
    permutation_pearson,
    register_correlations,
)
from .correlation import undefined_reason as corr_reason
from .distinct import position_in
from .findings import OffsetPool, held_out_difference, held_out_finding_rates
from .kappa import KAPPA_WEIGHTS, kappa_from_tables, register_agreement, register_cohen
from .kept_counts import cooccurrences
from .last_table import LastTable
from .row_shape import RowShapes
from .wide import Wide

UNORDERED = "the options of a choice have no order: weighted kappas and correlations do not apply"
VS_CONSENSUS = (
    "flatters the judge: a judge that is just another human scores higher against the "
    "consensus than the humans do among themselves; read alpha_gain first"
)
FLEISS_NOMINAL = (
    "Fleiss' kappa treats the scale's points as unordered categories (nominal): read "
    "ordinal alpha for agreement that respects the order"
)
NOT_SCALE = "interval level applies to scales only"


@dataclass
class Context:
    """What every section shares: the bootstrap, the items and the settings."""

    plan: ItemBootstrap
    items: pd.DataFrame  # idx-ordered, with case_id and generator
    seed: int = 0
    n_perm: int = 200
    min_count: int = 10
    rater_bootstrap: bool = False  # also the two-way (items x raters) interval of human alpha
    # per metric key, the humans' offset spread pooled over the metrics of its scale
    # (findings.offset_pools; the systematic lenient/severe test)
    offset_pools: dict[str, OffsetPool] = field(default_factory=dict)
    # the last metric's items and raters, for a metric with the same rows (row_shape.py)
    row_shapes: RowShapes = field(default_factory=RowShapes)

    def __post_init__(self) -> None:
        last = _SLICINGS.get(None)
        if last is not None and last[0] is self.items:  # the same item table (answers.item_table)
            self.slicings: dict[str, tuple[np.ndarray, list[str]]] = last[2]
            return
        slicings = {}
        for name, col in (("by_case", "case_id"), ("by_generator", "generator")):
            labels = self.items[col].fillna("(none)").astype(str).to_numpy()
            names, of = np.unique(labels, return_inverse=True)  # alphabetical
            slicings[name] = (of.astype(np.int64), [str(n) for n in names])
        self.slicings = slicings
        _SLICINGS.put(None, self.items, None, slicings)


# the last item table's slicings: an item table is never changed once made
_SLICINGS = LastTable()


def _off_scale(spec: MetricSpec) -> str:
    scale = f"{spec.lo:g}..{spec.hi:g}, whole numbers" if spec.ordinal else "/".join(spec.labels)
    own = ' (declare judge_scale = "own" for a judge on a scale of its own)' if spec.ordinal else ""
    return (
        f"the judge does not answer on the rubric's scale ({scale}){own}: figures that need a "
        "common scale are left out; the correlations with the human mean still apply"
    )


# ---- humans ----------------------------------------------------------------------------


def _pair_kappas(
    ctx: Context,
    spec: MetricSpec,
    rows: np.ndarray,
    pairs: list[tuple[str, str]],
    a_of: dict[str, np.ndarray],
    b_of: dict[str, np.ndarray],
    values: np.ndarray,
    kept_as: Hashable | None = None,
) -> dict[str, Any]:
    """Cohen's kappas for pairs of answer columns (humans, or judge vs human),
    all pairs in one sliced bootstrap block. `kept_as`: a live estimate's pair tables of one
    set of columns are kept under this key for the next one (kept_counts.py)."""
    out: dict[str, Any] = {}
    if not pairs:
        return out
    # every column coded once (not once per pair): columns x items of codes and of answered;
    # the humans' pairs take both sides from one set of columns: every name of either side
    # coded once, and one product of it with itself (the sides' names alone differ by a rater)
    same = a_of is b_of
    if same:
        a_names = b_names = list(dict.fromkeys(name for pair in pairs for name in pair))
    else:
        a_names = list(dict.fromkeys(a for a, _ in pairs))
        b_names = list(dict.fromkeys(b for _, b in pairs))
    xa = np.vstack([np.asarray(a_of[a], dtype=float) for a in a_names])
    xb = xa if same else np.vstack([np.asarray(b_of[b], dtype=float) for b in b_names])
    ca = position_in(values, xa)
    cb = ca if same else position_in(values, xb)
    ok_a = ~np.isnan(xa)
    ok_b = ok_a if same else ~np.isnan(xb)
    a_at = {name: i for i, name in enumerate(a_names)}
    b_at = a_at if same else {name: i for i, name in enumerate(b_names)}
    pa = np.array([a_at[a] for a, _ in pairs], dtype=np.int64)
    pb = np.array([b_at[b] for _, b in pairs], dtype=np.int64)
    counts = (
        _kept_pair_counts(kept_as, a_names, ca, ok_a, len(values))
        if same and kept_as is not None and not ctx.plan.n_boot
        else None
    )
    if counts is not None:  # every two columns' items both answered: their table's total
        C, K = len(a_names), len(values)
        n_of = counts.reshape(C, K, C, K).sum(axis=(1, 3))[pa, pb].astype(np.int64)
    else:
        n_of = _both_answered(ok_a, ok_b, pa, pb)
    kept: list[int] = []
    for p, (a, b) in enumerate(pairs):
        n = int(n_of[p])
        name = f"{a} vs {b}"
        if n == 0:
            continue
        if n < ctx.min_count:
            out[name] = {"n": n, "note": f"fewer than {ctx.min_count} items answered by both"}
            continue
        kept.append(p)
    if not kept:
        return out
    a_cols, b_cols = _Coded(ca, ok_a), _Coded(cb, ok_b)
    live = (
        None
        if ctx.plan.n_boot
        else _live_pair_tables(a_cols, b_cols, pa[kept], pb[kept], values, same, counts)
    )
    if live is not None:
        reps, least, most = live
    else:
        reps, least, most = _pair_block(ctx, rows, a_cols, b_cols, pa, pb, n_of, kept, values)
    for i, p in enumerate(kept):
        a, b = pairs[p]
        n = int(n_of[p])
        note = IDENTICAL if least[i] == most[i] else None
        k = {
            w: Pending(reps, n, col=3 * i + j, undefined_note=note)
            for j, w in enumerate(KAPPA_WEIGHTS)
        }
        if not spec.ordered:
            k["linear"] = k["quadratic"] = Pending(None, n, undefined_note=UNORDERED)
        out[f"{a} vs {b}"] = {"n": n, **k}
    return {name: out[name] for name in sorted(out)}


def _both_answered(
    ok_a: np.ndarray, ok_b: np.ndarray, pa: np.ndarray, pb: np.ndarray
) -> np.ndarray:
    """Per pair (columns `pa` of `ok_a`, `pb` of `ok_b`: columns x items, answered or not) the
    items both answered. One product of the columns in single precision where it is small (its
    sums are counts of items, whole numbers below 2**24, exact in any order); else the pairs x
    items masks a block of pairs at a time, so memory stays bounded with many raters."""
    n_items = ok_a.shape[1]
    if max(ok_a.size, ok_b.size) <= _DENSE_PRODUCT and n_items < 2**24:
        fa = ok_a.astype(np.float32)
        both = fa @ (fa if ok_b is ok_a else ok_b.astype(np.float32)).T
        return both[pa, pb].astype(np.int64)
    step = max(1, 4_000_000 // max(1, n_items))
    blocks = [slice(first, first + step) for first in range(0, len(pa), step)]
    return np.concatenate([(ok_a[pa[b]] & ok_b[pb[b]]).sum(axis=1) for b in blocks])


# the pair tables of a live estimate, (columns x codes) squared, at most this many cells (16 MB:
# 235 raters on a six-point scale)
_LIVE_TABLE_CELLS = 2_000_000
# a product's dense operand (answered masks, columns x items; a live estimate's one-hot codes,
# columns x codes x items) up to this many values (16 MB in single precision); else sparse or
# by blocks
_DENSE_PRODUCT = 4_000_000


class _Coded(NamedTuple):
    """Answer columns (columns x items) as positions among the values, and which are answered."""

    codes: np.ndarray
    ok: np.ndarray


def _live_pair_tables(
    a: _Coded,
    b: _Coded,
    pa: np.ndarray,
    pb: np.ndarray,
    values: np.ndarray,
    same: bool = False,
    counts: np.ndarray | None = None,
) -> tuple[Replicates, np.ndarray, np.ndarray] | None:
    """A live estimate's point kappas of the kept pairs (`pa`, `pb`: their columns), with each
    pair's least and most code: every pair's K x K table at once, from one product of the
    columns' one-hot codes (the tables are counts, exact in any order of summing, and the
    kappas are `_pair_block`'s from the same tables); None where the tables would not fit.
    `same`: `a` and `b` are one set of columns (the humans' pairs); `counts`: their product,
    kept from the refresh before (`_kept_pair_counts`)."""
    (ca, ok_a), (cb, ok_b) = a, b
    K = len(values)
    if counts is not None:
        return _kappas_of_tables(
            np.asarray(counts, dtype=float), ca.shape[0], cb.shape[0], pa, pb, values
        )
    if ca.shape[0] * K * cb.shape[0] * K > _LIVE_TABLE_CELLS:
        return None
    # a code off the values: the long way
    if ((ca >= K) & ok_a).any() or (not same and ((cb >= K) & ok_b).any()):
        return None

    dense = max(ca.shape[0], cb.shape[0]) * K * ca.shape[1] <= _DENSE_PRODUCT
    # a dense product in single precision: its sums are counts of items, whole numbers below
    # 2**24, exact in float32 in any order of summing
    single = ca.shape[1] < 2**24

    def one_hot(codes: np.ndarray, ok: np.ndarray) -> Any:
        if dense:
            hot = np.stack([(codes == k) & ok for k in range(K)], axis=1)  # columns x K x items
            return hot.reshape(-1, codes.shape[1]).astype(np.float32 if single else float)
        col, item = np.nonzero(ok)
        at = (col * K + codes[col, item], item)
        return sp.csr_matrix((np.ones(len(col)), at), shape=(codes.shape[0] * K, codes.shape[1]))

    hot_a = one_hot(ca, ok_a)
    both = hot_a @ (hot_a if same else one_hot(cb, ok_b)).T
    both = np.asarray(both if dense else both.toarray(), dtype=float)
    return _kappas_of_tables(both, ca.shape[0], cb.shape[0], pa, pb, values)


def _kept_pair_counts(
    key: Hashable, names: list[str], codes: np.ndarray, ok: np.ndarray, K: int
) -> np.ndarray | None:
    """One set of columns' pair tables as `_live_pair_tables` makes them densely (float32
    counts), kept under `key` from the refresh before and brought up to date
    (kept_counts.cooccurrences); None where that product would not be made densely."""
    C, N = codes.shape
    if C * K * C * K > _LIVE_TABLE_CELLS or C * K * N > _DENSE_PRODUCT or N >= 2**24:
        return None
    if K >= 2**15 or ((codes >= K) & ok).any():
        return None
    return cooccurrences(key, names, np.where(ok, codes, -1), K)


def _kappas_of_tables(
    both: np.ndarray, n_a: int, n_b: int, pa: np.ndarray, pb: np.ndarray, values: np.ndarray
) -> tuple[Replicates, np.ndarray, np.ndarray]:
    """The kappas of pairs (`pa`, `pb`) from the product of the columns' one-hot codes, with
    each pair's least and most code."""
    K = len(values)
    tables = np.ascontiguousarray(both.reshape(n_a, K, n_b, K)[pa, :, pb, :])
    point = np.asarray(kappa_from_tables(tables, values), dtype=float)
    seen_a, seen_b = tables.sum(axis=2) > 0, tables.sum(axis=1) > 0
    least = np.minimum(seen_a.argmax(axis=1), seen_b.argmax(axis=1))
    most = np.maximum(
        K - 1 - seen_a[:, ::-1].argmax(axis=1), K - 1 - seen_b[:, ::-1].argmax(axis=1)
    )
    return Replicates(point=point.reshape(-1)), least, most


def _pair_block(
    ctx: Context,
    rows: np.ndarray,
    a: _Coded,
    b: _Coded,
    pa: np.ndarray,
    pb: np.ndarray,
    n_of: np.ndarray,
    kept: list[int],
    values: np.ndarray,
) -> tuple[Replicates, np.ndarray, np.ndarray]:
    """The kept pairs' kappas as one sliced block of the shared bootstrap, with each pair's
    least and most code."""
    (ca, ok_a), (cb, ok_b) = a, b
    K = len(values)
    step = max(1, 4_000_000 // max(1, ca.shape[1]))
    # pair after pair, items in order within a pair: the concatenation of the pairs' rows
    at: list[np.ndarray] = []
    ia_parts: list[np.ndarray] = []
    ib_parts: list[np.ndarray] = []
    for first in range(0, len(kept), step):
        blk = np.asarray(kept[first : first + step], dtype=np.int64)
        both = ok_a[pa[blk]] & ok_b[pb[blk]]  # kept pairs x items
        at.append(np.broadcast_to(rows, both.shape)[both])
        ia_parts.append(ca[pa[blk]][both])
        ib_parts.append(cb[pb[blk]][both])
    ia, ib = np.concatenate(ia_parts), np.concatenate(ib_parts)
    sl = np.repeat(np.arange(len(kept)), n_of[kept])
    reps = ctx.plan.add_sliced(
        np.concatenate(at),
        ia * K + ib,
        np.ones(len(sl)),
        K * K,
        lambda s: kappa_from_tables(s.reshape(len(s), K, K), values),
        sl,
        len(kept),
    )
    # fewer than two distinct codes in a pair: every code of its a and b is the same one
    starts = np.r_[0, np.cumsum(n_of[kept])[:-1]]
    least = np.minimum(np.minimum.reduceat(ia, starts), np.minimum.reduceat(ib, starts))
    most = np.maximum(np.maximum.reduceat(ia, starts), np.maximum.reduceat(ib, starts))
    return reps, least, most


def _counted_answers(vc: ValueCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The value counts as consensus() counts the known answers (per item and answer, ordered
    by item then answer), where the domain is in increasing order (positions in it then order
    the answers); else None (consensus counts them itself)."""
    dom = vc.domain
    if len(dom) > 1 and not bool(np.all(dom[1:] > dom[:-1])):
        return None
    return vc.units[vc.t_unit], dom[vc.t_val], vc.t_cnt


def human_section(
    ctx: Context, spec: MetricSpec, h: pd.DataFrame
) -> tuple[dict[str, Any], pd.DataFrame, Wide, ValueCounts]:
    """Human agreement figures of one metric; also returns the consensus table, the items x
    raters matrix of codes (NaN = no answer) and the answers' value counts."""
    plan = ctx.plan
    code = h["code"].to_numpy(dtype=float)
    answered = ~np.isnan(code)
    dom = spec.domain()
    idx = h["idx"].to_numpy()
    vc = value_counts(idx, code, dom)  # drops the cannot-judge (NaN) itself
    # the items once, for the count, the consensus and the wide matrix (and once for the
    # metrics with the same rows)
    shape = ctx.row_shapes.of(h)
    items_of = shape.items_of
    sec: dict[str, Any] = {
        "kind": spec.kind,
        "level": spec.level,
        "n_items": shape.n_items,
        "n_raters": shape.n_raters,
        "n_judgements": int(len(h)),
        "n_cannot_judge": int(len(h) - answered.sum()),
        "human_alpha": register_alpha(plan, vc, spec.level, spec.labels),
    }
    if spec.ordinal:
        sec["human_alpha_interval"] = register_alpha(plan, vc, "interval")
        sec["human_alpha_nominal"] = register_alpha(plan, vc, "nominal")
    else:
        sec["human_alpha_interval"] = undefined(vc.n_pairable, NOT_SCALE)
    if spec.key == VERDICT_KEY:
        sec["n_undetermined"] = sec["n_cannot_judge"]
        sec["undetermined_note"] = (
            "verdicts from complete answers only: a verdict whose rules need an "
            "unanswered or cannot-judge metric is undetermined and left out"
        )
    agree = register_agreement(plan, vc, spec.n_categories)
    sec["percent_agreement"] = agree["percent_agreement"]
    sec["fleiss_kappa"] = agree["fleiss_kappa"]
    if spec.ordinal:  # Fleiss' kappa has no notion of order
        agree["fleiss_kappa"].note = FLEISS_NOMINAL
    if spec.nominal:
        sec["gwet_ac1"] = agree["gwet_ac1"]
    cons = consensus(h, spec, items_of, _counted_answers(vc))
    sec["n_ties"] = int(cons["tie"].sum())
    wide = shape.wide(h, answered)
    raters = sorted(wide.names)
    cols = {r: wide.column(r) for r in raters}
    sec["rater_pairs"] = _pair_kappas(
        ctx, spec, wide.items, list(combinations(raters, 2)), cols, cols, dom, ("humans", spec.key)
    )
    if len(raters) == 2 and sec["rater_pairs"]:  # two raters: Cohen's kappa is the figure to read
        pair = next(iter(sec["rater_pairs"].values()))
        sec["cohen_kappa"] = {w: pair[w] for w in KAPPA_WEIGHTS if w in pair} or pair
    if ctx.rater_bootstrap:
        sec["human_alpha_two_way"] = two_way_alpha(
            sec["human_alpha"], h[answered], spec.domain(), spec.level
        )
    return sec, cons, wide, vc


# ---- judges ----------------------------------------------------------------------------


POINTS, INTERVAL, OWN = "points", "interval", "own"  # how a judge's answers are read


@dataclass
class JudgeView:
    """One judge's answers on one metric, aligned with the human consensus.

    `reading`: "points" (on the rubric's points, like a rater), "interval" (the metric's units
    at any value between its ends: `judge_scale = "interval"`), or "own" (a scale of its own:
    only the correlations with the human mean apply); `reading_note` says why where it is not
    "points"."""

    name: str
    answers: pd.DataFrame  # indexed by idx: code, num, raw, reason
    reading: str
    n_cannot_judge: int
    reading_note: str | None = None

    @property
    def same_scale(self) -> bool:
        """In the humans' units (on their points or between them): the figures of a common
        scale apply."""
        return self.reading != OWN

    @property
    def values(self) -> pd.Series:
        """The judge's answer per idx in the units the humans answer in: the point's code, or
        on the interval reading its number (NaN where it gave none, or on a scale of its own).
        """
        return self.answers["num" if self.reading == INTERVAL else "code"]


def judge_view(spec: MetricSpec, name: str, j: pd.DataFrame) -> JudgeView:
    jv = j.drop_duplicates("idx", keep="last").set_index("idx").sort_index()
    has_value = jv["num"].notna() | jv["code"].notna()
    n_cj = int((~has_value).sum())
    ok = jv["code"].notna()
    if spec.ordinal:
        ok &= jv["code"] % 1 == 0
    if bool(ok.any() and (ok | ~has_value).all()):
        return JudgeView(name, jv, POINTS, n_cj)
    jv = jv.assign(code=np.nan)
    declared = spec.metric.judge_scale if spec.metric is not None else POINTS
    if declared == INTERVAL and spec.ordinal:
        nums = jv.loc[has_value, "num"]
        lo, hi = cast(float, spec.lo), cast(float, spec.hi)
        if len(nums) and nums.notna().all() and nums.between(lo, hi).all():
            return JudgeView(name, jv, INTERVAL, n_cj, _interval_note(spec))
        return JudgeView(
            name,
            jv,
            OWN,
            n_cj,
            f"the judge's values reach outside {lo:g}..{hi:g}, so they are not in the metric's "
            "units: read as a scale of its own; figures that need a common scale are left out "
            '(declare judge_scale = "own" for such a judge); the correlations with the human '
            "mean still apply",
        )
    if declared == OWN:
        return JudgeView(
            name,
            jv,
            OWN,
            n_cj,
            'the judge scores on a scale of its own (judge_scale = "own"): figures that need a '
            "common scale are left out; the correlations with the human mean still apply",
        )
    return JudgeView(name, jv, OWN, n_cj, _off_scale(spec))


def _interval_note(spec: MetricSpec) -> str:
    return (
        f"the judge scores between the rubric's points ({spec.lo:g}..{spec.hi:g}, "
        'judge_scale = "interval"): exact agreement, kappas and the confusion need its points '
        "and are left out"
    )


def judge_section(
    ctx: Context,
    spec: MetricSpec,
    h: pd.DataFrame,
    cons: pd.DataFrame,
    wide: Wide,
    view: JudgeView,
    rater_pairs: dict[str, Any],
) -> dict[str, Any]:
    plan = ctx.plan
    jv = view.answers
    answered = cons.index[cons["n"] > 0]
    scored = jv.index[jv["num"].notna() | jv["code"].notna()]
    both = scored.intersection(answered)
    sec: dict[str, Any] = {
        "n_items": int(len(both)),
        "n_cannot_judge": view.n_cannot_judge,
        "same_scale": view.same_scale,
        "reading": view.reading,
    }
    off = view.reading_note if view.reading == OWN else None
    if not len(scored):
        off = "the judge gave no usable answer on this metric (every value empty or cannot judge)"
    sec["n_ties"] = int(cons.loc[cons.index.intersection(jv.index), "tie"].sum())
    if off:
        for k in (
            "alpha_vs_consensus",
            "alpha_with_judge_as_rater",
            "alpha_humans_same_items",
            "alpha_gain",
            "mean_difference",
            "exact_agreement_ci",
        ):
            sec[k] = undefined(len(both), off)
        sec["permutation_alpha"] = {"mean": None, "p_value": None, "note": off}
        sec["exact_agreement"] = None
        sec["cohen_kappa"] = {w: undefined(len(both), off) for w in KAPPA_WEIGHTS}
        sec["human_range"] = {"note": off}
        sec["vs_held_out_human"] = {"difference": undefined(len(both), off), "p_value": None}
        units, c_val, j_val = pd.Index([]), np.zeros(0), np.zeros(0)
    else:
        units, c_val, j_val = _common_scale(ctx, spec, h, cons, view, sec, rater_pairs, wide)

    # --- correlations with the human mean (any judge scale)
    rows = both.to_numpy()
    x = jv.loc[both, "num"].to_numpy(dtype=float)
    y = cons.loc[both, "mean"].to_numpy(dtype=float)
    if not spec.directed:
        for k in CORRELATIONS:
            sec[k] = undefined(len(rows), UNORDERED)
        sec["permutation_pearson"] = {"mean": None, "p_value": None, "note": UNORDERED}
    else:
        sec.update(register_correlations(plan, rows, x, y))
        sec["permutation_pearson"] = permutation_pearson(
            x, y, n_perm=ctx.n_perm, seed=ctx.seed, key=f"{spec.key}/{view.name}"
        )
    between = view.reading_note if view.reading == INTERVAL else None
    sec["slices"] = _slices(ctx, spec, units, c_val, j_val, cons, rows, x, y, off, between)
    return sec


def _common_scale(
    ctx: Context,
    spec: MetricSpec,
    h: pd.DataFrame,
    cons: pd.DataFrame,
    view: JudgeView,
    sec: dict[str, Any],
    rater_pairs: dict[str, Any],
    wide: Wide,
) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """The figures that need the judge in the humans' units: agreement with the consensus, the
    judge as one more rater, its differences. On the interval reading (a judge between the
    points) alphas are at interval level and the figures that need the points (exact agreement,
    kappas, the confusion, the judge among the humans' kappas) say so. Returns the consensus
    items the judge scored with both values, for the slices."""
    plan = ctx.plan
    jv = view.answers
    judge = view.values
    interval = view.reading == INTERVAL
    level = "interval" if interval else spec.level
    units = jv.index[judge.notna()].intersection(cons.index[cons["value"].notna()])
    c_val = cons.loc[units, "value"].to_numpy(dtype=float)
    j_val = judge.loc[units].to_numpy(dtype=float)
    u_idx = units.to_numpy()
    vc = value_counts(np.concatenate([u_idx, u_idx]), np.concatenate([c_val, j_val]))
    sec["alpha_vs_consensus"] = register_alpha(plan, vc, level, spec.labels)
    sec["alpha_vs_consensus"].note = "; ".join(
        x for x in (sec["alpha_vs_consensus"].note, VS_CONSENSUS) if x
    )
    values = vc.domain
    ci, ji = position_in(values, c_val), position_in(values, j_val)
    sec["permutation_alpha"] = permutation_alpha(
        ci,
        ji,
        level,
        values,
        n_perm=ctx.n_perm,
        rng=rng_for(ctx.seed, "permutation-alpha", spec.key, view.name),
    )
    note = view.reading_note
    if interval:
        sec["cohen_kappa"] = {w: undefined(len(u_idx), note or "") for w in KAPPA_WEIGHTS}
    else:
        kap = register_cohen(plan, u_idx, ci, ji, values)
        if not spec.ordered:
            kap["linear"] = kap["quadratic"] = Pending(None, len(u_idx), undefined_note=UNORDERED)
        sec["cohen_kappa"] = kap
    # judge as one more rater, on the items it scored
    hv = h[h["code"].notna() & h["idx"].isin(jv.index[judge.notna()])]
    jj = judge[judge.notna()]
    jj = jj[jj.index.isin(hv["idx"])]
    dom = np.union1d(spec.domain(), np.unique(jj.to_numpy(dtype=float)))
    vc_h = value_counts(hv["idx"].to_numpy(), hv["code"].to_numpy(), dom)
    vc_hj = value_counts(
        np.concatenate([hv["idx"].to_numpy(), jj.index.to_numpy()]),
        np.concatenate([hv["code"].to_numpy(), jj.to_numpy(dtype=float)]),
        dom,
    )
    with_j, alone, gain = register_alpha_pair(plan, vc_hj, vc_h, level)
    sec["alpha_with_judge_as_rater"] = with_j
    sec["alpha_humans_same_items"] = alone
    sec["alpha_gain"] = gain
    # exact agreement and signed difference
    clear = ~cons.loc[units, "tie"].to_numpy(dtype=bool)
    if interval:
        sec["exact_agreement"] = None
        sec["exact_agreement_ci"] = undefined(int(clear.sum()), note or "")
    else:
        eq = (c_val == j_val)[clear]
        n_eq = int(clear.sum())
        sec["exact_agreement"] = float(eq.mean()) if n_eq >= max(1, ctx.min_count) else None
        sec["exact_agreement_ci"] = _mean_figure(
            plan, u_idx[clear], eq.astype(float), ctx.min_count, share=True
        )
    if not spec.directed:
        sec["mean_difference"] = undefined(len(u_idx), UNORDERED)
    else:
        keep = np.ones(len(u_idx), bool) if spec.ordinal else clear
        sec["mean_difference"] = _mean_figure(plan, u_idx[keep], (j_val - c_val)[keep], 1)
    if spec.nominal:
        sec["confusion"] = _confusion(spec, c_val[clear], j_val[clear])
    sec["human_range"] = (
        {"note": note} if interval else _human_range(ctx, spec, wide, jv, rater_pairs)
    )
    sec["item_findings"] = held_out_finding_rates(spec, h, judge)
    if spec.directed:
        sec["vs_held_out_human"] = _held_out(ctx, spec, h, judge, view.name)
    else:
        sec["vs_held_out_human"] = {
            "difference": undefined(len(u_idx), UNORDERED),
            "p_value": None,
        }
    return units, c_val, j_val


def _held_out(
    ctx: Context, spec: MetricSpec, h: pd.DataFrame, judge: pd.Series, name: str
) -> dict[str, Any]:
    """The judge's mean difference from a held-out human: estimate with its item-bootstrap
    interval, and the relabelling p-value (q-value filled in by findings.systematic)."""
    r = held_out_difference(
        spec, h, judge, seed=ctx.seed, key=f"{spec.key}/{name}", pool=ctx.offset_pools.get(spec.key)
    )
    fig = (
        _mean_figure(ctx.plan, r["rows"], r["delta"], 1)
        if r["estimate"] is not None
        else undefined(r["n"], r.get("note", "undefined"))
    )
    return {
        "difference": fig,
        "p_value": r["p_value"],
        "test": r.get("test"),
        "q_value": None,
        "n": r["n"],
        "statistic": "per item: judge answer minus the mean human answer",
        # the judge's offset beside the humans' own (each held out against the others)
        "human_offsets": r.get("human_offsets"),
        "human_offset_range": r.get("human_offset_range"),
        "offset_sd": r.get("offset_sd"),
    }


def _mean_figure(
    plan: ItemBootstrap, rows: np.ndarray, v: np.ndarray, min_count: int, share: bool = False
) -> Any:
    n = len(rows)
    if n == 0:
        return undefined(0, "no item with both a judge value and a human consensus")
    if n < min_count:
        return undefined(n, f"fewer than {min_count} items: a share is not shown")
    reps = plan.add_dense(rows, np.column_stack([np.ones(n), v]), ratio)
    return Pending(reps, n)


def _confusion(spec: MetricSpec, c: np.ndarray, j: np.ndarray) -> dict[str, Any]:
    K = len(spec.labels)
    m = np.zeros((K, K), dtype=int)
    np.add.at(m, (c.astype(int), j.astype(int)), 1)
    return {
        "labels": list(spec.labels),
        "rows": "human consensus",
        "columns": "judge",
        "matrix": m.tolist(),
    }


def _human_range(
    ctx: Context,
    spec: MetricSpec,
    wide: Wide,
    jv: pd.DataFrame,
    rater_pairs: dict[str, Any],
) -> dict[str, Any]:
    """The judge's kappa with each human against the human-human kappas on the
    items the judge scored: is the judge inside the spread of the humans?"""
    measure, col = (
        ("cohen_kappa", "unweighted") if spec.nominal else ("cohen_kappa_quadratic", "quadratic")
    )
    jcode = jv["code"].reindex(wide.items).to_numpy(dtype=float)
    raters = list(wide.names)
    cols = {r: wide.column(r) for r in raters}
    rows = wide.items
    dom = np.union1d(spec.domain(), np.unique(jcode[~np.isnan(jcode)]))
    jh = _pair_kappas(ctx, spec, rows, [("judge", r) for r in raters], {"judge": jcode}, cols, dom)
    jh = {k.removeprefix("judge vs "): v for k, v in jh.items()}
    if np.isnan(jcode).any():  # judge covers fewer items: recompute the humans there
        masked = {r: np.where(np.isnan(jcode), np.nan, cols[r]) for r in raters}
        hh = _pair_kappas(
            ctx, spec, rows, list(combinations(raters, 2)), masked, masked, spec.domain()
        )
    else:
        hh = rater_pairs
    j_all = [_est(v, col) for v in jh.values()]
    h_all = [_est(v, col) for v in hh.values()]
    j_est = [e for e in j_all if e is not None]
    h_est = [e for e in h_all if e is not None]
    j_pend = [v[col] for v in jh.values() if _est(v, col) is not None]
    h_pend = [v[col] for v in hh.values() if _est(v, col) is not None]
    out: dict[str, Any] = {
        "measure": measure,
        "judge_vs_human": {r: v.get(col, v) for r, v in jh.items()},
        "human_vs_human": {
            "pairs": {p: v.get(col, v) for p, v in hh.items()},
            "min": min(h_est) if h_est else None,
            "max": max(h_est) if h_est else None,
        },
        "judge_mean": float(np.mean(j_est)) if j_est else None,
        "n_items": int((~np.isnan(jcode)).sum()),
    }
    if j_est and h_est:
        # Pending reads only point / values / bounds, which MeanOfKappas provides
        means = cast(Replicates, MeanOfKappas(j_pend, h_pend))
        n = out["n_items"]
        out["judge_mean_ci"] = Pending(means, n, col=0)
        out["human_mean"] = Pending(means, n, col=1)
        out["difference"] = Pending(means, n, col=2)
        out["margin"] = SPREAD_MARGIN
        out["test"] = SPREAD_TEST
        # filled in from the resolved intervals (summary.spread_position): inside, below or
        # undetermined; `range_position` keeps the old reading against the min/max
        jm, lo, hi = out["judge_mean"], min(h_est), max(h_est)
        out["range_position"] = "below" if jm < lo else "above" if jm > hi else "inside"
        out["position"] = None
    else:
        out["position"] = None
        out["note"] = f"needs kappas on at least {ctx.min_count} shared items"
    return out


# How far the judge's mean kappa with the humans may fall short of the humans' mean kappa
# among themselves and still count as inside their spread (non-inferiority margin, in kappa).
SPREAD_MARGIN = 0.1
SPREAD_TEST = (
    "difference = judge's mean kappa with each human minus the humans' mean kappa with each "
    "other, 95% item-bootstrap interval (the same resamples for both): inside the human spread "
    f"when the lower bound is above -{SPREAD_MARGIN:g} (non-inferiority, error at most 2.5% "
    "when the judge is worse by the margin), below it when the upper bound is under 0 (at most "
    "2.5% for a judge as good as the humans), undetermined otherwise"
)


def settle_spread(hr: dict[str, Any]) -> None:
    """Once resolved: the judge's `position` against the human spread from the interval of the
    difference (see SPREAD_TEST), in place; with `n_needed` (about how many items would
    decide, from the interval's width shrinking as 1/sqrt(n)) when it is undetermined."""
    d = hr.get("difference")
    if not isinstance(d, dict) or d.get("estimate") is None:
        return
    est, lo, hi, n = d["estimate"], d.get("low"), d.get("high"), int(d.get("n") or 0)
    if lo is None or hi is None:
        hr["position"] = "undetermined"
        hr["position_note"] = "undetermined, the difference has " + str(
            d.get("note") or "no interval"
        ).removeprefix("no interval: ").join(("no interval (", ")"))
        return
    if lo > 0:
        hr["position"] = "above"
    elif lo > -SPREAD_MARGIN:
        hr["position"] = "inside"
    elif hi < 0:
        hr["position"] = "below"
    else:
        hr["position"] = "undetermined"
        half = (hi - lo) / 2.0
        gap = max(est + SPREAD_MARGIN, -est)
        if gap > 1e-9 and n:
            need = int(np.ceil(n * (half / gap) ** 2 / 10.0) * 10)
            hr["n_needed"] = need
            hr["position_note"] = (
                f"undetermined, too few items (n = {n}; about {need} needed): the difference "
                f"{est:.2f} [{lo:.2f}, {hi:.2f}] is neither above -{SPREAD_MARGIN:g} nor below 0"
            )
        else:
            hr["position_note"] = (
                f"undetermined: the difference {est:.2f} [{lo:.2f}, {hi:.2f}] sits at the margin"
            )


class MeanOfKappas:
    """Replicates of [judge's mean kappa, humans' mean kappa, their difference] built from the
    pair kappas' own replicates once the shared bootstrap has run (a replicate is undefined
    when one of its kappas is: the same rule as every figure)."""

    def __init__(self, judge: list[Pending], human: list[Pending]) -> None:
        self.judge, self.human = judge, human
        jp = np.mean([p.estimate for p in judge])
        hp = np.mean([p.estimate for p in human])
        self.point = np.array([jp, hp, jp - hp])
        self._values: np.ndarray | None = None
        self._bounds: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @staticmethod
    def _cols(ps: list[Pending]) -> np.ndarray | None:
        cols = []
        for p in ps:
            if p.reps is None or p.reps.values is None:
                return None
            cols.append(p.reps.column(p.col))
        return np.mean(np.column_stack(cols), axis=1)

    @property
    def values(self) -> np.ndarray | None:
        if self._values is None:
            j, h = self._cols(self.judge), self._cols(self.human)
            if j is None or h is None:
                return None
            self._values = np.column_stack([j, h, j - h])
        return self._values

    def point_at(self, col: int) -> float:
        return float(self.point[col])

    def column(self, col: int) -> np.ndarray:
        vals = self.values
        assert vals is not None, "column() before the bootstrap ran"
        return vals[:, col]

    def bounds(self, col: int) -> tuple[float, float, int]:
        if self._bounds is None:
            vals = self.values
            if vals is None:
                return float("nan"), float("nan"), 0
            self._bounds = _interval(vals)
        lo, hi, k = self._bounds
        return float(lo[col]), float(hi[col]), int(k[col])


def _est(v: Any, col: str) -> float | None:
    p = v.get(col) if isinstance(v, dict) else None
    return p.estimate if isinstance(p, Pending) else None


# ---- slices ----------------------------------------------------------------------------


def _slices(
    ctx: Context,
    spec: MetricSpec,
    units: pd.Index,
    c_val: np.ndarray,
    j_val: np.ndarray,
    cons: pd.DataFrame,
    rows: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    off: str | None,
    between: str | None = None,
) -> dict[str, Any]:
    """The judge's figures within each case and each generator (alphabetical). `between`: the
    judge scores between the points (interval alpha; no exact agreement), and why."""
    plan = ctx.plan
    out: dict[str, Any] = {}
    u_idx = units.to_numpy()
    clear = ~cons.loc[units, "tie"].to_numpy(dtype=bool) if len(units) else np.zeros(0, bool)
    for name, (slice_of, labels) in ctx.slicings.items():
        S = len(labels)
        present_rows = np.unique(slice_of[rows]) if len(rows) else np.zeros(0, np.int64)
        figs: dict[int, dict[str, Any]] = {
            int(s): {"n_items": int((slice_of[rows] == s).sum())} for s in present_rows
        }
        if not off and len(u_idx):
            vc = value_counts(np.concatenate([u_idx, u_idx]), np.concatenate([c_val, j_val]))
            r, c, v, k, fin = alpha_features(vc, "interval" if between else spec.level)
            reps = plan.add_sliced(r, c, v, k, fin, slice_of[r], S, defined_only=True)
            su = slice_of[u_idx]
            per = pd.DataFrame({"s": np.concatenate([su, su]), "v": np.concatenate([c_val, j_val])})
            distinct = per.groupby("s")["v"].nunique()
            eq_reps = _sliced_mean(
                plan, u_idx[clear], (c_val == j_val)[clear].astype(float), slice_of, S
            )
            n_clear = np.bincount(slice_of[u_idx[clear]], minlength=S)
            keep = np.ones(len(u_idx), bool) if spec.ordinal else clear
            d_reps = (
                _sliced_mean(plan, u_idx[keep], (j_val - c_val)[keep], slice_of, S)
                if spec.directed
                else None
            )
            n_keep = np.bincount(slice_of[u_idx[keep]], minlength=S)
            n_units = np.bincount(su, minlength=S)
            for s in figs:
                nu = int(n_units[s])
                note = NO_PAIRS if nu == 0 else IDENTICAL if distinct.get(s, 0) < 2 else None
                figs[s]["alpha_vs_consensus"] = (
                    Pending(None, nu, undefined_note=note) if note else Pending(reps, nu, col=s)
                )
                ne = int(n_clear[s])
                figs[s]["exact_agreement"] = (
                    undefined(ne, between)
                    if between
                    else Pending(eq_reps, ne, col=s)
                    if ne >= ctx.min_count
                    else undefined(ne, f"fewer than {ctx.min_count} items: a share is not shown")
                )
                if d_reps is None:
                    figs[s]["mean_difference"] = undefined(nu, UNORDERED)
                else:
                    nk = int(n_keep[s])
                    figs[s]["mean_difference"] = (
                        Pending(d_reps, nk, col=s)
                        if nk
                        else undefined(0, "no item with both a judge value and a human consensus")
                    )
        elif off:
            for s in figs:
                for key in ("alpha_vs_consensus", "exact_agreement", "mean_difference"):
                    figs[s][key] = undefined(figs[s]["n_items"], off)
        if spec.directed and len(rows):
            ok = np.isfinite(x) & np.isfinite(y)
            rr, xx, yy = rows[ok], x[ok], y[ok]
            xc, yc = xx - xx.mean(), yy - yy.mean()
            feats = np.column_stack([np.ones(len(rr)), xc, yc, xc * xc, yc * yc, xc * yc])
            kk = feats.shape[1]
            p_reps = plan.add_sliced(
                np.repeat(rr, kk),
                np.tile(np.arange(kk), len(rr)),
                feats.ravel(),
                kk,
                pearson_from_moments,
                np.repeat(slice_of[rr], kk),
                S,
                defined_only=True,
            )
            of_slice = _split_by(slice_of[rr])  # one pass: a filter per slice is quadratic
            none = np.zeros(0, dtype=np.int64)
            for s in figs:
                at = of_slice.get(s, none)
                reason = corr_reason(xx[at], yy[at])
                figs[s]["pearson"] = (
                    Pending(None, len(at), undefined_note=reason)
                    if reason
                    else Pending(p_reps, len(at), col=s)
                )
        out[name] = {labels[s]: figs[s] for s in sorted(figs, key=lambda s: labels[s])}
    return out


def _split_by(labels: np.ndarray) -> dict[int, np.ndarray]:
    """{label: the positions holding it, in order}."""
    if not len(labels):
        return {}  # np.split of nothing still gives one (empty) part
    keys = labels
    if labels.dtype.kind in "iu" and labels.min() >= 0 and labels.max() < 2**15:
        # a few slices: numpy sorts 16-bit whole numbers stably by radix, 3x faster
        keys = labels.astype(np.int16)
    order = np.argsort(keys, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    heads = labels[order][np.r_[0, cuts]]
    return {int(h): part for h, part in zip(heads, np.split(order, cuts), strict=True)}


def _sliced_mean(
    plan: ItemBootstrap, rows: np.ndarray, v: np.ndarray, slice_of: np.ndarray, S: int
) -> Any:
    n = len(rows)
    r = np.repeat(rows, 2)
    c = np.tile(np.arange(2), n)
    vals = np.column_stack([np.ones(n), v]).ravel()
    return plan.add_sliced(r, c, vals, 2, ratio, slice_of[r], S)


# ---- one metric ------------------------------------------------------------------------


def metric_section(
    ctx: Context, spec: MetricSpec, h: pd.DataFrame, j: pd.DataFrame
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report entry of one metric, and what findings need (consensus, judge views)."""
    sec, cons, wide, vc = human_section(ctx, spec, h)
    views: dict[str, JudgeView] = {}
    judges: dict[str, Any] = {}
    for name in sorted(j["judge"].astype(str).unique()) if len(j) else []:
        view = judge_view(spec, name, j[j["judge"].astype(str) == name])
        views[name] = view
        judges[name] = judge_section(ctx, spec, h, cons, wide, view, sec["rater_pairs"])
    sec["judges"] = judges
    sec["by_generator"] = by_generator(ctx, spec, h, cons, views, vc)
    return sec, {"consensus": cons, "views": views, "human": h}


def by_generator(
    ctx: Context,
    spec: MetricSpec,
    h: pd.DataFrame,
    cons: pd.DataFrame,
    views: dict[str, JudgeView],
    vc_all: ValueCounts,
) -> dict[str, Any]:
    """Per generator (alphabetical), as the field reports agreement per model: the humans' alpha
    and Fleiss' kappa on its items, and each judge's Pearson, Spearman and Kendall tau-b with the
    human mean there; every figure on the shared bootstrap. `vc_all`: the value counts of all of
    `h` (human_section's)."""
    plan = ctx.plan
    slice_of, labels = ctx.slicings["by_generator"]
    idx = h["idx"].to_numpy(dtype=np.int64)
    out: dict[str, Any] = {}
    # a generator is a property of the item: its counts are the triplets of its items in the
    # counts of all the answers (one value_counts and one split, not a filter per generator)
    gen_of_unit = slice_of[vc_all.units]
    triplets_of = _split_by(gen_of_unit[vc_all.t_unit])
    units_of = _split_by(gen_of_unit)
    none = np.zeros(0, dtype=np.int64)
    seen = np.zeros(len(slice_of), dtype=bool)  # idx are rows of the items table: no sort
    seen[idx] = True
    n_items_of = np.bincount(slice_of[seen], minlength=len(labels))
    for g in np.flatnonzero(n_items_of) if len(h) else []:
        at, u = triplets_of.get(int(g), none), units_of.get(int(g), none)
        # the units' positions renumbered 0..: t_unit of the generator's own counts
        renum = np.zeros(len(vc_all.units), dtype=np.int64)
        renum[u] = np.arange(len(u))
        vc = ValueCounts(
            vc_all.units[u],
            vc_all.domain,
            renum[vc_all.t_unit[at]],
            vc_all.t_val[at],
            vc_all.t_cnt[at],
            vc_all.m[u],
        )
        fleiss = register_agreement(plan, vc, spec.n_categories)["fleiss_kappa"]
        if spec.ordinal:
            fleiss.note = FLEISS_NOMINAL
        out[labels[int(g)]] = {
            "n_items": int(n_items_of[g]),
            "human_alpha": register_alpha(plan, vc, spec.level, spec.labels),
            "fleiss_kappa": fleiss,
            "judges": {},
        }
    for name, view in views.items():
        jv = view.answers
        scored = jv.index[jv["num"].notna() | jv["code"].notna()]
        both = scored.intersection(cons.index[cons["n"] > 0])
        rows = both.to_numpy(dtype=np.int64)
        x = jv.loc[both, "num"].to_numpy(dtype=float)
        y = cons.loc[both, "mean"].to_numpy(dtype=float)
        for s, at in _split_by(slice_of[rows]).items():
            label = labels[s]
            if label not in out:
                continue
            out[label]["judges"][name] = (
                register_correlations(plan, rows[at], x[at], y[at])
                if spec.directed
                else {k: undefined(len(at), UNORDERED) for k in CORRELATIONS}
            )
    return out
