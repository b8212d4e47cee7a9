"""What a live estimate counts, kept from one refresh to the next and brought up to date.

A hundred new answers change a live estimate's counts on a hundred items only, yet each count
read every answer again at every refresh. Two are kept here, per metric, each with what it was
counted from; the next refresh brings them up to date. Both are whole numbers, exact in any
order of summing, so each is the count a whole pass gives, bit for bit
(tests/unit/test_kept_counts.py):

- the humans' pair tables (`cooccurrences`): how many items each two raters answered with each
  two codes, one product of every rater's one-hot codes with itself, (raters x codes) x items
  squared. The old counts of the items whose codes changed are taken away and their new ones
  added (a rater new since then: an empty column before);
- the answers' value counts (`value_counts_kept`, agreement.value_counts'): where the answers
  are the last ones with rows added after them (a refresh that only added answers), the added
  rows' counts are merged in.

What is kept is checked against what is given at every call, never trusted by name: a key (a
metric) only says which earlier count to start from.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np

from .agreement import ValueCounts, value_counts
from .distinct import run_starts

# products kept at once (one per metric of the study the dashboard follows)
_MAX_KEPT = 64
# past this share of the items changed, the whole product is less work than the update
_MOST_CHANGED = 1 / 8


class _Kept(NamedTuple):
    names: tuple[str, ...]
    codes: np.ndarray  # columns x items, int16 codes, -1 where unanswered
    n_codes: int
    counts: np.ndarray  # (columns x codes) squared, float32


class _Answers(NamedTuple):
    idx: np.ndarray  # as given, in 32 bits where they fit
    code: np.ndarray  # the codes' bit patterns
    domain: np.ndarray
    counts: ValueCounts


_kept: dict[Hashable, _Kept] = {}
_answers: dict[Hashable, _Answers] = {}
_lock = threading.Lock()


def one_hot(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """(columns x codes) x items in single precision: row `c * n_codes + k` is 1 where column c
    answered k (`codes`: columns x items, -1 where unanswered)."""
    hot = np.stack([codes == k for k in range(n_codes)], axis=1)  # columns x codes x items
    return hot.reshape(-1, codes.shape[1]).astype(np.float32)


def cooccurrences(
    key: Hashable, names: Sequence[str], codes: np.ndarray, n_codes: int
) -> np.ndarray:
    """`one_hot(codes) @ one_hot(codes).T`: how many items column a answered k and column b
    answered l, at [a * n_codes + k, b * n_codes + l], float32. `codes`: columns x items in
    0..n_codes-1, -1 where unanswered, fewer than 2**24 items. Brought up to date from the
    last product kept under `key` where that is less work, and kept for the next call."""
    codes = np.asarray(codes, dtype=np.int16)
    with _lock:
        before = _kept.get(key)
    counts = _updated(before, names, codes, n_codes) if before is not None else None
    if counts is None:
        hot = one_hot(codes, n_codes)
        counts = hot @ hot.T
    with _lock:
        _kept.pop(key, None)
        while len(_kept) >= _MAX_KEPT:
            _kept.pop(next(iter(_kept)))
        _kept[key] = _Kept(tuple(names), codes, n_codes, counts)
    return counts


def forget() -> None:
    """Drop everything kept (tests; a study closed)."""
    with _lock:
        _kept.clear()
        _answers.clear()


def value_counts_kept(
    key: Hashable, idx: np.ndarray, code: np.ndarray, domain: np.ndarray
) -> ValueCounts:
    """`value_counts(idx, code, domain)` (which see: it raises where a value is outside the
    domain), brought up to date from the last call under `key` where `idx` and `code` are that
    call's answers with rows added after them, and kept for the next call."""
    idx, code = np.asarray(idx), np.asarray(code, dtype=np.float64)
    domain = np.asarray(domain, dtype=np.float64)
    with _lock:
        before = _answers.get(key)
    counts = _grown(before, idx, code, domain) if before is not None else None
    if counts is None:
        counts = value_counts(idx, code, domain)
    for a in (counts.units, counts.t_unit, counts.t_val, counts.t_cnt, counts.m):
        a.flags.writeable = False  # read again by the next call: nobody writes into them
    kept = _Answers(_narrow(idx), _bits(code).copy(), domain, counts)
    with _lock:
        _answers.pop(key, None)
        while len(_answers) >= _MAX_KEPT:
            _answers.pop(next(iter(_answers)))
        _answers[key] = kept
    return counts


