"""Assignment: dealing items (or pairs) to K raters each, seeded and balanced.

Greedy, one unit at a time in a seeded order: the next rater for a unit is the
one with the least load, then the one who has shared the fewest units with the
raters already on it, then a seeded random one. Taking the least loaded keeps
every rater's load within one of every other's (starting from equal loads);
the second rule spreads co-assignments, so every pair of raters shares units
(needed to estimate their pairwise agreement) as soon as there are enough of
them: with n raters and K >= 2 that takes about n(n-1) / (K(K-1)) units (the
number of rater pairs over the pairs one unit covers); the tests check every
pair is covered at twice that, up to 20 raters.

Units already dealt keep their raters: a re-run tops up units with fewer than K
and deals new ones, and never moves anything.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

from .errors import InputError


def check_design(raters: Sequence[str], k: int) -> None:
    if k < 1:
        raise InputError(f"--overlap {k}: each item needs at least 1 rater", field="--overlap")
    if len(set(raters)) != len(raters):
        raise InputError("a rater is named twice in --raters", field="--raters")
    if k > len(raters):
        raise InputError(
            f"--overlap {k} needs at least {k} raters; {len(raters)} given", field="--overlap"
        )


def deal(
    units: Sequence[int],
    raters: Sequence[str],
    k: int,
    seed: int,
    dealt: Mapping[int, Iterable[str]] | None = None,
) -> dict[int, list[str]]:
    """New (unit -> raters) assignments so every unit has `k` raters.

    `dealt`: what earlier runs assigned (unit -> raters, possibly raters no longer
    listed); it counts toward loads and overlaps and is never changed.
    """
    check_design(raters, k)
    rng = random.Random(seed)
    before = {u: set(rs) for u, rs in (dealt or {}).items()}
    load: Counter[str] = Counter({r: 0 for r in raters})
    shared: Counter[frozenset[str]] = Counter()
    for rs in before.values():
        for r in rs:
            if r in load:
                load[r] += 1
        for a, b in combinations(sorted(rs), 2):
            shared[frozenset((a, b))] += 1
    order = list(units)
    rng.shuffle(order)
    out: dict[int, list[str]] = {}
    for u in order:
        on = set(before.get(u, ()))
        added: list[str] = []
        while len(on) < k:
            free = [r for r in raters if r not in on]
            if not free:
                break
            least = min(load[r] for r in free)
            candidates = [r for r in free if load[r] == least]
            tie = {r: rng.random() for r in candidates}
            best = min(
                candidates, key=lambda r: (sum(shared[frozenset((r, o))] for o in on), tie[r])
            )
            for o in on:
                shared[frozenset((best, o))] += 1
            on.add(best)
            load[best] += 1
            added.append(best)
        if added:
            out[u] = added
    return out


def uncovered_pairs(
    assignments: Mapping[int, Iterable[str]], raters: Sequence[str]
) -> list[tuple[str, str]]:
    """Pairs of raters that share no unit (their agreement cannot be estimated)."""
    together = set()
    for rs in assignments.values():
        together |= {frozenset(p) for p in combinations(sorted(set(rs)), 2)}
    return [(a, b) for a, b in combinations(sorted(raters), 2) if frozenset((a, b)) not in together]
