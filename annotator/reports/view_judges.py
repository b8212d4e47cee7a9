"""The judge's own sections: its versions compared on the same items and its calibration
(ECE, Brier), as the rows reports/section_judges.py lays out (the reliability diagrams are drawn
apart, `judge_charts`, for the outputs that show charts); and its votes in both orders on
pairs, as rows the HTML report's pairwise block lays out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import as_dict, est_of, fmt_num

MEASURE_TEXT = {"accuracy": "accuracy", "mean_abs_error": "mean abs. error"}


def _paired_text(m: Mapping[str, Any]) -> str:
    """McNemar's exact test and the flip rate's bound, in one cell."""
    mc, fl = as_dict(m.get("mcnemar")), as_dict(m.get("flip_rate"))
    parts = []
    if mc.get("n"):
        parts.append(
            f"agrees with humans: A only {mc.get('a_only')}, B only {mc.get('b_only')} "
            f"(exact McNemar p {fmt_num(mc.get('p_value'), 3)})"
        )
    if fl.get("n"):
        parts.append(
            f"flip rate {fl.get('n_flipped')}/{fl.get('n')}, at most "
            f"{fmt_num(fl.get('upper_bound'), 3)} at 95%"
        )
    return "; ".join(parts)


def judge_versions_view(section: Any) -> list[dict[str, Any]]:
    """One block per judge with two or more versions."""
    out = []
    for judge, entry in as_dict(section).items():
        entry = as_dict(entry)
        comp = as_dict(entry.get("comparison"))
        rows = []
        for metric, m in as_dict(comp.get("metrics")).items():
            m = as_dict(m)
            ch = as_dict(m.get("changed"))
            rows.append(
                {
                    "metric": str(metric),
                    "measure": MEASURE_TEXT.get(str(m.get("measure")), str(m.get("measure"))),
                    "better_if": str(m.get("better_if") or ""),
                    "a": est_of(m, "a"),
                    "b": est_of(m, "b"),
                    "difference": est_of(m, "difference"),
                    "n_changed": ch.get("n", 0),
                    "n_better": ch.get("n_better", 0),
                    "n_worse": ch.get("n_worse", 0),
                    "n_other": ch.get("n_other", 0),
                    "tests": _paired_text(m),
                    "examples": [
                        {"kind": kind, **as_dict(it)}
                        for kind in ("worse", "better")
                        for it in (ch.get(kind) or [])[:5]
                    ],
                }
            )
        out.append(
            {
                "judge": str(judge),
                "versions": [
                    {
                        "version": str(as_dict(v).get("version")),
                        "n_items": as_dict(v).get("n_items"),
                        "with_confidence": bool(as_dict(v).get("with_confidence")),
                    }
                    for v in entry.get("versions") or []
                ],
                "a": str(comp.get("a") or ""),
                "b": str(comp.get("b") or ""),
                "rows": rows,
            }
        )
    return out


def judge_calibration_view(section: Any) -> list[dict[str, Any]]:
    """One block per judge: its latest version that stated confidences."""
    out = []
    for judge, entry in as_dict(section).items():
        entry = as_dict(entry)
        rows = []
        for metric, m in as_dict(entry.get("metrics")).items():
            m = as_dict(m)
            rows.append(
                {
                    "metric": str(metric),
                    "n": m.get("n"),
                    "ece": est_of(m, "ece"),
                    "calibration_test": str(as_dict(m.get("calibration_test")).get("text") or ""),
                    "miscalibrated": bool(as_dict(m.get("calibration_test")).get("miscalibrated")),
                    "brier": est_of(m, "brier"),
                    "accuracy": fmt_num(m.get("accuracy")),
                    "mean_confidence": fmt_num(m.get("mean_confidence")),
                }
            )
        out.append(
            {
                "judge": str(judge),
                "version": str(entry.get("version") or ""),
                "rows": rows,
            }
        )
    return out


def judges_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The section's rows: the versions compared and the calibrations, or None when the report
    has neither."""
    versions = judge_versions_view(report.get("judge_versions"))
    calibration = judge_calibration_view(report.get("judge_calibration"))
    if not versions and not calibration:
        return None
    return {"versions": versions, "calibration": calibration}


def judge_charts(report: Mapping[str, Any]) -> dict[str, bytes]:
    """{judge: its reliability diagram as PNG} (matplotlib: only for outputs that show charts)."""
    from .charts import png_bytes, reliability_charts

    return {
        judge: png
        for judge, chart in reliability_charts(report.get("judge_calibration")).items()
        if (png := png_bytes(chart))
    }


def judge_swap_view(pairwise: Any) -> list[dict[str, Any]]:
    """Judges that voted on pairs in both orders: consistency and the left-left test."""
    out = []
    for judge, j in as_dict(as_dict(pairwise).get("judges")).items():
        j = as_dict(j)
        if "swap_consistency" not in j:
            continue
        pb = as_dict(j.get("position_bias"))
        p = pb.get("p_value")
        out.append(
            {
                "judge": str(judge),
                "consistency": est_of(j, "swap_consistency"),
                "n_pairs": j.get("n_pairs_both_orders"),
                "left_left": pb.get("left_left", 0),
                "right_right": pb.get("right_right", 0),
                "p": "—" if p is None else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}"),
                "flagged": bool(pb.get("flagged")),
                "note": pb.get("note"),
            }
        )
    return out


__all__ = [
    "judge_calibration_view",
    "judge_charts",
    "judge_swap_view",
    "judge_versions_view",
    "judges_view",
]
