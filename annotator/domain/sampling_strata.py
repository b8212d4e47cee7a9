"""A top-up of the human sample by strata, in Neyman's proportions (Fisch et al. 2024).

The new items are spread over a debiased figure's strata as n_k proportional to W_k S_k, as
near as what each stratum has drawn allows (`neyman_sizes`), uniformly within each stratum;
each item's probability is the drawn share of its cell (the items that shared its stratum at
every such draw). Uniform samples: domain/sampling.py; active ones: domain/sampling_active.py.
Tested in tests/unit/test_sampling_strata.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .errors import InputError
from .sampling import _by_generator, _key


def _fill(a: list[float], lo: list[float], hi: list[float], total: float) -> list[float]:
    """x_k = clip(c a_k, lo_k, hi_k) with sum x = total (c found by bisection; the largest sum
    the strata with a_k > 0 can hold when total is more)."""

    def at(c: float) -> list[float]:
        return [min(h, max(lo_k, c * w)) for w, lo_k, h in zip(a, lo, hi, strict=True)]

    top = max((h / w for w, h in zip(a, hi, strict=True) if w > 0), default=0.0)
    if sum(at(top)) <= total:
        return at(top)
    low, high = 0.0, top
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if sum(at(mid)) < total else (low, mid)
    return at(high)


def neyman_sizes(ws: list[float], have: list[int], size: list[int], total: int) -> list[int]:
    """Each stratum's sample size after a top-up to `total` items: as near Neyman's
    total * ws_k / sum(ws) (ws_k = W_k S_k) as the strata allow, never below what a stratum has
    drawn (drawn items stay drawn) nor above its items; whole items, the remainder to the
    largest fractions. Room Neyman leaves (its strata full) goes in proportion to size."""
    total = max(sum(have), min(int(total), sum(size)))
    lo = [float(h) for h in have]
    hi = [float(n) for n in size]
    x = _fill([max(0.0, float(w)) for w in ws], lo, hi, total)
    if sum(x) < total - 1e-9:  # Neyman's strata are full (or every S_k is 0): by size
        x = _fill([float(n) for n in size], x, hi, total)
    out = [max(h, math.floor(v + 1e-9)) for v, h in zip(x, have, strict=True)]
    by_fraction = sorted(range(len(x)), key=lambda k: (out[k] - x[k], k))
    for k in by_fraction:
        if sum(out) >= total:
            break
        if out[k] < size[k]:
            out[k] += 1
    return out


def draw_by_strata(
    live: Iterable[tuple[int, str, str, str]],
    strata: dict[str, tuple[list[str], list[float], dict[str, int]]],
    *,
    n: int,
    seed: int,
    before: dict[str, Any],
    created_at: str,
    why: str,
) -> dict[str, Any]:
    """Top the recorded sample up to n items per generator, spread over its strata by Neyman
    (Fisch et al. 2024): n_k as near n W_k S_k / sum_j W_j S_j as what each stratum has drawn
    allows (`neyman_sizes`), the new ones drawn uniformly (a seeded permutation) among the
    stratum's undrawn items. `strata`: per generator (names, W_k S_k, item_id -> stratum); a
    generator not named is one stratum (a uniform top-up). `why`: what the strata come from.

    Probabilities: given how many of its items each earlier draw took, a stratum's drawn
    items are a uniform sample of it (the earlier uniform draw, restricted to the stratum, is
    one; adding a uniform draw among the rest keeps it one), so every item has pi = drawn /
    items of its cell, the cell being the items that shared its stratum at every draw by
    strata (`cells`; all items of a stratum after the first such draw on a uniform sample).
    Items imported since the sample was drawn stay outside its frame (not drawn here)."""
    if n < 1:
        raise InputError(f"--sample {n}: draw at least 1 item per generator", field="--sample")
    if (before.get("request") or {}).get("active"):
        raise InputError(
            "the study's sample was drawn with --active: --by-strata would mix designs; "
            "draw it again with --active",
            field="--by-strata",
        )
    by_gen = _by_generator(live)
    frame = int(before.get("frame_max_pk") or 0)
    prev_items = {str(k) for k in before.get("items") or {}}
    prev_cells = {str(k): str(v) for k, v in (before.get("cells") or {}).items()}
    draw_no = len(before.get("neyman") or [])
    items: dict[str, float] = {}
    unsampled: dict[str, float] = {}
    cells: dict[str, str] = {}
    rates: dict[str, float] = {}
    counts: dict[str, dict[str, int]] = {}
    record: dict[str, dict[str, dict[str, float]]] = {}
    outside = 0
    for g in sorted(by_gen):
        ids = [i for pk, i, _ in by_gen[g] if pk <= frame]
        outside += len(by_gen[g]) - len(ids)
        names, ws, of = strata.get(g, (["all"], [1.0], dict.fromkeys(ids, 0)))
        # an item the figure does not cover (no judge value) keeps its cell: drawn no further
        k_of = {i: of.get(i) for i in ids}
        members = [[i for i in ids if k_of[i] == k] for k in range(len(names))]
        have = [sum(1 for i in m if i in prev_items) for m in members]
        spare = sum(1 for i in ids if k_of[i] is None and i in prev_items)
        sizes = neyman_sizes(ws, have, [len(m) for m in members], max(0, n - spare))
        drawn = {i for i in ids if i in prev_items}
        record[g] = {}
        for k, m in enumerate(members):
            salt = f"strata:{g}:{draw_no}:{k}"  # a seeded permutation: a uniform draw
            rest = sorted((_key(seed, i, salt), i) for i in m if i not in drawn)
            drawn |= {i for _, i in rest[: sizes[k] - have[k]]}
            record[g][names[k]] = {"ws": ws[k], "items": len(m), "had": have[k], "now": sizes[k]}
        for i in ids:
            at = "-" if k_of[i] is None else str(k_of[i])
            cells[i] = f"{prev_cells.get(i, g)}/{at}"  # "gen/0/2": its stratum at each draw
        n_cell: dict[str, int] = defaultdict(int)
        d_cell: dict[str, int] = defaultdict(int)
        for i in ids:
            n_cell[cells[i]] += 1
            d_cell[cells[i]] += i in drawn
        for i in ids:
            (items if i in drawn else unsampled)[i] = d_cell[cells[i]] / n_cell[cells[i]]
        rates[g] = len(drawn) / len(ids) if ids else 0.0
        counts[g] = {"n_live": len(ids), "n_drawn": len(drawn)}
    return {
        "seed": int(seed),
        "created_at": created_at,
        "design": f"by strata ({why}), Neyman: n_k proportional to W_k S_k, uniform within "
        "each stratum; pi = drawn / items of the cell (the items that shared every draw's "
        "stratum)",
        "request": {"n": n, "share": None, "by_strata": why},
        "frame_max_pk": frame,
        "rates": rates,
        "strata": counts,
        "items": items,
        "unsampled": unsampled,
        "cells": cells,
        "outside_frame": outside,
        "neyman": [
            *(before.get("neyman") or []),
            {"created_at": created_at, "by": why, "n": n, "strata": record},
        ],
    }
