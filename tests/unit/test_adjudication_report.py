"""The report's adjudication section on a hand-computed study: with whom the lead sided, each
rater's and judge's accuracy against the lead, rubric feedback, and human agreement untouched."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.domain.rubric import parse_rubric
from annotator.reports.html_report import render_html
from annotator.stats.frames import ADJUDICATION_COLUMNS, JUDGEMENT_COLUMNS, StudyFrames
from annotator.stats.report_model import build_report

RUBRIC = parse_rubric(
    'id = "r"\ntitle = "r"\n'
    '[[metrics]]\nkey = "ok"\nkind = "gate"\n'
    '[[metrics]]\nkey = "look"\nkind = "scale"\nmin = 1\nmax = 5\n'
)

# item: rater answers on the gate, the judge's, the lead's (category), and the side it counts as
GATE = {
    "i0": ({"a": "PASS", "b": "PASS", "c": "FAIL"}, "FAIL", "PASS", None),  # majority
    "i1": ({"a": "FAIL", "b": "FAIL", "c": "PASS"}, "PASS", "PASS", None),  # judge over consensus
    "i2": ({"a": "PASS", "b": "FAIL"}, "PASS", "FAIL", None),  # tie broken
    "i3": ({"a": "PASS", "b": "PASS", "c": "FAIL"}, "PASS", "FAIL", "rubric_unclear"),  # minority
}


def frames(with_adjudications: bool = True) -> StudyFrames:
    items = pd.DataFrame(
        {
            "item_id": list(GATE),
            "display_code": list(GATE),
            "case_id": ["c"] * 4,
            "cell_id": ["c"] * 4,
            "generator": ["g"] * 4,
            "slice": None,
        }
    )
    rows, judge, adj = [], [], []
    for item, (humans, j, lead, category) in GATE.items():
        for rater, v in humans.items():
            rows.append((item, rater, "ok", v))
            rows.append((item, rater, "look", {"a": 2, "b": 3, "c": 3}[rater]))
        judge += [(item, "j", "ok", j, None), (item, "j", "look", 4, None)]
        adj.append((item, "ok", lead, "because", category, "lead", None))
    adj.append(("i0", "look", 5, "nobody said 5", None, "lead", None))  # a new answer
    judgements = pd.DataFrame(rows, columns=["item_id", "rater", "metric", "value"]).assign(
        reason=None, created_at=None, session_id=None, position=None
    )[JUDGEMENT_COLUMNS]
    return StudyFrames(
        "s",
        RUBRIC,
        items=items,
        judgements=judgements,
        judge_scores=pd.DataFrame(judge, columns=["item_id", "judge", "metric", "value", "reason"]),
        adjudications=pd.DataFrame(adj if with_adjudications else [], columns=ADJUDICATION_COLUMNS),
        settings={"min_count_for_share": 3},
    )


@pytest.fixture(scope="module")
def report() -> dict:
    return build_report(frames(), n_boot=200, seed=3)


def test_sides_are_counted_as_defined(report):
    a = report["adjudication"]
    assert a["n_items"] == 4 and a["n_decisions"] == 5
    assert a["sided_with_by_metric"]["ok"] == {
        "majority": 1,
        "judge": 1,
        "minority": 1,
        "tie_broken": 1,
        "new_answer": 0,
    }
    assert a["sided_with_by_metric"]["look"]["new_answer"] == 1
    assert sum(a["sided_with"].values()) == 5


def test_accuracy_against_the_lead_is_the_hand_count(report):
    a = report["adjudication"]
    # gate: a 1/4, b 2/4, c 2/3; scale on i0 (lead 5): nobody right
    expected = {"a": (1, 5), "b": (2, 5), "c": (2, 4)}
    for rater, (hits, n) in expected.items():
        acc = a["raters"][rater]["accuracy"]
        assert acc["estimate"] == pytest.approx(hits / n) and acc["n"] == n, rater
        assert acc["low"] <= acc["estimate"] <= acc["high"]
    assert a["judges"]["j"]["accuracy"]["estimate"] == pytest.approx(1 / 5)


def test_below_the_minimum_count_accuracy_is_undefined_with_its_reason():
    f = frames()
    f.settings["min_count_for_share"] = 10
    acc = build_report(f, n_boot=20, seed=3)["adjudication"]["raters"]["a"]["accuracy"]
    assert acc["estimate"] is None and "fewer than 10" in acc["note"]


def test_rubric_feedback_counts_rubric_unclear_per_metric(report):
    assert report["adjudication"]["categories"] == {"none": 4, "rubric_unclear": 1}  # per decision
    fb = report["adjudication"]["rubric_feedback"]
    assert fb["ok"] == {"label": RUBRIC.metric("ok").label, "n_decisions": 4, "rubric_unclear": 1}
    assert fb["look"] == {
        "label": RUBRIC.metric("look").label,
        "n_decisions": 1,
        "rubric_unclear": 0,
    }


def test_adjudication_moves_no_agreement_figure(report):
    without = build_report(frames(with_adjudications=False), n_boot=200, seed=3)
    assert without["adjudication"] is None
    assert without["metrics"] == report["metrics"]
    assert without["raters"] == report["raters"]


def test_the_html_report_shows_the_section(report):
    html = render_html(report, generated_at="now")
    assert 'id="adjudication"' in html and "revise the text" in html
    assert "took the judge&#39;s answer over the raters&#39; consensus" in html


@pytest.mark.parametrize(
    ("humans", "judges", "lead", "ordinal", "side"),
    [
        ([1, 1, 0], [0], 1, False, "majority"),
        ([1, 1, 0], [0], 0, False, "judge"),  # over the raters' consensus
        ([1, 1, 0], [1], 0, False, "minority"),
        ([1, 1, 0, 0, 2], [2], 0, False, "tie_broken"),  # one of the tied answers...
        ([1, 1, 0, 0, 2], [2], 2, False, "judge"),  # ...not the lone one a judge also gave
        ([1, 1, 0, 0, 2], [], 2, False, "minority"),
        ([1, 0], [2], 2, False, "judge"),  # raters tied, only the judge gave it
        ([], [1], 1, False, "judge"),  # no rater answer at all (every one cannot judge)
        ([2, 3, 4, 5], [], 3, True, "tie_broken"),  # a scale's tie is its two middle values
        ([2, 3, 4, 5], [], 5, True, "minority"),
        ([2, 3, 3], [5], 4, True, "new_answer"),
    ],
)
def test_each_side_is_the_first_rule_that_holds(humans, judges, lead, ordinal, side):
    from annotator.stats.adjudication import _side
    from annotator.stats.consensus import MetricSpec, consensus

    spec = (
        MetricSpec("m", "scale", "m", "ordinal", values=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0))
        if ordinal
        else MetricSpec("m", "choice", "m", "nominal", labels=("a", "b", "c"))
    )
    answers = pd.DataFrame({"idx": [0] * len(humans), "code": [float(h) for h in humans]})
    cons = consensus(answers, spec).loc[0] if humans else None
    h, j = np.array(humans, dtype=float), np.array(judges, dtype=float)
    assert _side(float(lead), cons, h, j, ordinal) == side
