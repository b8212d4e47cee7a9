"""The one Section model in every output: the HTML report renders any Section through one macro
(templates/_section.html.j2), escaped and self-contained, and the sections of
reports/report_sections.py appear in the report and the dashboard alike."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from annotator.reports.html_report import _environment, build_view, render_html
from annotator.reports.report_sections import SECTIONS, report_sections
from annotator.reports.sections import Bullets, Chart, Note, Section, Table

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _render(section: Section) -> str:
    template = _environment().from_string(
        '{% from "_section.html.j2" import section %}{{ section(s) }}'
    )
    return template.render(s=section)


def test_the_macro_lays_out_every_block_escaped():
    s = Section(
        "k",
        "A <title>",
        "Run `annotator assign --escalated` <now>",
        (
            Note("a <b>note</b>"),
            Note("Part two", "heading"),
            Note("why `x<y`", "aside"),
            Table(
                "kTable",
                ("who", "n"),
                (("<script>", "1"), ("ok", "2")),
                frozenset({0}),
                frozenset({1}),
            ),
            Chart("kChart", PNG, 'alt "text"', "a caption", flagged=True),
        ),
    )
    html = _render(s)
    assert '<h2 id="k">A &lt;title&gt;</h2>' in html
    # a `span` is code, its text escaped; nothing else becomes markup
    assert "Run <code>annotator assign --escalated</code> &lt;now&gt;" in html
    assert "<p>a &lt;b&gt;note&lt;/b&gt;</p>" in html
    assert "<h3>Part two</h3>" in html
    assert '<p class="small muted">why <code>x&lt;y</code></p>' in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    # the flagged row is tinted and marked in words, the figure column aligned right
    rows = html.split("<tr")
    flagged = next(r for r in rows if "&lt;script&gt;" in r)
    assert 'class="flagged"' in flagged and "⚠" in flagged
    assert 'class="flagged"' not in next(r for r in rows if ">ok<" in r)
    assert '<th class="num">n</th>' in html and '<td class="num">2</td>' in html
    uri = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")
    assert f'src="{uri}"' in html and 'alt="alt &#34;text&#34;"' in html
    assert "a caption</figcaption>" in html


def test_every_section_of_the_report_is_rendered_from_its_model():
    report = json.loads((REFERENCE / "pandalm" / "report.json").read_text(encoding="utf-8"))
    view = build_view(report, with_charts=False)
    sections = report_sections(view)
    assert [s.key for s in sections] == [s.key for s in SECTIONS if view.get(s.key)]
    assert {s.key for s in sections} == {
        "summary",
        "agreement",
        "findings",
        "generators",
        "debiased",
        "certified",
        "raters",
        "pairwise",
    }
    html = render_html(report)
    for s in sections:
        assert f'<h2 id="{s.key}">' in html and f'href="#{s.key}"' in html
        for b in s.blocks:
            if isinstance(b, Table):
                assert f'<table id="{b.name}" class="section">' in html
    # a section's report keys are not shown again under "other figures"
    shown = (
        "summary",
        "findings",
        "systematic_findings",
        "item_findings_baseline",
        "generators",
        "debiased",
        "certified",
        "conformal_alignment",
        "raters",
        "answer_times",
        "pairwise",
        "metrics",
        "verdict",
    )
    assert not any(k in shown for k, _ in view["other"])


def test_the_dashboard_shows_every_section_even_without_figures():
    view: dict = {}
    for spec in SECTIONS:
        s = spec.build(view)
        assert s.key == spec.key and s.blocks  # says there is nothing yet
    assert report_sections(view) == []  # the report leaves them out


def test_each_section_table_is_one_csv_beside_the_contract_tables():
    from annotator.reports.csv_report import ANSWER_TABLES, report_tables, section_tables

    report = json.loads((REFERENCE / "pandalm" / "report.json").read_text(encoding="utf-8"))
    tables = report_tables(report)
    # the contract's tables keep their names and columns
    assert {"certified", "certified_pairs"} <= set(tables)
    assert list(tables["certified"].columns[:4]) == ["mode", "part", "judge", "metric"]
    split = tables["certified_split"]
    section = next(
        s for s in report_sections(build_view(report, with_charts=False)) if s.key == "certified"
    )
    table = next(b for b in section.blocks if isinstance(b, Table) and b.csv_name())
    assert table.name == "certifiedSplitTable"
    assert list(split.columns) == [*table.headers, "flagged"]
    assert [tuple(r) for r in split[list(table.headers)].itertuples(index=False)] == list(
        table.rows
    )
    # a table whose numbers a contract table holds is not written twice
    assert not any(k.startswith(("debiased_", "certified_judges", "conformal")) for k in tables)
    # no section table may take another table's file
    clash = Section("x", "x", "", (Table("judgementsTable", ("a",), (("1",),)),))
    with pytest.raises(ValueError, match=r"judgements\.csv"):
        section_tables([clash], taken=ANSWER_TABLES)


def _judge_report() -> dict:
    """A report with one judge in two versions (the latest worse on the verdict, beyond its
    interval) and the calibration of its latest, as the demo's lenient judge."""
    verdict = {
        "measure": "accuracy",
        "better_if": "higher",
        "mcnemar": {"n": 34, "a_only": 10, "b_only": 1, "p_value": 0.0117},
        "flip_rate": {"n": 36, "n_flipped": 11, "upper_bound": 0.4547},
        "a": {"estimate": 0.85, "low": 0.71, "high": 0.96, "n": 34},
        "b": {"estimate": 0.67, "low": 0.57, "high": 0.77, "n": 82},
        "difference": {"estimate": -0.26, "low": -0.44, "high": -0.11, "n": 34},
        "changed": {
            "n": 2,
            "n_better": 1,
            "n_worse": 1,
            "n_other": 0,
            "better": [{"item_id": "i-5", "a": "PASS", "b": "FAIL", "humans": "FAIL"}],
            "worse": [{"item_id": "i-<1>", "a": "FAIL", "b": "PASS", "humans": "FAIL"}],
        },
    }
    scale = {
        "measure": "mean_abs_error",
        "better_if": "lower",
        "a": {"estimate": 0.3, "low": 0.1, "high": 0.5, "n": 20},
        "b": {"estimate": 0.2, "low": 0.1, "high": 0.4, "n": 20},
        "difference": {"estimate": -0.1, "low": -0.3, "high": 0.1, "n": 20},
        "changed": {"n": 0},
    }
    bins = [
        {"low": 0.6, "high": 0.7, "n": 12, "confidence": 0.65, "accuracy": 0.5},
        {"low": 0.9, "high": 1.0, "n": 30, "confidence": 0.95, "accuracy": 0.9},
    ]
    return {
        "judge_versions": {
            "j": {
                "versions": [
                    {"version": "v1", "n_items": 36, "with_confidence": True},
                    {"version": "v2", "n_items": 306, "with_confidence": True},
                ],
                "latest": "v2",
                "comparison": {
                    "a": "j@v1",
                    "b": "j@v2",
                    "metrics": {"verdict": verdict, "tone": scale},
                },
            }
        },
        "judge_calibration": {
            "j": {
                "version": "v2",
                "metrics": {
                    "verdict": {
                        "n": 42,
                        "accuracy": 0.79,
                        "mean_confidence": 0.86,
                        "ece": {"estimate": 0.14, "low": 0.03, "high": 0.23, "n": 42},
                        "brier": {"estimate": 0.09, "low": 0.06, "high": 0.14, "n": 42},
                        "calibration_test": {
                            "miscalibrated": True,
                            "text": "miscalibrated at 5% (p = 0.006)",
                        },
                        "bins": bins,
                    }
                },
            }
        },
    }


