"""Every undefined figure says why: walked over the whole report JSON of degenerate studies
(every answer identical, one rater, a constant judge, one item), no estimate is null without a
reason of its own (never only a caveat such as Fleiss' kappa's nominal scale, never the
generic "undefined on these data")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from verdict_model import draw, frames

from annotator.stats.reconcile import FLEISS_NOMINAL
from annotator.stats.report_model import build_report

GENERIC = "undefined on these data"


def _nulls_without_reason(node: Any, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        if "estimate" in node and node["estimate"] is None:
            note = str(node.get("note") or "")
            if not note or note in (GENERIC, FLEISS_NOMINAL):  # no reason, or a caveat alone
                out.append(f"{path}: {note!r}")
        for k, v in node.items():
            out += _nulls_without_reason(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _nulls_without_reason(v, f"{path}/{i}")
    return out


def _identical(humans: list[dict], judge: dict) -> tuple[list[dict], dict]:
    """Every human answer, and the judge's, the same on every metric."""
    first = {k: v[0] for k, v in humans[0].items()}
    same = [{k: np.full_like(v, first[k]) for k, v in h.items()} for h in humans]
    return same, {k: np.full_like(v, first.get(k, v[0])) for k, v in judge.items()}


@pytest.mark.parametrize("case", ["identical", "one rater", "constant judge", "few items"])
def test_no_null_figure_without_its_reason(case: str) -> None:
    rng = np.random.default_rng(7)
    n = 6 if case == "few items" else 60
    humans, judge = draw(rng, n, "constant" if case == "constant judge" else "exchangeable")
    if case == "identical":
        humans, judge = _identical(humans, judge)
    if case == "one rater":
        humans = humans[:1]
    report = build_report(frames(humans, judge), n_boot=50, n_perm=10)
    assert _nulls_without_reason(report) == []


def test_fleiss_kappa_on_identical_answers_says_they_are_identical() -> None:
    humans, judge = _identical(*draw(np.random.default_rng(3), 40, "exchangeable"))
    report = build_report(frames(humans, judge), n_boot=50, n_perm=10)
    scale = report["metrics"]["layout_hierarchy"]["fleiss_kappa"]
    assert scale["estimate"] is None and "identical" in scale["note"], scale
