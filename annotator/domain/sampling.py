"""A seeded random sample of live items for the humans, per generator.

The debiased figures (stats/debiased.py) need the human items drawn at random with known
probabilities. Per generator: a uniform sample of n items (or a share of them), spread over
the cases in proportion to their items (systematic selection over the items ordered by case,
then by a seeded hash: each case gets its share rounded down or up, and every item the same
inclusion probability n / N). A later call tops the sample up: drawn items stay drawn, items
imported since the last draw are first drawn at the old rate (so every item of the generator
has had the same chance), then the rest is drawn uniformly among the undrawn, which keeps the
whole a uniform sample at the new rate. The result is the JSON stored in the study setting
`human_sample`: each drawn item's probability (`items`), each generator's rate (`rates`, the
probability of every item of it), and the frame (the highest item key seen, to tell items
imported later). An active sample (`--active`: domain/sampling_active.py) follows the judge's
predicted errors instead, in batches; a top-up by strata (`--by-strata`:
domain/sampling_strata.py) follows a debiased figure's strata in Neyman's proportions. Both
record the same fields for the report, and what each draw did.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .errors import InputError


def _key(seed: int, item_id: str, salt: str = "") -> float:
    h = hashlib.sha256(f"{seed}\x1f{salt}\x1f{item_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def _systematic(candidates: list[tuple[str, str]], k: int, seed: int, salt: str) -> list[str]:
    """k of the candidates (item_id, case_id): ordered by case, then a seeded hash, taken at
    every (M/k)-th position from a seeded start: each one with probability k / M."""
    m = len(candidates)
    if k <= 0 or m == 0:
        return []
    if k >= m:
        return [i for i, _ in candidates]
    order = sorted(candidates, key=lambda ic: (ic[1], _key(seed, ic[0], salt)))
    step = m / k
    start = _key(seed, "start", salt) * step
    return [order[math.floor(start + j * step)][0] for j in range(k)]


def _check(n: int | dict[str, int] | None, share: float | None) -> None:
    if (n is None) == (share is None):
        raise InputError("say how many: --sample N or --sample-share F", field="--sample")
    if isinstance(n, dict):  # a planned top-up: per stratum, 0 keeps what is drawn
        if any(int(v) < 0 for v in n.values()):
            raise InputError("a planned sample size is negative", field="--top-up")
        return
    if n is not None and n < 1:
        raise InputError(f"--sample {n}: draw at least 1 item per generator", field="--sample")
    if share is not None and not 0 < share <= 1:
        raise InputError(f"--sample-share {share}: a share in (0, 1]", field="--sample-share")


def _by_generator(
    live: Iterable[tuple[int, str, str, str]],
) -> dict[str, list[tuple[int, str, str]]]:
    by_gen: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for pk, item_id, gen, case in live:
        by_gen[str(gen)].append((int(pk), str(item_id), str(case)))
    if not by_gen:
        raise InputError("the study has no live items to sample", field="--sample")
    return by_gen


def draw_sample(
    live: Iterable[tuple[int, str, str, str]],
    *,
    n: int | dict[str, int] | None,
    share: float | None,
    seed: int,
    before: dict[str, Any] | None,
    created_at: str,
) -> dict[str, Any]:
    """The sample after this draw. `live`: (item pk, item_id, generator, case_id) of every live
    item; `n` items per generator (or per generator by name: the planner's top-up, a generator
    not named keeps its draw) or a `share` of each; `before`: the stored sample, if any."""
    if before and (before.get("request") or {}).get("active"):
        raise InputError(
            "the study's sample was drawn with --active: a uniform top-up would mix designs; "
            "draw it again with --active",
            field="--sample",
        )
    if before and before.get("cells"):
        raise InputError(
            "the study's sample was topped up by strata: a uniform top-up would mix designs; "
            "top it up with --by-strata FIGURE",
            field="--sample",
        )
    _check(n, share)
    by_gen = _by_generator(live)
    prev_items = dict((before or {}).get("items") or {})
    prev_rates = dict((before or {}).get("rates") or {})
    frame = int((before or {}).get("frame_max_pk") or 0)
    items: dict[str, float] = {}
    rates: dict[str, float] = {}
    strata: dict[str, dict[str, int]] = {}
    for g in sorted(by_gen):
        rows = by_gen[g]
        N = len(rows)
        drawn = {i for _, i, _ in rows if i in prev_items}
        old_rate = float(prev_rates.get(g, 0.0))
        # items imported since the last draw get the chance the others had
        fresh = [(i, c) for pk, i, c in rows if pk > frame and i not in drawn]
        if before and old_rate > 0 and fresh:
            drawn |= {i for i, _ in fresh if _key(seed, i, f"fresh:{g}") < old_rate}
        n_g = int(n.get(g, 0)) if isinstance(n, dict) else n
        want = min(N, n_g) if n_g is not None else math.ceil(share * N)  # type: ignore[operator]
        want = max(want, len(drawn))  # never undraws: a smaller request keeps the sample
        rest = [(i, c) for _, i, c in rows if i not in drawn]
        drawn |= set(_systematic(rest, want - len(drawn), seed, g))
        rate = len(drawn) / N
        rates[g] = rate
        for i in sorted(drawn):
            items[i] = rate
        strata[g] = {"n_live": N, "n_drawn": len(drawn)}
    return {
        "seed": int(seed),
        "created_at": created_at,
        "design": "uniform per generator, spread over cases in proportion (systematic)",
        "request": {"n": n, "share": share},
        "frame_max_pk": max(pk for rows in by_gen.values() for pk, _, _ in rows),
        "rates": rates,
        "strata": strata,
        "items": items,
    }
