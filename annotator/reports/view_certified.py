"""The certified sections (stats/certified.py) as rows: the HTML report's tables, the CSV table
and the dashboard's section read the same rows, so they cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..domain.figures import fmt_num, metric_labels
from .formatting import as_dict

PAIR_METRIC = "pair_vote"  # stats/certified_pairs.METRIC: the pair votes' blocks


def _labels(report: Mapping[str, Any]) -> dict[str, str]:
    return {**metric_labels(report), PAIR_METRIC: "pair votes"}


def _ref(judge: Any, version: Any) -> str:
    """judge@version; pair votes carry no version in the report, so the judge alone."""
    return f"{judge}@{version}" if version is not None else str(judge)


def _share(x: Any) -> str:
    return "—" if x is None else f"{float(x):.0%}"


def _threshold(t: Any) -> str:
    return "none: abstains" if t is None else fmt_num(t, 3)


def _judge_rows(sec: Mapping[str, Any], labels: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for judge, metrics in sorted(as_dict(sec.get("judges")).items()):
        for key, b in as_dict(metrics).items():
            b = as_dict(b)
            k, n = b.get("k_disagree_above"), b.get("n_above")
            rows.append(
                {
                    "judge": _ref(judge, b.get("version")),
                    "metric": labels.get(key, key),
                    "threshold": _threshold(b.get("threshold")),
                    "accepted": bool(b.get("accepted")),
                    "calibration": f"{b.get('n_calibration')} ({b.get('n_unclear')} unclear left out)",
                    "above": f"{k} of {n} disagree" if n else "—",
                    "bound": fmt_num(b.get("upper_bound"), 3),
                    "coverage": f"{_share(b.get('coverage'))} ({b.get('n_accepted')} of "
                    f"{b.get('n_to_decide')})",
                    "escalated": str(b.get("n_escalated")),
                    "disagreement": _share(b.get("disagreement")),
                    "min_escalation": _share(b.get("min_escalation")),
                    "note": "; ".join(str(b[x]) for x in ("note", "feasibility") if b.get(x)),
                }
            )
    return rows


def _split_rows(sec: Mapping[str, Any], labels: Mapping[str, str]) -> list[dict[str, Any]]:
    thresholds: dict[tuple[Any, Any], Any] = {
        (j, key): as_dict(b).get("threshold")
        for j, metrics in as_dict(sec.get("judges")).items()
        for key, b in as_dict(metrics).items()
    }
    # the cascade's thresholds (at its share of delta) decide the PAC split
    thresholds |= {
        (s.get("judge"), s.get("metric")): s.get("threshold")
        for s in (sec.get("cascade") or [])
        if isinstance(s, Mapping)
    }
    rows = []
    for key, s in as_dict(sec.get("split")).items():
        s = as_dict(s)
        acc = []
        for ref, n in as_dict(s.get("accepted")).items():
            judge = str(ref).rsplit("@", 1)[0]
            t = thresholds.get((judge, key))
            at = f" at {fmt_num(t, 3)}" if t is not None else ""
            acc.append(f"{ref}{at}: {n}")
        rows.append(
            {
                "metric": labels.get(key, key),
                "accepted": "; ".join(acc) or "—",
                "escalated": str(s.get("escalated")),
                "already_rated": str(s.get("already_rated")),
                "n_items": str(s.get("n_items")),
            }
        )
    return rows


def certified_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Both modes' rows: `pac` (Trust or Escalate: per judge and metric, the cascade, the split)
    and `fdr` (conformal alignment), each with its guarantee in words; None when the report has
    neither (an earlier report)."""
    pac, fdr = as_dict(report.get("certified")), as_dict(report.get("conformal_alignment"))
    if not pac and not fdr:
        return None
    labels = _labels(report)
    cascade = [
        {
            "judge": _ref(s.get("judge"), s.get("version")),
            "metric": labels.get(str(s.get("metric")), str(s.get("metric"))),
            "threshold": _threshold(s.get("threshold")),
            "delta": fmt_num(s.get("delta"), 3),
            "calibration": str(s.get("n_calibration")),
            "above": f"{s.get('k_disagree_above')} of {s.get('n_above')} disagree"
            if s.get("n_above")
            else "—",
            "bound": fmt_num(s.get("upper_bound"), 3),
            "accepted": str(s.get("n_accepted")),
        }
        for s in (pac.get("cascade") or [])
        if isinstance(s, Mapping)
    ]
    items = as_dict(pac.get("items") if pac.get("decides") else fdr.get("items"))
    fdr_rows = []
    for judge, metrics in sorted(as_dict(fdr.get("judges")).items()):
        for key, b in as_dict(metrics).items():
            b = as_dict(b)
            fdr_rows.append(
                {
                    "judge": f"{judge}@{b.get('version')}",
                    "metric": labels.get(key, key),
                    "threshold": _threshold(b.get("threshold")),
                    "calibration": f"{b.get('n_calibration')} "
                    f"({b.get('n_disagree_calibration')} disagree)",
                    "coverage": f"{_share(b.get('coverage'))} ({b.get('n_accepted')} of "
                    f"{b.get('n_to_decide')})",
                    "escalated": str(b.get("n_escalated")),
                }
            )
    return {
        "decides": "pac" if pac.get("decides") else "conformal_alignment",
        "alpha": pac.get("alpha"),
        "delta": pac.get("delta"),
        "q": fdr.get("q"),
        "method": str(pac.get("method") or ""),
        "fdr_method": str(fdr.get("method") or ""),
        "calibration": pac.get("calibration") or "none",
        "calibration_note": str(pac.get("calibration_note") or ""),
        "guarantee": str(pac.get("guarantee") or ""),
        "fdr_guarantee": str(fdr.get("guarantee") or ""),
        "order": [str(j) for j in pac.get("order") or []],
        "pair_order": [str(j) for j in as_dict(pac.get("pairs")).get("order") or []],
        "not_calibrated": [
            f"{as_dict(m).get('judge')}@{as_dict(m).get('version')}: {as_dict(m).get('why')}"
            for m in pac.get("not_calibrated") or []
        ],
        "judges": _judge_rows(pac, labels),
        "cascade": cascade,
        "split": _split_rows(pac if pac.get("decides") else fdr, labels),
        "item_split": (
            f"{items.get('accepted')} items decided by the judges on every certified metric, "
            f"{items.get('escalated')} escalated to raters (some metric unaccepted), "
            f"{items.get('already_rated')} already rated, of {items.get('n_items')}"
            if items
            else ""
        ),
        "fdr": fdr_rows,
        "pair_split": _pair_split(as_dict(pac.get("pairs"))),
    }