def test_judge_versions_and_calibration_in_every_output():
    from annotator.reports.csv_report import report_tables

    report = _judge_report()
    view = build_view(report, with_charts=True)
    (section,) = (s for s in report_sections(view) if s.key == "judge_versions")
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    versions, calibration = tables["judgeVersionsTable"], tables["judgeCalibrationTable"]
    # one row per judge and metric; the regression (B worse beyond the paired interval) flagged,
    # a lower-is-better measure whose interval holds 0 not
    assert [r[2] for r in versions.rows] == ["verdict", "tone"]
    assert versions.rows[0][1] == "v1 → v2" and versions.rows[0][3] == "accuracy ↑"
    assert versions.rows[0][4] == "0.85 [0.71, 0.96] n=34"
    assert "exact McNemar p 0.012" in versions.rows[0][8]
    assert versions.flagged == frozenset({0})
    assert calibration.rows[0][:3] == ("j", "v2", "verdict") and calibration.flagged == {0}
    # the changed items are named, the reliability diagram drawn (none without charts)
    assert any(
        isinstance(b, Note) and "worse: i-<1> (FAIL → PASS" in b.text for b in section.blocks
    )
    assert [b.name for b in section.blocks if isinstance(b, Chart)] == ["judgeCalibrationChart0"]
    bare = report_sections(build_view(report, with_charts=False))
    assert not any(isinstance(b, Chart) for s in bare for b in s.blocks)
    html = render_html(report)
    assert '<h2 id="judge_versions">' in html and 'href="#judge_versions"' in html
    assert "i-&lt;1&gt;" in html and "i-<1>" not in html
    assert not any(k in ("judge_versions", "judge_calibration") for k, _ in view["other"])
    csv = report_tables(report)
    assert list(csv["judge_versions"].columns) == [*versions.headers, "flagged"]
    assert list(csv["judge_calibration"]["flagged"]) == [True]


def test_generators_case_by_case_in_every_output():
    """Every case of every figure, the generators side by side, the "all cases" row first."""
    from annotator.reports.csv_report import report_tables

    report = json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))
    g = report["generators"]
    (section,) = (
        s for s in report_sections(build_view(report, with_charts=False)) if s.key == "generators"
    )
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    counts, cases = tables["generatorsTable"], tables["generatorCasesTable"]
    names = sorted(g["by_generator"])
    assert [r[0] for r in counts.rows] == names
    assert cases.headers == ("figure", "case", *names)
    assert len(cases.rows) == len(g["figures"]) * (len(g["cases"]) + 1)
    assert (
        cases.rows[0][1] == "all cases"
        and [r[1] for r in cases.rows[1:4]] == sorted(g["cases"])[:3]
    )
    # the paired differences, flagged where the interval excludes 0
    diffs = tables["generatorDifferencesTable"]
    assert len(diffs.rows) == sum(len(v) for v in g["differences"].values())
    assert diffs.flagged and all("[" in diffs.rows[i][2] for i in diffs.flagged)
    # 161 rows: the report shows each figure over all cases and folds the case rows
    overall = tables["generatorOverallTable"]
    assert cases.fold == f"every case ({len(cases.rows)} rows)" and overall.rows == (cases.rows[0],)
    html = _render(section)
    assert html.count("<details") == 1 and '<details class="fold"><summary>every case' in html
    csv = report_tables(report)
    assert len(csv["generator_cases"]) == len(cases.rows)  # every row, the overall one too
    assert "generator_overall" not in csv
    assert list(csv["generators"].columns) == [*counts.headers, "flagged"]
    # the contract's per-generator agreement keeps its name and rows
    assert "by_generator" in csv and set(csv["by_generator"]["source"]) <= {"human", "judge"}


