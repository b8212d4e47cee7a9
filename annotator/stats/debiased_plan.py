"""How many more human labels a debiased figure needs, and what its judge is worth: the planner.

A PPI++ interval (stats/debiased.py) narrows as 1/sqrt(n) in the number n of human-labelled
units at the current judge-human disagreement (its variance is the labelled part's plus the
judge's, and the labelled part dominates once the judge covers many more units). So an
interval of width w from n labels reaches width t with about n * (w / t)^2 labels on
independent items. Items that share cases add a part the labels do not shrink, the spread
between the same cases: with the figure's design effect d (its variance counted by case over
counted by item), n / (1 - d (1 - (t / w)^2)) labels, none when d (1 - (t/w)^2) >= 1 (only more
cases narrow it). `labels_for` is that rule, the one place it is written. A release gate
(settings `release_gate`, {"<figure>": threshold}) is decided once the interval lies on one
side of its threshold: a width of 2 |estimate - threshold| (the current estimate taken as the
value to expect). The figures are planning figures, not promises: the estimate moves as labels
come in. Checked by simulation (tests/benchmarks/validity.md, the planner).

The judge's worth in each figure (rho, the effective labels, the floor, the factor-2 limit, the
design effect the count reads) is stats/debiased_value.py's `judge_value`; the cheapest mix of
labels and judge calls for the target width is its `cheapest_mix`, at the settings
`cost_human_label` and `cost_judge_call`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..domain.settings import DEFAULT_SETTINGS, setting
from .debiased import MIN_UNITS_FOR_INTERVAL
from .debiased_value import cheapest_mix, floor_rho
from .frames import StudyFrames

DEFAULT_WIDTH = float(DEFAULT_SETTINGS["debiased_plan_width"])  # the report's target width
CLUSTERED_NOTE = (
    "items share cases: the spread between cases does not shrink with more labels on the same "
    "cases, and too few cases are sampled to measure it, so this count is a lower bound "
    "(the rule alone reached 1.0-1.6x the target width at the median in simulation with 40 or "
    "100 cases; more cases narrow it)"
)


def more_labels(n: int, width: float, target: float) -> int:
    """Human labels to add to n so an interval of `width` narrows to `target`: n * (width /
    target)^2 - n, rounded up, never below 0."""
    if n < 1 or not width > 0 or not target > 0:
        raise ValueError("more_labels needs n >= 1 and positive widths")
    return max(0, math.ceil(n * (width / target) ** 2 - 1e-9) - n)


def labels_for(n: int, width: float, target: float, deff: float = 1.0) -> int | None:
    """Labels in all for an interval of `width` from n labels to narrow to `target`, when the
    variance is a part that shrinks as 1/n (independent items: 1/deff of it) and a part that
    does not (the spread between the same cases, the rest). None: these cases cannot give
    `target` however many labels (only more cases can)."""
    if n < 1 or not width > 0 or not target > 0:
        raise ValueError("labels_for needs n >= 1 and positive widths")
    q = (target / width) ** 2
    if q >= 1:
        return n
    deff = max(1.0, deff)
    left = 1 - deff * (1 - q)  # the shrinking part's share of the target variance
    if left <= 1e-9:
        return None
    return max(n, math.ceil(n / left - 1e-9))


def width_floor(width: float, deff: float) -> float:
    """The narrowest interval more labels on these cases can give: the part that does not shrink."""
    return width * math.sqrt(max(0.0, 1 - 1 / max(1.0, deff)))


def _count(n: int, width: float, target: float, deff: float) -> dict[str, Any]:
    """more_labels and n_needed for `target` (labels_for), or why no number of labels does."""
    if not width > 0:
        return {"more_labels": 0, "n_needed": n}
    need = labels_for(n, width, target, deff)
    if need is None:
        return {
            "more_labels": None,
            "n_needed": None,
            "reachable": False,
            "note": f"these cases cannot give width {target:g}: the spread measured between them "
            f"alone leaves about {width_floor(width, deff):.3f} however many labels; only more "
            "cases narrow it",
        }
    return {"more_labels": need - n, "n_needed": need}


def plan_figure(
    fig: dict[str, Any],
    target: float,
    threshold: float | None = None,
    costs: tuple[float, float] | None = None,
) -> dict[str, Any] | None:
    """The plan of one debiased figure ({"ppi", "n_sampled", "judge_value", ...} of
    stats/debiased.py): the labels needed for an interval of `target` width with the judge
    and with humans alone, the cheapest mix of labels and judge calls at `costs` (a human
    label's, a judge call's), and the labels to decide a gate at `threshold`. Items that share
    cases count by the figure's design effect (labels_for). None when the figure has no
    interval to plan from."""
    ppi = fig.get("ppi") or {}
    n = int(fig.get("n_sampled") or 0)
    units = fig.get("effective_sampled_units")
    if ppi.get("low") is None and n >= 1 and units and units < MIN_UNITS_FOR_INTERVAL:
        # no width to plan from yet: first the labels an interval needs at all (unequal
        # weights count as fewer labels, Kish's units, so they scale with n / units)
        needed = max(n + 1, math.ceil(n * MIN_UNITS_FOR_INTERVAL / units - 1e-9))
        early: dict[str, Any] = {
            "target_width": target,
            "width": None,
            "n_sampled": n,
            "n_needed": needed,
            "more_labels": needed - n,
            "too_few": f"no interval yet: the sample counts as {units:.0f} labels, an interval "
            f"needs {MIN_UNITS_FOR_INTERVAL}",
        }
        if (fig.get("judge_value") or {}).get("words"):
            early["judge_value"] = fig["judge_value"]["words"]
        return early
    if ppi.get("low") is None or ppi.get("high") is None or n < 1:
        return None
    width = float(ppi["high"]) - float(ppi["low"])
    value = fig.get("judge_value") or {}
    deff = float(value.get("design_effect") or 1.0)  # None: too few cases to tell, 1 counted
    out: dict[str, Any] = {"target_width": target, "width": width, "n_sampled": n}
    if deff > 1:
        out["design_effect"] = deff
    out.update(_count(n, width, target, deff))
    humans = fig.get("humans_only") or {}
    if humans.get("low") is not None and humans.get("high") is not None:
        w_h = float(humans["high"]) - float(humans["low"])
        alone = _count(n, w_h, target, float(value.get("design_effect_humans") or 1.0))
        out["n_needed_humans_only"] = alone["n_needed"]
        rho = value.get("rho")
        if costs is not None and rho is not None and alone["n_needed"]:
            n_max = int(fig.get("n_items") or 0) or None  # the items the judge can score
            mix = cheapest_mix(float(rho), alone["n_needed"], *costs, n_max=n_max)
            if mix["uses_judge"] and rho < floor_rho(mix["human_labels"]):
                # below the small-sample floor at the mix's own labels the judge's weight is
                # noise: the formula's saving would not be there
                mix = cheapest_mix(0.0, alone["n_needed"], *costs, n_max=n_max)
            mix["humans_only_cost"] = alone["n_needed"] * costs[0]
            out["cheapest"] = mix
    if value.get("words"):
        out["judge_value"] = value["words"]
    if fig.get("clustered_by_case") and value.get("design_effect") is None and "note" not in out:
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
            c = _count(n, width, 2 * abs(est - t), deff)
            gate.update(decided=None, more_labels=c["more_labels"])
            if c["n_needed"] is not None:
                gate["n_needed"] = c["n_needed"]
            else:
                gate["note"] = c["note"]
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


def costs_of(settings: dict[str, Any]) -> tuple[float, float]:
    """(a human label's cost, a judge call's) from the study's settings."""
    return (
        float(setting(settings, "cost_human_label")),
        float(setting(settings, "cost_judge_call")),
    )


