"""The humans' pair tables kept from one live refresh to the next (stats/kept_counts.py): brought
up to date from the items whose codes changed, they are the whole product's counts bit for bit,
whatever changed (codes of a column, a column new or gone, the columns' order), and a change the
update cannot follow (a different number of items, most items changed) is counted whole."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.stats import kept_counts
from annotator.stats.kept_counts import cooccurrences, one_hot


def _whole(codes: np.ndarray, K: int) -> np.ndarray:
    """The counts by definition: items where column a answered k and column b answered l."""
    C = codes.shape[0]
    out = np.zeros((C * K, C * K), dtype=np.int64)
    for a in range(C):
        for b in range(C):
            for k in range(K):
                for m in range(K):
                    out[a * K + k, b * K + m] = np.sum((codes[a] == k) & (codes[b] == m))
    return out


def _codes(rng: np.random.Generator, C: int, N: int, K: int) -> np.ndarray:
    codes = rng.integers(0, K, (C, N))
    codes[rng.random((C, N)) < 0.3] = -1  # unanswered
    return codes


@pytest.fixture(autouse=True)
def _nothing_kept():
    kept_counts.forget()
    yield
    kept_counts.forget()


@pytest.fixture
def updates(monkeypatch) -> list[bool]:
    """Whether each call was brought up to date (True) or counted whole (False)."""
    seen: list[bool] = []
    update = kept_counts._updated

    def spy(*args):
        out = update(*args)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(kept_counts, "_updated", spy)
    return seen


def test_a_product_brought_up_to_date_is_the_whole_products(updates) -> None:
    rng = np.random.default_rng(3)
    K, N = 4, 400
    names = [f"r{i}" for i in range(6)]
    codes = _codes(rng, len(names), N, K)
    first = cooccurrences("m", names, codes, K)
    assert first.dtype == np.float32
    assert np.array_equal(first, _whole(codes, K))
    steps = 0
    for _ in range(12):
        codes = codes.copy()
        # a few items change: answers given, changed or taken back (superseded)
        at = rng.choice(N, 20, replace=False)
        col = rng.integers(0, len(names), 20)
        codes[col, at] = rng.integers(-1, K, 20)
        if rng.random() < 0.5:  # a new rater, with a few answers
            names = [*names, f"n{steps}"]
            new = np.full((1, N), -1)
            some = rng.choice(N, 15, replace=False)
            new[0, some] = rng.integers(0, K, 15)
            codes = np.vstack([codes, new])
        if rng.random() < 0.3:  # a rater gone
            drop = int(rng.integers(0, len(names)))
            names = names[:drop] + names[drop + 1 :]
            codes = np.delete(codes, drop, axis=0)
        if rng.random() < 0.3:  # the columns in another order
            order = rng.permutation(len(names))
            names, codes = [names[i] for i in order], codes[order]
        got = cooccurrences("m", names, codes, K)
        want = one_hot(codes, K) @ one_hot(codes, K).T
        assert got.dtype == np.float32 and np.array_equal(got, want)
        assert np.array_equal(got, _whole(codes, K))
        steps += 1
    assert updates and all(updates)  # every step after the first took the update


def test_what_the_update_cannot_follow_is_counted_whole(updates, monkeypatch) -> None:
    rng = np.random.default_rng(4)
    K = 3
    names = ["a", "b", "c"]
    codes = _codes(rng, 3, 200, K)
    cooccurrences("m", names, codes, K)
    more = np.hstack([codes, _codes(rng, 3, 5, K)])  # new items
    assert np.array_equal(cooccurrences("m", names, more, K), _whole(more, K))
    most = _codes(rng, 3, 205, K)  # most items changed
    assert np.array_equal(cooccurrences("m", names, most, K), _whole(most, K))
    assert np.array_equal(cooccurrences("m", ["x", "y", "z"], most, K), _whole(most, K))
    fewer = most[:, :100] % 2  # other codes
    assert np.array_equal(cooccurrences("m", names, fewer, 2), _whole(fewer, 2))
    assert updates == [False] * 4  # each found the kept product and counted whole


def test_keys_are_kept_apart_and_bounded(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    monkeypatch.setattr(kept_counts, "_MAX_KEPT", 3)
    for m in range(5):
        codes = _codes(rng, 4, 50, 2)
        assert np.array_equal(cooccurrences(m, list("abcd"), codes, 2), _whole(codes, 2))
    assert list(kept_counts._kept) == [2, 3, 4]
