"""Generators compared with each case held fixed.

Per generator and case: the pass rate of each gate and of the verdict and the
mean of each scale, from the human answers. An item's value is the mean of its
answers (the share of PASS for a gate or the verdict), a cell (generator x case)
is the mean over its items, and a generator's overall figure is the mean over
its cases, every case weighted equally, so a case with many items cannot
dominate. Cases are listed alphabetically, never by a score.

Intervals: a cell resamples its items; the overall figure resamples cases and,
within each drawn case, its items (a two-stage bootstrap), so it reflects both
which cases were chosen and the items within them. Figures answered on the same
items share one item resample, and every generator and difference over the same
cases one case resample (so a generator's interval and its differences agree).
Simulated coverage (tests/benchmarks/validity.md, model G): overall 94.7-97.7%,
differences 99.3-99.7% (conservative: the items' spread counts at both stages). Pass
rates of a cell with fewer answers than the minimum count are not shown (shares
need a denominator).

The optional release gate (settings "release_gate", e.g. {"verdict_pass_rate":
0.7, "layout_hierarchy": 3.0}) passes a generator only if it was rated on at
least `release_gate_min_cases` cases (default 5) and `release_gate_min_items`
items (default 30), and, for every figure named, the conservative (lower) bound
reaches the threshold. With `"source": "debiased"` (and optionally `"judge"`) in the setting the
bound is the debiased one (release_gate.py's `debiased_release_gate`, from the report's debiased section). For a pass rate that bound is the lower of the bootstrap
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

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .answers import at_rows, metric_rows
from .bootstrap import Plain, _interval, batches, resample_counts, rng_for, summarize
from .consensus import VERDICT_KEY, MetricSpec
from .last_table import LastTable
from .live_cases import LiveCases
from .live_estimate import carry_intervals
from .release_gate import GATE_KEYS, generator_gate

MIN_CASES = 5
MIN_ITEMS = 30
# values drawn per batch of `_cell_replicates` (item slots x figures): it holds a few arrays of
# this many values at once (the draws, the picks, the values picked), about 40 MB in all
_SLOTS = 1_000_000
# replicate values (replicates x cells x figures) held at once: figures beyond it are drawn apart
_REPS_VALUES = 8_000_000


def figure_name(spec: MetricSpec) -> str:
    return "verdict_pass_rate" if spec.key == VERDICT_KEY else spec.key


def _cell_replicates(
    x: np.ndarray, cell: np.ndarray, n_cells: int, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_boot x n_cells x figures) means of items resampled within each cell.

    `x` holds one column per figure, its rows the items sorted by cell. Each replicate draws,
    for every item slot, a random item of the same cell, the same draw for every figure (the
    figures of one item set are resampled together, as the report's item bootstrap does); cell
    sums come from one reduceat per batch.
    """
    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    size = np.bincount(cell, minlength=n_cells)
    start = np.cumsum(size) - size
    nonempty = size > 0
    out = np.full((n_boot, n_cells, x.shape[1]), np.nan)
    done = 0
    for b in batches(n_boot, len(x) * x.shape[1], elems=_SLOTS):
        u = rng.random((b, len(x)))
        pick = start[cell] + (u * size[cell]).astype(np.int64)
        sums = np.add.reduceat(x[pick], start[nonempty], axis=1)
        out[done : done + b, nonempty] = sums / size[nonempty, None]
        done += b
    return out