def test_adjudication_in_every_output():
    from annotator.reports.csv_report import report_tables

    report = {
        "adjudication": {
            "n_items": 9,
            "n_decisions": 10,
            "adjudicators": ["lead <1>"],
            "sided_with": {"majority": 9, "tie_broken": 1},
            "rubric_feedback": {
                "tone": {"label": "Tone", "n_decisions": 7, "rubric_unclear": 1},
                "text": {"label": "Text", "n_decisions": 3, "rubric_unclear": 0},
            },
            "raters": {
                "r1": {"accuracy": {"estimate": 0.9, "low": 0.75, "high": 1.0}, "n_answers": 10}
            },
            "judges": {
                "j": {"accuracy": {"estimate": 0.0, "note": "no interval"}, "n_answers": 10}
            },
        }
    }
    (section,) = report_sections(build_view(report, with_charts=False))
    assert section.key == "adjudication"
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    feedback = tables["adjudicationFeedbackTable"]
    assert feedback.rows[0] == ("Tone", "1", "7", "revise the text") and feedback.flagged == {0}
    accuracy = tables["adjudicationAccuracyTable"]
    assert [r[:2] for r in accuracy.rows] == [("r1", "rater"), ("j", "judge")]
    html = render_html(report)
    assert "(by lead &lt;1&gt;)" in html and 'href="#adjudication"' in html
    assert set(report_tables(report)) >= {"adjudication_sided", "adjudication_feedback"}


def test_pairwise_preferences_in_every_output():
    """PandaLM's real votes: the tallies per generator pair and per case, the strengths over all
    cases then case by case (with the forest plot and why a cell has no interval), position
    bias over all raters and per rater, and the judges against the human majority."""
    from annotator.reports.csv_report import report_tables
    from annotator.reports.formatting import fmt_num

    report = json.loads((REFERENCE / "pandalm" / "report.json").read_text(encoding="utf-8"))
    p = report["pairwise"]
    view = build_view(report, with_charts=True)
    (section,) = (s for s in report_sections(view) if s.key == "pairwise")
    assert f"from {p['settings']['min_count']} votes up" in section.subtitle
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}

    pairs = tables["pairwiseGeneratorPairsTable"]
    assert [r[0] for r in pairs.rows] == sorted(p["generator_pairs"])
    for row in pairs.rows:
        t = p["generator_pairs"][row[0]]
        assert row[2] == fmt_num(t["n"]) and row[6] == f"{t['left']} / {t['right']}"
    cases = tables["pairwiseCasesTable"]
    assert len(cases.rows) == sum(len(c) for c in p["cells"].values())
    assert [r[0] for r in cases.rows] == sorted(r[0] for r in cases.rows)  # never by a score
    assert cases.fold == f"every case ({len(cases.rows)} rows)"

    bt, by_case = p["bradley_terry"], p["bradley_terry_by_case"]
    strengths = tables["pairwiseStrengthTable"]
    assert strengths.headers == ("case", *sorted(bt))
    assert len(strengths.rows) == 1 + len(by_case) and strengths.fold
    assert tables["pairwiseStrengthOverallTable"].rows == (strengths.rows[0],)
    for g, cell in zip(sorted(bt), strengths.rows[0][1:], strict=True):
        e = bt[g]
        assert cell == f"{fmt_num(e['estimate'])} [{fmt_num(e['low'])}, {fmt_num(e['high'])}] " + (
            f"n={e['n']}"
        )
    no_interval = [
        f"{g} ({cid})"
        for cid, c in by_case.items()
        for g, e in c.items()
        if e.get("estimate") is not None and e.get("low") is None and e.get("note")
    ]
    asides = " ".join(b.text for b in section.blocks if isinstance(b, Note) and b.style == "aside")
    assert no_interval and all(w in asides for w in no_interval)
    assert [b.name for b in section.blocks if isinstance(b, Chart)] == ["pairwiseStrengthChart"]

    pb = p["position_bias"]
    position = tables["pairwisePositionTable"]
    assert position.rows[0][:4] == ("all raters", *(fmt_num(pb[k]) for k in ("left", "right", "n")))
    assert [r[0] for r in position.rows[1:]] == sorted(pb["by_rater"])
    notes = " ".join(b.text for b in section.blocks if isinstance(b, Note))
    assert f"Of {fmt_num(pb['n'])} decisive votes" in notes and "Sides were not randomized" in notes
    judges = tables["pairwiseJudgesTable"]
    assert [r[0] for r in judges.rows] == list(p["judges"])
    assert all("[" in r[2] and "[" in r[3] for r in judges.rows)  # with their intervals
    assert [r[0] for r in tables["pairwiseRaterKappasTable"].rows] == [
        k.replace("|", " · ") for k in sorted(p["rater_kappas"])
    ]

    html = render_html(report)
    assert '<h2 id="pairwise">' in html and 'href="#pairwise"' in html
    for name in tables:
        assert f'<table id="{name}" class="section">' in html
    csv = report_tables(report)
    assert len(csv["pairwise_cases"]) == len(cases.rows)
    assert list(csv["pairwise_strength"].columns) == [*strengths.headers, "flagged"]
    assert "pairwise_strength_overall" not in csv


