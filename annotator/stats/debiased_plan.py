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

`judge_value` says what the judge is worth in a figure: the judge-human correlation rho with
its Fisher interval, the effective labels n (n + N) / (n + (1 - rho^2) N) and their ceiling
n / (1 - rho^2), the small-sample floor 1 / sqrt(n - 2) below which PPI++ does not beat humans
alone, the factor-2 limit of Dorner, Nastl & Hardt (ICLR 2025) where the judge is no more
accurate than the generator, and "the judge added nothing here: humans only" where lambda is 0.
`cheapest_mix` is ppi_py's power formula (ppi_power): the cheapest human labels and judge calls
for a target width at the settings `cost_human_label` and `cost_judge_call`. docs/statistics.md
says which condition each rule uses.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..domain.settings import DEFAULT_SETTINGS, setting
from .debiased import ppi_mean
from .frames import StudyFrames

DEFAULT_WIDTH = float(DEFAULT_SETTINGS["debiased_plan_width"])  # the report's target width
CLUSTERED_NOTE = (
    "items share cases: the spread between cases does not shrink with more labels on the same "
    "cases, and too few cases are sampled to measure it, so this count is a lower bound "
    "(1.1-1.6x the target width in simulation with 40 cases; more cases narrow it)"
)


def more_labels(n: int, width: float, target: float) -> int:
    """Human labels to add to n so an interval of `width` narrows to `target`: n * (width /
    target)^2 - n, rounded up, never below 0."""
    if n < 1 or not width > 0 or not target > 0:
        raise ValueError("more_labels needs n >= 1 and positive widths")
    return max(0, math.ceil(n * (width / target) ** 2 - 1e-9) - n)


# ---------------------------------------------------------------------------------------------
# what the judge is worth: its correlation with the humans and what that allows


def correlation(y: np.ndarray, f: np.ndarray, w: np.ndarray | None = None) -> float | None:
    """The (weighted) Pearson correlation of the humans' and the judge's values on the sampled
    items; None when either does not vary (no correlation to speak of)."""
    y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    if len(y) < 2 or len(f) != len(y) or len(w) != len(y):
        raise ValueError("correlation needs two or more paired values (and one weight each)")
    w = w / w.sum()
    dy, df = y - w @ y, f - w @ f
    vy, vf = float(w @ dy**2), float(w @ df**2)
    if not (vy > 1e-12 and vf > 1e-12):
        return None
    return float(np.clip((w @ (dy * df)) / math.sqrt(vy * vf), -1.0, 1.0))


