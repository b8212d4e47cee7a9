"""The replicate sums of an ItemBootstrap: sum_i w[b, i] f[i] for every block, within fixed memory.

Blocks dense enough for BLAS are multiplied over chunks of items (all replicates at once, a
chunk's features made dense only while it is multiplied), sparse ones over batches of
replicates. How the work is split never changes a figure: whole-number blocks are summed exactly
(float32 chunk products whose sums stay below 2^24, float64 totals), fractional dense blocks in
pieces of fixed size, sparse ones by a product that adds up in the items' order whatever the
batch (`tests/unit/test_report_incremental.py` compares whole reports across splits).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp

from .item_weights import MAX_WEIGHT, replicate_hashes, weights

# Bounds on one batch of replicate sums (replicates x columns) and of weights (replicates x
# items), in floats, so memory stays flat for any n_boot.
_REP_ELEMS = 4_000_000
_REP_COLS = 4_000_000
# Dense blocks are multiplied a chunk of items at a time: at most this many items, and a chunk's
# dense features at most this many floats (few large BLAS calls: on a loaded machine each call
# pays for waking BLAS's threads).
_CHUNK_ITEMS = 4096
_CHUNK_ELEMS = 4_000_000
# Threads for the chunks of a dense product (the target machine has two cores).
_THREADS = min(2, os.cpu_count() or 1)
# Fixed pieces of the float64 dense products (replicates x items): part of the arithmetic, not
# a memory bound, since they set the order of the additions; and the share of non-zero cells
# from which a float64 block is summed densely.
_F64_REPS = 500
_F64_CHUNK = 4096
_F64_DENSE_SHARE = 0.15
# Features of the sparse blocks summed together (one float64 transposed copy of them is made).
_SPARSE_NNZ = 4_000_000
# Summed features handed to one finalize call, in floats.
_FINALIZE_ELEMS = 250_000
# A block is summed densely (BLAS) when at least this share of its (items x columns) cells is
# non-zero; below it a sparse product is cheaper (BLAS runs about 6x more multiply-adds per
# second than scipy.sparse).
_DENSE_SHARE = 0.15
# A block whose features are whole numbers (counts) is summed in float32, which
# is exact while every weighted sum stays below 2^24; any other block is summed in
# float64, because float32 rounding of moments moved published digits (and once
# put an estimate outside its own interval).
_EXACT_F32 = 2.0**24


def fill_replicates(blocks: list[Any], n_boot: int, seed: int, h_items: np.ndarray) -> None:
    """Fill each block's `out.values` (n_boot x outputs) from its features and the weights of the
    items (`h_items`: item_weights.item_hashes)."""
    dense = [b for b in blocks if b.exact32 and b.share >= _DENSE_SHARE]
    dense64 = [b for b in blocks if not b.exact32 and b.share >= _F64_DENSE_SHARE]
    taken = {id(b) for b in dense + dense64}
    sparse = [b for b in blocks if id(b) not in taken]
    if dense:
        _run_dense(dense, n_boot, seed, h_items)
    if dense64:
        _run_dense64(dense64, n_boot, seed, h_items)
    if sparse:
        _run_sparse(sparse, n_boot, seed, h_items)


def summed_sparse(nnz: int, cells: int) -> bool:
    """Whether a block of at most `nnz` non-zero features in `cells` (items x columns) cells is
    summed sparse, whatever its kind."""
    return nnz < min(_DENSE_SHARE, _F64_DENSE_SHARE) * max(1, cells)


def _run_dense(blocks: list[Any], n_boot: int, seed: int, h_items: np.ndarray) -> None:
    """Whole-number blocks: float32 BLAS products over chunks of items (made dense one chunk at
    a time; each chunk's sums are exact below 2^24), added up in item order in float64."""
    dtype = np.float32
    k = _offsets(blocks)
    chunk = int(np.clip(_CHUNK_ELEMS // k, 64, _CHUNK_ITEMS))
    for start, size in spans(n_boot, _REP_COLS // k):
        h_reps = replicate_hashes(seed, start, start + size)
        acc = _chunk_sums(blocks, k, h_reps, h_items, chunk, dtype)
        for b in blocks:
            _fill(b, start, acc)


def _run_dense64(blocks: list[Any], n_boot: int, seed: int, h_items: np.ndarray) -> None:
    """Blocks with fractional features: float64 BLAS products in pieces of fixed size (so the
    same additions in the same order, whatever the memory bounds)."""
    k = _offsets(blocks)
    for start, size in spans(n_boot, _F64_REPS):
        h_reps = replicate_hashes(seed, start, start + size)
        acc = _chunk_sums(blocks, k, h_reps, h_items, _F64_CHUNK, np.float64)
        for b in blocks:
            _fill(b, start, acc)


def _run_sparse(blocks: list[Any], n_boot: int, seed: int, h_items: np.ndarray) -> None:
    """Sparse blocks (columns x items: float32 for counts whose totals stay below 2^24, exact;
    float64 otherwise; no BLAS to feed) over batches of replicates, in groups of at most
    `_SPARSE_NNZ` features: the transposed copy of every block at once was the report's largest
    allocation. Each column is summed in the items' order whatever its group, so the grouping
    never changes a figure."""
    kinds: dict[bool, list[Any]] = {True: [], False: []}
    for b in blocks:
        kinds[_exact_sparse(b)].append(b)
    for exact, kind in kinds.items():
        group: list[Any] = []
        nnz = 0
        for b in kind:
            if group and nnz + b.feats.nnz > _SPARSE_NNZ:
                _run_sparse_group(group, n_boot, seed, h_items, exact)
                group, nnz = [], 0
            group.append(b)
            nnz += b.feats.nnz
        if group:
            _run_sparse_group(group, n_boot, seed, h_items, exact)


def _exact_sparse(b: Any) -> bool:
    """Whole-number features whose weighted column totals over every item stay below 2^24: their
    sparse product is exact in float32 (half the memory traffic of float64, same sums)."""
    if not b.exact32:
        return False
    totals = np.asarray(abs(b.feats).sum(axis=0)).ravel()
    return float(totals.max(initial=0.0)) * MAX_WEIGHT < _EXACT_F32


def _run_sparse_group(
    blocks: list[Any], n_boot: int, seed: int, h_items: np.ndarray, exact: bool
) -> None:
    k = _offsets(blocks)
    dtype = np.float32 if exact else np.float64
    # Only the items some feature of the group touches: a weight depends on its own item and
    # replicate alone, and a sparse product adds only non-zeros, so leaving the others out changes
    # no sum; it keeps a study whose judge scores every item and humans a sample (items without
    # a human answer) from weighting and batching over all of them.
    touched = np.unique(np.concatenate([b.items for b in blocks]))
    feats = [_on_rows(b, touched) for b in blocks]
    matT = sp.hstack(feats, format="csr", dtype=dtype).T.tocsr()
    del feats
    items = h_items[touched]
    per = max(1, min(_REP_COLS // k, _REP_ELEMS // max(1, len(items))))
    for start, size in spans(n_boot, per):
        w = weights(replicate_hashes(seed, start, start + size), items, dtype, True)
        acc = np.ascontiguousarray((matT @ w).T, dtype=np.float64)
        for b in blocks:
            _fill(b, start, acc)


def _chunk_sums(
    blocks: list[Any],
    k: int,
    h_reps: np.ndarray,
    h_items: np.ndarray,
    chunk: int,
    dtype: type,
) -> np.ndarray:
    """weights @ features over consecutive chunks of items, the chunks' products computed on
    `_THREADS` threads (numpy and BLAS release the GIL) and added up in item order (so the
    threads never change a figure); at most `_THREADS` + 1 chunks are held at once."""
    n = len(h_items)
    acc = np.zeros((len(h_reps), k))

    def part(i0: int) -> np.ndarray | None:
        d = _dense_rows(blocks, i0, min(n, i0 + chunk), k, dtype)
        return None if d is None else weights(h_reps, h_items[i0 : i0 + chunk], dtype) @ d

    starts = list(range(0, n, chunk))
    if _THREADS < 2 or len(starts) < 2:
        for i0 in starts:
            p = part(i0)
            if p is not None:
                acc += p
        return acc
    with ThreadPoolExecutor(_THREADS) as pool:
        pending: deque[Future] = deque()
        for i0 in starts:
            pending.append(pool.submit(part, i0))
            if len(pending) > _THREADS:
                p = pending.popleft().result()
                if p is not None:
                    acc += p
        while pending:
            p = pending.popleft().result()
            if p is not None:
                acc += p
    return acc


def _offsets(blocks: list[Any]) -> int:
    """Place the blocks side by side (each block's `offset`); the total width."""
    off = 0
    for b in blocks:
        b.offset = off
        off += b.k
    return off


def _on_rows(b: Any, rows: np.ndarray) -> sp.csr_matrix:
    """A block's features as a CSR over `rows` (sorted item indices holding the block's items):
    the same rows' entries, in the same order, with empty rows for the other items."""
    counts = np.zeros(len(rows), dtype=np.int64)
    counts[np.searchsorted(rows, b.items)] = np.diff(b.feats.indptr)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((b.feats.data, b.feats.indices, indptr), shape=(len(rows), b.k))


def _dense_rows(blocks: list[Any], i0: int, i1: int, k: int, dtype: type) -> np.ndarray | None:
    """Items i0..i1-1 of the blocks as one dense (items x k) array; None when all zero."""
    d: np.ndarray | None = None
    for b in blocks:
        lo, hi = np.searchsorted(b.items, [i0, i1])
        sub = b.feats[lo:hi]
        if not sub.nnz:
            continue
        if d is None:
            d = np.zeros((i1 - i0, k), dtype=dtype)
        r = np.repeat(b.items[lo:hi] - i0, np.diff(sub.indptr))
        d[r, b.offset + sub.indices] = sub.data
    return d


def spans(total: int, per: int) -> Iterator[tuple[int, int]]:
    """(start, size) of consecutive batches of at most `per` (at least 1) covering `total`."""
    per = max(1, int(per))
    for start in range(0, total, per):
        yield start, min(per, total - start)


def exact_in_f32(rows: np.ndarray, vals: np.ndarray) -> bool:
    """Whole-number features whose weighted sums over one chunk of items stay below 2^24 (float32
    is then exact, and the chunk sums add up exactly in float64)."""
    if not len(vals):
        return True
    if not np.all(vals == np.round(vals)):
        return False
    per_item = np.bincount(rows, weights=np.abs(vals))
    return float(per_item.max()) * MAX_WEIGHT * _CHUNK_ITEMS < _EXACT_F32


def _fill(b: Any, start: int, s: np.ndarray) -> None:
    """Finalize replicates start.. of block `b` from the summed features `s`, a few rows at a
    time: a finalize may build temporaries many times the size of its input."""
    part = s[:, b.offset : b.offset + b.k]
    per = max(1, _FINALIZE_ELEMS // max(1, b.k))
    for i0 in range(0, len(part), per):
        rows = part[i0 : i0 + per]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.asarray(b.finalize(rows), dtype=float)
        b.out.values[start + i0 : start + i0 + len(rows)] = r.reshape(len(rows), -1)
