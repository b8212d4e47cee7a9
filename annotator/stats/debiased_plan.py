"""How many more human labels a debiased figure needs: the planner.

A PPI++ interval (stats/debiased.py) narrows as 1/sqrt(n) in the number n of human-labelled
units at the current judge-human disagreement (its variance is the labelled part's plus the
judge's, and the labelled part dominates once the judge covers many more units). So an
interval of width w from n labels reaches width t with about n * (w / t)^2 labels:
`more_labels` is that rule, the one place it is written. A release gate (settings
`release_gate`, {"<figure>": threshold}) is decided once the interval lies on one side of its
threshold: a width of 2 |estimate - threshold| (the current estimate taken as the value to
expect). The figures are planning figures, not promises: the estimate moves as labels come
in, and with items clustered in cases the case-level part of the variance does not shrink as
1/n (the rule then underestimates: the plan says so in a note). Checked by simulation
(tests/benchmarks/validity.md, the planner): on independent items the planned labels give
the target width to within 1-4% on average.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..domain.settings import DEFAULT_SETTINGS, setting
from .debiased import MIN_UNITS_FOR_INTERVAL
from .frames import StudyFrames

DEFAULT_WIDTH = float(DEFAULT_SETTINGS["debiased_plan_width"])  # the report's target width
CLUSTERED_NOTE = (
    "items share cases: the spread between cases does not shrink with more labels on the same "
    "cases, so this count is a lower bound (1.1-1.6x the target width in simulation with 40 "
    "cases; more cases narrow it)"
)


def more_labels(n: int, width: float, target: float) -> int:
    """Human labels to add to n so an interval of `width` narrows to `target`: n * (width /
    target)^2 - n, rounded up, never below 0."""
    if n < 1 or not width > 0 or not target > 0:
        raise ValueError("more_labels needs n >= 1 and positive widths")
    return max(0, math.ceil(n * (width / target) ** 2 - 1e-9) - n)


def plan_figure(
    fig: dict[str, Any], target: float, threshold: float | None = None
) -> dict[str, Any] | None:
    """The plan of one debiased figure ({"ppi", "n_sampled", ...} of stats/debiased.py): the
    labels needed for an interval of `target` width, and to decide a gate at `threshold`.
    None when the figure has no interval to plan from."""
    ppi = fig.get("ppi") or {}
    n = int(fig.get("n_sampled") or 0)
    units = fig.get("effective_sampled_units")
    if ppi.get("low") is None and n >= 1 and units and units < MIN_UNITS_FOR_INTERVAL:
        # no width to plan from yet: first the labels an interval needs at all (unequal
        # weights count as fewer labels, Kish's units, so they scale with n / units)
        needed = max(n + 1, math.ceil(n * MIN_UNITS_FOR_INTERVAL / units - 1e-9))
        return {
            "target_width": target,
            "width": None,
            "n_sampled": n,
            "n_needed": needed,
            "more_labels": needed - n,
            "too_few": f"no interval yet: the sample counts as {units:.0f} labels, an interval "
            f"needs {MIN_UNITS_FOR_INTERVAL}",
        }
    if ppi.get("low") is None or ppi.get("high") is None or n < 1:
        return None
    width = float(ppi["high"]) - float(ppi["low"])
    out: dict[str, Any] = {"target_width": target, "width": width, "n_sampled": n}
    if width > 0:
        extra = more_labels(n, width, target)
        out.update(more_labels=extra, n_needed=n + extra)
    else:
        out.update(more_labels=0, n_needed=n)
    if fig.get("clustered_by_case"):
        out["note"] = CLUSTERED_NOTE
    if threshold is not None:
        t, est = float(threshold), float(ppi["estimate"])
        gate: dict[str, Any] = {"threshold": t}
        if float(ppi["low"]) >= t:
            gate.update(decided="pass", more_labels=0)
        elif float(ppi["high"]) < t:
            gate.update(decided="fail", more_labels=0)
        elif est == t or width <= 0:
            gate.update(
                decided=None,
                more_labels=None,
                note="the estimate sits on the threshold: no number of labels is sure to decide",
            )
        else:
            extra = more_labels(n, width, 2 * abs(est - t))
            gate.update(decided=None, more_labels=extra, n_needed=n + extra)
        out["release_gate"] = gate
    return out


def gate_thresholds(settings: dict[str, Any]) -> dict[str, float]:
    """The release gate's numeric thresholds by figure name (other keys, e.g. a "source",
    are not thresholds)."""
    gate = settings.get("release_gate")
    if not isinstance(gate, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in gate.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def target_width(settings: dict[str, Any]) -> float:
    w = setting(settings, "debiased_plan_width")
    return float(w) if isinstance(w, int | float) and w > 0 else DEFAULT_WIDTH


def add_plans(section: dict[str, Any], target: float, thresholds: dict[str, float]) -> None:
    """Give every debiased figure (items and pairs) its `plan` at the target width."""
    for jd in (section.get("judges") or {}).values():
        for figs in (jd.get("by_generator") or {}).values():
            for name, fig in figs.items():
                fig["plan"] = plan_figure(fig, target, thresholds.get(name))
    for jd in ((section.get("pairs") or {}).get("judges") or {}).values():
        for fig in (jd.get("by_pair") or {}).values():
            fig["plan"] = plan_figure(fig, target)


def plan_rows(section: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per judge, unit (a generator, or a generator pair) and figure with a plan:
    {"judge", "unit", "figure", "kind" ("items"|"pairs"), "plan"}."""
    rows = []
    for judge, jd in sorted((section.get("judges") or {}).items()):
        for gen, figs in sorted((jd.get("by_generator") or {}).items()):
            for name, fig in figs.items():
                if fig.get("plan"):
                    rows.append(
                        {"judge": judge, "unit": gen, "figure": name, "kind": "items"}
                        | {"plan": fig["plan"]}
                    )
    for judge, jd in sorted(((section.get("pairs") or {}).get("judges") or {}).items()):
        for key, fig in sorted((jd.get("by_pair") or {}).items()):
            if fig.get("plan"):
                rows.append(
                    {"judge": judge, "unit": key, "figure": "win_rate", "kind": "pairs"}
                    | {"plan": fig["plan"]}
                )
    return rows


