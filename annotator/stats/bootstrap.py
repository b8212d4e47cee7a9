"""Seeded item bootstrap shared by every figure of a report.
(Over 500 lines on purpose: one seeded resample shared by every figure: the weights, the batching
and the BCa rule belong together.)

Items are the resampling unit: a replicate weighs the study's items, and all of
an item's answers (every rater, every metric, the judge) come along together.
The weights are Poisson(1) draws fixed per item (item_weights: a hash of the
seed, the item's id and the replicate), so an item keeps its weights whatever
else the study holds. Statistics are registered as *blocks*: per-item feature
rows whose weighted sum is a sufficient statistic (a coincidence matrix, a
contingency table, a few moments), plus a `finalize` that turns a batch of
summed features into replicate values. The replicates are matrix products
`weights @ features` for all figures at once (over chunks of items or batches
of replicates, within fixed memory bounds), so the cost grows with the number of
non-zero features, not with the number of figures, and every figure of one
replicate comes from the same resampled items. How the work is split never
changes a figure (see `run`).

Point estimates come from the same sufficient statistics with every weight 1,
so an estimate and its interval are always about the same quantity.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import norm

from .distinct import distinct
from .item_weights import item_hashes
from .replicate_sums import exact_in_f32, fill_replicates, summed_sparse

Finalize = Callable[[np.ndarray], np.ndarray]

# Bounds on one weight batch (b x n_items) and one feature-sum batch (b x columns), in floats,
# for `batches` (the multinomial bootstraps of other figures) and the jackknife; the bounds of
# ItemBootstrap.run are in replicate_sums.
_BATCH_ELEMS = 4_000_000
_BATCH_COLS = 4_000_000
# A block with at most this many (items x columns) cells is added up densely when registered.
_DENSE_BUILD = 4_000_000
# An interval is published only when at most this share of the resamples gave
# an undefined value: dropping more conditions the interval on the resample
# being defined, which moves it away from what it claims to cover.
MAX_DROPPED_SHARE = 0.05


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A generator fixed by `seed` and a stable name, independent of call order."""
    return np.random.default_rng([int(seed), *(zlib.crc32(k.encode("utf-8")) for k in keys)])


