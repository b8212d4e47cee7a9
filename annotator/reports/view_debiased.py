"""The debiased section (stats/debiased.py) as rows: the HTML report's table and the CSV's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..domain.figures import figure_label, metric_labels
from .formatting import as_dict, fmt_num


def _iv(d: Any, digits: int = 2) -> str:
    d = as_dict(d)
    if d.get("estimate") is None:
        return "—"
    if d.get("low") is None:
        return f"{fmt_num(d['estimate'], digits)} (no interval)"
    return (
        f"{fmt_num(d['estimate'], digits)} "
        f"[{fmt_num(d['low'], digits)}, {fmt_num(d['high'], digits)}]"
    )


def _signed(d: Any) -> str:
    d = as_dict(d)
    if d.get("estimate") is None or d.get("low") is None:
        return "—"
    return f"{d['estimate']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]"


def _row(unit: str, label: str, fig: Any) -> dict[str, Any]:
    """One figure's HTML row (unit: a generator, or a generator pair "A vs B")."""
    fig = as_dict(fig)
    eff = fig.get("effective_human_labels")
    value = as_dict(fig.get("judge_value"))
    debiased = _iv(fig.get("ppi"))
    if value.get("added_nothing") and debiased != "—":
        debiased += " (humans only)"  # lambda 0: the PPI++ figure is the humans' sample alone
    strata = as_dict(fig.get("stratified"))
    if strata.get("estimate") is not None:
        # stratified PPI beside it (stats/debiased_strata.py), with how many strata it used
        debiased += f"; by {len(strata.get('strata') or [])} strata {_iv(strata)}"
    return {
        "generator": unit,
        "figure": label,
        "debiased": debiased,
        "humans": _iv(fig.get("humans_only")),
        "judge": _iv(fig.get("judge_only")),
        "error": _signed(fig.get("judge_minus_humans")),
        "labels": (
            f"{fmt_num(eff, 0)} of {fig.get('n_sampled')}"
            if eff is not None
            else f"{fig.get('n_sampled')} rated"
        ),
        "n_items": fig.get("n_items"),
        "plan": _plan(fig.get("plan")),
        "value": str(value.get("words") or "—"),
        "note": fig.get("note")
        or as_dict(fig.get("ppi")).get("note")
        or fig.get("judge_only_note")
        or "",
    }


def _plan(p: Any) -> str:
    """The planner's figure (stats/debiased_plan.py) in a cell: labels to add for the target
    width, and to decide the release gate."""
    p = as_dict(p)
    if p.get("reachable") is False:
        return str(p.get("note") or "—")
    if p.get("more_labels") is None:
        return "—"
    if p.get("too_few"):
        return f"+{p['more_labels']} for an interval"
    text = f"+{p['more_labels']} for width {fmt_num(p.get('target_width'), 2)}"
    alone = p.get("n_needed_humans_only")
    if alone is not None:
        text += f" ({alone} labels in all without the judge)"
    mix = as_dict(p.get("cheapest"))
    if mix.get("uses_judge"):
        text += (
            f"; cheapest: {mix['human_labels']} labels and {mix['judge_calls']} judge calls, "
            f"cost {fmt_num(mix['cost'], 1)} against {fmt_num(mix['humans_only_cost'], 1)}"
        )
    g = as_dict(p.get("release_gate"))
    if g:
        if g.get("decided"):
            text += f"; gate {g['decided']}"
        elif g.get("more_labels") is not None:
            text += f"; +{g['more_labels']} to decide the gate"
    return text


