"""Pair design: unordered pairs of one cell's items from different generators,
each dealt to a rater with a seeded, recorded side."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

CHOICES = ("left", "right", "both", "neither")


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