def test_an_empty_pairwise_section_says_so():
    report = {"pairwise": {"cells": {}, "note": "pairs are imported but no one voted yet"}}
    (section,) = report_sections(build_view(report, with_charts=False))
    assert [b.text for b in section.blocks if isinstance(b, Note)] == [
        "No pair votes in this study yet.",
        "pairs are imported but no one voted yet",
    ]


def _raters_section(report: dict, *, with_charts: bool = False) -> Section:
    (section,) = (
        s for s in report_sections(build_view(report, with_charts=with_charts)) if s.key == "raters"
    )
    return section


def test_raters_in_every_output():
    """Per rater the counts, the rater x metric figures with their intervals and the answer
    times, as the report has them; the answer times stay in the contract's CSV alone."""
    from annotator.reports.csv_report import answer_times_table, report_tables

    report = json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))
    section = _raters_section(report)
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    raters = tables["ratersTable"]
    names = sorted(report["raters"])
    assert [r[0] for r in raters.rows] == names and not raters.flagged
    for row in raters.rows:
        entry = report["raters"][row[0]]
        assert row[1:3] == (str(entry["n_judgements"]), str(entry["anchors"]))
        assert row[4] == "no drift flag"
    # agreement with the consensus per metric, each estimate with its interval, by the label
    agreement = tables["raterAgreementTable"]
    label = report["metrics"]["faithfulness"]["label"]
    assert agreement.headers == ("rater", label)
    fig = report["raters"][names[0]]["agreement_with_consensus"]["faithfulness"]["alpha"]
    assert (
        f"alpha {fig['estimate']:.2f} [{fig['low']:.2f}, {fig['high']:.2f}]"
        in (agreement.rows[0][1])
    )
    # an undefined competence says why, the full note once under the table
    competence = tables["raterCompetenceTable"]
    assert competence.rows[0][1].startswith("undefined (competence not estimated")
    note = report["raters"][names[0]]["competence"]["faithfulness"]["note"]
    assert any(isinstance(b, Note) and note in b.text for b in section.blocks)
    times = tables["answerTimesTable"]
    block = report["answer_times"]
    assert times.csv == "" and f"below {block['min_exposure_ms']} ms" in times.headers
    assert [r[1] for r in times.rows] == [str(block["raters"][n]["answers"]) for n in names]
    csv = report_tables(report)
    assert csv["answer_times"].equals(answer_times_table(report))  # the contract, unchanged
    assert list(csv["raters"].columns) == [*raters.headers, "flagged"]
    assert list(csv["rater_competence"]["rater"]) == names
    html = render_html(report)
    assert html.count('<h2 id="raters">') == 1 and html.count('href="#raters"') == 1
    assert "competence not estimated: 2 rater(s)" in html


def test_raters_drift_offsets_and_calibrations():
    """A drifting rater's row and chart are flagged (its chart first), a standing offset is said
    in the report's words beside the drift flag, and every calibration session is listed."""
    from report_sample import sample_report

    report = sample_report()
    report["metrics"]["layout_hierarchy"]["label"] = "Layout"
    offset = "consistently severe by 2.00 [1.50, 2.50] on Layout, the mean over 12 anchors"
    report["raters"]["r3"]["calibration_offset"] = {
        "layout_hierarchy": {"flagged": True, "direction": "severe", "text": offset}
    }
    report["raters"]["r3"]["calibrations"] = [
        {"created_at": "2025-01-01T09:00", "qualified": True, "metrics": {}},
        {
            "created_at": "2025-01-02T09:00",
            "qualified": False,
            "metrics": {
                "layout_hierarchy": {"share": 0.5, "n": 8, "threshold": 0.8, "passed": False}
            },
        },
    ]
    section = _raters_section(report, with_charts=True)
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    raters = tables["ratersTable"]
    rows = {r[0]: r for r in raters.rows}
    assert raters.flagged == {1, 2}  # r2 drifts, r3 stands off the reference
    assert rows["r2"][4] == "drift: Layout, up, from anchor answer 22"
    assert rows["r3"][4] == f"no drift flag; calibration: {offset}"
    assert rows["r3"][7] == "2 sessions; last: not yet (2025-01-02)"
    # accuracy in one cell: the median over metrics and the lowest metric with its interval
    acc = report["raters"]["r1"]["accuracy"]
    median = sum(v["estimate"] for v in acc.values()) / len(acc)  # two metrics
    low = acc["layout_hierarchy"]
    assert low["estimate"] < median and rows["r1"][3] == (
        f"{median:.0%} (median of 2 metrics); lowest Layout {low['estimate']:.0%} "
        f"[{low['low']:.0%}, {low['high']:.0%}] n={low['n']}"
    )
    history = tables["calibrationHistoryTable"]
    assert history.headers == ("rater", "when", "verdict", "Layout")
    assert history.rows[1] == ("r3", "2025-01-02T09:00", "not yet", "50% of 8 (need 80%) ✗")
    assert history.flagged == {1}
    charts = [b for b in section.blocks if isinstance(b, Chart)]
    assert [c.name for c in charts] == ["driftChart:r2", "driftChart:r1"]
    assert charts[0].flagged and not charts[1].flagged
    assert charts[0].caption == "r2: 30 anchor answers · drift: Layout, up, from anchor answer 22"
    assert section.blocks[-1] is charts[-1]  # the charts last: the app lays them out in a grid
    # no chart is drawn for the CSV, and none is written
    assert not any(isinstance(b, Chart) for b in _raters_section(report).blocks)


