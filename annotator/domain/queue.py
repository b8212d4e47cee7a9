"""Queue scheduling: each rater's seeded order and the silent anchor slots.

Everything here is a pure function of a recorded seed, so an order can be
rebuilt and audited later, and bias measured rather than assumed away.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

from .settings import DEFAULT_SETTINGS

ANCHOR_EVERY: int = DEFAULT_SETTINGS["anchor_every"]  # one anchor in 15 served items


def live_order(items: Sequence[tuple[int, str]], seed: int) -> list[int]:
    """Order (item, case) pairs so outputs of one case sit as far apart as possible.

    Greedy, as for "no two equal neighbours": never repeat the last case while
    another is left, take the case with most items left (which makes the number
    of same-case neighbours the least possible), and among equals prefer one not
    seen in the last few steps (then a seeded random one), so a rater cannot
    compare neighbours. A heap keeps each step O(log cases): 20,000 items of
    500 cases order in well under a second.
    """
    rng = random.Random(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for pk, case in items:
        groups[case].append(pk)
    for g in groups.values():
        rng.shuffle(g)
    cases = sorted(groups)
    rng.shuffle(cases)
    window = min(len(cases) - 1, 3)
    heap = [(-len(groups[c]), rng.random(), c) for c in cases]
    heapq.heapify(heap)
    recent: list[str] = []
    out: list[int] = []
    while heap:
        last = recent[-1] if recent else None
        tail = set(recent[-window:]) if window > 0 else set()
        popped: list[tuple[int, float, str]] = []
        best = None
        while heap:
            entry = heapq.heappop(heap)
            popped.append(entry)
            if entry[2] == last:
                continue
            if best is None:
                best = entry
            elif entry[0] != best[0]:
                break  # fewer items left than the best: no better candidate below
            if entry[2] not in tail:
                best = entry
                break
        if best is None:  # only the last case is left
            best = popped[0]
        for entry in popped:
            if entry is not best:
                heapq.heappush(heap, entry)
        case = best[2]
        out.append(groups[case].pop())
        recent.append(case)
        if groups[case]:
            heapq.heappush(heap, (-len(groups[case]), rng.random(), case))
    return out


def anchor_slot(seed: int, live_position: int, every: int = ANCHOR_EVERY) -> int | None:
    """The slot seed if an anchor goes just before `live_position`, else None.

    Each block of `every - 1` live items gets exactly one anchor at a seeded
    place inside it, so the rate is one in `every` and two anchors can never
    be adjacent (between two slots lies at least the last live item of the
    earlier block).
    """
    if every < 2:
        return None
    block, offset = divmod(live_position, every - 1)
    slot_seed = (seed * 1_000_003 + block) & 0x7FFFFFFF
    return slot_seed if random.Random(slot_seed).randrange(every - 1) == offset else None


@lru_cache(maxsize=64)
def anchor_slots(seed: int, n_live: int, every: int = ANCHOR_EVERY) -> frozenset[int]:
    """Every live position in [0, n_live) that an anchor precedes (one draw per block)."""
    if every < 2:
        return frozenset()
    out = set()
    for block in range(0, (n_live + every - 2) // (every - 1)):
        slot_seed = (seed * 1_000_003 + block) & 0x7FFFFFFF
        p = block * (every - 1) + random.Random(slot_seed).randrange(every - 1)
        if p < n_live:
            out.add(p)
    return frozenset(out)


def choose_anchor(
    anchors: Sequence[int],
    shown_this_session: set[int],
    times_shown: dict[int, int],
    slot_seed: int,
) -> int | None:
    """An anchor not yet seen this session, preferring the ones this rater saw least."""
    fresh = [a for a in anchors if a not in shown_this_session]
    if not fresh:
        return None
    least = min(times_shown.get(a, 0) for a in fresh)
    pool = sorted(a for a in fresh if times_shown.get(a, 0) == least)
    return random.Random(slot_seed).choice(pool)
