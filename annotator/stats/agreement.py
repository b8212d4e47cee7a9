"""Chance-corrected agreement: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa,
Gwet's AC1 and plain percent agreement, each with a seeded item bootstrap.

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

Point estimates come from the `krippendorff` package whenever its N x V x V
working array is small, else from the same formula as the replicates; the
tests check the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np

from .bootstrap import ItemBootstrap, Pending, summarize

LEVELS = ("nominal", "ordinal", "interval")
IDENTICAL = "every answer is identical: the statistic is undefined (nothing varies to agree on)"
NO_PAIRS = "no item has answers from two raters"
_MAX_ORDINAL_VALUES = 200
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
        return np.unique(self.t_val[sel])


def value_counts(
    items: np.ndarray, values: np.ndarray, domain: np.ndarray | None = None
) -> ValueCounts:
    """Counts from long arrays (one answer a row); NaN values are dropped."""
    items = np.asarray(items, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(values)
    items, values = items[ok], values[ok]
    dom = np.unique(values) if domain is None else np.asarray(domain, dtype=np.float64)
    if len(values) and not np.isin(values, dom).all():
        raise ValueError("values outside the value domain")
    vi = np.searchsorted(dom, values)
    V = max(1, len(dom))
    key, cnt = np.unique(items * V + vi, return_counts=True)
    t_item, t_val = key // V, key % V
    units, t_unit = np.unique(t_item, return_inverse=True)
    m = np.bincount(t_unit, weights=cnt, minlength=len(units))
    return ValueCounts(units, dom, t_unit.astype(np.int64), t_val, cnt.astype(float), m)


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
    return ValueCounts(units.astype(np.int64), dom, t_unit.astype(np.int64), v.astype(np.int64), cnt, m)


def _regroup(vc: ValueCounts, group: np.ndarray, domain: np.ndarray, note: str) -> ValueCounts:
    """Map value positions through `group` and add up duplicate triplets."""
    G = len(domain)
    key = vc.t_unit * G + group[vc.t_val]
    uk, inv = np.unique(key, return_inverse=True)
    cnt = np.bincount(inv, weights=vc.t_cnt)
    return ValueCounts(vc.units, domain, uk // G, uk % G, cnt, vc.m, note)


def bin_ordered(vc: ValueCounts, max_values: int = _MAX_ORDINAL_VALUES) -> ValueCounts:
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
    sel = vc.m[vc.t_unit] >= 2
    t_unit, t_val, cnt = vc.t_unit[sel], vc.t_val[sel], vc.t_cnt[sel]
    m1 = vc.m[t_unit] - 1.0
    rows = vc.units[t_unit]
    V = len(vc.domain)
    if level == "nominal":
        cols = np.concatenate([t_val, V + t_val])
        vals = np.concatenate([cnt, cnt * (cnt - 1.0) / m1])
        return np.concatenate([rows, rows]), cols, vals, 2 * V, lambda s: _alpha_nominal(s, V)
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
        if V > _MAX_ORDINAL_VALUES:
            raise ValueError("bin the values first (bin_ordered)")
        left, right = _pairs_within_units(t_unit)
        v = (cnt[left] * cnt[right] - (left == right) * cnt[left]) / m1[left]
        cols = t_val[left] * V + t_val[right]
        nz = v != 0
        dom = vc.domain

        def fin(s: np.ndarray) -> np.ndarray:
            return alpha_from_coincidence(s.reshape(len(s), V, V), "ordinal", dom)

        return rows[left][nz], cols[nz], v[nz], V * V, fin
    raise ValueError(f"unknown level of measurement '{level}'")


def _pairs_within_units(t_unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (i, j) of triplets that belong to the same unit."""
    if len(t_unit) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
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
            a = krippendorff.alpha(
                value_counts=counts, value_domain=vc.domain, level_of_measurement=level
            )
        return float(a) if np.isfinite(a) else None
    r, c, v, k, fin = alpha_features(vc, level)
    a = fin(np.bincount(c, weights=v, minlength=k)[None, :])[0]
    return float(a) if np.isfinite(a) else None


# Simulated coverage of the BCa interval of a two-valued alpha (3 raters; tests/benchmarks/
# validity.md): rows = share of the rarer answer, columns = items. Where it is below 93% the
# interval is published with this figure in its note.
RARE_COVERAGE = {0.04: {30: 0.785, 100: 0.836, 300: 0.927}, 0.07: {30: 0.878, 100: 0.882, 300: 0.948},
                 0.11: {30: 0.875, 100: 0.953, 300: 0.943}, 0.20: {30: 0.930, 100: 0.948, 300: 0.950}}