def _strengths(bt: Mapping[str, Any]) -> dict[str, Any] | None:
    """A judge's PPI++ Bradley-Terry fit (stats/debiased_bt.py): one row per generator, the
    best first, with its rank-set; or the note saying why there is none."""
    if not bt:
        return None
    if bt.get("note"):
        return {"note": str(bt["note"]), "rows": []}
    strengths = as_dict(bt.get("strengths"))
    ranks = as_dict(bt.get("rank_sets"))
    humans = as_dict(bt.get("humans_only"))
    h_ranks = as_dict(bt.get("humans_only_rank_sets"))
    order = sorted(strengths, key=lambda g: -float(as_dict(strengths[g]).get("estimate") or 0))
    rows = [
        {
            "generator": g,
            "strength": _iv(strengths[g]),
            "ranks": str(as_dict(ranks.get(g)).get("text") or "—"),
            "humans": _iv(humans.get(g)),
            "humans_ranks": str(as_dict(h_ranks.get(g)).get("text") or "—"),
        }
        for g in order
    ]
    return {
        "reference": str(bt.get("reference") or ""),
        "coverage": str(bt.get("coverage") or ""),
        "lam": fmt_num(bt.get("lam"), 2)
        + (f" ({as_dict(bt.get('judge_value')).get('words')})" if bt.get("judge_value") else ""),
        "n": f"{bt.get('n_labelled')} human-voted pairs, {bt.get('n_unlabelled')} judge-only",
        "rows": rows,
    }


def _pairs_view(sec: Mapping[str, Any]) -> dict[str, Any] | None:
    """`debiased.pairs` (stats/debiased_pairs.py): one row per judge and generator pair."""
    p = as_dict(sec.get("pairs"))
    if not p:
        return None
    if not p.get("recorded"):
        return {"recorded": False, "note": str(p.get("note") or ""), "judges": []}
    judges = []
    for judge, jd in sorted(as_dict(p.get("judges")).items()):
        rows = [
            _row(key, f"{as_dict(fig).get('first')}'s win rate", fig)
            for key, fig in sorted(as_dict(as_dict(jd).get("by_pair")).items())
        ]
        strengths = _strengths(as_dict(as_dict(jd).get("bradley_terry")))
        judges.append({"name": str(judge), "rows": rows, "strengths": strengths})
    s = as_dict(p.get("sample"))
    return {
        "recorded": True,
        "figure": str(p.get("figure") or ""),
        "sample": (
            f"{s.get('n_drawn')} pairs drawn ({s.get('design') or 'uniform'}; seed "
            f"{s.get('seed')}), {s.get('n_drawn_answered')} voted on; "
            f"{s.get('n_human_pairs_outside_sample')} pairs voted on outside the sample are "
            "not used"
        ),
        "used": str(p.get("used") or ""),
        "judges": judges,
    }


def debiased_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    sec = as_dict(report.get("debiased"))
    if not sec:
        return None
    summary = as_dict(as_dict(report.get("summary")).get("debiased"))
    pairs = _pairs_view(sec)
    if not sec.get("recorded"):
        return {"recorded": False, "note": str(sec.get("note") or ""), "judges": [], "pairs": pairs}
    kinds = as_dict(sec.get("figures"))
    labels = metric_labels(report)
    judges = []
    for judge, jd in sorted(as_dict(sec.get("judges")).items()):
        rows = []
        sets = as_dict(as_dict(jd).get("rank_sets"))
        for gen, figs in sorted(as_dict(as_dict(jd).get("by_generator")).items()):
            for name, fig in as_dict(figs).items():
                label = figure_label(name, labels)
                row = _row(gen, f"{label} ({kinds.get(name, '')})", fig)
                ranks = as_dict(as_dict(sets.get(name)).get("rank_sets"))
                row["rank_set"] = str(as_dict(ranks.get(gen)).get("text") or "—")
                rows.append(row)
        judges.append({"name": str(judge), "rows": rows, "ranks": _rank_notes(sets, labels)})
    s = as_dict(sec.get("sample"))
    return {
        "recorded": True,
        "sample": (
            f"{s.get('n_drawn')} items drawn ({s.get('design') or 'uniform'}; seed {s.get('seed')}), "
            f"{s.get('n_drawn_answered')} answered; {s.get('n_human_items_outside_sample')} "
            "items rated outside the sample are not used"
        ),
        "used": str(sec.get("used") or ""),
        "lines": [str(x) for x in summary.get("lines") or []],
        "judges": judges,
        "pairs": pairs,
    }


