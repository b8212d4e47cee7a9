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
from annotator.reports.sections import Chart, Note, Section, Table

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
    assert {s.key for s in sections} == {"agreement", "generators", "debiased", "certified"}
    html = render_html(report)
    for s in sections:
        assert f'<h2 id="{s.key}">' in html and f'href="#{s.key}"' in html
        for b in s.blocks:
            if isinstance(b, Table):
                assert f'<table id="{b.name}" class="section">' in html
    # a section's report keys are not shown again under "other figures"
    shown = ("generators", "debiased", "certified", "conformal_alignment")
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
