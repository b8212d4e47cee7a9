"""Queue scheduling: each rater's seeded order and the silent anchor slots.

Everything here is a pure function of a recorded seed, so an order can be
rebuilt and audited later, and bias measured rather than assumed away.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

ANCHOR_EVERY = 15  # one anchor in 15 served items


def live_order(items: Sequence[tuple[int, str]], seed: int) -> list[int]:
    """Order (item, case) pairs so outputs of one case sit as far apart as possible.

    Greedy: at each step take the case with most items left among those not
    used in the last `gap` steps (random among ties), so a rater never sees two
    outputs of one prompt back to back and cannot compare neighbours.
    """
    rng = random.Random(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for pk, case in items:
        groups[case].append(pk)
    for g in groups.values():
        rng.shuffle(g)
    cases = sorted(groups)
    rng.shuffle(cases)
    gap = max(0, min(len(cases) - 1, 3))
    recent: list[str] = []
    out: list[int] = []
    while len(out) < len(items):
        allowed = [c for c in cases if groups[c] and c not in recent[-gap:]] if gap else []
        pool = allowed or [c for c in cases if groups[c]]
        most = max(len(groups[c]) for c in pool)
        choice = rng.choice([c for c in pool if len(groups[c]) == most])
        out.append(groups[choice].pop())
        recent.append(choice)
    return out


def anchor_slot(seed: int, live_position: int, every: int = ANCHOR_EVERY) -> int | None:
    """The slot seed if an anchor goes just before `live_position`, else None.

    Each block of `every - 1` live items gets exactly one anchor at a seeded
    place inside it, so the rate is one in `every` and two anchors can never
    be adjacent (a block's slot always precedes at least one of its own live
    items... and the next block's slot follows it).
    """
    if every < 2:
        return None
    block, offset = divmod(live_position, every - 1)
    slot_seed = (seed * 1_000_003 + block) & 0x7FFFFFFF
    return slot_seed if random.Random(slot_seed).randrange(every - 1) == offset else None


def choose_anchor(
    anchors: Sequence[int], shown_this_session: set[int], times_shown: dict[int, int], slot_seed: int
) -> int | None:
    """An anchor not yet seen this session, preferring the ones this rater saw least."""
    fresh = [a for a in anchors if a not in shown_this_session]
    if not fresh:
        return None
    least = min(times_shown.get(a, 0) for a in fresh)
    pool = sorted(a for a in fresh if times_shown.get(a, 0) == least)
    return random.Random(slot_seed).choice(pool)