def rare_note(vc: ValueCounts, labels: tuple[str, ...] = ()) -> str | None:
    """"approximate, rare category" note for a two-valued alpha whose simulated coverage (the
    table cell at or below its rare share and number of items) is under 93%."""
    pooled = np.bincount(vc.t_val[vc.m[vc.t_unit] >= 2], weights=vc.t_cnt[vc.m[vc.t_unit] >= 2],
                         minlength=len(vc.domain))
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
    rare = labels[int(code)] if labels and float(code).is_integer() and 0 <= code < len(labels) \
        else f"code {code:g}"
    return (f"approximate, rare category ({share:.0%} {rare}, {n} items): "
            f"coverage {cover} in simulation")


def register_alpha(plan: ItemBootstrap, vc: ValueCounts, level: str, labels: tuple[str, ...] = ()
                   ) -> Pending:
    """Alpha with its BCa interval from the shared bootstrap `plan` (a note where the interval is
    known to under-cover: a rare category in few items)."""
    reason = undefined_reason(vc)
    if reason:
        return Pending(None, vc.n_pairable, undefined_note=reason)
    if level == "ordinal":
        vc = bin_ordered(vc)
    reps = plan.add(*alpha_features(vc, level), bca=True)
    note = "; ".join(x for x in (vc.note, rare_note(vc, labels)) if x) or None
    return Pending(reps, vc.n_pairable, estimate=alpha_point(vc, level), note=note)


def register_alpha_pair(
    plan: ItemBootstrap, vc_a: ValueCounts, vc_b: ValueCounts, level: str
) -> tuple[Pending, Pending, Pending]:
    """Alphas of two codings of the same items and their difference a - b,
    all three from the same resamples (e.g. humans + judge vs humans alone)."""
    ra, rb = undefined_reason(vc_a), undefined_reason(vc_b)
    if ra or rb:
        return (register_alpha(plan, vc_a, level), register_alpha(plan, vc_b, level),
                Pending(None, vc_b.n_pairable, undefined_note=ra or rb))
    if level == "ordinal":
        vc_a, vc_b = bin_ordered(vc_a), bin_ordered(vc_b)
    r1, c1, v1, k1, f1 = alpha_features(vc_a, level)
    r2, c2, v2, k2, f2 = alpha_features(vc_b, level)

    def fin(s: np.ndarray) -> np.ndarray:
        a, b = f1(s[:, :k1]), f2(s[:, k1:])
        return np.column_stack([a, b, a - b])

    reps = plan.add(np.concatenate([r1, r2]), np.concatenate([c1, c2 + k1]),
                    np.concatenate([v1, v2]), k1 + k2, fin, bca=True)
    pa, pb = alpha_point(vc_a, level), alpha_point(vc_b, level)
    note = "; ".join(x for x in (vc_a.note or vc_b.note, rare_note(vc_a)) if x) or None
    return (
        Pending(reps, vc_a.n_pairable, col=0, estimate=pa, note=note),
        Pending(reps, vc_b.n_pairable, col=1, estimate=pb, note=note),
        Pending(reps, vc_b.n_pairable, col=2, estimate=None if pa is None or pb is None else pa - pb,
                note=note),
    )