def _cells(df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The cells (generator x case) of a figure's table, sorted by generator and case: their keys
    (generator, case_id) in order and each row's cell. A cell is a run of rows (hashing the
    pairs of names took longer than the figure)."""
    gen = df["generator"].to_numpy(dtype=object)
    case = df["case_id"].to_numpy(dtype=object)
    new = np.ones(len(df), dtype=bool)
    new[1:] = (gen[1:] != gen[:-1]) | (case[1:] != case[:-1])
    cell_keys = df.loc[new, ["generator", "case_id"]].reset_index(drop=True)
    return cell_keys, np.cumsum(new) - 1


@dataclass(frozen=True)
class _CellIndex:
    """What follows from a figure table's cell keys alone, made once for the figures that share
    them (every figure answered on the same items): each generator's cells in case order, and
    for every two generators the cases they share with each one's cell there."""

    by_gen: dict[str, list[int]]
    # "a - b" -> (the shared cases in order, a's cells, b's cells)
    pairs: dict[str, tuple[tuple[str, ...], np.ndarray, np.ndarray]]
    # each cell's generator and case as Python lists, and its case as an array (the figures
    # read them a cell at a time: taken from the frame once, not once per figure and refresh)
    gens: list[str]
    cases: list[str]
    case_array: np.ndarray

    @classmethod
    def of(cls, cell_keys: pd.DataFrame) -> _CellIndex:
        gens, cases = cell_keys["generator"].tolist(), cell_keys["case_id"].tolist()
        by_gen: dict[str, list[int]] = {}
        for g, _, c in sorted(zip(gens, cases, range(len(cases)), strict=True)):
            by_gen.setdefault(g, []).append(c)
        # lists, not the columns: iterating a column of text yields one string at a time
        cell_of: dict[str, dict[str, int]] = {}
        for i, (g, c) in enumerate(zip(gens, cases, strict=True)):
            cell_of.setdefault(g, {})[c] = i
        pairs = {}
        for a, b in combinations(sorted(cell_of), 2):
            shared = tuple(sorted(set(cell_of[a]) & set(cell_of[b])))
            ia = np.array([cell_of[a][c] for c in shared], dtype=np.int64)
            ib = np.array([cell_of[b][c] for c in shared], dtype=np.int64)
            pairs[f"{a} - {b}"] = (shared, ia, ib)
        return cls(by_gen, pairs, gens, cases, np.array(cases, dtype=object))


@dataclass(frozen=True)
class _ItemMeta:
    """What generator_section reads of the item table alone: its items in the tables' order
    (generator, case, item), their idx, the cases and generators sorted, and the cells of each
    set of answered items (a figure table's rows are those items in that order)."""

    meta: pd.DataFrame
    meta_idx: np.ndarray
    cases: list[str]
    gens: list[str]
    cells: dict[bytes, tuple[pd.DataFrame, np.ndarray, _CellIndex]]

    @classmethod
    def of(cls, items: pd.DataFrame) -> _ItemMeta:
        """Kept for the same item table (a live refresh keeps it): its ids read as text and
        sorted were a tenth of the section."""
        last = _ITEM_META.get(None)
        if last is not None and last[0] is items:
            return last[2]
        meta = items[["idx", "case_id", "generator"]].copy()
        meta["case_id"] = meta["case_id"].fillna("(none)").astype(str)
        meta["generator"] = meta["generator"].fillna("(none)").astype(str)
        cases = sorted(meta["case_id"].unique()) if len(meta) else []
        gens = sorted(meta["generator"].unique()) if len(meta) else []
        meta = meta.sort_values(["generator", "case_id", "idx"]).reset_index(drop=True)
        meta_idx = meta["idx"].to_numpy(dtype=np.int64)
        meta_idx.flags.writeable = False
        made = cls(meta, meta_idx, cases, gens, {})
        _ITEM_META.put(None, items, None, made)
        return made

    def cells_of(
        self, answered: bytes, df: pd.DataFrame
    ) -> tuple[pd.DataFrame, np.ndarray, _CellIndex]:
        """`_cells` and `_CellIndex` of a figure table `df` on the items whose idx are
        `answered` (its idx column's bytes), kept for those items."""
        made = self.cells.get(answered)
        if made is None:
            cell_keys, cell_of = _cells(df)
            cell_of.flags.writeable = False
            made = (cell_keys, cell_of, _CellIndex.of(cell_keys))
            if len(self.cells) >= 8:  # the answered sets of the last refreshes only
                self.cells.clear()
            self.cells[answered] = made
        return made


# the last item table's _ItemMeta
_ITEM_META = LastTable()


