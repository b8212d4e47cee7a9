"""Generators compared with each case held fixed.

Per generator and case: the pass rate of each gate and of the verdict and the
mean of each scale, from the human answers. An item's value is the mean of its
answers (the share of PASS for a gate or the verdict), a cell (generator x case)
is the mean over its items, and a generator's overall figure is the mean over
its cases, every case weighted equally, so a case with many items cannot
dominate. Cases are listed alphabetically, never by a score.

Intervals: a cell resamples its items; the overall figure resamples cases and,
within each drawn case, its items (a two-stage bootstrap), so it reflects both
which cases were chosen and the items within them. Pass rates of a cell with
fewer answers than the minimum count are not shown (shares need a denominator).

The optional release gate (settings "release_gate", e.g. {"verdict_pass_rate":
0.7, "layout_hierarchy": 3.0}) passes a generator only if it was rated on at
least `release_gate_min_cases` cases (default 5) and `release_gate_min_items`
items (default 30), and, for every figure named, the conservative (lower) bound
reaches the threshold. For a pass rate that bound is the lower of the bootstrap
bound and the Wilson score bound over the generator's items (valid at the
boundary: ten of ten PASS on one case is [0.72, 1], not [1, 1]); a bootstrap
interval that is missing (every resample equal, or too many undefined) leaves
the Wilson bound alone.

Generators are comparable only over the same cases. `differences` gives, for
every two generators and figure, the paired difference over the cases both were
rated on (case-level differences resampled together, items within cells), and
`comparable` is false, with the generators named, when the case sets differ.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .bootstrap import _interval, batches, rng_for, summarize
from .consensus import VERDICT_KEY, MetricSpec

MIN_CASES = 5
MIN_ITEMS = 30
# item slots drawn per batch of `_cell_replicates`: it holds five arrays of this many values at
# once (the draws, the picks, the values picked), 40 MB in all
_SLOTS = 1_000_000


def figure_name(spec: MetricSpec) -> str:
    return "verdict_pass_rate" if spec.key == VERDICT_KEY else spec.key


def _cell_replicates(
    x: np.ndarray, cell: np.ndarray, n_cells: int, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_boot x n_cells) means of items resampled within each cell.

    Items must be sorted by cell. Each replicate draws, for every item slot, a
    random item of the same cell; cell sums come from one reduceat per batch.
    """
    size = np.bincount(cell, minlength=n_cells)
    start = np.cumsum(size) - size
    nonempty = size > 0
    out = np.full((n_boot, n_cells), np.nan)
    done = 0
    for b in batches(n_boot, len(x), elems=_SLOTS):
        u = rng.random((b, len(x)))
        pick = start[cell] + (u * size[cell]).astype(np.int64)
        sums = np.add.reduceat(x[pick], start[nonempty], axis=1)
        out[done : done + b, nonempty] = sums / size[nonempty]
        done += b
    return out


def generator_section(
    items: pd.DataFrame,
    human: pd.DataFrame,
    specs: list[MetricSpec],
    *,
    n_boot: int,
    seed: int,
    min_count: int,
    release_gate: dict[str, float] | None = None,
    min_cases: int = MIN_CASES,
    min_items: int = MIN_ITEMS,
) -> dict[str, Any]:
    # directed single-answer metrics: a pass rate (two values) or a mean (ordinal)
    figs = [s for s in specs if s.directed and not s.multi]
    meta = items[["idx", "case_id", "generator"]].copy()
    meta["case_id"] = meta["case_id"].fillna("(none)").astype(str)
    meta["generator"] = meta["generator"].fillna("(none)").astype(str)
    cases = sorted(meta["case_id"].unique()) if len(meta) else []
    gens = sorted(meta["generator"].unique()) if len(meta) else []
    result: dict[str, Any] = {
        "cases": cases,
        "figures": {figure_name(s): ("pass rate" if s.nominal else "mean score") for s in figs},
        "by_generator": {
            g: {"n_items": 0, "n_cases": 0, "overall": {}, "by_case": {}} for g in gens
        },
    }
    by_metric = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
    differences: dict[str, dict[str, Any]] = {}
    case_sets: dict[str, set[str]] = {g: set() for g in gens}
    for spec in figs:
        name = figure_name(spec)
        h = by_metric.get(spec.key)
        if h is None:
            continue
        h = h[h["code"].notna()]
        if not len(h):
            continue
        per_item = h.groupby("idx")["code"].agg(["mean", "size"])
        df = meta.set_index("idx").join(per_item, how="inner").reset_index()
        df = df.sort_values(["generator", "case_id", "idx"]).reset_index(drop=True)
        cell_keys = df[["generator", "case_id"]].drop_duplicates().reset_index(drop=True)
        cell_of = df.groupby(["generator", "case_id"], sort=False).ngroup().to_numpy()
        x = df["mean"].to_numpy(float)
        rng = rng_for(seed, "generators", spec.key)
        reps = _cell_replicates(x, cell_of, len(cell_keys), n_boot, rng)
        cell_point = df.groupby(cell_of)["mean"].mean().to_numpy()
        cell_items = np.bincount(cell_of)
        cell_answers = np.bincount(cell_of, weights=df["size"].to_numpy(float)).astype(int)
        lo, hi, k_ok = _interval(reps)
        share = spec.nominal
        for g, sub in cell_keys.groupby("generator", sort=True):
            entry = result["by_generator"][g]
            cells = sub.index.to_numpy()
            order = np.argsort(sub["case_id"].to_numpy())
            cells = cells[order]
            for c in cells:
                case = cell_keys.at[c, "case_id"]
                bc = entry["by_case"].setdefault(case, {"n_items": int(cell_items[c])})
                bc["n_items"] = max(bc["n_items"], int(cell_items[c]))
                if share and cell_answers[c] < min_count:
                    bc[name] = summarize(
                        None,
                        None,
                        int(cell_items[c]),
                        f"{cell_answers[c]} answers, fewer than {min_count}: a share is not shown",
                    )
                else:
                    bc[name] = summarize(
                        cell_point[c],
                        reps[:, c],
                        int(cell_items[c]),
                        _bounds=(lo[c], hi[c], int(k_ok[c])),
                    )
            k = len(cells)
            pick = rng.integers(0, k, size=(n_boot, k))
            overall = np.take_along_axis(reps[:, cells], pick, axis=1).mean(axis=1)
            est = float(cell_point[cells].mean())
            fig = summarize(est, overall, int(cell_items[cells].sum()))
            fig["n_cases"] = int(k)
            if share:
                fig["wilson_low"] = wilson_low(est, int(cell_items[cells].sum()))
            entry["overall"][name] = fig
            case_sets[g] |= set(cell_keys.loc[cells, "case_id"])
            entry["n_items"] = max(entry["n_items"], int(cell_items[cells].sum()))
            entry["n_cases"] = max(entry["n_cases"], int(k))
        _paired_differences(
            differences,
            name,
            cell_keys,
            cell_point,
            reps,
            cell_items,
            n_boot,
            rng_for(seed, "generator-differences", spec.key),
        )
    result["differences"] = differences
    sets = {g: c for g, c in case_sets.items() if c}
    comparable = len({frozenset(c) for c in sets.values()}) <= 1
    result["comparable"] = comparable
    if not comparable:
        union = set().union(*sets.values())
        partial = sorted(g for g, c in sets.items() if c != union)
        result["comparable_note"] = (
            "not comparable as a ranking: the generators were rated on different cases "
            f"({', '.join(partial)} lack some); compare them through `differences`, on shared cases"
        )
    for entry in result["by_generator"].values():
        entry["by_case"] = {c: entry["by_case"][c] for c in sorted(entry["by_case"])}
        if release_gate:
            entry["release_gate"] = _release_gate(entry, release_gate, min_cases, min_items)
    if release_gate:
        result["release_gate"] = {
            "thresholds": dict(release_gate),
            "min_cases": int(min_cases),
            "min_items": int(min_items),
            "rule": (
                f"at least {min_cases} cases and {min_items} items; every figure's lower 95% "
                "bound reaches its threshold (pass rates: the lower of the bootstrap and the "
                "Wilson bound)"
            ),
        }
    return result