def permutation_alpha(
    a: np.ndarray, b: np.ndarray, level: str, values: np.ndarray, *, n_perm: int = 200,
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
        return {"mean": None, "p_value": None, "n_perm": 0,
                "note": "alpha is undefined on these data, so is its permutation baseline"}
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


def _standalone_plan(vc: ValueCounts, n_boot: int, seed: int) -> tuple[ItemBootstrap, ValueCounts]:
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
    plan, local = _standalone_plan(counts, n_boot, seed)
    pend = register_alpha(plan, local, level)
    plan.run()
    return pend.resolve()


# ---- Fleiss' kappa, percent agreement, Gwet's AC1 ---------------------------------


def agreement_features(vc: ValueCounts, n_categories: int) -> tuple:
    """Features for percent agreement, Fleiss' kappa and Gwet's AC1 (one block).

    Percent agreement p_a is the mean over items with >= 2 answers of the share
    of agreeing rater pairs. With pi_k the mean over items (>= 1 answer) of the
    item's share of category k, Fleiss' kappa corrects p_a with sum pi_k^2 and
    Gwet's AC1 with sum pi_k (1 - pi_k) / (Q - 1), Q the number of categories the
    metric offers. These are Gwet's (2014) definitions for unequal numbers of
    raters (R package irrCAC); with a constant number they are Fleiss' (1971).
    """
    V = len(vc.domain)
    Q = max(int(n_categories), V, 2)
    m_t = vc.m[vc.t_unit]
    two = m_t >= 2
    U = len(vc.units)
    p_u = np.bincount(
        vc.t_unit[two],
        weights=(vc.t_cnt * (vc.t_cnt - 1.0))[two] / (m_t * (m_t - 1.0))[two],
        minlength=U,
    )
    unit2 = vc.m >= 2
    n2 = int(unit2.sum())
    # columns: 0 items with >= 2 answers, 1 sum of p_u, 2 items with >= 1, 3.. shares
    rows = [vc.units[unit2], vc.units[unit2], vc.units, vc.units[vc.t_unit]]
    cols = [np.zeros(n2, np.int64), np.ones(n2, np.int64), np.full(U, 2), 3 + vc.t_val]
    vals = [np.ones(n2), p_u[unit2], np.ones(U), vc.t_cnt / m_t]

    def fin(s: np.ndarray) -> np.ndarray:
        n_two, sum_p, n_one, pi_sum = s[:, 0], s[:, 1], s[:, 2], s[:, 3 : 3 + V]
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = np.where(n_two > 0, sum_p / n_two, np.nan)
            pi = pi_sum / n_one[:, None]
            pe = (pi * pi).sum(axis=1)
            fleiss = np.where(1.0 - pe > 1e-12, (pa - pe) / (1.0 - pe), np.nan)
            pe_g = (pi * (1.0 - pi)).sum(axis=1) / (Q - 1.0)
            # every answer in one category: AC1 would read 1 by construction; undefined
            ac1 = np.where(pe_g > 1e-12, (pa - pe_g) / (1.0 - pe_g), np.nan)
        return np.column_stack([pa, fleiss, ac1])

    return (np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), 3 + V, fin)


def register_agreement(plan: ItemBootstrap, vc: ValueCounts, n_categories: int) -> dict[str, Pending]:
    """percent_agreement, fleiss_kappa and gwet_ac1 as Pending figures."""
    n = vc.n_pairable
    if n == 0:
        return {k: Pending(None, 0, undefined_note=NO_PAIRS)
                for k in ("percent_agreement", "fleiss_kappa", "gwet_ac1")}
    reps = plan.add(*agreement_features(vc, n_categories))
    reason = undefined_reason(vc)
    out = {"percent_agreement": Pending(reps, n, col=0)}
    for name, col in (("fleiss_kappa", 1), ("gwet_ac1", 2)):
        out[name] = Pending(None, n, undefined_note=reason) if reason else Pending(reps, n, col=col)
    return out


def fleiss_kappa(counts: Any) -> float | None:
    """Fleiss' kappa of an items x categories count table (point estimate)."""
    counts = np.asarray(counts, dtype=float)
    u, v = np.nonzero(counts)
    units, t_unit = np.unique(u, return_inverse=True)
    cnt = counts[u, v]
    vc = ValueCounts(units, np.arange(counts.shape[1], dtype=float), t_unit, v, cnt,
                     np.bincount(t_unit, weights=cnt))
    if undefined_reason(vc):
        return None
    r, c, w, k, fin = agreement_features(vc, counts.shape[1])
    val = fin(np.bincount(c, weights=w, minlength=k)[None, :])[0, 1]
    return float(val) if np.isfinite(val) else None