class _CaseResamples:
    """Resamples of cases as multiplicities (n_boot x cases), one per set of cases (seeded by
    the set): every generator's overall figure and every difference over the same cases, in
    every figure, read the same resample, so a generator's interval and its differences agree.
    The last few sets are kept (a complete design has one; others are drawn again, alike)."""

    KEPT = 4

    def __init__(self, n_boot: int, seed: int) -> None:
        self.n_boot, self.seed = n_boot, seed
        self._counts: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()

    def mean(self, cases: tuple[str, ...], cells: np.ndarray) -> np.ndarray:
        """Per replicate the mean over resampled `cases` of `cells` (n_boot x len(cases), the
        cells of those cases in the same order)."""
        counts = self._counts.pop(cases, None)
        if counts is None:
            rng = rng_for(self.seed, "generator-cases", "\x1f".join(cases))
            counts = resample_counts(rng, len(cases), self.n_boot)
        self._counts[cases] = counts
        while len(self._counts) > self.KEPT:
            self._counts.popitem(last=False)
        return np.einsum("bc,bc->b", counts, cells) / len(cases)


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
    carry_from: Mapping[str, Any] | None = None,
    consensus_of: Mapping[str, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """The generators' figures (the module's docstring). `carry_from`, the generators' section
    of the last full report, makes a live estimate's (n_boot 1): every interval moved from it as
    `live_estimate.carry_intervals` moves them, here, before the release gate reads them; each
    generator's cells, tens of thousands at scale, made carried at once (a `Plain` dict).
    `consensus_of`: per metric key, `consensus` of the metric's rows of `human` where the
    caller made it (its per-item means and counts are the figures' items' own)."""
    # directed single-answer metrics: a pass rate (two values) or a mean (ordinal)
    figs = [s for s in specs if s.directed and not s.multi]
    item_meta = _ItemMeta.of(items)
    cases, gens = list(item_meta.cases), list(item_meta.gens)
    result: dict[str, Any] = {
        "cases": cases,
        "figures": {figure_name(s): ("pass rate" if s.nominal else "mean score") for s in figs},
        "by_generator": {
            g: {"n_items": 0, "n_cases": 0, "overall": {}, "by_case": {}} for g in gens
        },
    }
    differences: dict[str, dict[str, Any]] = {}
    case_sets: dict[str, set[str]] = {g: set() for g in gens}
    # the items once in the tables' order (generator, case, item): a figure's table is the items
    # answered on it, in this order (a join and a sort per figure took longer than its cells)
    meta, meta_idx = item_meta.meta, item_meta.meta_idx
    tables: dict[str, pd.DataFrame] = {}
    answered = metric_rows(human)
    all_idx = human["idx"].to_numpy(dtype=np.int64)
    all_code = human["code"].to_numpy(dtype=float)
    for key in [s.key for s in figs if s.key in answered]:
        cons = consensus_of.get(key) if consensus_of is not None else None
        if cons is not None:  # the metric section's: the same means, counted once
            present, means = cons.index.to_numpy(), cons["mean"].to_numpy()
            sizes = cons["n"].to_numpy()
            known = sizes > 0  # an item of cannot-judge answers alone has no coded row
            if not known.all():
                present, means, sizes = present[known], means[known], sizes[known]
        else:
            idx, code = at_rows(all_idx, answered[key]), at_rows(all_code, answered[key])
            mean = _item_means(idx, code)
            present, means = mean.index.to_numpy(), mean.to_numpy()
            sizes = np.bincount(idx)[present]
        keep = np.isin(meta_idx, present)
        sub = meta[keep]
        at = np.searchsorted(present, meta_idx[keep])  # present: sorted, holding every one
        tables[key] = pd.DataFrame(
            {
                "idx": sub["idx"].to_numpy(),
                "case_id": sub["case_id"].array,
                "generator": sub["generator"].array,
                "mean": means[at],
                "size": sizes[at],
            }
        )
    # figures answered on the same items share their resamples (one draw for several of them,
    # as many as `_REPS_VALUES` replicate values allow at once)
    groups: dict[bytes, list[MetricSpec]] = {}
    for spec in figs:
        if spec.key in tables:
            groups.setdefault(tables[spec.key]["idx"].to_numpy().tobytes(), []).append(spec)
    plan: dict[str, tuple[pd.DataFrame, np.ndarray, _CellIndex, tuple[str, ...], str]] = {}
    for group, members in groups.items():
        # the item resample follows the item set alone: a figure's interval never depends on
        # which other figures share its items or on how many of them are drawn at once
        stream = hashlib.sha256(group).hexdigest()[:16]
        df = tables[members[0].key]
        cell_keys, cell_of, index = item_meta.cells_of(group, df)
        per = max(1, _REPS_VALUES // max(1, n_boot * len(cell_keys)))
        for i in range(0, len(members), per):
            drawn_together = tuple(s.key for s in members[i : i + per])
            for key in drawn_together:
                plan[key] = (cell_keys, cell_of, index, drawn_together, stream)
    case_resamples = _CaseResamples(n_boot, seed)
    live = None if carry_from is None else LiveCases(carry_from, min_count)
    held: tuple[tuple[str, ...], np.ndarray] | None = None  # the last draw (one at a time)
    for spec in figs:  # in the rubric's order, so the report's keys keep it
        if spec.key not in plan:
            continue
        cell_keys, cell_of, index, together, stream = plan[spec.key]
        if held is None or held[0] != together:
            held = None  # freed before the next draw (an interleaved set is drawn again, alike)
            x = np.column_stack([tables[k]["mean"].to_numpy(float) for k in together])
            rng = rng_for(seed, "generators", stream)
            held = (together, _cell_replicates(x, cell_of, len(cell_keys), n_boot, rng))
        _figure(
            result,
            differences,
            case_sets,
            spec,
            tables[spec.key],
            cell_of,
            index,
            held[1][:, :, together.index(spec.key)],
            case_resamples,
            min_count,
            live,
        )
    if live is not None:
        live.fill(result["by_generator"])
    result["differences"] = differences
    if carry_from is not None:  # the cells were carried as they were made
        exact_gens = carry_from.get("by_generator")
        if isinstance(exact_gens, Mapping):
            for g, entry in result["by_generator"].items():
                if isinstance(exact := exact_gens.get(g), Mapping) and "overall" in exact:
                    carry_intervals(entry["overall"], exact["overall"])
        if isinstance(exact_diff := carry_from.get("differences"), Mapping):
            carry_intervals(differences, exact_diff)
    sets = {g: c for g, c in case_sets.items() if c}
    comparable = len({frozenset(c) for c in sets.values()}) <= 1
    result["comparable"] = comparable
    if not comparable:
        union = set().union(*sets.values())
        partial = sorted(g for g, c in sets.items() if c != union)
        result["comparable_note"] = (
            "not comparable as a ranking: the generators were rated on different cases "
            f"({', '.join(partial)} lack some); compare them pair by pair on the cases they share (the differences table)"
        )
    # the gate's thresholds by figure (`source` and `judge` say where the bounds come from:
    # debiased_release_gate reads them)
    release_gate = {k: v for k, v in (release_gate or {}).items() if k not in GATE_KEYS}
    cells = dict if carry_from is None else Plain
    for entry in result["by_generator"].values():
        entry["by_case"] = cells((c, entry["by_case"][c]) for c in sorted(entry["by_case"]))
        if release_gate:
            entry["release_gate"] = generator_gate(entry, release_gate, min_cases, min_items)
    if release_gate:
        result["release_gate"] = {
            "source": "humans",
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


def _item_means(idx: np.ndarray, code: np.ndarray) -> pd.Series:
    """pd.Series(code).groupby(idx).mean() (NaN codes left out; an item of NaN codes alone:
    NaN) for item indexes (>= 0). Where every code is a whole number and every sum fits in a
    float's 53 bits, by counting: pandas' compensated sums are then exact, as a bincount's are,
    and its mean is the same one division (9.5 -> 2.2 ms on 200,000 answers); pandas'
    grouped mean otherwise."""
    ok = ~np.isnan(code)
    valid = code[ok]
    if len(idx) and (
        not len(valid)
        or (
            bool((valid == np.floor(valid)).all())
            and float(np.abs(valid).max()) * len(valid) < 2.0**53
        )
    ):
        n_all = np.bincount(idx)
        present = np.flatnonzero(n_all)
        sums = np.bincount(idx[ok], weights=valid, minlength=len(n_all))[present]
        counts = np.bincount(idx[ok], minlength=len(n_all))[present]
        with np.errstate(invalid="ignore"):  # an item of NaN codes alone: 0 / 0
            return pd.Series(sums / counts, index=present)
    return pd.Series(code).groupby(idx).mean()


def _figure(
    result: dict[str, Any],
    differences: dict[str, dict[str, Any]],
    case_sets: dict[str, set[str]],
    spec: MetricSpec,
    df: pd.DataFrame,
    cell_of: np.ndarray,
    index: _CellIndex,
    reps: np.ndarray,
    case_resamples: _CaseResamples,
    min_count: int,
    live: LiveCases | None,
) -> None:
    """One figure's cells, each generator's overall figure and the paired differences; a live
    estimate's cells handed to `live`, which makes them at the end (generator_section)."""
    name = figure_name(spec)
    cell_point = df.groupby(cell_of)["mean"].mean().to_numpy()
    cell_items = np.bincount(cell_of)
    cell_answers = np.bincount(cell_of, weights=df["size"].to_numpy(float)).astype(int)
    lo, hi, k_ok = _interval(reps)
    share = spec.nominal
    # per cell as Python scalars: the loop below runs once per cell and figure (5,000 cells at a
    # million answers), and numpy's and pandas' scalar access cost more than the rest of it
    case_of = index.case_array
    points, n_items, n_answers = cell_point.tolist(), cell_items.tolist(), cell_answers.tolist()
    bounds = list(zip(lo.tolist(), hi.tolist(), k_ok.tolist(), strict=True))
    # the cells by generator, each generator's by case (sorted, as the report lists them)
    by_gen = index.by_gen
    if live is not None:  # a live estimate's rows are made at the end, the unmoved ones kept
        live.add(name, share, index.gens, index.cases, points, n_items, n_answers, reps, bounds)
    for g, in_gen in by_gen.items():
        entry = result["by_generator"][g]
        by_case = entry["by_case"]
        for c in in_gen if live is None else ():
            n = n_items[c]
            bc = by_case.get(case_of[c])
            if bc is None:
                bc = by_case[case_of[c]] = {"n_items": n}
            elif n > bc["n_items"]:
                bc["n_items"] = n
            if share and n_answers[c] < min_count:
                bc[name] = summarize(
                    None,
                    None,
                    n,
                    f"{n_answers[c]} answers, fewer than {min_count}: a share is not shown",
                )
                continue
            bc[name] = summarize(points[c], reps[:, c], n, _bounds=bounds[c])
        cells = np.array(in_gen, dtype=np.int64)
        k = len(cells)
        case_ids = tuple(case_of[cells])
        overall = case_resamples.mean(case_ids, reps[:, cells])
        est = float(cell_point[cells].mean())
        fig = summarize(est, overall, int(cell_items[cells].sum()))
        fig["n_cases"] = int(k)
        if share:
            fig["wilson_low"] = wilson_low(est, int(cell_items[cells].sum()))
        entry["overall"][name] = fig
        case_sets[g] |= set(case_ids)
        entry["n_items"] = max(entry["n_items"], int(cell_items[cells].sum()))
        entry["n_cases"] = max(entry["n_cases"], int(k))
    _paired_differences(differences, name, index, cell_point, reps, cell_items, case_resamples)


def approximate_count(section: Mapping[str, Any]) -> int:
    """How many of the section's intervals a live estimate carried (marked `approximate`)."""

    def marked(figs: Any) -> int:
        return sum(type(f) is dict and f.get("approximate") is True for f in figs.values())

    n = sum(marked(figs) for figs in section.get("differences", {}).values())
    for entry in section.get("by_generator", {}).values():
        n += marked(entry["overall"]) + sum(marked(c) for c in entry["by_case"].values())
    return n


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
    index: _CellIndex,
    cell_point: np.ndarray,
    reps: np.ndarray,
    cell_items: np.ndarray,
    case_resamples: _CaseResamples,
) -> None:
    """Every two generators: mean over their shared cases of (A's cell - B's cell), with
    shared cases resampled together and each cell's items within it (replicates `reps`)."""
    for key, (shared, ia, ib) in index.pairs.items():
        if not shared:
            out.setdefault(key, {})[name] = summarize(None, None, 0, "no case rated for both")
            continue
        diff_point = float((cell_point[ia] - cell_point[ib]).mean())
        boot = case_resamples.mean(shared, reps[:, ia] - reps[:, ib])
        note = None if len(shared) >= 2 else "one shared case: its items alone"
        fig = summarize(diff_point, boot, int(cell_items[ia].sum() + cell_items[ib].sum()), note)
        fig["n_cases"] = len(shared)
        out.setdefault(key, {})[name] = fig
