"""One label and one formatter: the report's label for a key is the label every
caller shows, and a missing or undefined figure reads the same in the HTML report, the dashboard,
the command line and the dataset card."""

from __future__ import annotations

import pytest

from annotator.cli import _fig
from annotator.domain.figures import MISSING, estimate_text
from annotator.reports.formatting import est_of
from annotator.reports.section_judges import est_text
from annotator.services import dashboard
from annotator.services.export_hf import _est as card_est

UNDEFINED = {"estimate": None, "note": "undefined: every rater gave the same answer"}
DEFINED = {"estimate": 0.1234, "low": 0.05, "high": 0.19, "n": 40}


def test_an_undefined_figure_reads_the_same_everywhere():
    word = "undefined (every rater gave the same answer)"
    assert estimate_text(UNDEFINED) == word
    assert _fig(UNDEFINED) == word  # judge compare
    assert card_est(UNDEFINED) == word  # the dataset card (it said "n/a")
    assert str(est_of({"a": UNDEFINED}, "a")) == word  # HTML report and dashboard
    assert est_text(est_of({"a": UNDEFINED}, "a")) == word  # a section's table cell


def test_a_missing_figure_is_one_mark_everywhere():
    assert estimate_text(None) == _fig(None) == card_est(None) == MISSING
    assert est_text(est_of({}, "a")) == MISSING == str(est_of({}, "a"))


@pytest.mark.parametrize(
    "caller,expected",
    [
        (lambda d: estimate_text(d), "0.12 [0.05, 0.19]"),
        (lambda d: _fig(d), "0.123 [0.050, 0.190] n=40"),
        (lambda d: card_est(d), "0.123 [0.050, 0.190]"),
        (lambda d: str(est_of({"a": d}, "a")), "0.12 [0.05, 0.19]"),
    ],
)
def test_a_defined_figure_differs_only_in_its_digits(caller, expected):
    assert caller(DEFINED) == expected


def test_the_dashboard_labels_a_tag_as_the_report_does():
    """The dashboard spelled a tag from its key ('non ui artifacts') and ignored the rubric's
    option labels; the report used them. Both now ask the rubric's key_label."""
    from pathlib import Path

    from annotator.ingest.rubrics import load_rubric

    rubric = load_rubric(Path(__file__).resolve().parents[2] / "rubrics" / "ui_mockup.toml")
    tags = rubric.metric("failure_tags")
    key = "failure_tags:non_ui_artifacts"
    assert dashboard.metric_label(rubric, key) == f"{tags.label}: artefacts that are not UI"
    assert rubric.key_label("layout_hierarchy") == rubric.metric("layout_hierarchy").label