def test_raters_competence_carried_by_a_live_estimate_says_when():
    """A live estimate carries each rater's competence from the last full computation: every
    cell says when that was, and a rater new since then is told it follows with the next one."""
    carried = {"estimate": 0.8, "low": 0.6, "high": 0.9, "n": 30, "as_of": "10:42"}
    note = "new since the last full computation: its competence follows with the next one"
    report = {
        "metrics": {"tone": {"label": "Tone"}},
        "raters": {
            "ann": {"n_judgements": 30, "competence": {"tone": carried}},
            "bob": {"n_judgements": 30, "competence": {"tone": {**carried, "estimate": 0.7}}},
            "zed": {"n_judgements": 2, "competence_note": note},
        },
    }
    tables = {b.name: b for b in _raters_section(report).blocks if isinstance(b, Table)}
    competence = {r[0]: r[6] for r in tables["ratersTable"].rows}
    assert competence == {
        "ann": "0.80 (median) (as of 10:42)",
        "bob": "0.70 (median) (as of 10:42)",
        "zed": note,
    }
    matrix = tables["raterCompetenceTable"]
    assert matrix.rows[0] == ("ann", "0.80 [0.60, 0.90] (as of 10:42) n=30")
    # the report's keys the section shows are not listed again under "other figures"
    assert not any("competence" in k for k, _ in build_view(report, with_charts=False)["other"])


def test_raters_fatigue_answer_times_and_other_figures():
    """Fatigue by place in the session (a quarter without a figure says why under the table),
    a rater with answers stored faster than the item could be seen is flagged, and a figure the
    section does not know is still shown."""
    half = {"estimate": 0.8, "low": 0.7, "high": 0.9, "n": 20}
    report = {
        "raters": {
            "ann": {
                "n_judgements": 40,
                "fatigue": {
                    "early": half,
                    "late": {**half, "estimate": 0.6},
                    "change": {**half, "estimate": -0.2, "low": -0.35, "high": -0.05},
                    "by_position_quarter": [half, {"estimate": None, "note": "no answers there"}],
                    "n_answers": 40,
                    "n_sessions": 3,
                },
                "speed": "brisk <b>",
            },
            "bob": {"n_judgements": 5, "fatigue": {"note": "too few answers"}},
        },
        "answer_times": {
            "min_exposure_ms": 250,
            "raters": {
                "ann": {"answers": 40, "timed": 40, "below_min_exposure": 0, "at_time_cap": 0},
                "bob": {"answers": 5, "timed": 5, "below_min_exposure": 2, "at_time_cap": 1},
            },
            "note": "bob: 2 of 5 timed answers below 250 ms",
        },
    }
    section = _raters_section(report)
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    fatigue = tables["raterFatigueTable"]
    assert fatigue.rows[0][1:5] == (
        "0.80 [0.70, 0.90] n=20",
        "0.60 [0.70, 0.90] n=20",
        "-0.20 [-0.35, -0.05]",
        "0.80 / ·",
    )
    assert fatigue.rows[0][5:] == ("40", "3") and fatigue.rows[1][1] == "too few answers"
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    assert "By quarter, · is no answers there." in notes
    times = tables["answerTimesTable"]
    assert times.flagged == {1} and times.rows[1] == ("bob", "5", "5", "2", "1")
    assert "bob: 2 of 5 timed answers below 250 ms" in notes
    assert "ann: speed: brisk <b>" in notes
    assert "brisk &lt;b&gt;" in _render(section)


def test_the_macro_lays_out_lists_and_item_cards_escaped():
    from annotator.reports.sections import Answer, Bullets, ItemCard

    jpeg = b"\xff\xd8\xff\xe0" + b"\x00" * 16
    s = Section(
        "k",
        "K",
        "",
        (
            Bullets(("a <b>point</b>", "run `annotator report`"), small=True),
            ItemCard(
                "K7Q2 · tone",
                PNG,
                "item K7Q2",
                ("case c · item `it-<1>`",),
                (
                    Answer("r1", "FAIL", "<script>alert(1)</script>"),
                    Answer("humans", "FAIL (1 of 1)", role="pooled"),
                    Answer("j", "PASS", "fine", "judge"),
                ),
                "judge lenient",
                ("note: <i>odd</i>",),
            ),
            ItemCard("J1", jpeg, "item J1"),
            # a link or another type of picture is never put on the page
            ItemCard("X1", "https://example.org/x.png", "item X1"),
            ItemCard("X2", b"GIF89a" + b"\x00" * 8, "item X2"),
        ),
    )
    html = _render(s)
    assert (
        '<ul class="small"><li>a &lt;b&gt;point&lt;/b&gt;</li>'
        "<li>run <code>annotator report</code></li></ul>"
    ) in html
    png_uri = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")
    jpeg_uri = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    assert f'<img src="{png_uri}" alt="item K7Q2">' in html
    assert f'<img src="{jpeg_uri}" alt="item J1">' in html
    assert html.count('<div class="nothumb">no image</div>') == 2 and "example.org" not in html
    assert '<h3>K7Q2 · tone <span class="pill warn">judge lenient</span></h3>' in html
    assert "case c · item <code>it-&lt;1&gt;</code>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert (
        '<tr class="pooled"><td class="who">humans</td><td class="ans">FAIL (1 of 1)</td>' in html
    )
    assert '<tr class="judge"><td class="who">j</td><td class="ans">PASS</td>' in html
    assert '<div class="small muted">note: &lt;i&gt;odd&lt;/i&gt;</div>' in html
    # a list or a card is no table: it writes no CSV
    from annotator.reports.csv_report import section_tables

    assert section_tables([s]) == {}


