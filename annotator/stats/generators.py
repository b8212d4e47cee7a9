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
0.7, "layout_hierarchy": 3.0}) passes a generator only if, for every figure
named, the conservative (lower) bound of its overall interval reaches the
threshold.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import _interval, batches, rng_for, summarize
from .consensus import VERDICT_KEY, MetricSpec


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
    for b in batches(n_boot, len(x)):
        u = rng.random((b, len(x)))
        pick = start[cell] + (u * size[cell]).astype(np.int64)
        sums = np.add.reduceat(x[pick], start[nonempty], axis=1)
        out[done : done + b, nonempty] = sums / size[nonempty]
        done += b
    return out


def generator_section(
    items: pd.DataFrame, human: pd.DataFrame, specs: list[MetricSpec], *, n_boot: int, seed: int,
    min_count: int, release_gate: dict[str, float] | None = None,
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
        "figures": {figure_name(s): ("pass rate" if s.nominal else "mean score")
                    for s in figs},
        "by_generator": {g: {"n_items": 0, "n_cases": 0, "overall": {}, "by_case": {}} for g in gens},
    }
    by_metric = dict(tuple(human.groupby("metric", sort=False))) if len(human) else {}
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
                    bc[name] = summarize(None, None, int(cell_items[c]),
                                         f"{cell_answers[c]} answers, fewer than {min_count}: "
                                         "a share is not shown")
                else:
                    bc[name] = summarize(cell_point[c], reps[:, c], int(cell_items[c]),
                                         _bounds=(lo[c], hi[c], int(k_ok[c])))
            k = len(cells)
            pick = rng.integers(0, k, size=(n_boot, k))
            overall = np.take_along_axis(reps[:, cells], pick, axis=1).mean(axis=1)
            est = float(cell_point[cells].mean())
            fig = summarize(est, overall, int(cell_items[cells].sum()))
            fig["n_cases"] = int(k)
            entry["overall"][name] = fig
            entry["n_items"] = max(entry["n_items"], int(cell_items[cells].sum()))
            entry["n_cases"] = max(entry["n_cases"], int(k))
    for entry in result["by_generator"].values():
        entry["by_case"] = {c: entry["by_case"][c] for c in sorted(entry["by_case"])}
        if release_gate:
            entry["release_gate"] = _release_gate(entry["overall"], release_gate)
    if release_gate:
        result["release_gate"] = {"thresholds": dict(release_gate),
                                  "rule": "every figure's lower 95% bound reaches its threshold"}
    return result


def _release_gate(overall: dict[str, Any], thresholds: dict[str, float]) -> dict[str, Any]:
    checks = {}
    for name, t in thresholds.items():
        fig = overall.get(name)
        low = fig.get("low") if fig else None
        if low is None:
            checks[name] = {"threshold": float(t), "low": None, "pass": False,
                            "note": "no interval for this figure" if fig else "no such figure"}
        else:
            checks[name] = {"threshold": float(t), "low": low, "pass": bool(low >= float(t))}
    return {"pass": bool(checks) and all(c["pass"] for c in checks.values()), "checks": checks}
