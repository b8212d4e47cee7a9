"""View rows for the agreement side of the HTML report: metrics and judges (the findings' are
reports/view_findings.py).

Each function takes a piece of the report dict, tolerates missing or odd values,
and returns plain rows for the template. Keys it does not know are passed on as
"other" label/value pairs so nothing the report model adds is silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .formatting import (
    Est,
    as_dict,
    as_of_text,
    est_of,
    fmt_any,
    fmt_num,
    fmt_p,
    is_estimate,
    kept_est_of,
    kv_rows,
    to_float,
    with_interval,
)
from .view_summary import alt_test_rows

_JUDGE_KNOWN = (
    "n_items",
    "alpha_vs_consensus",
    "alpha_with_judge_as_rater",
    "permutation_alpha",
    "exact_agreement",
    "exact_agreement_ci",
    "mean_difference",
    "pearson",
    "spearman",
    "kendall_tau_b",
    "cohen_kappa",
    "confusion",
    "human_range",
    "slices",
    "n_cannot_judge",
    "notes",
    "alpha_humans_same_items",
    "alpha_gain",
    "permutation_pearson",
    "same_scale",
    "reading",
    "vs_held_out_human",
    "item_findings",
    "alt_test",
    "alt_test_note",
    "alt_test_needs",
    "alt_test_balanced",
    "alt_test_balanced_note",
    "alt_test_balanced_needs",
)
_METRIC_KNOWN = (
    "by_generator",
    "kind",
    "level",
    "n_items",
    "n_raters",
    "n_judgements",
    "human_alpha",
    "human_alpha_interval",
    "judges",
    "percent_agreement",
    "fleiss_kappa",
    "gwet_ac1",
    "n_cannot_judge",
    "notes",
    "label",
    "human_alpha_nominal",
    "rater_pairs",
    "n_ties",
    "latent_truth",
)


@dataclass
class Confusion:
    labels: list[str]
    row_labels: list[str]
    rows: list[list[tuple[str, float]]]  # (count text, shade 0..1)
    total: Any
    row_title: str = "humans"
    col_title: str = "judge"


def _confusion(c: Any) -> Confusion | None:
    c = as_dict(c)
    labels = [str(x) for x in (c.get("labels") or [])]
    matrix = c.get("matrix") or []
    if not labels or not isinstance(matrix, (list, tuple)):
        return None
    nums = [to_float(v) or 0.0 for row in matrix if isinstance(row, (list, tuple)) for v in row]
    top = max(nums) if nums else 0.0
    rows = []
    for row in matrix:
        cells = []
        for v in row if isinstance(row, (list, tuple)) else []:
            n = to_float(v) or 0.0
            cells.append((fmt_num(v), n / top if top else 0.0))
        rows.append(cells)
    row_labels = [str(x) for x in (c.get("row_labels") or labels)]
    col_labels = [str(x) for x in (c.get("col_labels") or labels)]
    total = sum(nums)
    return Confusion(
        labels=col_labels,
        row_labels=row_labels,
        rows=rows,
        total=fmt_num(int(total) if total == int(total) else total),
        row_title=str(c.get("rows") or "humans"),
        col_title=str(c.get("columns") or "judge"),
    )


def cell(v: Any) -> Est | str:
    """A table cell: an Est for an estimate dict, else display text."""
    return est_of({"v": v}, "v") if is_estimate(v) else fmt_any(v)


def drop_undefined_columns(keys: list[str], rows: list[tuple[str, list[Est | str]]]) -> list[str]:
    """Drop each column undefined in every row for one reason (from `keys` and the rows, in
    place): a column undefined everywhere says so once, under the table. Returns those
    captions."""
    dropped: dict[str, list[str]] = {}
    for ci in reversed(range(len(keys))):
        cells = [r[1][ci] for r in rows if ci < len(r[1])]
        notes = {c.short_note for c in cells if isinstance(c, Est) and not c.defined}
        if cells and len(notes) == 1 and all(isinstance(c, Est) and not c.defined for c in cells):
            dropped.setdefault(next(iter(notes)) or "", []).insert(0, keys[ci].replace("_", " "))
            del keys[ci]
            for r in rows:
                del r[1][ci]
    return [
        f"{', '.join(cols)}: undefined" + (f" ({note})" if note else "")
        for note, cols in dropped.items()
    ]


def _slices(s: Any) -> list[dict[str, Any]]:
    """{by_case: {case: {...}}, by_generator: {...}} -> tables; rows alphabetical. Every column
    is kept: the section joins a metric's judges' tables, then leaves out a column undefined
    in every row (`drop_undefined_columns`)."""
    out = []
    for dim, groups in as_dict(s).items():
        groups = as_dict(groups)
        if not groups:
            continue
        keys: list[str] = []
        for g in groups.values():
            for k in as_dict(g):
                if k not in keys and not str(k).endswith("_note"):
                    keys.append(k)
        rows: list[tuple[str, list[Est | str]]] = []
        for name in sorted(groups, key=str):
            g = groups[name]
            if isinstance(g, Mapping):
                rows.append((str(name), [cell(g[k]) if k in g else "—" for k in keys]))
            else:
                only: list[Est | str] = [fmt_any(g)]
                rows.append((str(name), only if not keys else only + [""] * (len(keys) - 1)))
        out.append(
            {
                "title": str(dim).replace("_", " "),
                "columns": [k.replace("_", " ") for k in keys] or ["value"],
                "rows": rows,
            }
        )
    return out


def _pair_kappa_rows(pairs: Any) -> tuple[list[str], list[tuple[str, Any, list[Est | str]]]]:
    """{"a vs b": {n, unweighted, linear, quadratic | note}} -> (weights, rows)."""
    pairs = as_dict(pairs)
    weights: list[str] = []
    for v in pairs.values():
        for k in as_dict(v):
            if k not in ("n", "note") and k not in weights:
                weights.append(k)
    rows = []
    for name in sorted(pairs, key=str):
        v = as_dict(pairs[name])
        if not any(w in v for w in weights):
            cells: list[Est | str] = [
                Est(None, n=v.get("n"), note=str(v.get("note") or "") or None)
            ]
            cells += [""] * (len(weights) - 1)
        else:
            cells = [kept_est_of(v, w) for w in weights]
        rows.append((str(name), v.get("n"), cells))
    return weights, rows


def _human_range_text(hr: Any) -> str | None:
    """Where the judge's kappa with each human sits against the humans' kappas with each other."""
    hr = as_dict(hr)
    if not hr:
        return None
    hh = as_dict(hr.get("human_vs_human"))
    lo, hi, jm = to_float(hh.get("min")), to_float(hh.get("max")), to_float(hr.get("judge_mean"))
    measure = str(hr.get("measure") or "kappa").replace("_", " ")
    diff = as_dict(hr.get("difference"))
    if hr.get("position") and diff and jm is not None:

        def ci(f: Any) -> str:
            f = as_dict(f)
            if f.get("low") is None or f.get("high") is None:
                return f"{fmt_num(f.get('estimate'))} (no interval)"
            return f"{fmt_num(f.get('estimate'))} [{fmt_num(f['low'])}, {fmt_num(f['high'])}]"

        where = (
            str(hr.get("position_note"))
            if hr.get("position_note")
            else f"{hr['position']} the human spread"
        )
        return (
            f"{where}: judge-human {measure} {ci(hr.get('judge_mean_ci'))} (mean over raters) "
            f"vs human-human {ci(hr.get('human_mean'))} (pairs {fmt_num(lo)} to {fmt_num(hi)}), "
            f"difference {ci(diff)}, inside when above -{fmt_num(hr.get('margin'))}"
        )
    if hr.get("position") and jm is not None and lo is not None and hi is not None:
        return (
            f"{hr['position']} the human range: judge-human {measure} {fmt_num(jm)} (mean over raters) "
            f"vs human-human {fmt_num(lo)} to {fmt_num(hi)}"
        )
    if hr.get("note"):
        return f"undefined ({hr['note']})"
    if "inside" in hr:  # a plain share, as some report models give it
        return fmt_any(hr)
    return fmt_any(hr)


def _perm_text(perm: Any) -> str:
    perm = as_dict(perm)
    if to_float(perm.get("mean")) is None:
        return Est(None, note=str(perm.get("note") or "") or None).text
    return f"{fmt_num(perm.get('mean'), 3)} · p {fmt_p(perm.get('p_value'))}"


def _latent_text(lt: Any) -> str | None:
    """One line on the Dawid-Skene latent truth of a metric's items."""
    lt = as_dict(lt)
    if not lt:
        return None
    if lt.get("note"):
        return str(lt["note"]) + as_of_text(lt.get("as_of"))
    return (
        f"Dawid-Skene latent truth: {lt.get('n_confident')} of {lt.get('n_items')} items "
        f"with a posterior of at least 0.9; it differs from a clear majority on "
        f"{lt.get('n_differs_from_majority')}"
        + (f" ({lt['scale_as']})" if lt.get("scale_as") else "")
        + as_of_text(lt.get("as_of"))
    )