def _rank_notes(sets: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    """What a judge's rank-sets (stats/debiased_ranks.py) claim, once, and why a figure has
    none."""
    out = []
    coverage = next(
        (as_dict(e).get("coverage") for e in sets.values() if as_dict(e).get("coverage")), None
    )
    if coverage:
        out.append(f"a rank-set is every rank the data allow; the {coverage}")
    for name, e in sets.items():
        if as_dict(e).get("note"):
            out.append(f"{figure_label(name, labels)}: {as_dict(e)['note']}")
    return out


_CSV_FIGURES = ("ppi", "humans_only", "judge_only", "judge_minus_humans")
_CSV_COUNTS = ("lambda", "effective_human_labels", "n_sampled", "n_items", "n_cases")
_CSV_VALUE = ("rho", "rho_low", "rho_high", "n_eff", "ceiling", "floor", "added_nothing", "words")


def _csv_row(judge: str, unit: str, name: str, fig: Any) -> dict[str, Any]:
    fig = as_dict(fig)
    row: dict[str, Any] = {"judge": judge, "generator": unit, "figure": name}
    for key in _CSV_FIGURES:
        d = as_dict(fig.get(key))
        row[key] = d.get("estimate")
        row[f"{key}_low"] = d.get("low")
        row[f"{key}_high"] = d.get("high")
    for key in _CSV_COUNTS:
        row[key] = fig.get(key)
    value = as_dict(fig.get("judge_value"))
    for key in _CSV_VALUE:
        row[f"judge_{key}"] = value.get(key)
    strata = as_dict(fig.get("stratified"))
    row["stratified"] = strata.get("estimate")
    row["stratified_low"] = strata.get("low")
    row["stratified_high"] = strata.get("high")
    row["stratified_width_ratio"] = strata.get("width_ratio")
    plan = as_dict(fig.get("plan"))
    row["plan_target_width"] = plan.get("target_width")
    row["plan_more_labels"] = plan.get("more_labels")
    row["plan_gate_more_labels"] = as_dict(plan.get("release_gate")).get("more_labels")
    row["plan_labels_humans_only"] = plan.get("n_needed_humans_only")
    mix = as_dict(plan.get("cheapest"))
    row["plan_cheapest_labels"] = mix.get("human_labels")
    row["plan_cheapest_judge_calls"] = mix.get("judge_calls")
    row["note"] = fig.get("note")
    return row


def debiased_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per judge, generator and figure (CSV `debiased.csv`); then one per judge and
    generator pair, `generator` "A vs B" and figure `win_rate` (A's; n_items counts pairs); then
    one per judge and generator, figure `bt_strength` (its Bradley-Terry strength against the
    reference, the debiased one in `ppi`, with `rank_set`)."""
    sec = as_dict(report.get("debiased"))
    rows = []
    for judge, jd in sorted(as_dict(sec.get("judges")).items()):
        sets = as_dict(as_dict(jd).get("rank_sets"))
        for gen, figs in sorted(as_dict(as_dict(jd).get("by_generator")).items()):
            for name, fig in as_dict(figs).items():
                row = _csv_row(judge, gen, name, fig)
                ranks = as_dict(as_dict(sets.get(name)).get("rank_sets"))
                row["rank_set"] = as_dict(ranks.get(gen)).get("text")
                rows.append(row)
    pairs = as_dict(sec.get("pairs"))
    for judge, jd in sorted(as_dict(pairs.get("judges")).items()):
        for key, fig in sorted(as_dict(as_dict(jd).get("by_pair")).items()):
            rows.append(_csv_row(judge, key, "win_rate", fig))
        bt = as_dict(as_dict(jd).get("bradley_terry"))
        humans = as_dict(bt.get("humans_only"))
        for gen, fig in sorted(as_dict(bt.get("strengths")).items()):
            row = _csv_row(judge, gen, "bt_strength", {"ppi": fig, "humans_only": humans.get(gen)})
            row["lambda"] = bt.get("lam")
            row["rank_set"] = as_dict(as_dict(bt.get("rank_sets")).get(gen)).get("text")
            rows.append(row)
    return pd.DataFrame(rows)


def has_debiased_rows(report: Mapping[str, Any]) -> bool:
    """Whether the report has a debiased figure for the CSV (items or pairs)."""
    sec = as_dict(report.get("debiased"))
    return bool(sec.get("judges")) or bool(as_dict(sec.get("pairs")).get("judges"))
