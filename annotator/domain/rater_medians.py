"""A rater's figures summed up over the metrics, for the places that show one line per rater
(the raters table of the report and the app: reports/view_raters.py): the median of their
exact agreement with the others' consensus, and the median of their competence. Read from a
finished report's `raters.<name>` entry; standard library only (the dashboard lays out on a
thread that must not import numpy first).
Tested in tests/unit/test_stats_summary.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from ..domain.figures import as_dict


def _estimates(figures: Any) -> list[float]:
    found = [as_dict(f).get("estimate") for f in as_dict(figures).values()]
    return [float(v) for v in found if v is not None]


def median_agreement(rater: Mapping[str, Any]) -> tuple[float, int] | None:
    """(median over metrics of the exact agreement with the others' consensus, metrics counted),
    or None when no metric has the figure."""
    vals = [
        v
        for v in (
            as_dict(as_dict(f).get("exact_agreement")).get("estimate")
            for f in as_dict(rater.get("agreement_with_consensus")).values()
        )
        if v is not None
    ]
    return (float(statistics.median(vals)), len(vals)) if vals else None


def median_competence(rater: Mapping[str, Any]) -> float | None:
    """The median over metrics of the rater's competence estimate, or None when no metric has
    one (a degenerate fit says why in its note)."""
    vals = _estimates(rater.get("competence"))
    return float(statistics.median(vals)) if vals else None
