"""The rows of the agreement sections (reports/section_agreement.py and
reports/section_humans_judges.py), from the report dict: each metric's view
(view_metrics.metric_view) with the verdict as one more metric where the report model gives it
a metric's figures, the judges in order, and the agreement chart drawn apart
(`agreement_charts`, for the outputs that show charts).
Tested in tests/unit/test_report_sections.py and tests/unit/test_reports_render.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import charts as _charts
from .formatting import as_dict, fmt_any, kv_rows
from .view_metrics import metric_view


def report_metrics(report: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The report's metrics, with the verdict as one more where the report model gives it the
    figures of a metric, and otherwise the verdict as label/value rows."""
    metrics = dict(as_dict(report.get("metrics")))
    verdict = report.get("verdict")
    rows: list[tuple[str, str]] = []
    if isinstance(verdict, Mapping) and ("human_alpha" in verdict or "judges" in verdict):
        key = "verdict" if "verdict" not in metrics else "verdict (all rules)"
        metrics[key] = {"label": "verdict (all rules)", **verdict}
    elif isinstance(verdict, Mapping):
        rows = kv_rows(verdict)
    elif verdict is not None:
        rows = [("verdict", fmt_any(verdict))]
    return metrics, rows


def judge_order(metrics: Mapping[str, Any]) -> list[str]:
    """Every judge of the metrics, in the order they first appear (the charts' colours)."""
    order: list[str] = []
    for m in metrics.values():
        for j in as_dict(as_dict(m).get("judges")):
            if j not in order:
                order.append(j)
    return order


def metrics_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The rows of the agreement sections: each metric's (`metric_view`), the judges in
    order, and the verdict's label/value rows when it is not a metric; None for a report
    without metrics (a report whose metrics are empty says it has no answers yet)."""
    if "metrics" not in report and report.get("verdict") is None:
        return None
    metrics, verdict = report_metrics(report)
    order = judge_order(metrics)
    return {
        "metrics": [metric_view(k, as_dict(m)) for k, m in metrics.items()],
        "judge_names": [str(j) for j in order],
        "verdict": verdict,
    }


def judged_metrics_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The humans-vs-judges section's rows: `metrics_view`, or None when no metric has a
    judge."""
    if not judge_order(report_metrics(report)[0]):
        return None  # before the rows: a study without a judge has no use for them
    return metrics_view(report)


def agreement_charts(report: Mapping[str, Any]) -> dict[str, bytes]:
    """{"agreement": alpha per metric with its interval, humans and judges, as PNG}, or {} when
    no metric has a figure (matplotlib: only for outputs that show charts)."""
    chart = _charts.agreement_chart(report_metrics(report)[0])
    png = _charts.png_bytes(chart) if chart is not None else None
    return {"agreement": png} if png else {}


__all__ = [
    "agreement_charts",
    "judge_order",
    "judged_metrics_view",
    "metrics_view",
    "report_metrics",
]
