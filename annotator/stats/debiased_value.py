"""What a judge is worth in a debiased figure: its correlation with the humans and what follows.

rho, the judge-human correlation on the sampled items (weighted as the figure), with its
Fisher z interval; the effective labels n (n + N) / (n + (1 - rho^2) N) (n labels, N
judge-only items: the variance of PPI++ at the best lambda is the humans' alone times
1 - rho^2 N / (n + N)) and their ceiling n / (1 - rho^2) as the judge scores ever more items;
the small-sample floor 1 / sqrt(n - 2) below which PPI++ does not beat humans alone; the
factor-2 limit of Dorner, Nastl & Hardt (ICLR 2025) where the judge is no more accurate than
the generator it judges; "the judge added nothing here: humans only" where lambda is 0; the
design effect of the cases (stats/debiased_plan.py plans with it); and `cheapest_mix`,
ppi_py's power formula (ppi_power) for the cheapest human labels and judge calls. The
conditions each rule uses: docs/statistics.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .debiased import ppi_mean

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


NOTHING = "the judge added nothing here: humans only"
# below this many sampled cases the case-level share of the variance is too noisy to plan on
# (a ratio of two variances on fewer than 14 degrees of freedom): the plan then says its count
# is a lower bound instead
MIN_DEFF_CASES = 15


def _arrays(sub: pd.DataFrame) -> dict[str, Any]:
    """The arrays stats/debiased.py's figure estimates from (its `sub` frame: f, y, case_id, pi,
    in_sample), weighted as it weights them, so rho and the design effect read the same data."""
    case = sub["case_id"].to_numpy()
    codes = pd.factorize(case)[0]
    if len(codes) and codes.min() >= 0:  # every item in a case: its case's size by counting
        size = np.bincount(codes)[codes].astype(float)
        n_cases = int(codes.max()) + 1
    else:  # a missing case counts in no case (as a groupby leaves it out)
        size = sub.groupby("case_id")["f"].transform("size").to_numpy(float)
        n_cases = len(np.unique(case))
    v = 1.0 / (size * n_cases)
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


__all__ = [
    "MIN_DEFF_CASES",
    "NOTHING",
    "ceiling_labels",
    "cheapest_mix",
    "correlation",
    "design_effects",
    "effective_labels",
    "fisher_interval",
    "floor_rho",
    "judge_value",
]
