"""The humans' pair tables of a live estimate, kept from one refresh to the next.

A live estimate counts, per metric, how many items each two raters answered with each two codes:
one product of every rater's one-hot codes with itself, (raters x codes) x items squared. A
hundred new answers change those counts on a hundred items only, while the product reads every
item. So the last product is kept per metric, with the codes it was made from; the next one
takes the old counts of the items whose codes changed away and adds their new ones (a rater
new since then: an empty column before). The counts are whole numbers below 2**24, exact in
single precision in any order of summing, so the tables are the ones a whole product gives,
bit for bit (tests/unit/test_kept_counts.py).

What is kept is checked against the codes themselves at every call, never trusted by name: a
key (a metric) only says which earlier product to start from.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np

# products kept at once (one per metric of the study the dashboard follows)
_MAX_KEPT = 64
# past this share of the items changed, the whole product is less work than the update
_MOST_CHANGED = 1 / 8


class _Kept(NamedTuple):
    names: tuple[str, ...]
    codes: np.ndarray  # columns x items, int16 codes, -1 where unanswered
    n_codes: int
    counts: np.ndarray  # (columns x codes) squared, float32


_kept: dict[Hashable, _Kept] = {}
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
    """Drop every kept product (tests; a study closed)."""
    with _lock:
        _kept.clear()


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