def _pair_split(p: Mapping[str, Any]) -> str:
    """The pairs' split in words (always the PAC rule's), or "" when no judge voted on pairs."""
    if not p:
        return ""
    return (
        f"{p.get('accepted')} pairs decided by the judges, {p.get('escalated')} escalated to "
        f"raters, {p.get('already_rated')} already voted on by raters, of {p.get('n_pairs')} "
        f"(calibration: {p.get('calibration') or 'none'}, {p.get('n_unclear')} pairs without a "
        f"clear majority left out; confidence: {p.get('confidence')})"
    )


def certified_pairs_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """The CSV table `certified_pairs`: one row per pair, its decision (accepted by which judge
    at which threshold / escalated / rated) and the vote it stands on (a, b, both, neither:
    the judge's where accepted, the raters' majority where rated)."""
    cols = ["pair_id", "decision", "judge", "threshold", "confidence", "code"]
    rows = as_dict(as_dict(report.get("certified")).get("pairs")).get("decisions") or []
    return pd.DataFrame([{c: as_dict(r).get(c) for c in cols} for r in rows], columns=cols)


def certified_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """The CSV table `certified`: one row per mode, judge (or cascade stage) and metric."""
    rows: list[dict[str, Any]] = []
    pac, fdr = as_dict(report.get("certified")), as_dict(report.get("conformal_alignment"))
    keys = (
        "version",
        "threshold",
        "accepted",
        "n_calibration",
        "n_unclear",
        "n_above",
        "k_disagree_above",
        "upper_bound",
        "coverage",
        "n_to_decide",
        "n_accepted",
        "n_escalated",
        "disagreement",
        "min_escalation",
        "delta",
        "calibration",
    )
    for judge, metrics in sorted(as_dict(pac.get("judges")).items()):
        for key, b in as_dict(metrics).items():
            b = as_dict(b)
            rows.append(
                {"mode": "pac", "part": "judge", "judge": judge, "metric": key}
                | {k: b.get(k) for k in keys}
                | {"alpha": pac.get("alpha"), "q": None}
            )
    for stage, s in enumerate(pac.get("cascade") or []):
        s = as_dict(s)
        rows.append(
            {"mode": "pac", "part": f"cascade stage {stage}", "judge": s.get("judge")}
            | {"metric": s.get("metric")}
            | {k: s.get(k) for k in keys}
            | {"alpha": pac.get("alpha"), "q": None}
        )
    for judge, metrics in sorted(as_dict(fdr.get("judges")).items()):
        for key, b in as_dict(metrics).items():
            b = as_dict(b)
            rows.append(
                {"mode": "conformal_alignment", "part": "judge", "judge": judge, "metric": key}
                | {k: b.get(k) for k in keys}
                | {"alpha": None, "q": b.get("q")}
            )
    cols = ["mode", "part", "judge", "metric", *keys, "alpha", "q"]
    df = pd.DataFrame(rows, columns=cols)
    for c in cols:
        if c.startswith(("n_", "k_")):
            df[c] = df[c].astype("Int64")
    return df


def has_certified_rows(report: Mapping[str, Any]) -> bool:
    return bool(
        as_dict(as_dict(report.get("certified")).get("judges"))
        or as_dict(as_dict(report.get("conformal_alignment")).get("judges"))
    )


__all__ = ["certified_pairs_table", "certified_table", "certified_view", "has_certified_rows"]
