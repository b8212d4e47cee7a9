"""Krippendorff's alpha, with a seeded item bootstrap (BCa intervals); the other
(Over 500 lines on purpose: alpha, its coincidence counts and its bootstrap share the sparse
triplet form they are computed from.)
chance-corrected figures (Fleiss, Gwet, Cohen) are in kappa.py on the same counts.

Everything starts from per-item value counts (how many raters gave value v to
item u), kept sparse as (unit, value, count) triplets so a continuous judge
scale with many distinct values costs memory in proportion to the answers, not
to items x values x values.

Krippendorff's alpha is 1 - D_o / D_e with the coincidence matrix
o[c,k] = sum_u (n_uc n_uk - [c=k] n_uc) / (m_u - 1) over items with m_u >= 2
answers. Each item's contribution is computed once; a bootstrap replicate is
weights @ contributions, and alpha is recomputed from the weighted matrix:

- nominal needs only the marginals n_c and the diagonal o_cc (2V numbers);
- interval needs four moments per item (answers, sum, sum of squares, and the
  item's own squared differences), whatever the number of distinct values;
- ordinal distances depend on the marginals (delta_ck = (R_c - R_k)^2 with R the
  mid-ranks of the pooled values), so the V x V matrix is kept and the
  distances recomputed per replicate. More than 200 distinct values are merged
  into 200 ordered bins first (with a note).

Point estimates are the `krippendorff` package's numbers (package_alpha.py: its own
steps, bit for bit, without its N x V x V working array) whenever that array would be
small, else from the same formula as the replicates; the tests check the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from .bootstrap import ItemBootstrap, Pending, summarize
from .distinct import distinct_counts, position_in, run_starts
from .package_alpha import package_alpha

LEVELS = ("nominal", "ordinal", "interval")
IDENTICAL = "every answer is identical: the statistic is undefined (nothing varies to agree on)"
NO_PAIRS = "no item has answers from two raters"
# an ordinal alpha over more distinct values is binned first (bin_ordered): its V x V weights
MAX_ORDINAL_VALUES = 200
_PACKAGE_CELLS = 20_000_000  # largest N x V x V array we let the package build


# ---- value counts -----------------------------------------------------------------


@dataclass(frozen=True)
class ValueCounts:
    """Sparse per-item value counts: triplet t says unit t_unit[t] got value
    domain[t_val[t]] from t_cnt[t] raters. Triplets are sorted by unit, then value."""

    units: np.ndarray  # (U,) item index of each unit (rows of a bootstrap)
    domain: np.ndarray  # (V,) sorted distinct values
    t_unit: np.ndarray  # (T,) position in `units`
    t_val: np.ndarray  # (T,) position in `domain`
    t_cnt: np.ndarray  # (T,) float counts
    m: np.ndarray  # (U,) answers per unit
    note: str | None = None

    @property
    def n_pairable(self) -> int:
        return int((self.m >= 2).sum())

    def dense(self, pairable_only: bool = True) -> np.ndarray:
        keep = self.m >= 2 if pairable_only else np.ones(len(self.m), bool)
        pos = np.cumsum(keep) - 1
        out = np.zeros((int(keep.sum()), len(self.domain)))
        sel = keep[self.t_unit]
        out[pos[self.t_unit[sel]], self.t_val[sel]] = self.t_cnt[sel]
        return out

    def pairable_values(self) -> np.ndarray:
        """Distinct values that occur in items with two or more answers."""
        sel = self.m[self.t_unit] >= 2
        # t_val are positions in `domain`: a presence count is np.unique without its sort
        seen = np.bincount(self.t_val[sel], minlength=len(self.domain))
        return np.flatnonzero(seen).astype(self.t_val.dtype, copy=False)


def value_counts(
    items: np.ndarray, values: np.ndarray, domain: np.ndarray | None = None
) -> ValueCounts:
    """Counts from long arrays (one answer a row); NaN values are dropped."""
    items = np.asarray(items, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(values)
    if not ok.all():
        items, values = items[ok], values[ok]
    dom = np.unique(values) if domain is None else np.asarray(domain, dtype=np.float64)
    vi = position_in(dom, values)
    if domain is not None and len(values):  # every value is in its own unique()
        if len(dom) and bool(np.all(dom[1:] >= dom[:-1])):  # sorted: one gather checks
            inside = bool(np.all(dom[np.minimum(vi, len(dom) - 1)] == values))
        else:
            inside = bool(np.isin(values, dom).all())
        if not inside:
            raise ValueError("values outside the value domain")
    V = max(1, len(dom))
    key, cnt = distinct_counts(items * V + vi)
    t_item, t_val = key // V, key % V
    # key is sorted, so t_item is: its units and inverse without another sort
    new = run_starts(t_item)
    units = t_item[new]
    t_unit = np.cumsum(new, dtype=np.int64) - 1
    m = np.bincount(t_unit, weights=cnt, minlength=len(units))
    return ValueCounts(units, dom, t_unit, t_val, cnt.astype(float), m)


def value_counts_from_matrix(data: Any, domain: np.ndarray | None = None) -> ValueCounts:
    """Counts from a reliability matrix (raters x items, NaN = missing)."""
    data = np.asarray(data, dtype=np.float64)
    dom = np.unique(data[~np.isnan(data)]) if domain is None else np.asarray(domain, float)
    if len(dom) > 64:  # long path keeps memory proportional to the answers
        r, c = np.nonzero(~np.isnan(data))
        return value_counts(c, data[r, c], dom)
    counts = np.stack([(data == v).sum(axis=0) for v in dom], axis=1).astype(float)  # N x V
    u, v = np.nonzero(counts)
    units, t_unit = np.unique(u, return_inverse=True)
    cnt = counts[u, v]
    m = np.bincount(t_unit, weights=cnt, minlength=len(units))
    return ValueCounts(
        units.astype(np.int64), dom, t_unit.astype(np.int64), v.astype(np.int64), cnt, m
    )


def _regroup(vc: ValueCounts, group: np.ndarray, domain: np.ndarray, note: str) -> ValueCounts:
    """Map value positions through `group` and add up duplicate triplets."""
    G = len(domain)
    key = vc.t_unit * G + group[vc.t_val]
    uk, inv = np.unique(key, return_inverse=True)
    cnt = np.bincount(inv, weights=vc.t_cnt)
    return ValueCounts(vc.units, domain, uk // G, uk % G, cnt, vc.m, note)


def bin_ordered(vc: ValueCounts, max_values: int = MAX_ORDINAL_VALUES) -> ValueCounts:
    """Merge adjacent values into at most `max_values` bins of similar pooled count."""
    V = len(vc.domain)
    if V <= max_values:
        return vc
    pooled = np.bincount(vc.t_val, weights=vc.t_cnt, minlength=V)
    before = np.cumsum(pooled) - pooled
    group = np.minimum((before / pooled.sum() * max_values).astype(np.int64), max_values - 1)
    _, group = np.unique(group, return_inverse=True)
    centers = np.array([vc.domain[group == g].mean() for g in range(group.max() + 1)])
    note = f"{V} distinct values merged into {len(centers)} ordered bins for the ordinal distance"
    return _regroup(vc, group, centers, note)


# ---- Krippendorff's alpha ------------------------------------------------------------


def undefined_reason(vc: ValueCounts) -> str | None:
    """Why alpha (or any chance-corrected figure) is undefined on these counts."""
    if vc.n_pairable == 0:
        return NO_PAIRS
    if len(vc.pairable_values()) < 2:
        return IDENTICAL
    return None


def alpha_from_coincidence(o: np.ndarray, level: str, values: np.ndarray) -> np.ndarray:
    """Alpha from coincidence matrices o (b x V x V); NaN where undefined."""
    o = np.asarray(o, dtype=float)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    V = o.shape[1]
    if level == "nominal":
        d = np.broadcast_to(1.0 - np.eye(V), o.shape)
    elif level == "interval":
        v = np.asarray(values, dtype=float)
        v = v - v.mean() if len(v) else v
        d = np.broadcast_to((v[:, None] - v[None, :]) ** 2, o.shape)
    elif level == "ordinal":
        r = np.cumsum(n_c, axis=1) - n_c / 2.0
        d = (r[:, :, None] - r[:, None, :]) ** 2
    else:
        raise ValueError(f"unknown level of measurement '{level}'")
    with np.errstate(divide="ignore", invalid="ignore"):
        d_o = (o * d).sum(axis=(1, 2))
        d_e = np.einsum("bi,bj,bij->b", n_c, n_c, d) / (n - 1.0)
        a = 1.0 - d_o / d_e
    return np.where((d_e > 1e-12 * np.maximum(1.0, n * n)) & (n > 1), a, np.nan)


def _alpha_nominal(s: np.ndarray, V: int) -> np.ndarray:
    n_c, diag = s[:, :V], s[:, V:].sum(axis=1)
    n = n_c.sum(axis=1)
    denom = n * n - (n_c * n_c).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 1.0 - (n - 1.0) * (n - diag) / denom
    return np.where(denom > 1e-9 * np.maximum(1.0, n * n), a, np.nan)


def _alpha_interval(s: np.ndarray) -> np.ndarray:
    n, s1, s2, d = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    d_e = 2.0 * (n * s2 - s1 * s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 1.0 - (n - 1.0) * d / d_e
    return np.where(d_e > 1e-9 * np.maximum(1.0, n * np.abs(s2)), a, np.nan)


def alpha_features(
    vc: ValueCounts, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, Any]:
    """Per-item alpha contributions as (rows, cols, vals, k, finalize)."""
    m_t = vc.m[vc.t_unit]
    sel = m_t >= 2
    if sel.all():  # the usual case (every item answered twice or more): no copies
        t_unit, t_val, cnt = vc.t_unit, vc.t_val, vc.t_cnt
    else:
        t_unit, t_val, cnt, m_t = vc.t_unit[sel], vc.t_val[sel], vc.t_cnt[sel], m_t[sel]
    m1 = m_t - 1.0
    rows = vc.units[t_unit]
    V = len(vc.domain)
    if level == "nominal":
        cols = np.concatenate([t_val, V + t_val])
        vals = np.concatenate([cnt, cnt * (cnt - 1.0) / m1])
        return np.concatenate([rows, rows]), cols, vals, *alpha_finalizer(level, vc.domain)
    if level == "interval":
        x = vc.domain[t_val]
        x = x - (np.average(x, weights=cnt) if len(x) else 0.0)  # centred: no cancellation
        U = len(vc.units)
        m = np.bincount(t_unit, weights=cnt, minlength=U)
        s1 = np.bincount(t_unit, weights=cnt * x, minlength=U)
        s2 = np.bincount(t_unit, weights=cnt * x * x, minlength=U)
        mean = np.divide(s1, m, out=np.zeros(U), where=m > 0)
        dev = np.bincount(t_unit, weights=cnt * (x - mean[t_unit]) ** 2, minlength=U)
        keep = m >= 2
        d = 2.0 * m[keep] * dev[keep] / (m[keep] - 1.0)
        feats = np.column_stack([m[keep], s1[keep], s2[keep], d])
        r = np.repeat(vc.units[keep], 4)
        c = np.tile(np.arange(4), int(keep.sum()))
        return r, c, feats.ravel(), 4, _alpha_interval
    if level == "ordinal":
        if V > MAX_ORDINAL_VALUES:
            raise ValueError("bin the values first (bin_ordered)")
        left, right = _pairs_within_units(t_unit)
        v = (cnt[left] * cnt[right] - (left == right) * cnt[left]) / m1[left]
        # the coincidence matrix is symmetric: only its upper triangle is summed (V(V+1)/2
        # columns instead of V^2), and the finalize mirrors it
        a, b = t_val[left], t_val[right]
        tri = ordinal_triangle(V)
        keep = (a <= b) & (v != 0)
        k, fin = alpha_finalizer("ordinal", vc.domain)
        return rows[left][keep], tri[a[keep], b[keep]], v[keep], k, fin
    raise ValueError(f"unknown level of measurement '{level}'")


def ordinal_triangle(V: int) -> np.ndarray:
    """The column of each cell (i <= j) of the upper triangle of a V x V coincidence matrix
    (-1 below it): an ordinal alpha's features sum only the triangle (the matrix is symmetric)."""
    iu = np.triu_indices(V)
    tri = np.full((V, V), -1, dtype=np.int64)
    tri[iu] = np.arange(len(iu[0]))
    return tri


