"""The report's data-quality note on exposure: per rater, the answers stored faster
than the study's `min_exposure_ms` (the app stores none; another path may have) and those at the
one-day cap, counted from the real rows on both engines, in JSON, HTML and CSV."""

from __future__ import annotations

from pathlib import Path

from annotator.domain.time_spent import MAX_TIME_MS
from annotator.reports.csv_report import report_tables
from annotator.reports.html_report import render_html
from annotator.services.labeling import LabelSession
from annotator.services.reporting import build_study_report
from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]


def _answer(study: Study, rater: str, times: list[int | None]) -> None:
    session = LabelSession(study, rater)
    for ms in times:
        served = session.next()
        answers = {
            m.key: ("PASS" if m.kind == "gate" else 3 if m.kind == "scale" else [])
            for m in study.rubric.metrics
            if m.kind in ("gate", "scale", "tags")
        }
        session.submit(served, answers, ms)


def test_the_report_counts_answers_below_the_minimum_and_at_the_cap(any_populated):
    study = any_populated
    for name in ("ann", "bob"):
        study.add_rater(name)
    _answer(study, "ann", [100, 249, 250, 4000, 10 * MAX_TIME_MS])
    _answer(study, "bob", [None, 800])
    report = build_study_report(study, n_boot=20, seed=0)
    block = report["answer_times"]
    assert block["min_exposure_ms"] == 250 and block["cap_ms"] == MAX_TIME_MS
    assert block["raters"]["ann"] == {
        "answers": 5,
        "timed": 5,
        "below_min_exposure": 2,  # 100 and 249: 250 itself is seen for the minimum
        "at_time_cap": 1,  # the week-long one, stored at the cap
    }
    assert block["raters"]["bob"] == {
        "answers": 2,
        "timed": 1,
        "below_min_exposure": 0,
        "at_time_cap": 0,
    }
    assert block["note"].endswith("ann: 2 of 5 timed answers below 250 ms")
    html = render_html(report)
    assert "Answer times" in html and "ann: 2 of 5 timed answers below 250 ms" in html
    table = report_tables(report)["answer_times"]
    assert table.set_index("rater").loc["ann", "below_min_exposure"] == 2

    # a lead who raises the minimum sees the count follow, without a new answer
    study.set_setting("min_exposure_ms", 1000)
    again = build_study_report(study, n_boot=20, seed=0)["answer_times"]
    assert again["raters"]["ann"]["below_min_exposure"] == 3
    assert again["raters"]["bob"]["below_min_exposure"] == 1


def test_the_setting_is_checked():
    import pytest

    from annotator.domain.errors import InputError
    from annotator.services.study import check_setting

    for bad in (-1, 10_001, 2.5, True, "250"):
        with pytest.raises(InputError, match="min_exposure_ms"):
            check_setting("min_exposure_ms", bad)
    check_setting("min_exposure_ms", 0)


def test_a_rater_package_carries_the_studys_minimum_exposure(tmp_path):
    """The app in a rater's package reads the lead's `min_exposure_ms`, not the default (the
    package's settings were a list of their own that did not hold it)."""
    from factories import basic_rows, write_manifest

    from annotator.cli import main
    from annotator.services.snapshot import open_study

    folder = tmp_path / "lead"
    study = Study.create(folder, REPO / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src)))
    study.add_rater("ana")
    study.set_setting("min_exposure_ms", 400)
    study.close()
    assert main(["assign", "--study", str(folder), "--raters", "ana", "--overlap", "1"]) == 0
    pkg = tmp_path / "ana.annot"
    assert (
        main(["package", "export", "--study", str(folder), "--rater", "ana", "--out", str(pkg)])
        == 0
    )
    rater, snapshot = open_study(pkg)
    try:
        assert snapshot.setting("min_exposure_ms") == 400
    finally:
        rater.close()