def test_the_summary_heads_every_output():
    """The summary's sentences, lists and tables, at the head of the HTML report in its card
    (before the contents and the tiles), first in the dashboard, and no CSV of its own."""
    from annotator.reports.csv_report import report_tables

    report = json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))
    s = report["summary"]
    view = build_view(report, with_charts=False)
    (section,) = view["top_sections"]
    assert section.key == "summary" and section not in view["sections"]
    blocks = section.blocks
    lists = [b for b in blocks if isinstance(b, Bullets)]
    # one sentence per judge first, then what is known, then what would decide the rest
    assert lists[0].items == tuple(s["judges"][j]["text"] for j in s["judges"])
    assert lists[1].items == tuple(k["text"] for k in s["known"])
    assert lists[2].items == tuple(
        f"{e['text']}: `{e['command']}`" if e.get("command") else e["text"] for e in s["to_decide"]
    )
    tables = {b.name: b for b in blocks if isinstance(b, Table)}
    for i, (name, per) in enumerate(s["judges"].items()):
        verdicts = tables[f"summaryJudge{i}Table"]
        assert [r[0] for r in verdicts.rows] == [
            v["label"] for v in per.values() if isinstance(v, dict)
        ], name
    gens = tables["summaryGeneratorsTable"]
    ranking = s["generators"]["ranking"]
    assert [r[0] for r in gens.rows] == [g["generator"] for g in ranking]
    first = ranking[0]
    assert gens.rows[0][1].startswith(f"{first['debiased']['estimate']:.2f} [")
    assert f"#{first['debiased_rank']} (" in gens.rows[0][1]
    glossary = tables["summaryGlossaryTable"]
    assert glossary.fold and len(glossary.rows) == len(s["glossary"])

    html = render_html(report)
    head = html[: html.index('<nav class="toc">')]
    assert '<section class="card top">\n<h2 id="summary">Summary</h2>' in head
    assert html.count('id="summary"') == 1 and html.index('href="#summary"') > len(head)
    cmd = s["to_decide"][-1]["command"]
    assert f"<code>{cmd}</code>" in head
    assert "Can I trust the judge?" in head and "Raters who need attention" in head
    # the figures are the other sections' and the contract's: no summary CSV
    assert not any(k.startswith("summary") for k in report_tables(report))
    assert not any(k == "summary" for k, _ in view["other"])


def _findings_report() -> dict:
    from report_sample import sample_report

    report = sample_report()
    report["item_findings_baseline"] = [
        {
            "metric": "instruction_following",
            "judge_name": "gpt-judge",
            "n_findings": 12,
            "judge_rate": 0.2,
            "judge_rate_ci": {"low": 0.12, "high": 0.3},
            "held_out_human_rate": 0.08,
            "held_out_human_rate_ci": {"low": 0.04, "high": 0.13},
            "n_comparisons": 180,
            "excess": True,
        },
        {
            "metric": "layout_hierarchy",
            "judge_name": "gpt-judge",
            "n_findings": 3,
            "judge_rate": 0.05,
            "held_out_human_rate": 0.06,
            "n_comparisons": 60,
            "excess": False,
        },
    ]
    return report


def test_findings_in_every_output():
    """Each finding a card with its picture, answers and reasons; the systematic findings a
    list; the rates beside a held-out human a table, its "above" row flagged; the contract's
    findings.csv and systematic_findings.csv unchanged beside it."""
    from report_sample import png_bytes

    from annotator.reports.csv_report import (
        findings_table,
        report_tables,
        systematic_findings_table,
    )
    from annotator.reports.sections import ItemCard

    report = _findings_report()
    thumbs = {"it-007": png_bytes((200, 80, 60)), "K7Q2": png_bytes((1, 2, 3))}
    view = build_view(report, thumbnails=thumbs, with_charts=False)
    section = next(s for s in view["sections"] if s.key == "findings")
    assert section.subtitle.endswith(f" {len(report['findings'])} findings.")
    cards = [b for b in section.blocks if isinstance(b, ItemCard)]
    assert [c.title for c in cards] == [
        f"{f['display_code']} · {f['metric']}" for f in report["findings"]
    ]
    first, second, third = cards
    # the picture by item id before display code; none for the others
    assert first.image == view["thumbnails"]["it-007"] and first.image_alt == "item K7Q2"
    assert second.image is None and third.image is None
    assert first.flag == "judge lenient" and first.meta == (
        "case ui_checkout · generator gen-a · item `it-007`",
    )
    f0 = report["findings"][0]
    assert [(a.who, a.answer, a.reason) for a in first.answers[:3]] == [
        (r, f0["human_answers"][r], f0["human_reasons"][r]) for r in ("r1", "r2", "r3")
    ]
    assert [(a.who, a.role) for a in first.answers[3:]] == [
        ("humans", "pooled"),
        ("judge", "judge"),
    ]
    assert second.answers[-1].who == "gpt-judge" and second.answers[-1].answer == "4"
    assert third.answers[-1].answer == "no score"  # the judge gave none
    systematic = next(b for b in section.blocks if isinstance(b, Bullets))
    assert systematic.items[1] == "clip-judge passes items the humans fail — n: 9"
    baseline = next(b for b in section.blocks if isinstance(b, Table))
    assert baseline.rows[0] == (
        "instruction_following",
        "gpt-judge (above)",
        "12",
        "20% [12%, 30%]",
        "8% [4%, 13%]",
        "180",
    )
    assert baseline.rows[1][3] == "5%" and baseline.flagged == {0}

    html = render_html(report)
    assert '<h2 id="findings">Findings</h2>' in html and 'href="#findings"' in html
    assert html.count('<div class="card item-card">') == 3
    csv = report_tables(report)
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(csv["findings"], findings_table(report))
    pd_testing.assert_frame_equal(csv["systematic_findings"], systematic_findings_table(report))
    assert list(csv["findings_baseline"].columns) == [*baseline.headers, "flagged"]
    assert list(csv["findings_baseline"]["flagged"]) == [True, False]