def alpha_finalizer(level: str, domain: np.ndarray) -> tuple[int, Any]:
    """(k, finalize) of `alpha_features` for a nominal or an ordinal alpha over `domain`:
    alpha from summed features (b x k), what a statistic summed some other way is finalized
    with to give alpha_features' figure bit for bit."""
    V = len(domain)
    if level == "nominal":
        return 2 * V, lambda s: _alpha_nominal(s, V)
    if level != "ordinal":
        raise ValueError(f"no finalizer of its own for level '{level}'")
    tri = ordinal_triangle(V)
    # each cell of the full matrix read from its triangle column: one gather, 3x faster than
    # writing the triangle and its mirror (a sliced alpha finalizes a million of them)
    cell = np.maximum(tri, tri.T).ravel()

    def fin(s: np.ndarray) -> np.ndarray:
        o = np.asarray(s, dtype=float)[:, cell].reshape(len(s), V, V)
        return alpha_from_coincidence(o, "ordinal", domain)

    return V * (V + 1) // 2, fin


def _pairs_within_units(t_unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (i, j) of triplets that belong to the same unit."""
    if len(t_unit) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if bool(np.all(t_unit[1:] >= t_unit[:-1])):  # sorted, as counts are: runs, no sort
        start = np.flatnonzero(run_starts(t_unit))
        size = np.diff(np.r_[start, len(t_unit)])
    else:
        _, start, size = np.unique(t_unit, return_index=True, return_counts=True)
    grp = np.repeat(np.arange(len(size)), size)
    k = size[grp]  # size of each triplet's unit
    left = np.repeat(np.arange(len(t_unit)), k)
    block_start = np.repeat(np.cumsum(k) - k, k)
    j = np.arange(len(left)) - block_start
    right = np.repeat(start[grp], k) + j
    return left, right


def alpha_point(vc: ValueCounts, level: str) -> float | None:
    """Alpha point estimate; None if undefined. Uses the package when it fits."""
    if undefined_reason(vc):
        return None
    if level == "ordinal":
        vc = bin_ordered(vc)
    V = len(vc.domain)
    if vc.n_pairable * V * V <= _PACKAGE_CELLS:
        counts = vc.dense(pairable_only=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = package_alpha(counts, vc.domain, level)  # the package's number, in less time
        return float(a) if np.isfinite(a) else None
    r, c, v, k, fin = alpha_features(vc, level)
    a = fin(np.bincount(c, weights=v, minlength=k)[None, :])[0]
    return float(a) if np.isfinite(a) else None


# Simulated coverage of the BCa interval of a two-valued alpha (3 raters; tests/benchmarks/
# validity.md): rows = share of the rarer answer, columns = items. Where it is below 93% the
# interval is published with this figure in its note.
RARE_COVERAGE = {
    0.04: {30: 0.785, 100: 0.836, 300: 0.927},
    0.07: {30: 0.878, 100: 0.882, 300: 0.948},
    0.11: {30: 0.875, 100: 0.953, 300: 0.943},
    0.20: {30: 0.930, 100: 0.948, 300: 0.950},
}


def rare_note(vc: ValueCounts, labels: tuple[str, ...] = ()) -> str | None:
    """ "approximate, rare category" note for a two-valued alpha whose simulated coverage (the
    table cell at or below its rare share and number of items) is under 93%."""
    pooled = np.bincount(
        vc.t_val[vc.m[vc.t_unit] >= 2],
        weights=vc.t_cnt[vc.m[vc.t_unit] >= 2],
        minlength=len(vc.domain),
    )
    if len(vc.domain) != 2 or pooled.sum() == 0:
        return None
    share = float(pooled.min() / pooled.sum())
    n = vc.n_pairable
    rows = [r for r in RARE_COVERAGE if r <= share]
    cols = [c for c in RARE_COVERAGE[0.04] if c <= n]
    if not rows or not cols:
        if share >= 0.2 and n >= 30:
            return None
        cover = "below 80%"
    else:
        cov = RARE_COVERAGE[max(rows)][max(cols)]
        if cov >= 0.93:
            return None
        cover = f"about {cov:.0%}"
    code = vc.domain[int(np.argmin(pooled))]
    rare = (
        labels[int(code)]
        if labels and float(code).is_integer() and 0 <= code < len(labels)
        else f"code {code:g}"
    )
    return (
        f"approximate, rare category ({share:.0%} {rare}, {n} items): "
        f"coverage {cover} in simulation"
    )


def register_alpha(
    plan: ItemBootstrap, vc: ValueCounts, level: str, labels: tuple[str, ...] = ()
) -> Pending:
    """Alpha with its BCa interval from the shared bootstrap `plan` (a note where the interval is
    known to under-cover: a rare category in few items)."""
    reason = undefined_reason(vc)
    if reason:
        return Pending(None, vc.n_pairable, undefined_note=reason)
    if level == "ordinal":
        vc = bin_ordered(vc)
    # a live estimate resamples nothing (plan.n_boot 0), and the point is alpha_point's: the
    # features would be built for nothing
    reps = plan.add(*alpha_features(vc, level), bca=True) if plan.n_boot else None
    note = "; ".join(x for x in (vc.note, rare_note(vc, labels)) if x) or None
    return Pending(reps, vc.n_pairable, estimate=alpha_point(vc, level), note=note)


def register_alpha_pair(
    plan: ItemBootstrap, vc_a: ValueCounts, vc_b: ValueCounts, level: str
) -> tuple[Pending, Pending, Pending]:
    """Alphas of two codings of the same items and their difference a - b,
    all three from the same resamples (e.g. humans + judge vs humans alone)."""
    ra, rb = undefined_reason(vc_a), undefined_reason(vc_b)
    if ra or rb:
        return (
            register_alpha(plan, vc_a, level),
            register_alpha(plan, vc_b, level),
            Pending(None, vc_b.n_pairable, undefined_note=ra or rb),
        )
    if level == "ordinal":
        vc_a, vc_b = bin_ordered(vc_a), bin_ordered(vc_b)
    r1, c1, v1, k1, f1 = alpha_features(vc_a, level)
    r2, c2, v2, k2, f2 = alpha_features(vc_b, level)

    def fin(s: np.ndarray) -> np.ndarray:
        a, b = f1(s[:, :k1]), f2(s[:, k1:])
        return np.column_stack([a, b, a - b])

    reps = plan.add(
        np.concatenate([r1, r2]),
        np.concatenate([c1, c2 + k1]),
        np.concatenate([v1, v2]),
        k1 + k2,
        fin,
        bca=True,
    )
    pa, pb = alpha_point(vc_a, level), alpha_point(vc_b, level)
    note = "; ".join(x for x in (vc_a.note or vc_b.note, rare_note(vc_a)) if x) or None
    return (
        Pending(reps, vc_a.n_pairable, col=0, estimate=pa, note=note),
        Pending(reps, vc_b.n_pairable, col=1, estimate=pb, note=note),
        Pending(
            reps,
            vc_b.n_pairable,
            col=2,
            estimate=None if pa is None or pb is None else pa - pb,
            note=note,
        ),
    )


def permutation_alpha(
    a: np.ndarray,
    b: np.ndarray,
    level: str,
    values: np.ndarray,
    *,
    n_perm: int = 200,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Alpha between paired codes a[i], b[i] (indices into `values`) when b is
    shuffled across items: the chance baseline. Returns the mean alpha of the
    shuffles and the one-sided p-value of the observed alpha,
    (1 + #{shuffled >= observed}) / (1 + n_perm).

    Two answers per item make each item add 1 to o[a,b] and o[b,a]; shuffling
    keeps the marginals, so only the cross table changes per shuffle.
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    V, n = len(values), len(a)

    def alphas(tables: np.ndarray) -> np.ndarray:
        return alpha_from_coincidence(tables + tables.transpose(0, 2, 1), level, values)

    obs = alphas(np.bincount(a * V + b, minlength=V * V).reshape(1, V, V).astype(float))[0]
    if n < 2 or not np.isfinite(obs):
        return {
            "mean": None,
            "p_value": None,
            "n_perm": 0,
            "note": "alpha is undefined on these data, so is its permutation baseline",
        }
    out = np.empty(n_perm)
    step = max(1, 4_000_000 // max(n, V * V))
    for start in range(0, n_perm, step):
        size = min(step, n_perm - start)
        perm = np.argsort(rng.random((size, n)), axis=1)
        codes = a[None, :] * V + b[perm] + (np.arange(size) * V * V)[:, None]
        t = np.bincount(codes.ravel(), minlength=size * V * V).reshape(size, V, V).astype(float)
        out[start : start + size] = alphas(t)
    ok = out[np.isfinite(out)]
    return {
        "mean": float(ok.mean()) if len(ok) else None,
        "p_value": float((1 + (ok >= obs - 1e-12).sum()) / (len(ok) + 1)),
        "n_perm": int(len(ok)),
        "observed": float(obs),
    }


def standalone_plan(vc: ValueCounts, n_boot: int, seed: int) -> tuple[ItemBootstrap, ValueCounts]:
    """Resample only the items that carry answers: renumber them 0..U-1."""
    local = ValueCounts(
        np.arange(len(vc.units)), vc.domain, vc.t_unit, vc.t_val, vc.t_cnt, vc.m, vc.note
    )
    return ItemBootstrap(len(vc.units), n_boot, seed), local


def krippendorff_alpha(
    reliability_data: Any = None,
    *,
    items: Any = None,
    values: Any = None,
    counts: ValueCounts | None = None,
    level: str = "nominal",
    value_domain: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Krippendorff's alpha with a seeded item-bootstrap 95% interval.

    Give a reliability matrix (raters x items, NaN = missing), or long arrays
    `items`/`values` (one answer each), or ready `counts`. Returns
    {"estimate","low","high","n"} (+ "note"); `n` counts items with two or more
    answers. Undefined alpha (no variation, no pairable item) is None with a note.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    if counts is None:
        dom = None if value_domain is None else np.asarray(value_domain, float)
        if reliability_data is not None:
            counts = value_counts_from_matrix(reliability_data, dom)
        else:
            counts = value_counts(np.asarray(items), np.asarray(values, float), dom)
    plan, local = standalone_plan(counts, n_boot, seed)
    pend = register_alpha(plan, local, level)
    plan.run()
    return pend.resolve()


# ---- alpha for raters in general -----------------------------------------------------

TWO_WAY = (
    "two-way: item-bootstrap variance plus the raters' jackknife variance (raters as a sample "
    "of raters in general), t interval with Welch-Satterthwaite degrees of freedom; the other "
    "alpha intervals hold the raters fixed"
)


class _TwoWay(Pending):
    """Alpha with items *and* raters as sampling units: the item-bootstrap variance (from the
    shared replicates, after the run) plus the delete-one-rater jackknife variance."""

    def __init__(self, base: Pending, jack: np.ndarray, n_raters: int) -> None:
        super().__init__(base.reps, base.n, col=base.col, estimate=base.estimate, note=TWO_WAY)
        self.jack, self.n_raters = jack, n_raters

    def resolve(self) -> dict[str, Any]:
        est = self.estimate
        out = {
            "estimate": est,
            "low": None,
            "high": None,
            "n": self.n,
            "n_raters": self.n_raters,
            "note": TWO_WAY,
        }
        if (
            est is None
            or self.reps is None
            or self.reps.values is None
            or not len(self.reps.values)
        ):
            return out
        reps = self.reps.column(self.col)
        reps = reps[np.isfinite(reps)]
        j = self.jack[np.isfinite(self.jack)]
        if len(reps) < 2 or len(j) < 2:
            out["note"] = TWO_WAY + "; no interval: needs three raters or more"
            return out
        r = len(j)
        v_items = float(np.var(reps, ddof=1))
        v_raters = float((r - 1) / r * ((j - j.mean()) ** 2).sum())
        # the rater part rests on r - 1 degrees of freedom: Welch-Satterthwaite t quantile
        df = (r - 1) * (1 + v_items / v_raters) ** 2 if v_raters > 0 else np.inf
        half = float(student_t.ppf(0.975, df)) * np.sqrt(v_items + v_raters)
        if half > 0:  # alpha is at most 1
            out["low"], out["high"] = est - half, min(1.0, est + half)
        return out


def two_way_alpha(base: Any, answers: Any, domain: np.ndarray, level: str) -> Any:
    """The two-way interval of an alpha registered as `base` (build_report(rater_bootstrap=True));
    answers: a frame of idx, rater, code."""
    if not isinstance(base, Pending) or base.estimate is None:
        return summarize(None, None, getattr(base, "n", 0), "alpha is undefined here")
    raters = sorted(answers["rater"].astype(str).unique())
    jack = []
    for r in raters:
        rest = answers[answers["rater"].astype(str) != r]
        vc = value_counts(rest["idx"].to_numpy(), rest["code"].to_numpy(), domain)
        a = alpha_point(vc, level)
        jack.append(np.nan if a is None else a)
    return _TwoWay(base, np.asarray(jack, dtype=float), len(raters))


__all__ = [
    "IDENTICAL",
    "LEVELS",
    "MAX_ORDINAL_VALUES",
    "NO_PAIRS",
    "ValueCounts",
    "alpha_features",
    "alpha_from_coincidence",
    "alpha_point",
    "rare_note",
    "standalone_plan",
    "two_way_alpha",
    "bin_ordered",
    "krippendorff_alpha",
    "permutation_alpha",
    "register_alpha",
    "register_alpha_pair",
    "summarize",
    "undefined_reason",
    "value_counts",
    "value_counts_from_matrix",
]