def needed_per_unit(rows: list[dict[str, Any]], kind: str) -> dict[str, int]:
    """Per generator (kind "items") or generator pair ("pairs"): the largest number of
    labelled units any of its figures needs for the target width (the sample size to top up
    to)."""
    out: dict[str, int] = {}
    for r in rows:
        if r["kind"] == kind and r["plan"].get("n_needed") is not None:
            out[r["unit"]] = max(out.get(r["unit"], 0), int(r["plan"]["n_needed"]))
    return out


def debiased_figures(
    frames: StudyFrames,
    *,
    target: float | None = None,
    tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """The report's `debiased` section of a study: items (stats/debiased.py), `pairs`
    (stats/debiased_pairs.py), and every figure's plan at `target` (default: the setting
    `debiased_plan_width`). `tables`: the coded (items, human, judged) when the caller has
    them (the report), else coded here (the planner)."""
    from .answers import human_answers, item_table, judge_answers
    from .consensus import metric_specs
    from .debiased import debiased_section
    from .debiased_pairs import debiased_pairs_section

    specs = metric_specs(frames.rubric)
    if tables is None:
        items = item_table(frames)
        tables = (items, human_answers(frames, specs, items), judge_answers(frames, specs, items))
    min_count = int(setting(frames.settings, "min_count_for_share"))
    sec = debiased_section(*tables, specs, frames.settings, min_labelled=min_count)
    # the pairwise twin: win rates from the judge's pair votes, corrected by
    # the humans' votes on the random pair sample
    sec["pairs"] = debiased_pairs_section(
        frames.pair_votes, frames.judge_pair_votes, frames.settings, min_labelled=min_count
    )
    add_plans(
        sec,
        target_width(frames.settings) if target is None else target,
        gate_thresholds(frames.settings),
    )
    return sec


__all__ = [
    "debiased_figures",
    "DEFAULT_WIDTH",
    "add_plans",
    "gate_thresholds",
    "more_labels",
    "needed_per_unit",
    "plan_figure",
    "plan_rows",
    "target_width",
]