def test_findings_without_any_say_why():
    judged = {"findings": [], "metrics": {"m": {"judges": {"j": {"same_scale": False}}}}}
    (section,) = (
        s for s in report_sections(build_view(judged, with_charts=False)) if s.key == "findings"
    )
    (note,) = section.blocks
    assert note.text.startswith("No findings: on no item does a judge contradict")
    assert "on their own scale" in note.text and section.subtitle.endswith(" 0 findings.")
    (section,) = report_sections(build_view({"findings": []}, with_charts=False))
    assert section.blocks == (Note("No findings: there are no judge scores yet."),)


def test_agreement_in_every_output():
    """The humans' agreement per metric, the rater pairs and the agreement per generator, from
    TIFA's report: the figures as the report has them, the contract CSVs unchanged."""
    from annotator.reports.csv_report import agreement_table, by_generator_table, report_tables

    report = json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))
    m = report["metrics"]["faithfulness"]
    view = build_view(report, with_charts=True)
    (section,) = (s for s in report_sections(view) if s.key == "agreement")
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    agree = tables["agreementTable"]
    row = dict(zip(agree.headers, agree.rows[0], strict=True))
    alpha = m["human_alpha"]
    assert row["metric"] == m["label"] and row["items"] == f"{m['n_items']:,}"
    assert row["human alpha [95%]"] == (
        f"{alpha['estimate']:.2f} [{alpha['low']:.2f}, {alpha['high']:.2f}] n={alpha['n']}"
    )
    fleiss = m["fleiss_kappa"]
    assert (
        row["Fleiss' kappa"]
        == f"{fleiss['estimate']:.2f} [{fleiss['low']:.2f}, {fleiss['high']:.2f}]"
    )
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    # the ties and the metric's other figures, and the note a defined figure carries
    assert any(t.startswith(f"{m['label']}: {m['n_ties']} items with a tie") for t in notes)
    assert any(t.startswith("Fleiss' kappa (Faithfulness): ") for t in notes)
    pairs = tables["agreementPairsTable"]
    assert [r[1] for r in pairs.rows] == sorted(m["rater_pairs"])
    by_gen = tables["byGeneratorTable"]
    n_judges = len(m["judges"])
    assert len(by_gen.rows) == len(m["by_generator"]) * n_judges
    assert {r[1] for r in by_gen.rows} - {""} == set(m["by_generator"])
    assert by_gen.fold  # 15 rows: folded in the report
    (chart,) = (b for b in section.blocks if isinstance(b, Chart))
    assert chart.name == "agreementChart" and chart.png.startswith(b"\x89PNG")
    # the contract CSVs are as they were; the rater pairs' kappas are a CSV of their own
    csv = report_tables(report)
    assert csv["agreement"].equals(agreement_table(report))
    assert csv["by_generator"].equals(by_generator_table(report))
    assert list(csv["agreement_pairs"].columns) == [*pairs.headers, "flagged"]
    assert not {"agreement_verdict", "by_generator_table"} & set(csv)
    html = render_html(report)
    assert html.count('<h2 id="agreement">') == 1 and 'href="#agreement"' in html
    assert '<table id="agreementTable" class="section">' in html


def test_agreement_without_metrics_and_with_a_verdict_of_its_own():
    empty = report_sections(build_view({"metrics": {}}, with_charts=False))
    assert [s.key for s in empty] == ["agreement"]
    assert [b.text for b in empty[0].blocks if isinstance(b, Note)] == [
        "No metric has answers yet."
    ]
    # a verdict given as label/value pairs, not as a metric's figures, is shown as such
    report = {"metrics": {}, "verdict": {"pass_rate": 0.5, "rule": "all gates pass"}}
    (section,) = report_sections(build_view(report, with_charts=False))
    verdict = next(b for b in section.blocks if isinstance(b, Table))
    assert verdict.rows == (("pass rate", "0.50"), ("rule", "all gates pass"))
    assert not any(k == "verdict" for k, _ in build_view(report, with_charts=False)["other"])