def add_plans(
    section: dict[str, Any],
    target: float,
    thresholds: dict[str, float],
    costs: tuple[float, float] | None = None,
) -> None:
    """Give every debiased figure (items and pairs) its `plan` at the target width."""
    for jd in (section.get("judges") or {}).values():
        for figs in (jd.get("by_generator") or {}).values():
            for name, fig in figs.items():
                fig["plan"] = plan_figure(fig, target, thresholds.get(name), costs)
    for jd in ((section.get("pairs") or {}).get("judges") or {}).values():
        for fig in (jd.get("by_pair") or {}).values():
            fig["plan"] = plan_figure(fig, target, costs=costs)


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
    strata_members: bool = False,
) -> dict[str, Any]:
    """The report's `debiased` section of a study: items (stats/debiased.py), `pairs`
    (stats/debiased_pairs.py), and every figure's plan at `target` (default: the setting
    `debiased_plan_width`). `tables`: the coded (items, human, judged) when the caller has
    them (the report), else coded here (the planner); `strata_members`: each stratified
    block names its items' strata (`assign --by-strata`)."""
    from .answers import human_answers, item_table, judge_answers
    from .consensus import metric_specs
    from .debiased import debiased_section
    from .debiased_pairs import debiased_pairs_section
    from .debiased_strata import latest_confidences

    specs = metric_specs(frames.rubric)
    if tables is None:
        items = item_table(frames)
        tables = (items, human_answers(frames, specs, items), judge_answers(frames, specs, items))
    min_count = int(setting(frames.settings, "min_count_for_share"))
    sec = debiased_section(
        *tables,
        specs,
        frames.settings,
        min_labelled=min_count,
        confidences=latest_confidences(frames.judge_score_versions),
        strata_members=strata_members,
    )
    # the pairwise twin: win rates from the judge's pair votes, corrected by
    # the humans' votes on the random pair sample
    sec["pairs"] = debiased_pairs_section(
        frames.pair_votes, frames.judge_pair_votes, frames.settings, min_labelled=min_count
    )
    add_plans(
        sec,
        target_width(frames.settings) if target is None else target,
        gate_thresholds(frames.settings),
        costs_of(frames.settings),
    )
    return sec


__all__ = [
    "costs_of",
    "debiased_figures",
    "labels_for",
    "width_floor",
    "DEFAULT_WIDTH",
    "add_plans",
    "gate_thresholds",
    "more_labels",
    "needed_per_unit",
    "plan_figure",
    "plan_rows",
    "target_width",
]
