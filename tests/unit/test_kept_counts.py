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


def _same_counts(a, b) -> None:
    for name in ("units", "domain", "t_unit", "t_val", "t_cnt", "m"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.note == b.note


@pytest.fixture
def grown(monkeypatch) -> list[bool]:
    """Whether each value count was brought up to date (True) or counted whole (False)."""
    seen: list[bool] = []
    grow = kept_counts._grown

    def spy(*args):
        out = grow(*args)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(kept_counts, "_grown", spy)
    return seen


def test_value_counts_with_rows_added_are_the_whole_counts(grown) -> None:
    """Answers added after the last ones (a refresh that only added answers): on items seen
    before and new ones, with values new to an item, cannot-judge answers (NaN) and a domain
    of halves; the counts are value_counts' of every answer, array for array."""
    from annotator.stats.agreement import value_counts

    rng = np.random.default_rng(6)
    domain = np.array([0.0, 0.5, 1.0, 2.5, 4.0])
    idx = rng.integers(0, 300, 2000)
    code = rng.choice(domain, 2000)
    code[rng.random(2000) < 0.1] = np.nan
    for step in range(8):
        got = kept_counts.value_counts_kept("m", idx, code, domain)
        _same_counts(got, value_counts(idx, code, domain))
        n = int(rng.integers(0, 60))  # none added too: the kept counts as they are
        idx = np.concatenate([idx, rng.integers(0, 340 + step, n)])  # new items as well
        code = np.concatenate([code, rng.choice([*domain, np.nan], n)])
    assert grown and all(grown)


def test_value_counts_not_grown_from_the_last_are_counted_whole(grown) -> None:
    from annotator.stats.agreement import value_counts

    rng = np.random.default_rng(7)
    domain = np.arange(4.0)
    idx, code = rng.integers(0, 50, 300), rng.integers(0, 4, 300).astype(float)
    kept_counts.value_counts_kept("m", idx, code, domain)
    changed = code.copy()
    changed[10] = (changed[10] + 1) % 4  # an answer before changed (superseded)
    for i, c, d in (
        (idx, changed, domain),
        (idx[1:], code[1:], domain),  # a row before gone
        (idx, code, np.arange(5.0)),  # another domain
        (idx[:100], code[:100], domain),  # fewer rows
    ):
        _same_counts(kept_counts.value_counts_kept("m", i, c, d), value_counts(i, c, d))
    assert grown == [False] * 4
    # a value outside the domain among the added rows: the whole count's error
    kept_counts.value_counts_kept("m", idx, code, domain)
    with pytest.raises(ValueError, match="outside the value domain"):
        kept_counts.value_counts_kept("m", np.append(idx, 3), np.append(code, 9.0), domain)
    with pytest.raises(ValueError, match="outside the value domain"):
        value_counts(np.append(idx, 3), np.append(code, 9.0), domain)
    # the kept counts are read again: nobody may write into them
    counts = kept_counts.value_counts_kept("m", idx, code, domain)
    with pytest.raises(ValueError):
        counts.t_cnt[0] = 5.0


def test_codes_are_compared_exactly(grown) -> None:
    """Codes single precision cannot hold: the answers before are found the same (their counts
    brought up to date), and an answer that differs beyond single precision is a changed
    answer (counted whole)."""
    from annotator.stats.agreement import value_counts

    domain = np.array([0.1, 0.1 + 1e-12, 3.0])
    idx = np.arange(4)
    code = np.array([0.1, 3.0, 0.1, 3.0])
    kept_counts.value_counts_kept("m", idx, code, domain)
    more_idx, more = np.append(idx, 1), np.append(code, 0.1 + 1e-12)
    _same_counts(
        kept_counts.value_counts_kept("m", more_idx, more, domain),
        value_counts(more_idx, more, domain),
    )
    moved = more.copy()
    moved[0] = 0.1 + 1e-12  # the same in single precision
    _same_counts(
        kept_counts.value_counts_kept("m", more_idx, moved, domain),
        value_counts(more_idx, moved, domain),
    )
    assert grown == [True, False]