def fisher_interval(rho: float, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """rho's interval by Fisher's z: tanh(atanh(rho) -/+ z / sqrt(n - 3)); None below 4 units."""
    if n < 4:
        return None
    z = math.atanh(min(max(rho, -1 + 1e-12), 1 - 1e-12))
    half = float(norm.isf(alpha / 2)) / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


def effective_labels(n: float, n_judge_only: float, rho: float) -> float:
    """The humans-only sample size PPI++ is worth with n labels and N judge-only items at the
    optimal lambda: n (n + N) / (n + (1 - rho^2) N)."""
    return n * (n + n_judge_only) / (n + (1 - rho**2) * n_judge_only)


def ceiling_labels(n: float, rho: float) -> float:
    """effective_labels as the judge scores ever more items (N to infinity): n / (1 - rho^2)."""
    return math.inf if rho**2 >= 1 else n / (1 - rho**2)


def floor_rho(n: int) -> float:
    """The correlation below which PPI++ does not beat humans alone at n labels: the tuned
    lambda's own noise (about 1/sqrt(n - 2) in rho, the null spread of a sample correlation)
    costs more than the judge saves."""
    return 1 / math.sqrt(n - 2) if n > 2 else 1.0


def cheapest_mix(
    rho: float,
    n_humans_alone: float,
    cost_human: float,
    cost_judge: float,
    n_max: int | None = None,
) -> dict[str, Any]:
    """The cheapest mix of human labels (each with the judge's call on its item) and judge-only
    calls whose PPI++ variance equals n_humans_alone human labels': the power formula of
    ppi_py.ppi_power (Broska, Howes & van Loon 2024) with no cost for the item itself, on at
    most `n_max` items in all (the items there are). Humans alone when the judge does not pay
    for itself; `reachable` False when even every item labelled falls short."""
    if not (cost_human > 0 and cost_judge > 0 and n_humans_alone > 0):
        raise ValueError("cheapest_mix needs positive costs and a positive sample size")
    r2 = min(rho**2, 1 - 1e-12)
    gamma = cost_judge / cost_human
    ppi_cost = cost_human * (1 - r2 + gamma * r2 + 2 * math.sqrt(gamma * r2 * (1 - r2)))

    def mix(n_h: int, n_j: int, judge: bool, reachable: bool = True) -> dict[str, Any]:
        return {
            "human_labels": n_h,
            "judge_calls": n_j,
            "cost": n_h * cost_human + n_j * cost_judge,
            "uses_judge": judge,
            "reachable": reachable,
        }

    n0 = n_humans_alone
    if rho > 0 and ppi_cost < cost_human:
        n = n0 * (1 - r2 + math.sqrt(gamma * r2 * (1 - r2)))
        extra = n * (n0 - n) / (n - (1 - r2) * n0)
        best = mix(round(n), round(n) + round(extra), True) if extra >= 0 else None
    else:
        best = None
    if best is None:
        best = mix(round(n0), 0, False)
    items = best["judge_calls"] if best["uses_judge"] else best["human_labels"]
    if n_max is None or items <= n_max:
        return best
    if n0 > n_max:  # labelling every item is the most there is: humans alone, short of it
        return mix(n_max, 0, False, reachable=False)
    # all n_max items judged, the fewest labels among them that give n0's variance
    n_h = round(n0 * n_max * (1 - r2) / (n_max - r2 * n0))
    alone = mix(round(n0), 0, False)
    # near n_max the judge's saving on the few unlabelled items can be less than its calls
    return mix(n_h, n_max, True) if n_h * cost_human + n_max * cost_judge < alone["cost"] else alone


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


NOTHING = "the judge added nothing here: humans only"
# below this many sampled cases the case-level share of the variance is too noisy to plan on
# (a ratio of two variances on fewer than 14 degrees of freedom): the plan then says its count
# is a lower bound instead
MIN_DEFF_CASES = 15


def _arrays(sub: pd.DataFrame) -> dict[str, Any]:
    """The arrays stats/debiased.py's figure estimates from (its `sub` frame: f, y, case_id, pi,
    in_sample), weighted as it weights them, so rho and the design effect read the same data."""
    case = sub["case_id"].to_numpy()
    size = sub.groupby("case_id")["f"].transform("size").to_numpy(float)
    v = 1.0 / (size * len(np.unique(case)))
    lab = sub["y"].notna().to_numpy()
    drawn = sub["in_sample"].to_numpy(bool)
    n_lab = int(lab.sum())
    pi = sub["pi"].to_numpy(float)
    pi_lab = pi[lab] * (n_lab / max(1, int(drawn.sum())))
    unl = ~lab & ~drawn
    w_u = v[unl] / np.clip(1.0 - pi[unl], 1e-12, None)
    uniform = (
        np.ptp(v) < 1e-15 and np.ptp(pi_lab) < 1e-15 and (not unl.any() or np.ptp(w_u) < 1e-15)
    )
    codes = pd.factorize(case)[0]
    fv = sub["f"].to_numpy(float)
    return {
        "y": sub["y"].to_numpy(float)[lab],
        "fl": fv[lab],
        "fu": fv[unl],
        "wl": None if uniform else v[lab] / pi_lab,
        "wu": None if uniform or not unl.any() else w_u,
        "cl": codes[lab],
        "cu": codes[unl],
        "clustered": len(np.unique(codes)) < len(sub),
    }


def design_effects(
    y: np.ndarray,
    f_labelled: np.ndarray,
    f_unlabelled: np.ndarray,
    cluster_labelled: np.ndarray,
    cluster_unlabelled: np.ndarray,
    lam: float,
    *,
    w_labelled: np.ndarray | None = None,
    w_unlabelled: np.ndarray | None = None,
) -> tuple[float, float]:
    """The PPI++ and the humans-only interval's variance counted by case over counted by item
    (the same lambda, the same jackknife as the report's interval), at least 1: the share
    1 - 1/deff of the variance is the spread between cases, which more labels on the same
    cases do not shrink (labels_for)."""
    codes = np.concatenate([cluster_labelled, cluster_unlabelled])
    if len(y) < 2 or len(np.unique(codes)) == len(codes):  # every item its own case
        return 1.0, 1.0
    common: dict[str, Any] = {
        "w_labelled": w_labelled,
        "w_unlabelled": w_unlabelled,
        "lam": lam,
        "small_sample": True,
    }
    by_case = ppi_mean(
        y,
        f_labelled,
        f_unlabelled,
        cluster_labelled=cluster_labelled,
        cluster_unlabelled=cluster_unlabelled,
        **common,
    )
    by_item = ppi_mean(y, f_labelled, f_unlabelled, **common)

    def ratio(a: float, b: float) -> float:
        return float(max(1.0, (a / b) ** 2)) if b > 0 else 1.0

    return ratio(by_case.ppi.se, by_item.ppi.se), ratio(by_case.humans.se, by_item.humans.se)


def judge_value(
    sub: pd.DataFrame, fig: dict[str, Any], *, pass_rate: bool = False, alpha: float = 0.05
) -> dict[str, Any] | None:
    """What the judge is worth in one debiased figure (`fig`, stats/debiased.py's, estimated on
    `sub`): rho with its Fisher interval, the effective labels n (n + N) / (n + (1 - rho^2) N),
    their ceiling n / (1 - rho^2), the small-sample floor 1 / sqrt(n - 2), the design effect of
    the cases, whether the factor-2 limit applies (a pass rate whose judge agrees with the
    humans no more often than the generator passes), and the verdict in words. None without an
    estimate."""
    if fig.get("ppi") is None or fig.get("lambda") is None:
        return None
    d = _arrays(sub)
    n, n_judge = len(d["y"]), len(d["fu"])
    lam = float(fig["lambda"])
    # items of a case are not independent pieces of evidence about rho: count the cases
    units = len(np.unique(d["cl"])) if d["clustered"] else n
    rho = correlation(d["y"], d["fl"], d["wl"]) if n >= 2 else None
    # which side gives no correlation to speak of, for the words
    constant = (
        "the judge's scores"
        if np.ptp(d["fl"]) < 1e-12
        else "the humans' values"
        if np.ptp(d["y"]) < 1e-12
        else None
    )
    ci = fisher_interval(rho, units, alpha) if rho is not None else None
    floor = floor_rho(units)
    deff: float | None = None
    deff_h: float | None = None
    if not d["clustered"]:
        deff = deff_h = 1.0
    elif units >= MIN_DEFF_CASES:
        deff, deff_h = design_effects(
            d["y"],
            d["fl"],
            d["fu"],
            d["cl"],
            d["cu"],
            lam,
            w_labelled=d["wl"],
            w_unlabelled=d["wu"],
        )
    ppi, humans = fig.get("ppi") or {}, fig.get("humans_only") or {}
    same = all(ppi.get(k) == humans.get(k) for k in ("estimate", "low", "high"))
    out: dict[str, Any] = {
        "rho": None if rho is None else round(rho, 4),
        "rho_low": None if ci is None else round(ci[0], 4),
        "rho_high": None if ci is None else round(ci[1], 4),
        "n_labelled": n,
        "n_judge_only": n_judge,
        "n_units": units,
        "constant": constant if rho is None else None,
        "units": "cases" if d["clustered"] else "items",
        "floor": round(floor, 4),
        "below_floor": rho is None or rho < floor,
        "added_nothing": lam == 0.0 or same,
        "design_effect": None if deff is None else round(deff, 3),
        "design_effect_humans": None if deff_h is None else round(deff_h, 3),
    }
    r = 0.0 if rho is None else max(rho, 0.0)  # lambda >= 0: a negative rho is worth nothing
    # the figure published at lambda 0 is the humans' alone: worth their n, whatever rho
    # would allow at the best weight
    added = out["added_nothing"]
    out["n_eff"] = float(n) if added else round(effective_labels(n, n_judge, r), 1)
    ceiling = ceiling_labels(n, r)
    out["ceiling"] = None if math.isinf(ceiling) else round(ceiling, 1)
    twice = None
    if pass_rate:
        w = np.ones(n) if d["wl"] is None else d["wl"]
        agree = float(1 - w @ np.abs(d["fl"] - d["y"]) / w.sum())
        passes = humans.get("estimate")
        if passes is not None:
            twice = {"judge_agreement": round(agree, 4), "pass_rate": round(float(passes), 4)}
            twice["applies"] = agree <= float(passes)
    out["at_most_twice"] = twice
    out["words"] = _value_words(out)
    return out


def _value_words(v: dict[str, Any]) -> str:
    """The verdict on the judge's worth in one sentence (report, summary, plan, dashboard)."""
    if v["rho"] is None:
        rho = f"{v.get('constant') or 'the values'} do not vary on the sample: no rho"
    else:
        rho = f"rho {v['rho']:.2f}"
        if v["rho_low"] is not None:
            rho += f" [{v['rho_low']:.2f}, {v['rho_high']:.2f}]"
    floor = f"below the floor {v['floor']:.2f} at {v['n_labelled']} labels"
    if v["units"] == "cases":  # items of a case count once: the floor reads the cases
        floor += f" in {v['n_units']} cases"
    if v["added_nothing"]:
        why = f"{rho}, {floor}" if v["rho"] is not None and v["below_floor"] else rho
        return f"{NOTHING} ({why})"
    if v["below_floor"]:
        return f"the judge cannot help yet ({rho} {floor})"
    text = (
        f"{rho}: by it the judge is worth about {v['n_eff']:.0f} human labels from "
        f"{v['n_labelled']} at the best weight, "
        + (
            f"at most {v['ceiling']:.0f} however many items it scores"
            if v["ceiling"] is not None
            else "no ceiling: it matches the humans"
        )
    )
    twice = v.get("at_most_twice") or {}
    if twice.get("applies"):
        text += (
            f"; it agrees with the humans ({twice['judge_agreement']:.2f}) no more often than the "
            f"generator passes ({twice['pass_rate']:.2f}): no unbiased method saves more than "
            f"half the labels, so at most {2 * v['n_labelled']} labels' worth whatever rho says "
            "(Dorner, Nastl & Hardt 2025)"
        )
    return text


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
        costs_of(frames.settings),
    )
    return sec


__all__ = [
    "NOTHING",
    "ceiling_labels",
    "cheapest_mix",
    "correlation",
    "costs_of",
    "debiased_figures",
    "effective_labels",
    "fisher_interval",
    "floor_rho",
    "judge_value",
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