def agreement_summary(
    counts: ValueCounts, n_categories: int, *, n_boot: int = 1000, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Percent agreement, Fleiss' kappa and Gwet's AC1 with bootstrap intervals."""
    plan, local = _standalone_plan(counts, n_boot, seed)
    pend = register_agreement(plan, local, n_categories)
    plan.run()
    return {k: p.resolve() for k, p in pend.items()}


# ---- Cohen's kappa --------------------------------------------------------------------

KAPPA_WEIGHTS = ("unweighted", "linear", "quadratic")


def kappa_from_tables(tables: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Cohen's kappa (unweighted, linear, quadratic) of tables (b x K x K) -> (b x 3).

    Disagreement weights are 1 - I, |x_i - x_j| and (x_i - x_j)^2 on the
    category values, so ordered categories keep their spacing.
    """
    t = np.asarray(tables, dtype=float)
    K = t.shape[1]
    x = np.asarray(values, dtype=float)
    n = t.sum(axis=(1, 2))
    rows, cols = t.sum(axis=2), t.sum(axis=1)
    out = np.empty((len(t), 3))
    for j, w in enumerate((1.0 - np.eye(K), np.abs(x[:, None] - x[None, :]),
                           (x[:, None] - x[None, :]) ** 2)):
        obs = np.einsum("bij,ij->b", t, w)
        with np.errstate(divide="ignore", invalid="ignore"):
            exp = np.einsum("bi,bj,ij->b", rows, cols, w) / n
            out[:, j] = np.where(exp > 1e-12 * np.maximum(1.0, n), 1.0 - obs / exp, np.nan)
    return out


def cohen_kappa_table(table: Any, weights: str = "unweighted", values: Any = None) -> float | None:
    """Cohen's kappa of one K x K table; `values` are the category values (default 0..K-1)."""
    t = np.asarray(table, dtype=float)
    x = np.arange(t.shape[0], dtype=float) if values is None else np.asarray(values, float)
    k = kappa_from_tables(t[None], x)[0, KAPPA_WEIGHTS.index(weights)]
    return float(k) if np.isfinite(k) else None


def register_cohen(
    plan: ItemBootstrap, rows: np.ndarray, a: np.ndarray, b: np.ndarray, values: np.ndarray
) -> dict[str, Pending]:
    """Cohen's kappas between paired answers a[i], b[i] (indices into `values`) on item rows[i]."""
    K = len(values)
    n = len(rows)
    if n == 0:
        return {w: Pending(None, 0, undefined_note="no item answered by both") for w in KAPPA_WEIGHTS}
    reps = plan.add(np.asarray(rows), np.asarray(a) * K + np.asarray(b), np.ones(n), K * K,
                    lambda s: kappa_from_tables(s.reshape(len(s), K, K), values))
    note = IDENTICAL if len(np.unique(np.concatenate([a, b]))) < 2 else None
    return {w: Pending(reps, n, col=j, undefined_note=note) for j, w in enumerate(KAPPA_WEIGHTS)}


def cohen_kappa(
    a: Any, b: Any, *, categories: Any = None, n_boot: int = 1000, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Cohen's kappa (unweighted, linear, quadratic) of two raters' paired answers.

    Missing answers (None/NaN) drop the pair. `categories` fixes the category
    order (and values, when numeric); by default the sorted distinct answers.
    """
    a_arr, b_arr = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    keep = np.array([not _missing(x) and not _missing(y) for x, y in zip(a_arr, b_arr, strict=True)],
                    dtype=bool)
    a_arr, b_arr = a_arr[keep], b_arr[keep]
    cats = list(categories) if categories is not None else sorted(set(a_arr) | set(b_arr))
    index = {c: i for i, c in enumerate(cats)}
    try:
        values = np.asarray(cats, dtype=float)
    except (TypeError, ValueError):
        values = np.arange(len(cats), dtype=float)
    ai = np.array([index[x] for x in a_arr], dtype=np.int64)
    bi = np.array([index[x] for x in b_arr], dtype=np.int64)
    plan = ItemBootstrap(len(ai), n_boot, seed)
    pend = register_cohen(plan, np.arange(len(ai)), ai, bi, values)
    plan.run()
    return {k: p.resolve() for k, p in pend.items()}


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


__all__ = [
    "IDENTICAL",
    "KAPPA_WEIGHTS",
    "LEVELS",
    "NO_PAIRS",
    "ValueCounts",
    "agreement_summary",
    "alpha_features",
    "alpha_from_coincidence",
    "alpha_point",
    "bin_ordered",
    "cohen_kappa",
    "cohen_kappa_table",
    "fleiss_kappa",
    "kappa_from_tables",
    "krippendorff_alpha",
    "register_agreement",
    "permutation_alpha",
    "register_alpha",
    "register_alpha_pair",
    "register_cohen",
    "summarize",
    "undefined_reason",
    "value_counts",
    "value_counts_from_matrix",
]