def metric_view(key: str, m: Mapping[str, Any]) -> dict[str, Any]:
    judges = []
    for jname, j in as_dict(m.get("judges")).items():
        j = as_dict(j)
        perm = as_dict(j.get("permutation_alpha"))
        kappa = j.get("cohen_kappa")
        kappas: list[tuple[str, Est]] = []
        if is_estimate(kappa) or isinstance(kappa, (int, float)):
            kappas.append(("unweighted", est_of(j, "cohen_kappa")))
        elif isinstance(kappa, Mapping):
            kappas = [(str(w), est_of(kappa, w)) for w in kappa]
        judges.append(
            {
                "name": str(jname),
                "n_items": j.get("n_items"),
                "n_cannot_judge": j.get("n_cannot_judge"),
                "alpha_vs_consensus": est_of(j, "alpha_vs_consensus"),
                "alpha_with_judge_as_rater": est_of(j, "alpha_with_judge_as_rater"),
                "perm_present": bool(perm),
                "perm_mean": fmt_num(perm.get("mean"), 3)
                if to_float(perm.get("mean")) is not None
                else None,
                "perm_p": fmt_p(perm.get("p_value")),
                "perm_note": Est(None, note=str(perm["note"])).short_note
                if perm.get("note")
                else None,
                "perm_extra": [
                    (f"shuffles: {k}", v)
                    for k, v in kv_rows(perm, skip=("mean", "p_value", "note"))
                ],
                "exact_agreement": with_interval(
                    j, "exact_agreement", "exact_agreement_ci", j.get("n_items")
                ),
                "mean_difference": est_of(j, "mean_difference"),
                "pearson": est_of(j, "pearson"),
                "spearman": est_of(j, "spearman"),
                "kendall_tau_b": est_of(j, "kendall_tau_b"),
                "kappas": kappas,
                "confusion": _confusion(j.get("confusion")),
                "human_range": _human_range_text(j.get("human_range"))
                if "human_range" in j
                else None,
                "alpha_humans_same_items": est_of(j, "alpha_humans_same_items"),
                "alpha_gain": est_of(j, "alpha_gain"),
                "held_out": est_of(as_dict(j.get("vs_held_out_human")), "difference")
                if as_dict(j.get("vs_held_out_human")).get("difference")
                else None,
                "held_out_q": fmt_p(as_dict(j.get("vs_held_out_human")).get("q_value"))
                if as_dict(j.get("vs_held_out_human")).get("q_value") is not None
                else None,
                "perm_pearson": _perm_text(j.get("permutation_pearson"))
                if "permutation_pearson" in j
                else None,
                "same_scale": j.get("same_scale"),
                "between_points": j.get("reading") == "interval",
                "off_scale": (
                    est_of(j, "alpha_vs_consensus").short_note
                    or "the judge answers on its own scale"
                )
                if j.get("same_scale") is False
                else None,
                "slices": _slices(j.get("slices")),
                "other": kv_rows(j, skip=_JUDGE_KNOWN),
            }
        )
    extras = [
        (label, est_of(m, k))
        for k, label in (
            ("human_alpha_nominal", "alpha, nominal"),
            ("percent_agreement", "percent agreement"),
            ("fleiss_kappa", "Fleiss' kappa"),
            ("gwet_ac1", "Gwet's AC1"),
        )
        if k in m
    ]
    weights, pair_rows = _pair_kappa_rows(m.get("rater_pairs"))
    group, _, option = str(key).partition(":")
    return {
        "key": str(key),
        "label": str(m.get("label") or (option if option else key)),
        "group": group if option and not m.get("label") else None,
        "kind": m.get("kind") or "—",
        "level": m.get("level") or "—",
        "n_items": m.get("n_items"),
        "n_raters": m.get("n_raters"),
        "n_judgements": m.get("n_judgements"),
        "n_cannot_judge": m.get("n_cannot_judge"),
        "human_alpha": est_of(m, "human_alpha"),
        "human_alpha_interval": est_of(m, "human_alpha_interval"),
        "extras": extras,
        "n_ties": m.get("n_ties"),
        "pair_weights": weights,
        "pair_rows": pair_rows,
        "judges": judges,
        "alt_test": alt_test_rows(m),
        "by_generator": _by_generator_rows(m.get("by_generator")),
        "latent": _latent_text(m.get("latent_truth")),
        "other": kv_rows(m, skip=_METRIC_KNOWN),
    }


def _by_generator_rows(block: Any) -> list[dict[str, Any]]:
    """Per generator: items, the humans' alpha and Fleiss' kappa, and each judge's
    correlations with the human mean (`metrics.<m>.by_generator`)."""
    rows = []
    for gen, g in block.items() if isinstance(block, Mapping) else []:
        g = as_dict(g)
        judges = as_dict(g.get("judges"))
        rows.append(
            {
                "generator": str(gen),
                "n_items": g.get("n_items"),
                "alpha": est_of(g, "human_alpha"),
                "fleiss": est_of(g, "fleiss_kappa"),
                "judges": [
                    (str(name), [est_of(j, k) for k in ("pearson", "spearman", "kendall_tau_b")])
                    for name, j in judges.items()
                ],
            }
        )
    return rows