def wilson_low(p: float, n: int, z: float = float(norm.isf(0.025))) -> float | None:
    """Lower Wilson score bound of a rate p over n units (valid at 0 and 1)."""
    if n <= 0 or p is None:
        return None
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float(max(0.0, (centre - half) / (1 + z * z / n)))


def _paired_differences(
    out: dict[str, dict[str, Any]],
    name: str,
    cell_keys: pd.DataFrame,
    cell_point: np.ndarray,
    reps: np.ndarray,
    cell_items: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
) -> None:
    """Every two generators: mean over their shared cases of (A's cell - B's cell), with
    shared cases resampled together and each cell's items within it (replicates `reps`)."""
    cell_of = {
        (g, c): i
        for i, (g, c) in enumerate(zip(cell_keys["generator"], cell_keys["case_id"], strict=True))
    }
    by_gen: dict[str, dict[str, int]] = {}
    for (g, c), i in cell_of.items():
        by_gen.setdefault(g, {})[c] = i
    for a, b in combinations(sorted(by_gen), 2):
        shared = sorted(set(by_gen[a]) & set(by_gen[b]))
        key = f"{a} - {b}"
        if not shared:
            out.setdefault(key, {})[name] = summarize(None, None, 0, "no case rated for both")
            continue
        ia = np.array([by_gen[a][c] for c in shared])
        ib = np.array([by_gen[b][c] for c in shared])
        diff_point = float((cell_point[ia] - cell_point[ib]).mean())
        d = reps[:, ia] - reps[:, ib]
        pick = rng.integers(0, len(shared), size=(n_boot, len(shared)))
        boot = np.take_along_axis(d, pick, axis=1).mean(axis=1)
        note = None if len(shared) >= 2 else "one shared case: its items alone"
        fig = summarize(diff_point, boot, int(cell_items[ia].sum() + cell_items[ib].sum()), note)
        fig["n_cases"] = len(shared)
        out.setdefault(key, {})[name] = fig


def _release_gate(
    entry: dict[str, Any], thresholds: dict[str, float], min_cases: int, min_items: int
) -> dict[str, Any]:
    overall = entry["overall"]
    checks = {}
    few = entry["n_cases"] < min_cases or entry["n_items"] < min_items
    for name, t in thresholds.items():
        fig = overall.get(name)
        low = fig.get("low") if fig else None
        method = "bootstrap"
        if fig and fig.get("wilson_low") is not None:
            if low is None or fig["wilson_low"] < low:
                low, method = fig["wilson_low"], "Wilson"
        if low is None:
            checks[name] = {
                "threshold": float(t),
                "low": None,
                "pass": False,
                "note": "no interval for this figure" if fig else "no such figure",
            }
        else:
            checks[name] = {
                "threshold": float(t),
                "low": low,
                "bound": method,
                "pass": bool(low >= float(t)) and not few,
            }
    out: dict[str, Any] = {
        "pass": bool(checks) and not few and all(c["pass"] for c in checks.values()),
        "checks": checks,
    }
    if few:
        out["note"] = (
            f"rated on {entry['n_cases']} cases and {entry['n_items']} items: a release "
            f"gate needs at least {min_cases} cases and {min_items} items"
        )
    return out