def _narrow(idx: np.ndarray) -> np.ndarray:
    """A copy of item positions, in 32 bits where they fit (compared with the next call's
    exactly either way: a comparison widens them again)."""
    if idx.dtype.kind in "iu" and len(idx) and 0 <= idx.min() and idx.max() < 2**31:
        return idx.astype(np.int32)
    return idx.copy()


def _bits(x: np.ndarray) -> np.ndarray:
    """Double-precision values as their bit patterns: equal exactly when the values are (a NaN
    too; a bit pattern that differs only says the answers moved, and they are counted whole)."""
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


def _grown(
    before: _Answers, idx: np.ndarray, code: np.ndarray, domain: np.ndarray
) -> ValueCounts | None:
    """The counts of `idx`, `code` from `before`'s, where those are its answers and rows
    added after them: the added rows counted and merged in; None where they are not."""
    n = len(before.idx)
    if (
        len(idx) < n
        or idx.dtype.kind not in "iu"
        or not np.array_equal(before.domain, domain)
        or not np.array_equal(before.idx, idx[:n])
        or not np.array_equal(before.code, _bits(code)[:n])
    ):
        return None
    if len(idx) == n:
        return before.counts
    added = value_counts(idx[n:], code[n:], domain)  # raises as the whole count would
    V = max(1, len(domain))
    old, new = before.counts, added
    k_old = old.units[old.t_unit] * V + old.t_val
    k_new = new.units[new.t_unit] * V + new.t_val
    c_old = old.t_cnt.astype(np.int64)  # whole numbers, kept as floats
    c_new = new.t_cnt.astype(np.int64)
    # both sorted and distinct: each added key found among the old ones, or put in its place
    at = np.searchsorted(k_old, k_new)
    hit = at < len(k_old)
    hit[hit] = k_old[at[hit]] == k_new[hit]
    cnt = c_old.copy()
    cnt[at[hit]] += c_new[hit]
    keys = np.insert(k_old, at[~hit], k_new[~hit])
    cnt = np.insert(cnt, at[~hit], c_new[~hit])
    # as value_counts makes them from its sorted keys
    t_item, t_val = keys // V, keys % V
    first = run_starts(t_item)
    units = t_item[first]
    t_unit = np.cumsum(first, dtype=np.int64) - 1
    m = np.bincount(t_unit, weights=cnt, minlength=len(units))
    return ValueCounts(units, domain, t_unit, t_val, cnt.astype(float), m)


def _updated(
    before: _Kept, names: Sequence[str], codes: np.ndarray, n_codes: int
) -> np.ndarray | None:
    """The counts of `codes` from `before`'s: its counts of the columns both have, less the
    old counts of the items whose codes changed, plus their new ones. None where the items are
    not the same number, the codes not the same, or too many items changed."""
    n_items = codes.shape[1]
    if before.n_codes != n_codes or before.codes.shape[1] != n_items:
        return None
    at = {name: i for i, name in enumerate(before.names)}
    was = np.full(codes.shape, -1, dtype=np.int16)  # the columns as they were (new: empty)
    common = [(i, at[name]) for i, name in enumerate(names) if name in at]
    if not common:
        return None
    now_at, then_at = (np.array(p, dtype=np.int64) for p in zip(*common, strict=True))
    was[now_at] = before.codes[then_at]
    changed = np.flatnonzero((was != codes).any(axis=0))
    if len(changed) > n_items * _MOST_CHANGED:
        return None
    K = n_codes
    rows_now = (now_at[:, None] * K + np.arange(K)).ravel()
    rows_then = (then_at[:, None] * K + np.arange(K)).ravel()
    counts = np.zeros((len(names) * K, len(names) * K), dtype=np.float32)
    counts[np.ix_(rows_now, rows_now)] = before.counts[np.ix_(rows_then, rows_then)]
    if len(changed):
        old, new = one_hot(was[:, changed], K), one_hot(codes[:, changed], K)
        counts -= old @ old.T
        counts += new @ new.T
    return counts