def resample_counts(
    rng: np.random.Generator, n: int, b: int, dtype: type = np.float64
) -> np.ndarray:
    """`b` bootstrap resamples of `n` items as multiplicity weights (b x n).

    Each row is multinomial(n, 1/n): drawn as n uniform indices and counted, which
    is much cheaper than numpy's per-category multinomial for large n.
    """
    if n == 0 or b == 0:
        return np.zeros((b, n), dtype=dtype)
    idx = rng.integers(0, n, size=(b, n), dtype=np.int64)
    idx += (np.arange(b, dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(dtype)


def batches(n_boot: int, n_items: int, n_cols: int = 0, elems: int = _BATCH_ELEMS) -> Iterator[int]:
    """Batch sizes adding up to n_boot, each small enough for the batch bounds (`elems`: floats
    of one b x n_items array; lower it for a caller holding several such arrays at once)."""
    per = max(1, min(elems // max(1, n_items), _BATCH_COLS // max(1, n_cols)))
    done = 0
    while done < n_boot:
        b = min(per, n_boot - done)
        yield b
        done += b


def ratio(s: np.ndarray) -> np.ndarray:
    """Finalize of a mean or a share registered as features (count, sum): sum / count."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s[:, 0] > 0, s[:, 1] / s[:, 0], np.nan)


def check_n_boot(n_boot: Any, minimum: int = 1) -> int:
    """The number of resamples as an int; a clear ValueError below `minimum`."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < minimum:
        raise ValueError(
            f"n_boot must be a whole number of bootstrap resamples, at least {minimum} "
            f"(got {n_boot!r})"
        )
    return int(n_boot)


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _interval(
    reps: np.ndarray, q_lo: Any = 0.025, q_hi: Any = 0.975
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile bounds of each column over its finite replicates (at the quantiles q_lo, q_hi:
    scalars or one per column), and the count of finite replicates."""
    reps = np.atleast_2d(np.asarray(reps, dtype=float).T).T
    ok = np.isfinite(reps)
    k = ok.sum(axis=0)
    srt = np.sort(np.where(ok, reps, np.inf), axis=0)  # undefined replicates sort last
    lo, hi = np.full(reps.shape[1], np.nan), np.full(reps.shape[1], np.nan)
    cols = np.arange(reps.shape[1])
    has = k > 0
    for q, out in ((q_lo, lo), (q_hi, hi)):
        pos = np.broadcast_to(np.asarray(q, dtype=float), k.shape) * (k - 1)  # numpy's linear rule
        a = np.floor(pos).astype(np.int64)
        b = np.minimum(a + 1, np.maximum(k - 1, 0))
        f = pos - a
        va = srt[np.clip(a, 0, None), cols]
        vb = srt[np.clip(b, 0, None), cols]
        with np.errstate(invalid="ignore"):
            out[has] = (va + (vb - va) * f)[has]
    return lo, hi, k


def bca_quantiles(
    reps: np.ndarray, point: np.ndarray, jack: np.ndarray, n_flat: int
) -> tuple[np.ndarray, np.ndarray]:
    """BCa quantiles (Efron 1987) of the 95% interval, one pair per column.

    z0 from the share of replicates below the estimate; acceleration from the jackknife
    values `jack` (items with features x columns) plus `n_flat` items without features,
    whose leave-one-out value is the estimate itself. Where either is undefined the
    percentile quantiles are kept.
    """
    reps = np.atleast_2d(np.asarray(reps, dtype=float).T).T
    ok = np.isfinite(reps)
    k = np.maximum(ok.sum(axis=0), 1)
    below = (np.where(ok, reps, np.inf) < point).sum(axis=0) + 0.5 * (reps == point).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = norm.ppf(below / k)
        j = np.where(np.isfinite(jack), jack, np.nan)
        n = np.isfinite(j).sum(axis=0) + n_flat
        mean = (np.nansum(j, axis=0) + n_flat * point) / n
        d = mean - j
        d0 = mean - point
        s2 = np.nansum(d * d, axis=0) + n_flat * d0 * d0
        s3 = np.nansum(d**3, axis=0) + n_flat * d0**3
        acc = np.where(s2 > 0, s3 / (6.0 * s2**1.5), 0.0)
        zl, zh = norm.ppf(0.025), norm.ppf(0.975)
        q_lo = norm.cdf(z0 + (z0 + zl) / (1 - acc * (z0 + zl)))
        q_hi = norm.cdf(z0 + (z0 + zh) / (1 - acc * (z0 + zh)))
    bad = ~(np.isfinite(q_lo) & np.isfinite(q_hi)) | (q_lo >= q_hi)
    return np.where(bad, 0.025, q_lo), np.where(bad, 0.975, q_hi)


def summarize(
    estimate: Any,
    reps: np.ndarray | None,
    n: int,
    note: str | None = None,
    _bounds: tuple[float, float, int] | None = None,
) -> dict[str, Any]:
    """The published form of an estimate: {"estimate","low","high","n"} (+ "note").

    An undefined estimate (None / NaN) is published as None with a note, never as
    a number. The 95% interval is the percentile interval of the defined
    replicates. There is no interval (null bounds, with the reason in the note)
    when more than MAX_DROPPED_SHARE of the resamples were undefined, or when
    every resample gave the same value (one item, or nothing varies): a
    zero-width interval would claim a certainty the data do not have.
    """
    est = _finite(estimate)
    out: dict[str, Any] = {"estimate": est, "low": None, "high": None, "n": int(n)}
    if est is None:
        out["note"] = note or "undefined on these data"
        return out
    if reps is not None and len(reps):
        total = len(reps)
        if _bounds is None:
            lo_a, hi_a, k_a = _interval(np.asarray(reps, dtype=float)[:, None])
            _bounds = (float(lo_a[0]), float(hi_a[0]), int(k_a[0]))
        lo, hi, k = _bounds
        dropped = total - k
        # checked first: one unit resampled is that unit again (a Poisson resample may also
        # leave it out, see item_weights: undefined, for the same reason)
        if n <= 1 or (k > 0 and hi - lo <= 1e-12 * max(1.0, abs(est))):
            note = _join(
                note,
                "no interval: every resample gives the same value (too few items "
                "or nothing varies)",
            )
        elif k == 0 or dropped > MAX_DROPPED_SHARE * total:
            note = _join(
                note,
                f"no interval: {dropped} of {total} resamples undefined (more than "
                f"{MAX_DROPPED_SHARE:.0%})",
            )
        else:
            # rounding must never put the estimate outside its own interval
            out["low"], out["high"] = float(min(lo, est)), float(max(hi, est))
            if dropped:
                note = _join(note, f"{dropped} of {total} resamples undefined, left out")
    if note:
        out["note"] = note
    return out


def _join(a: str | None, b: str) -> str:
    return f"{a}; {b}" if a else b


@dataclass
class Replicates:
    """Handle to one registered block: its point value now, replicates after run()."""

    point: np.ndarray  # finalize() at weight 1, shape (j,)
    values: np.ndarray | None = None  # (n_boot, j) after run()
    jack: np.ndarray | None = None  # (items with features, j) leave-one-item-out values: BCa
    n_flat: int = 0  # items without features (their leave-one-out value is the point)
    # A sliced statistic (ItemBootstrap.add_sliced) keeps the slices that have features only:
    # `where` maps a column of the full layout (slice s, output jj: s * j + jj) to its kept
    # column, -1 for a slice without features (its figure is undefined).
    where: np.ndarray | None = None
    _bounds: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def kept(self, col: int) -> int:
        """The kept column of column `col` of the full layout (-1: none)."""
        return col if self.where is None else int(self.where[col])

    def point_at(self, col: int) -> float:
        c = self.kept(col)
        return float(self.point[c]) if c >= 0 else float("nan")

    def column(self, col: int) -> np.ndarray:
        """The replicate values of column `col` (after run())."""
        assert self.values is not None, "column() before run()"
        c = self.kept(col)
        return self.values[:, c] if c >= 0 else np.full(len(self.values), np.nan)

    def bounds(self, col: int) -> tuple[float, float, int]:
        """95% bounds of column `col` (all columns computed at once): BCa when the block has
        jackknife values, else percentile."""
        col = self.kept(col)
        if col < 0:
            return float("nan"), float("nan"), 0
        if self._bounds is None:
            values = self.values
            assert values is not None, "bounds() before run()"
            if self.jack is not None:
                q_lo, q_hi = bca_quantiles(values, self.point, self.jack, self.n_flat)
                self._bounds = _interval(values, q_lo, q_hi)
            else:
                self._bounds = _interval(values)
        lo, hi, k = self._bounds
        return float(lo[col]), float(hi[col]), int(k[col])


@dataclass(eq=False)
class _Block:
    # the features of the items that have any, row r for item items[r] (sorted): duplicates
    # summed, float32 when exact (exact_in_f32). A CSR over every item of a 200,000-item study
    # held 0.8 MB of row pointers per block, most of a judge-scale report's blocks' memory.
    feats: sp.csr_matrix
    items: np.ndarray
    n_items: int  # the study's items
    k: int
    finalize: Finalize
    out: Replicates
    exact32: bool = False
    offset: int = 0

    @property
    def share(self) -> float:
        """Share of the (study's items x columns) cells that are non-zero."""
        return self.feats.nnz / max(1, self.n_items * self.k)


@dataclass
class ItemBootstrap:
    """One seeded item bootstrap over `n_items`, with any number of statistics."""

    n_items: int
    n_boot: int = 1000
    seed: int = 0
    # item keys (ids): an item's resample weights follow its key, so they stay the same when
    # other items come or go; without keys they follow the item's position
    keys: Any = None
    _blocks: list[_Block] = field(default_factory=list)
    _ran: bool = False

    def __post_init__(self) -> None:
        self.n_boot = check_n_boot(self.n_boot, 0)  # 0: point estimates only

    @classmethod
    def for_items(cls, items: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> ItemBootstrap:
        """The bootstrap over a report's item table, each item's weights keyed by its item_id:
        every caller that must agree with the report (judge compare) builds it here."""
        return cls(len(items), n_boot, seed, keys=items["item_id"].tolist())

    def add(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        k: int,
        finalize: Finalize,
        bca: bool = False,
    ) -> Replicates:
        """Register a statistic given as sparse per-item features.

        (rows[i], cols[i], vals[i]) are item index, feature column (< k) and
        value; duplicates add up. `finalize` maps an (b, k) array of weighted
        feature sums to (b,) or (b, j) replicate values. With `bca`, the
        leave-one-item-out values are computed too and the interval is BCa.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        total = np.bincount(cols, weights=vals, minlength=k)[None, :] if k else np.zeros((1, 0))
        point = np.atleast_1d(np.asarray(finalize(total), dtype=float)[0])
        out = Replicates(point=point)
        if not self.n_boot:  # point estimates only (a live estimate): nothing to resample
            none = np.zeros(0, dtype=np.int64)
            self._blocks.append(
                _Block(sp.csr_matrix((0, k)), none, self.n_items, k, finalize, out, True)
            )
            return out
        if bca and k and self.n_boot:
            out.jack, out.n_flat = _jackknife(rows, cols, vals, k, finalize, total[0], self.n_items)
        exact32 = exact_in_f32(rows, vals)
        dtype = np.float32 if exact32 else np.float64
        items, local = _touched(rows, self.n_items)
        m = len(items)
        if self.n_items * k <= max(_DENSE_BUILD, 2 * len(rows)):
            # many duplicates or few cells: add up into the dense table of the touched items, then
            # keep its non-zeros (much less memory and time than sorting the triplets)
            table = np.bincount(local * k + cols, weights=vals, minlength=m * k)
            feats = sp.csr_matrix(table.reshape(m, k).astype(dtype))
        else:
            feats = sp.csr_matrix((vals.astype(dtype), (local, cols)), shape=(m, k))
            feats.sum_duplicates()
        self._blocks.append(_Block(feats, items, self.n_items, k, finalize, out, exact32))
        return out

    def add_dense(self, rows: np.ndarray, features: np.ndarray, finalize: Finalize) -> Replicates:
        """Register per-item feature rows given densely (len(rows) x k)."""
        features = np.asarray(features, dtype=np.float64)
        n, k = features.shape
        r = np.repeat(np.asarray(rows, dtype=np.int64), k)
        c = np.tile(np.arange(k, dtype=np.int64), n)
        v = features.ravel()
        nz = v != 0
        return self.add(r[nz], c[nz], v[nz], k, finalize)

    def add_sliced(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        k: int,
        finalize: Finalize,
        slice_of: np.ndarray,
        n_slices: int,
        defined_only: bool = False,
    ) -> Replicates:
        """The same statistic computed separately within each slice of items.

        `slice_of[i]` is the slice (0..n_slices-1) of feature i. Values come back
        as (n_boot, n_slices * j): slice s, output jj is column s * j + jj. With
        `defined_only`, a slice whose every output is undefined at the point estimate is not
        resampled (its columns read as undefined): for figures published without an interval
        when their estimate is undefined, never read otherwise.
        """
        # Only the slices that have features are summed and kept (a study whose judge scores
        # every case and humans a sample has most cases without a human answer); `where` reads
        # them back in the full layout, and every kept figure is the one the full layout gives.
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        slice_of = np.asarray(slice_of, dtype=np.int64)
        if defined_only and self.n_boot:
            keep = self._defined_slices(cols, vals, k, finalize, slice_of)
            if keep is not None:
                rows, cols, vals, slice_of = rows[keep], cols[keep], vals[keep], slice_of[keep]
        present, compact = distinct(slice_of)
        m = len(present)
        with np.errstate(divide="ignore", invalid="ignore"):
            j = np.atleast_1d(np.asarray(finalize(np.zeros((1, k))), dtype=float)[0]).size
        where = np.full(n_slices * j, -1, dtype=np.int64)
        where.reshape(n_slices, j)[present] = np.arange(m * j).reshape(m, j)
        if m == 0:
            return Replicates(point=np.zeros(0), where=where)
        cols = cols + compact.astype(np.int64) * k

        def fin(s: np.ndarray) -> np.ndarray:
            r = np.asarray(finalize(s.reshape(len(s) * m, k)), dtype=float)
            return r.reshape(len(s), -1)

        out = self.add(rows, cols, vals, k * m, fin)
        out.where = where
        return out

    def _defined_slices(
        self, cols: np.ndarray, vals: np.ndarray, k: int, finalize: Finalize, slice_of: np.ndarray
    ) -> np.ndarray | None:
        """Which features belong to a slice with a defined output at the point estimate; None to
        keep them all. (Per case, most of a judge-scale study's slices hold one item: its
        Pearson is always undefined, its alpha often.) Only a block summed sparse with and
        without the undefined slices drops them: a sparse sum adds each column on its own,
        so the kept figures do not move."""
        present, compact = distinct(slice_of)
        m = len(present)
        total = np.bincount(compact * k + cols, weights=vals, minlength=m * k)
        with np.errstate(divide="ignore", invalid="ignore"):
            point = np.asarray(finalize(total.reshape(m, k)), dtype=float).reshape(m, -1)
        defined = np.isfinite(point).any(axis=1)
        n_kept = int(defined.sum())
        if n_kept == m or not (
            summed_sparse(len(cols), self.n_items * k * m)
            and summed_sparse(len(cols), self.n_items * k * max(1, n_kept))
        ):
            return None
        return defined[compact]

    def run(self) -> None:
        """Draw the replicates and fill every handle's `values`.

        Each item's weights come from its own key (item_weights), so the work is split freely:
        blocks dense enough for BLAS are summed over chunks of items (all replicates at once,
        the chunk's features made dense only while it is multiplied), the sparse ones over
        batches of replicates. Memory is bounded by the batch constants, whatever the number
        of items, replicates or columns.
        """
        if self._ran:
            return
        self._ran = True
        n, B = self.n_items, self.n_boot
        blocks = [b for b in self._blocks if b.k > 0]
        for b in self._blocks:
            b.out.values = np.full((B, len(b.out.point)), np.nan)
        if n == 0 or B == 0 or not blocks:
            return
        fill_replicates(blocks, B, self.seed, item_hashes(n, self.seed, self.keys))
        for b in blocks:  # never read again; a report keeps its handles to the end
            b.feats = sp.csr_matrix((0, b.k))
            b.items = b.items[:0]


def sliced_point(sums: np.ndarray, present: np.ndarray, finalize: Finalize) -> Replicates:
    """`ItemBootstrap.add_sliced`'s handle for a plan that draws no replicate (a live
    estimate), from each slice's feature sums (n_slices x k) instead of every item's features.
    `present`: the slices add_sliced would keep (those with a feature). The same point values
    where the sums are the same: features that are whole numbers (counts, agreements) sum
    exactly in any order, so a caller that adds them up its own way (a bincount per slice, not
    a million rows of features) gets add_sliced's figures bit for bit."""
    n_slices, k = sums.shape
    kept = np.flatnonzero(present)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = np.atleast_1d(np.asarray(finalize(np.zeros((1, k))), dtype=float)[0]).size
    where = np.full(n_slices * j, -1, dtype=np.int64)
    where.reshape(n_slices, j)[kept] = np.arange(len(kept) * j).reshape(len(kept), j)
    if not len(kept):
        return Replicates(point=np.zeros(0), where=where)
    point = np.asarray(finalize(np.ascontiguousarray(sums[kept], dtype=float)), dtype=float)
    return Replicates(point=point.reshape(-1), where=where)


def _touched(rows: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The items that have features (sorted) and each feature's position among them."""
    mark = np.zeros(n_items, dtype=bool)
    mark[rows] = True
    items = np.flatnonzero(mark)
    position = np.zeros(n_items, dtype=np.int64)  # written only where read (not a pass over all)
    position[items] = np.arange(len(items))
    return items, position[rows]


def _jackknife(
    rows: np.ndarray,
    cols: np.ndarray,
    vals: np.ndarray,
    k: int,
    finalize: Finalize,
    total: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, int]:
    """Leave-one-item-out values of a sufficient-statistic block: finalize(total - item's row)
    for every item with features (in chunks, so memory stays flat); and the featureless count."""
    units, inv = np.unique(rows, return_inverse=True)
    f = sp.csr_matrix((vals, (inv, cols)), shape=(len(units), k))
    per = max(1, _BATCH_ELEMS // max(1, k))
    parts = []
    for start in range(0, len(units), per):
        block = total[None, :] - f[start : start + per].toarray()
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.asarray(finalize(block), dtype=float).reshape(len(block), -1))
    return np.concatenate(parts), int(n_items - len(units))


class Pending:
    """An estimate whose interval is filled in once the shared bootstrap has run.

    Report sections are built with Pending leaves; `resolve` turns the finished
    tree into plain dicts.
    """

    def __init__(
        self,
        reps: Replicates | None,
        n: int,
        *,
        col: int = 0,
        note: str | None = None,
        estimate: float | None = None,
        undefined_note: str | None = None,
    ) -> None:
        self.reps, self.n, self.col, self.note = reps, n, col, note
        self._estimate = estimate
        self.undefined_note = undefined_note

    @property
    def estimate(self) -> float | None:
        if self._estimate is not None:
            return _finite(self._estimate)
        if self.reps is None:
            return None
        return _finite(self.reps.point_at(self.col))

    def resolve(self) -> dict[str, Any]:
        est = self.estimate
        # a figure that is undefined says why first, then any caveat the figure carries
        note = (
            self.note
            if est is not None
            else "; ".join(n for n in (self.undefined_note, self.note) if n) or None
        )
        if (
            est is None
            or self.reps is None
            or self.reps.values is None
            or not len(self.reps.values)
        ):
            return summarize(est, None, self.n, note)
        return summarize(
            est, self.reps.column(self.col), self.n, note, _bounds=self.reps.bounds(self.col)
        )


def undefined(n: int, note: str) -> dict[str, Any]:
    """A figure that cannot be computed on these data."""
    return summarize(None, None, n, note)


class Plain(dict[str, Any]):
    """A dict made of plain JSON values alone (str keys; str, int, finite float, bool, None and
    plain dicts and lists of them), which `jsonable` takes as it is, unwalked: for a part of the
    report made that way by construction, tens of thousands of figures (a live estimate's
    generator cells)."""


def jsonable(x: Any) -> Any:
    """Plain Python types only, recursively; NaN and infinities become None (the one sanitiser
    of the report dict)."""
    # the exact plain types first (a report holds hundreds of thousands of leaves): the same
    # results as the general checks below, without walking them for every leaf
    kind = type(x)
    if kind is Plain:
        return dict(x)
    if kind is float:
        return x if math.isfinite(x) else None
    if kind is str or kind is int or kind is bool or x is None:
        return x
    if kind is dict:
        return {str(k): jsonable(v) for k, v in x.items()}
    if kind is list:
        return [jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        f = float(x)
        return f if math.isfinite(f) else None
    if x is None or isinstance(x, str):
        return x
    if x is pd.NA or x is pd.NaT:
        return None
    return str(x)


def resolve(tree: Any) -> Any:
    """Replace every Pending in a nested dict/list with its published dict."""
    if isinstance(tree, Pending):
        return tree.resolve()
    if isinstance(tree, dict):
        return {k: resolve(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [resolve(v) for v in tree]
    return tree
