"""Pair design: unordered pairs of one cell's items from different generators,
each dealt to a rater with a seeded, recorded side."""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

CHOICES = ("left", "right", "both", "neither")


def minted_pair_id(item_a: str, item_b: str) -> str:
    """The name a pair gets when no file names it: from its two item_ids, in either order.

    Not from the items' row numbers: those are stored in a seeded random order per study (a
    rater's role reads them), so a name made from them would differ between two studies built from
    the same files, and an export made from one would not match the other.
    """
    lo, hi = sorted((item_a, item_b))
    return "pair-" + hashlib.sha256(f"{lo}\0{hi}".encode()).hexdigest()[:12]


def design_pairs(items: Sequence[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(item pk, cell pk, generator) -> unordered pairs (lo, hi) within a cell, generators differing."""
    by_cell: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pk, cell, gen in items:
        by_cell[cell].append((pk, gen))
    out = []
    for cell in sorted(by_cell):
        for (a, ga), (b, gb) in combinations(sorted(by_cell[cell]), 2):
            if ga != gb:
                out.append((min(a, b), max(a, b)))
    return out


def deal(pairs: Sequence[tuple[int, int, int]], seed: int) -> list[tuple[int, int, int]]:
    """(pair pk, a, b) -> seeded order with a seeded left item: (pair pk, left, right)."""
    rng = random.Random(seed)
    order = list(pairs)
    rng.shuffle(order)
    return [(p, a, b) if rng.random() < 0.5 else (p, b, a) for p, a, b in order]
