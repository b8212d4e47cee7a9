"""Seeded item bootstrap shared by every figure of a report.

Items are the resampling unit: a replicate draws the study's items with
replacement, and all of an item's answers (every rater, every metric, the
judge) come along together. Statistics are registered as *blocks*: per-item
feature rows whose weighted sum is a sufficient statistic (a coincidence
matrix, a contingency table, a few moments), plus a `finalize` that turns a
batch of summed features into replicate values. One replicate batch is then a
single matrix product `weights @ features` for all figures at once, so the
cost grows with the number of non-zero features, not with the number of
figures, and every figure of one replicate comes from the same resampled items.

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
import scipy.sparse as sp

Finalize = Callable[[np.ndarray], np.ndarray]

# Bounds on one weight batch (b x n_items) and one feature-sum batch
# (b x columns), in floats, so memory stays flat for any n_boot.
_BATCH_ELEMS = 4_000_000
_BATCH_COLS = 16_000_000
# A block is stored dense (BLAS matmul) when at least this share of its
# (all items x column) cells is non-zero; below it a sparse product is cheaper
# (measured: BLAS runs about 6x more multiply-adds per second than scipy.sparse).
_DENSE_SHARE = 0.15
# The products run in float32: weights are small integers (exact) and the
# relative rounding of a sum (~1e-7) is far below any interval's width; point
# estimates are computed separately in float64.
_DTYPE = np.float32


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


def batches(n_boot: int, n_items: int, n_cols: int = 0) -> Iterator[int]:
    """Batch sizes adding up to n_boot, each small enough for the batch bounds."""
    per = max(1, min(_BATCH_ELEMS // max(1, n_items), _BATCH_COLS // max(1, n_cols)))
    done = 0
    while done < n_boot:
        b = min(per, n_boot - done)
        yield b
        done += b


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _interval(reps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile 95% bounds of each column over its finite replicates, and their count."""
    reps = np.atleast_2d(np.asarray(reps, dtype=float).T).T
    ok = np.isfinite(reps)
    k = ok.sum(axis=0)
    srt = np.sort(np.where(ok, reps, np.inf), axis=0)  # undefined replicates sort last
    lo, hi = np.full(reps.shape[1], np.nan), np.full(reps.shape[1], np.nan)
    for q, out in ((0.025, lo), (0.975, hi)):
        pos = q * (k - 1)  # numpy's default (linear) percentile
        a = np.floor(pos).astype(np.int64)
        b = np.minimum(a + 1, np.maximum(k - 1, 0))
        f = pos - a
        cols = np.arange(reps.shape[1])
        has = k > 0
        va = srt[np.clip(a, 0, None), cols]
        vb = srt[np.clip(b, 0, None), cols]
        with np.errstate(invalid="ignore"):
            out[has] = (va + (vb - va) * f)[has]
    return lo, hi, k


