"""View rows for the study side of the HTML report: generators and pairwise (the raters' rows
are reports/view_raters.py).

Cases are always listed alphabetically and generators side by side, so a row
holds one case fixed; nothing is ordered by a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cell_memo import CaseRowMemo, CellMemo
from .formatting import (
    as_dict,
    est_of,
    fmt_any,
    fmt_num,
    fmt_p,
    fmt_share,
    kv_rows,
    to_float,
    with_interval,
)
from .view_judges import judge_swap_view
from .view_metrics import cell


def _gate_view(name: str, gate: Any) -> dict[str, Any]:
    """A release-gate record ({pass, checks} or a plain flag/dict) as display parts."""
    if isinstance(gate, bool):
        return {"name": name, "pass": gate, "checks": []}
    g = as_dict(gate)
    verdict = g.get("pass", g.get("passes"))
    checks = []
    for fig, c in as_dict(g.get("checks")).items():
        c = as_dict(c)
        low = to_float(c.get("low"))
        text = (
            f"lower bound {'≈' if c.get('approximate') else ''}{fmt_num(low)} vs threshold "
            f"{fmt_num(c.get('threshold'))}"
            if low is not None
            else f"threshold {fmt_num(c.get('threshold'))}: {c.get('note') or 'no interval'}"
        )
        checks.append((str(fig), bool(c.get("pass")), text))
    other = kv_rows(g, skip=("pass", "passes", "checks"))
    return {
        "name": name,
        "pass": verdict if isinstance(verdict, bool) else None,
        "checks": checks,
        "other": other,
    }


def generators_view(gens: Any, names_of: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Generators side by side, one table per figure, cases alphabetical in rows.

    Accepts the report model's {"cases", "figures", "by_generator": {g: {overall, by_case,
    release_gate}}, "release_gate"} and the simpler {g: {overall, cases, release_gate}}.
    """
    gens = as_dict(gens)
    if not gens:
        return None
    if "by_generator" in gens:
        by_gen = as_dict(gens.get("by_generator"))
        case_key = "by_case"
        labels = {str(k): str(v) for k, v in as_dict(gens.get("figures")).items()}
        declared_cases = [str(c) for c in gens.get("cases") or []]
        gate_rule = as_dict(gens.get("release_gate"))
    else:
        by_gen, case_key, labels, declared_cases, gate_rule = gens, "cases", {}, [], {}
    if not by_gen:
        return None
    names = sorted(by_gen, key=str)
    count_keys = ("n_items", "n_cases", "n_answers")
    fig_keys: list[str] = list(labels)
    case_ids: set[str] = set(declared_cases)
    seen = {*fig_keys, *count_keys}  # every key read so far, a figure's or not
    for g in names:
        gd = as_dict(by_gen[g])
        for k in as_dict(gd.get("overall")):
            if k not in fig_keys and k not in count_keys:
                fig_keys.append(k)
                seen.add(k)
        cases_of = as_dict(gd.get(case_key))
        case_ids.update(map(str, cases_of))
        for c in cases_of.values():
            c = as_dict(c)
            if c.keys() <= seen:  # nothing new in it (25,000 cells at a million judgements)
                continue
            for k in c:
                if k not in fig_keys and k not in count_keys and not str(k).endswith("_note"):
                    fig_keys.append(k)
                seen.add(k)
    # the verdict is what a release decision reads first
    fig_keys.sort(key=lambda k: 0 if "verdict" in str(k) else 1)
    # Cases alphabetical, generators side by side: a row holds one case fixed.
    cases = sorted(case_ids)
    # each generator's cases by id, once (per figure and case, rebuilding them was quadratic in
    # the cases: seconds for a thousand)
    per_case = {
        g: {str(c): v for c, v in as_dict(as_dict(by_gen[g]).get(case_key)).items()} for g in names
    }
    figures = []
    cells_of = CellMemo()  # the per-case cells: 25,000 at a million judgements
    rows_of = CaseRowMemo((tuple(names), tuple(fig_keys)))
    by_figure: list[list[tuple[str, list[Any]]]] = [[] for _ in fig_keys]
    for cid in cases:
        refs = tuple(per_case[g].get(cid) for g in names)
        case_rows = rows_of.get(cid, refs)
        if case_rows is None:
            case_rows = [
                [cells_of(c.get(k)) if isinstance(c, Mapping) and k in c else "—" for c in refs]
                for k in fig_keys
            ]
            rows_of.put(cid, refs, case_rows)
        for f, cells in enumerate(case_rows):
            by_figure[f].append((cid, cells))
    for k, rows in zip(fig_keys, by_figure, strict=True):
        overall = [
            cell(as_dict(as_dict(by_gen[g]).get("overall")).get(k))
            if k in as_dict(as_dict(by_gen[g]).get("overall"))
            else "—"
            for g in names
        ]
        label = labels.get(k)
        figures.append(
            {
                "key": str(k),
                "label": f"{(names_of or {}).get(k, k)} · {label}"
                if label
                else str(k).replace("_", " "),
                "overall": overall,
                "rows": rows,
            }
        )
    cells_of.keep()
    rows_of.keep()
    gates = [
        _gate_view(str(g), as_dict(by_gen[g]).get("release_gate"))
        for g in names
        if "release_gate" in as_dict(by_gen[g])
    ]
    counts = [
        {
            "name": str(g),
            "n_items": fmt_num(as_dict(by_gen[g]).get("n_items")),
            "n_cases": fmt_num(as_dict(by_gen[g]).get("n_cases")),
        }
        for g in names
    ]
    rule = gate_rule.get("rule")
    thresholds = kv_rows(gate_rule.get("thresholds"))
    return {
        "names": [str(g) for g in names],
        "cases": cases,
        "figures": figures,
        "gates": gates,
        "gate_rule": str(rule) if rule else None,
        "gate_thresholds": thresholds,
        "counts": counts,
        "differences": _differences(
            gens.get("differences"), {str(f["key"]): str(f["label"]) for f in figures}
        )
        if "by_generator" in gens
        else [],
        "other": kv_rows(
            gens, skip=("cases", "figures", "by_generator", "release_gate", "differences")
        )
        if "by_generator" in gens
        else [],
    }


