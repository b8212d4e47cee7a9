"""The committed reference reports (docs/reference/) are what the code publishes today:
a change to any figure must come with `python tests/reference_reports.py` and its diff."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

import reference_reports as ref  # noqa: E402


def _normal(x):  # noqa: ANN001, ANN202 - JSON as written, read back
    return json.loads(json.dumps(x, sort_keys=True, allow_nan=False, default=str))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ref.STUDIES))
def test_reference_report_figures_are_what_the_code_publishes(name, tmp_path):
    committed = ref.OUT / name / "report.json"
    assert committed.exists(), "run `python tests/reference_reports.py` and commit docs/reference/"
    fresh = _normal(ref.report(name, tmp_path))
    assert fresh == _normal(json.loads(committed.read_text(encoding="utf-8"))), (
        "the report's figures changed: regenerate with `python tests/reference_reports.py` and review the diff"
    )


@pytest.mark.parametrize("name", sorted(ref.STUDIES))
def test_reference_reports_are_complete_and_hold_no_wall_clock(name):
    folder = ref.OUT / name
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "reference (seed 0, 1000 resamples)" in html and " UTC" not in html
    rep = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert rep["n_boot"] == ref.N_BOOT and rep["seed"] == ref.SEED
    with open(folder / "tables" / "agreement.csv", newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh))  # a header row