def summarize(
    estimate: Any, reps: np.ndarray | None, n: int, note: str | None = None,
    _bounds: tuple[float, float, int] | None = None,
) -> dict[str, Any]:
    """The published form of an estimate: {"estimate","low","high","n"} (+ "note").

    An undefined estimate (None / NaN) is published as None with a note, never as
    a number. The 95% interval is the percentile interval of the defined
    replicates; if fewer than half of them are defined there is no interval.
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
        if k >= max(1, total // 2):
            out["low"], out["high"] = float(lo), float(hi)
            if k < total:
                note = _join(note, f"{total - k} of {total} resamples undefined, left out")
        else:
            note = _join(note, f"no interval: only {k} of {total} resamples defined")
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
    _bounds: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def bounds(self, col: int) -> tuple[float, float, int]:
        """95% percentile bounds of column `col` (all columns computed at once)."""
        if self._bounds is None:
            self._bounds = _interval(self.values)
        lo, hi, k = self._bounds
        return float(lo[col]), float(hi[col]), int(k[col])


@dataclass
class _Block:
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    k: int
    finalize: Finalize
    out: Replicates
    offset: int = 0


@dataclass
class _Custom:
    fn: Callable[[np.ndarray], np.ndarray]
    out: Replicates


@dataclass
class ItemBootstrap:
    """One seeded item bootstrap over `n_items`, with any number of statistics."""

    n_items: int
    n_boot: int = 1000
    seed: int = 0
    _blocks: list[_Block] = field(default_factory=list)
    _custom: list[_Custom] = field(default_factory=list)
    _ran: bool = False

    def add(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        k: int,
        finalize: Finalize,
    ) -> Replicates:
        """Register a statistic given as sparse per-item features.

        (rows[i], cols[i], vals[i]) are item index, feature column (< k) and
        value; duplicates add up. `finalize` maps an (b, k) array of weighted
        feature sums to (b,) or (b, j) replicate values.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        total = np.bincount(cols, weights=vals, minlength=k)[None, :] if k else np.zeros((1, 0))
        point = np.atleast_1d(np.asarray(finalize(total), dtype=float)[0])
        out = Replicates(point=point)
        self._blocks.append(_Block(rows, cols, vals, k, finalize, out))
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
    ) -> Replicates:
        """The same statistic computed separately within each slice of items.

        `slice_of[i]` is the slice (0..n_slices-1) of feature i. Values come back
        as (n_boot, n_slices * j): slice s, output jj is column s * j + jj.
        """
        cols = np.asarray(cols, dtype=np.int64) + np.asarray(slice_of, dtype=np.int64) * k

        def fin(s: np.ndarray) -> np.ndarray:
            r = np.asarray(finalize(s.reshape(len(s) * n_slices, k)), dtype=float)
            return r.reshape(len(s), -1)

        return self.add(rows, cols, vals, k * n_slices, fin)

    def run(self) -> None:
        """Draw the replicates (in batches) and fill every handle's `values`."""
        if self._ran:
            return
        self._ran = True
        n, B = self.n_items, self.n_boot
        blocks = [b for b in self._blocks if b.k > 0]
        for b in self._blocks:
            b.out.values = np.full((B, len(b.out.point)), np.nan)
        for c in self._custom:
            c.out.values = np.full((B, len(c.out.point)), np.nan)
        if n == 0 or B == 0 or not (blocks or self._custom):
            return
        dense, sparse = [], []
        for b in blocks:
            share = len(b.rows) / max(1, n * b.k)
            (dense if share >= _DENSE_SHARE else sparse).append(b)
        dense_mat = self._stack_dense(dense)
        sparse_t = self._stack_sparse(sparse)
        n_cols = sum(b.k for b in blocks)
        rng = rng_for(self.seed, "item-bootstrap")
        start = 0
        for size in batches(B, n, n_cols):
            w = resample_counts(rng, n, size, _DTYPE)
            if dense:
                s = (w @ dense_mat).astype(np.float64)
                for b in dense:
                    b.out.values[start : start + size] = _cols(b, s)
            if sparse:
                s = np.asarray(sparse_t @ w.T, dtype=np.float64).T
                for b in sparse:
                    b.out.values[start : start + size] = _cols(b, s)
            for c in self._custom:
                c.out.values[start : start + size] = np.asarray(c.fn(w.astype(np.float64)),
                                                                dtype=float).reshape(size, -1)
            start += size

    def _stack_dense(self, blocks: list[_Block]) -> np.ndarray:
        k = sum(b.k for b in blocks)
        if not blocks:
            return np.zeros((self.n_items, 0), dtype=_DTYPE)
        off, flat, vals = 0, [], []
        for b in blocks:
            b.offset = off
            flat.append(b.rows * k + b.cols + off)
            vals.append(b.vals)
            off += b.k
        mat = np.bincount(np.concatenate(flat), weights=np.concatenate(vals),
                          minlength=self.n_items * k)
        return mat.reshape(self.n_items, k).astype(_DTYPE)

    def _stack_sparse(self, blocks: list[_Block]) -> sp.csr_matrix:
        if not blocks:
            return sp.csr_matrix((0, self.n_items))
        off, rows, cols, vals = 0, [], [], []
        for b in blocks:
            b.offset = off
            rows.append(b.cols + off)
            cols.append(b.rows)
            vals.append(b.vals)
            off += b.k
        # stored transposed (features x items) so the product streams over items
        mat = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(off, self.n_items),
        )
        mat.sum_duplicates()
        return mat.astype(_DTYPE)


def _cols(b: _Block, s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(b.finalize(s[:, b.offset : b.offset + b.k]), dtype=float)
    return r.reshape(len(s), -1)


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
        return _finite(self.reps.point[self.col])

    def resolve(self) -> dict[str, Any]:
        est = self.estimate
        note = self.note if est is not None else (self.note or self.undefined_note)
        if est is None or self.reps is None or self.reps.values is None:
            return summarize(est, None, self.n, note)
        return summarize(est, self.reps.values[:, self.col], self.n, note,
                         _bounds=self.reps.bounds(self.col))


def undefined(n: int, note: str) -> dict[str, Any]:
    """A figure that cannot be computed on these data."""
    return summarize(None, None, n, note)


def resolve(tree: Any) -> Any:
    """Replace every Pending in a nested dict/list with its published dict."""
    if isinstance(tree, Pending):
        return tree.resolve()
    if isinstance(tree, dict):
        return {k: resolve(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [resolve(v) for v in tree]
    return tree
