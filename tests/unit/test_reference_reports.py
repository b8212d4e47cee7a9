"""The committed reference reports (docs/reference/) are what the code publishes today:
a change to any figure must come with `python tests/reference_reports.py` and its diff.

Figures are compared to 1e-9 of their size, not bit for bit: the same code gives the last one or
two digits differently on another CPU (numpy's and BLAS's vector paths sum in another order: an
AMD EPYC and an Intel Xeon differ at 1e-16 in 1,200 of PandaLM's figures), while a change to a
statistic moves figures by far more. Run to run on one machine the report is bit-identical
(test_reporting's same-seed check)."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

import reference_reports as ref  # noqa: E402


def _normal(x):  # noqa: ANN001, ANN202 - JSON as written, read back
    return json.loads(json.dumps(x, sort_keys=True, allow_nan=False, default=str))


def _first_difference(a, b, path: str = "") -> str | None:  # noqa: ANN001
    """Where two reports differ (a figure by more than 1e-9 of its size), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path or '/'}: keys {sorted(a.keys() ^ b.keys())}"
        return next(
            (d for k in a if (d := _first_difference(a[k], b[k], f"{path}/{k}")) is not None),
            None,
        )
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries against {len(b)}"
        return next(
            (
                d
                for i, (x, y) in enumerate(zip(a, b, strict=True))
                if (d := _first_difference(x, y, f"{path}/{i}")) is not None
            ),
            None,
        )
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        same = math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    else:
        same = a == b
    return None if same else f"{path}: {a!r} against {b!r}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ref.STUDIES))
def test_reference_report_figures_are_what_the_code_publishes(name, tmp_path):
    committed = ref.OUT / name / "report.json"
    assert committed.exists(), "run `python tests/reference_reports.py` and commit docs/reference/"
    fresh = _normal(ref.report(name, tmp_path))
    diff = _first_difference(fresh, _normal(json.loads(committed.read_text(encoding="utf-8"))))
    assert diff is None, (
        f"the report changed at {diff}: regenerate with `python tests/reference_reports.py` "
        "and review the diff"
    )


def test_the_comparison_tolerates_the_last_digits_only():
    assert _first_difference({"a": [0.019427897096284175]}, {"a": [0.01942789709628435]}) is None
    assert (
        _first_difference({"a": [0.0194278]}, {"a": [0.0194279]})
        == "/a/0: 0.0194278 against 0.0194279"
    )
    assert _first_difference({"a": "x"}, {"a": "y"}) == "/a: 'x' against 'y'"
    assert _first_difference({"a": 1}, {"b": 1}) == "/: keys ['a', 'b']"


@pytest.mark.parametrize("name", sorted(ref.STUDIES))
def test_reference_reports_are_complete_and_hold_no_wall_clock(name):
    folder = ref.OUT / name
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "reference (seed 0, 1000 resamples)" in html and " UTC" not in html
    rep = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert rep["n_boot"] == ref.N_BOOT and rep["seed"] == ref.SEED
    with open(folder / "tables" / "agreement.csv", newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh))  # a header row