def test_humans_vs_judges_in_every_output():
    """Per metric and judge every figure of the report, one table per part; the tag metrics'
    rows apart and folded; a failed alternative-annotator test flagged."""
    import copy
    import sys

    from annotator.reports.csv_report import report_tables

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from report_sample import sample_report

    report = sample_report()
    lh = report["metrics"]["layout_hierarchy"]
    judge = lh["judges"]["gpt-judge"]
    judge["alt_test"] = {
        "epsilon": 0.2,
        "winning_rate": 0.33,
        "advantage_probability": 0.61,
        "advantage_probability_ci": {"low": 0.52, "high": 0.7},
        "passed": False,
        "min_passing_epsilon": 0.35,
        "n_annotators": 3,
        "n_items": 60,
    }
    judge["alt_test_balanced"] = None
    judge["alt_test_balanced_note"] = "fewer than three raters on most items"
    report["metrics"]["failure_tags"]["judges"] = {
        "gpt-judge": copy.deepcopy(
            report["metrics"]["instruction_following"]["judges"]["gpt-judge"]
        )
    }
    view = build_view(report, with_charts=False)
    (section,) = (s for s in report_sections(view) if s.key == "judges")
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    alpha = tables["judgesAlphaTable"]
    pairs = [
        (m, j)
        for m in ("instruction_following", "layout_hierarchy")
        for j in report["metrics"][m]["judges"]
    ]
    assert [r[:2] for r in alpha.rows] == pairs
    vs = judge["alpha_vs_consensus"]
    row = dict(
        zip(alpha.headers, alpha.rows[pairs.index(("layout_hierarchy", "gpt-judge"))], strict=True)
    )
    assert row["alpha vs human consensus (flatters the judge)"] == (
        f"{vs['estimate']:.2f} [{vs['low']:.2f}, {vs['high']:.2f}] n={vs['n']}"
    )
    # the tag metric's rows: a table of their own, folded in the report
    tags = tables["judgesAlphaTagsTable"]
    assert [r[:2] for r in tags.rows] == [("failure_tags", "gpt-judge")] and tags.fold
    # a confusion matrix as a table, its counts as the report has them
    conf = judge["confusion"]
    matrix = next(
        t for t in tables.values() if t.csv_name() == "judges_confusion_layout_hierarchy__gpt_judge"
    )
    assert matrix.headers[1:] == tuple(str(x) for x in conf["labels"])
    assert [list(r[1:]) for r in matrix.rows] == [[str(v) for v in row] for row in conf["matrix"]]
    alt = tables["judgesAltTestTable"]
    assert [r[2] for r in alt.rows] == ["the paper's", "class-balanced (ours)"]
    assert (
        alt.flagged == {0} and alt.rows[0][6] == "failed" and alt.rows[0][5] == "0.61 [0.52, 0.70]"
    )
    assert alt.rows[1][6] == "fewer than three raters on most items"
    assert "judgesKappaTable" in tables and not tables["judgesKappaTable"].csv_name()
    csv = report_tables(report)
    assert {"judges_alpha", "judges_alpha_tags", "judges_correlation", "judges_alt_test"} <= set(
        csv
    )
    assert list(csv["judges_alt_test"]["flagged"]) == [True, False]
    html = render_html(report)
    assert html.count('<h2 id="judges">') == 1 and 'href="#judges"' in html
    assert '<details class="fold"><summary>alpha per judge of the tag metrics (1 row)' in html


def test_humans_vs_judges_off_the_rubric_scale():
    """TIFA's judges answer on their own scale: their rows are flagged and say why, the figures
    that need the scale are not given, the correlations are; 160 cases per judge are folded."""
    report = json.loads((REFERENCE / "tifa" / "report.json").read_text(encoding="utf-8"))
    m = report["metrics"]["faithfulness"]
    (section,) = (
        s for s in report_sections(build_view(report, with_charts=False)) if s.key == "judges"
    )
    tables = {b.name: b for b in section.blocks if isinstance(b, Table)}
    alpha, corr = tables["judgesAlphaTable"], tables["judgesCorrelationTable"]
    assert alpha.flagged == frozenset(range(len(m["judges"])))
    assert {r[3] for r in alpha.rows} == {"own scale"}
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    assert any("answers on its own scale" in t for t in notes)
    for r, (name, j) in zip(corr.rows, m["judges"].items(), strict=True):
        p = j["pearson"]
        assert (
            r[1] == name
            and r[4] == f"{p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}] n={p['n']}"
        )
    by_case = tables["judgesSlicesByCaseTable"]
    assert len(by_case.rows) == sum(len(j["slices"]["by_case"]) for j in m["judges"].values())
    assert by_case.fold and "alpha vs consensus" not in by_case.headers
    judges = ", ".join(m["judges"])
    assert f"by case (Faithfulness: {judges}): alpha vs consensus, exact agreement" in "\n".join(
        notes
    )


def test_a_study_without_figures_says_its_generators_are_not_ranked_yet(populated):
    """Items imported, nothing answered: the summary lists the generators and says they are not
    ranked yet (it said "ranked by the pairwise votes only" with no vote in the study)."""
    from annotator.services.reporting import study_frames
    from annotator.stats.report_model import build_report

    report = build_report(study_frames(populated), n_boot=20)
    (section,) = build_view(report, with_charts=False)["top_sections"]
    gens = next(b for b in section.blocks if isinstance(b, Table) and "Generators" in b.name)
    assert {r[0] for r in gens.rows} == {"gen-a", "gen-b", "gen-c"}
    text = " ".join(b.text for b in section.blocks if isinstance(b, Note))
    assert "Not ranked yet: no per-case rubric results and no pairwise votes." in text
    assert "Ranked by" not in text