def _differences(diffs: Any, labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """{"a - b": {figure: estimate}} -> one row per generator pair and figure, in the report's
    order (the paired difference over the cases both generators have); a figure named as its
    case-by-case table names it."""
    return [
        {"pair": str(pair), "figure": labels.get(str(k), str(k)), "difference": cell(v)}
        for pair, figs in as_dict(diffs).items()
        for k, v in as_dict(figs).items()
    ]


def generators_section_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The generators section's rows: generators_view with the figures named as the reader
    knows the metrics."""
    from .view_summary import metric_labels

    return generators_view(
        report.get("generators"),
        {**metric_labels(report), "verdict_pass_rate": "verdict pass rate"},
    )


def _tally_row(c: Mapping[str, Any], pair: str) -> dict[str, Any]:
    """One tally: wins per generator, ties, sides shown, and the share only if the report gives one."""
    wins = as_dict(c.get("wins"))
    gens = list(wins) or [g.strip() for g in pair.split(" vs ", 1)]
    share = as_dict(c.get("share"))
    share_text = " · ".join(f"{k} {fmt_share(v)}" for k, v in share.items()) if share else ""
    return {
        "n": fmt_num(c.get("n")),
        "wins": [(str(g), fmt_num(wins.get(g)) if g in wins else "—") for g in gens],
        "both": fmt_num(c.get("both")),
        "neither": fmt_num(c.get("neither")),
        "left": fmt_num(c.get("left")),
        "right": fmt_num(c.get("right")),
        "share": share_text,
        "note": str(c.get("note") or ""),
        "other": kv_rows(
            c, skip=("n", "wins", "both", "neither", "left", "right", "share", "note")
        ),
    }


def _side_row(name: str, d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "left": fmt_num(d.get("left")),
        "right": fmt_num(d.get("right")),
        "n": fmt_num(
            d.get("n")
            if d.get("n") is not None
            else (d.get("left") or 0) + (d.get("right") or 0)
            if "left" in d
            else None
        ),
        "share_left": fmt_share(d.get("share_left")) if d.get("share_left") is not None else "",
        "p": fmt_p(d.get("p_value")),
        "p_adjusted": fmt_p(d.get("p_adjusted")) if "p_adjusted" in d else "",
        "flagged": bool(d.get("flagged")),
        "note": str(d.get("note") or ""),
        "test": str(d.get("test") or ""),
        "power": str(as_dict(d.get("power")).get("text") or ""),
    }


_PAIRWISE_KNOWN = (
    "cells",
    "generator_pairs",
    "bradley_terry",
    "bradley_terry_by_case",
    "position_bias",
    "rater_alpha",
    "rater_kappas",
    "rater_kappas_detail",
    "flagged_raters",
    "judges",
    "settings",
    "majority_counts",
    "bradley_terry_note",
)


def pairwise_view(p: Any) -> dict[str, Any] | None:
    p = as_dict(p)
    if not p:
        return None
    cells = as_dict(p.get("cells"))
    rows = []
    for cid in sorted(cells, key=str):  # cases alphabetical, never by a score
        for pair in sorted(as_dict(cells[cid]), key=str):
            rows.append(
                {
                    "case_id": str(cid),
                    "pair": str(pair),
                    **_tally_row(as_dict(as_dict(cells[cid])[pair]), str(pair)),
                }
            )
    gp = as_dict(p.get("generator_pairs"))
    gen_pairs = [
        {
            "pair": str(k),
            "n_cells": fmt_num(as_dict(v).get("n_cells")),
            **_tally_row(as_dict(v), str(k)),
        }
        for k, v in sorted(gp.items(), key=lambda kv: str(kv[0]))
    ]
    bt = as_dict(p.get("bradley_terry"))
    bt_rows = [{"name": str(g), "est": est_of(bt, g)} for g in sorted(bt, key=str)]
    by_case = as_dict(p.get("bradley_terry_by_case"))
    bt_gens = sorted({str(g) for c in by_case.values() for g in as_dict(c)} | {str(g) for g in bt})
    bt_cases = [
        {"case_id": str(cid), "cells": [est_of(as_dict(by_case[cid]), g) for g in bt_gens]}
        for cid in sorted(by_case, key=str)
    ]
    pb = as_dict(p.get("position_bias"))
    by_rater = [
        _side_row(str(k), as_dict(v))
        for k, v in sorted(as_dict(pb.get("by_rater")).items(), key=lambda kv: str(kv[0]))
    ]
    judges = []
    for jname, j in as_dict(p.get("judges")).items():
        j = as_dict(j)
        jpb = as_dict(j.get("position_bias"))
        judges.append(
            {
                "name": str(jname),
                "n": j.get("n"),
                "agreement": with_interval(
                    j, "agreement_with_majority", "agreement_interval", j.get("n")
                ),
                "kappa": with_interval(j, "kappa_vs_majority", "kappa_interval", j.get("n")),
                "macro_f1": fmt_num(j.get("macro_f1")) if "macro_f1" in j else "—",
                "n_no_majority": fmt_num(j.get("n_no_majority")) if "n_no_majority" in j else "—",
                "n_without_humans": fmt_num(j.get("n_without_humans"))
                if "n_without_humans" in j
                else "—",
                "position_bias": _side_row(str(jname), jpb) if jpb else None,
                "other": kv_rows(
                    j,
                    skip=(
                        "n",
                        "agreement_with_majority",
                        "kappa_vs_majority",
                        "agreement_interval",
                        "kappa_interval",
                        "n_no_majority",
                        "n_without_humans",
                        "position_bias",
                        "macro_f1",
                        "note",
                    ),
                ),
            }
        )
    detail = as_dict(p.get("rater_kappas_detail"))
    kappas = as_dict(p.get("rater_kappas"))
    rater_kappas = []
    for key in sorted(set(detail) | set(kappas), key=str):
        a, _, b = str(key).partition("|")
        e = est_of(detail, key) if key in detail else est_of(kappas, key)
        rater_kappas.append({"a": a, "b": b, "est": e})
    flagged = p.get("flagged_raters", pb.get("flagged_raters")) or []
    ra = as_dict(p.get("rater_alpha"))
    settings = as_dict(p.get("settings"))
    empty = not (
        rows
        or gen_pairs
        or bt_rows
        or judges
        or to_float(pb.get("n"))
        or pb.get("left")
        or pb.get("right")
    )
    return {
        "empty": empty,
        "cells": rows,
        "generator_pairs": gen_pairs,
        "bradley_terry": bt_rows,
        "bradley_terry_note": p.get("bradley_terry_note"),
        "bt_gens": bt_gens,
        "bt_pooled": [est_of(bt, g) for g in bt_gens],
        "bt_cases": bt_cases,
        "position_bias": {"present": bool(pb), **_side_row("all raters", pb)},
        "multiplicity": pb.get("multiplicity"),
        "by_rater": by_rater,
        "rater_alpha": est_of(p, "rater_alpha"),
        "rater_alpha_meta": kv_rows(ra, skip=("estimate", "low", "high", "n", "note")),
        "rater_kappas": rater_kappas,
        "flagged_raters": [str(x) for x in flagged]
        if isinstance(flagged, (list, tuple))
        else [fmt_any(flagged)],
        "majority_counts": kv_rows(p.get("majority_counts")),
        "judges": judges,
        "min_count": settings.get("min_count"),
        "settings": kv_rows(settings),
        "note": str(p.get("note")) if p.get("note") else None,
        "other": kv_rows(p, skip=_PAIRWISE_KNOWN + ("note",)),
    }


def pairwise_section_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pairwise section's rows: pairwise_view with the judges asked in both orders."""
    rows = pairwise_view(report.get("pairwise"))
    if rows is None:
        return None
    return {**rows, "judge_swaps": judge_swap_view(report.get("pairwise"))}


def pairwise_charts(report: Mapping[str, Any]) -> dict[str, bytes]:
    """{"bradley_terry": the strengths' forest plot as PNG} when the report has strengths
    (matplotlib: only for outputs that show charts)."""
    from .charts import bradley_terry_chart, png_bytes

    bt = as_dict(as_dict(report.get("pairwise")).get("bradley_terry"))
    chart = bradley_terry_chart(bt) if bt else None
    png = png_bytes(chart) if chart is not None else None
    return {"bradley_terry": png} if png else {}
