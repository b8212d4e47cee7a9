"""Report writers: JSON (contract 5.5), CSV/Parquet tables, charts and the HTML page.

The report dict is built by hand to the contract (report_sample.py), so these tests do not
depend on the statistics; a second set runs the real `build_report` on a small synthetic study.
base/atomic.py itself is tested in test_atomic.py.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape
from PIL import Image
from report_sample import (
    CONTRACT_JUDGE,
    CONTRACT_METRIC,
    CONTRACT_TOP,
    XSS,
    est,
    png_bytes,
    sample_report,
)

from annotator.base.atomic import tmp_path_for
from annotator.reports import (
    agreement_table,
    findings_table,
    neutralise_cell,
    read_json,
    render_html,
    report_tables,
    systematic_findings_table,
    write_csv_tables,
    write_html,
    write_json,
)
from annotator.reports.charts import agreement_chart, bradley_terry_chart, drift_chart
from annotator.reports.html_report import build_view

# --- JSON -----------------------------------------------------------------------------


def test_json_round_trip_keeps_contract_keys_and_order(tmp_path: Path) -> None:
    report = sample_report()
    path = write_json(report, tmp_path / "report.json")
    back = read_json(path)
    assert back == report
    assert list(back) == list(report)  # contract order, not sorted
    for key in CONTRACT_TOP:
        assert key in back
    for m in back["metrics"].values():
        assert all(k in m for k in CONTRACT_METRIC)
        for j in m["judges"].values():
            assert all(k in j for k in CONTRACT_JUDGE)
    assert back["metrics"]["text_rendering"]["human_alpha"] is None
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "study"')  # indent 2
    assert "NaN" not in text and "Infinity" not in text


def test_json_accepts_numpy_scalars_and_refuses_nan(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    path = tmp_path / "r.json"
    write_json({"n": np.int64(3), "x": np.float64(0.25), "ok": np.bool_(True)}, path)
    assert read_json(path) == {"n": 3, "x": 0.25, "ok": True}
    with pytest.raises(ValueError):
        write_json({"x": float("nan")}, path)
    with pytest.raises(ValueError):
        write_json({"x": np.float64("inf")}, path)
    assert read_json(path) == {"n": 3, "x": 0.25, "ok": True}


def test_a_report_that_fails_to_serialise_keeps_the_old_json(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    write_json(sample_report(), path)
    before = path.read_bytes()
    bad = sample_report()
    bad["metrics"]["layout_hierarchy"]["weird"] = object()
    with pytest.raises(TypeError):
        write_json(bad, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# --- CSV ------------------------------------------------------------------------------


def test_neutralise_cell_rules() -> None:
    for bad in ("=1+1", "+x", "-x", "@x", "\tx", "\rx", '=HYPERLINK("http://e")', "-1+2"):
        assert neutralise_cell(bad) == "'" + bad
    for fine in ("x=1", "plain", "", "-0.2", "+3", "1e-3"):
        assert neutralise_cell(fine) == fine
    assert neutralise_cell(-0.2) == -0.2
    assert neutralise_cell(-3) == -3
    assert neutralise_cell(None) is None
    assert neutralise_cell(("=a", "b")) == "'=a;b"  # tags are joined, then neutralised


def test_csv_tables_neutralise_strings_and_keep_numbers(tmp_path: Path) -> None:
    judgements = pd.DataFrame(
        {
            "item_id": ["it-1", "it-2", "it-3", "it-4", "it-5"],
            "rater": ["r1", "r1", "r2", "r2", "r3"],
            "metric": ["layout_hierarchy"] * 5,
            "value": [3, 4, 2, 5, ("broken_layout", "misspelled_text")],
            "reason": ["=1+1", "+x", "-x", "@x", "fine"],
        }
    )
    judge_scores = pd.DataFrame(
        {
            "item_id": ["it-1", "it-2"],
            "judge": ["j", "j"],
            "metric": ["layout_hierarchy"] * 2,
            "value": [-0.2, 0.9],
            "reason": ["-0.2 seemed low", XSS],
        }
    )
    tables = {
        "judgements": judgements,
        "judge_scores": judge_scores,
        **report_tables(sample_report()),
    }
    paths = write_csv_tables(tables, tmp_path / "csv")
    names = {p.name for p in paths}
    assert {"judgements.csv", "judge_scores.csv", "agreement.csv", "findings.csv"} <= names
    assert not list((tmp_path / "csv").glob("*.tmp"))

    back = pd.read_csv(tmp_path / "csv" / "judgements.csv", keep_default_na=False)
    assert list(back["reason"]) == ["'=1+1", "'+x", "'-x", "'@x", "fine"]
    assert back["value"].iloc[-1] == "broken_layout;misspelled_text"
    js = pd.read_csv(tmp_path / "csv" / "judge_scores.csv")
    assert js["value"].tolist() == [-0.2, 0.9]  # numbers stay numbers
    assert js["reason"].iloc[0] == "'-0.2 seemed low"

    report = sample_report()
    report["findings"].append(
        {
            "item_id": "it-9",
            "metric": "m",
            "humans": "=SUM(A1:A9)",
            "judge": "@cmd",
            "judge_reason": "-2+3",
            "judge_value": -1,
        }
    )
    write_csv_tables({"findings": findings_table(report)}, tmp_path / "csv")
    f = pd.read_csv(tmp_path / "csv" / "findings.csv", keep_default_na=False)
    last = f.iloc[-1]
    assert (last["humans"], last["judge"], last["judge_reason"]) == (
        "'=SUM(A1:A9)",
        "'@cmd",
        "'-2+3",
    )
    assert int(last["judge_value"]) == -1
    raw = (tmp_path / "csv" / "findings.csv").read_text(encoding="utf-8")
    assert not re.search(r'(^|,)"?[=+@]', raw, flags=re.M)


def test_agreement_table_one_row_per_metric_and_source() -> None:
    report = sample_report()
    t = agreement_table(report)
    expected = sum(1 + len(m["judges"]) for m in report["metrics"].values())
    assert len(t) == expected
    assert set(t["source"]) == {"human", "judge"}
    row = t[(t.metric == "instruction_following") & (t.judge == "clip-judge")].iloc[0]
    assert (
        row["alpha"]
        == report["metrics"]["instruction_following"]["judges"]["clip-judge"]["alpha_vs_consensus"][
            "estimate"
        ]
    )
    undefined = t[(t.metric == "text_rendering") & (t.source == "human")].iloc[0]
    assert (
        pd.isna(undefined["alpha"]) and undefined["alpha_note"] == "every answer identical (PASS)"
    )
    lh = t[(t.metric == "layout_hierarchy") & (t.source == "judge")].iloc[0]
    assert lh["cohen_kappa_quadratic"] == 0.63


def test_findings_table_keeps_report_order() -> None:
    report = sample_report()
    t = findings_table(report)
    assert list(t["item_id"]) == [f["item_id"] for f in report["findings"]]
    assert t.columns[0] == "item_id"
    assert "r2: " + XSS in t["human_reasons"].iloc[0]
    # the report model's [{rater, value, reason}] answers become two "rater: ..." columns
    lh = t[t["item_id"] == "it-019"].iloc[0]
    assert lh["human_answers"] == "r1: 2 | r2: 1 | r3: 2"
    assert lh["human_reasons"] == "r1: CTA buried below the fold | r3: two primary buttons"
    empty = findings_table({"findings": []})
    assert len(empty) == 0 and "item_id" in empty.columns


def test_systematic_findings_table_spreads_estimates() -> None:
    t = systematic_findings_table(sample_report())
    first = t.iloc[0]
    assert (first["metric"], first["judge_name"], first["kind"]) == (
        "layout_hierarchy",
        "gpt-judge",
        "lenient",
    )
    assert (
        first["mean_difference"],
        first["mean_difference_low"],
        first["mean_difference_high"],
    ) == (0.4, 0.21, 0.6)
    assert t.iloc[1]["summary"] == "clip-judge passes items the humans fail"


def test_parquet_written_only_when_pyarrow_present(tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401

        have = True
    except ImportError:
        have = False
    paths = write_csv_tables({"agreement": agreement_table(sample_report())}, tmp_path)
    parquet = [p for p in paths if p.suffix == ".parquet"]
    assert bool(parquet) == have
    if have:
        back = pd.read_parquet(parquet[0])
        assert len(back) == len(agreement_table(sample_report()))


# --- charts ---------------------------------------------------------------------------


def _png_size(uri: str) -> tuple[int, int]:
    assert uri.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as im:
        return im.size


def test_charts_render_pngs_and_skip_empty_input() -> None:
    report = sample_report()
    chart = agreement_chart(report["metrics"])
    assert chart is not None
    w, h = _png_size(chart.uri)
    assert w > 500 and h > 200
    assert bradley_terry_chart(report["pairwise"]["bradley_terry"]) is not None
    assert drift_chart("r2", report["raters"]["r2"]["series"]) is not None
    assert agreement_chart({}) is None
    assert bradley_terry_chart({}) is None
    assert drift_chart("r", {"x": {"seq": []}}) is None


def test_a_chart_of_the_same_data_is_drawn_once_and_other_data_draw_anew() -> None:
    """The dashboard draws every chart at each live estimate; a chart whose data did not move
    (a rater's anchors between two live answers) is the one drawn before, and one whose data
    moved is drawn again from them."""
    import copy

    from annotator.reports import charts

    series = copy.deepcopy(sample_report()["raters"]["r2"]["series"])
    first = drift_chart("r2-memo", series)
    again = drift_chart("r2-memo", copy.deepcopy(series))
    assert first is not None and again is first  # equal data, the same chart object
    metric = next(iter(series))
    series[metric]["ewma"] = [v + 0.5 for v in series[metric]["ewma"]]  # the average moved
    moved = drift_chart("r2-memo", series)
    assert moved is not None and moved is not first and moved.uri != first.uri
    # arguments that are not plain data are never looked up: drawn every time
    assert charts._data_key("drift_chart", (object(),), {}) is None
    assert len(charts._drawn) <= charts._DRAWN_MAX


def test_drift_legend_names_metrics_by_label_and_lines_in_words() -> None:
    """The legend read "instruction_following EWMA". It now uses the rubric's label
    (carried in the report's metric sections) and says what each line is; the alt text names
    the same lines."""
    from annotator.reports.charts import drift_charts

    report = sample_report()
    report["metrics"]["layout_hierarchy"]["label"] = "Layout & hierarchy"
    chart = drift_charts(report)["r2"]
    assert "layout_hierarchy" not in chart.alt and "Layout & hierarchy: " in chart.alt
    assert "running average (EWMA)" in chart.alt and "each anchor answer" in chart.alt
    assert " EWMA;" not in chart.alt.replace("(EWMA);", "")


# --- HTML -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def html() -> str:
    thumbs = {"it-007": png_bytes((200, 80, 60)), "it-019": png_bytes((60, 120, 200))}
    return render_html(sample_report(), thumbnails=thumbs, generated_at="2025-01-01 12:00 UTC")


def test_html_escapes_rater_and_judge_text(html: str) -> None:
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()


def test_html_is_self_contained(html: str) -> None:
    assert not re.search(r"https?://", html)
    for attr in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert attr.startswith(("data:", "#")), attr
    assert "@import" not in html and "url(" not in html


def test_html_embeds_thumbnails_as_data_uris(html: str) -> None:
    thumbs = re.findall(
        r'<img src="(data:image/(?:png|jpeg);base64,[^"]+)" alt="item ([^"]+)"', html
    )
    assert {alt for _, alt in thumbs} == {"K7Q2", "P3ZX"}
    for uri, _ in thumbs:
        with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as im:
            assert max(im.size) <= 320  # shrunk, not the 640 px original
    assert html.count("no image") == 1  # the third finding has no thumbnail


def test_html_shows_undefined_with_note_never_a_number(html: str) -> None:
    assert "undefined (every answer identical (PASS))" in html
    view = build_view(sample_report(), with_charts=False)
    tr = next(m for m in view["agreement"]["metrics"] if m["key"] == "text_rendering")
    assert not tr["human_alpha"].defined and tr["human_alpha"].text.startswith("undefined")
    assert "undefined (no answers)" in html  # r2's accuracy on a metric without answers


def test_html_has_every_section(html: str) -> None:
    for anchor in ("agreement", "judges", "findings", "generators", "raters", "pairwise", "limits"):
        assert f'id="{anchor}"' in html
    for text in (
        "checkout-ui-study",
        "ui_mockup",
        "3f9c00000000",
        "What these numbers cannot tell you",
        "Agreement is not validity",
        "Systematic findings",
        "Position bias",
        "Bradley-Terry",
        "Krippendorff",
        "n=60",
        "permutation baseline",
        "2025-01-01 12:00 UTC",
    ):
        assert text in html, text
    # agreement, BT, two drift charts (r2's flagged)
    assert html.count('<figure class="chart">') == 3
    assert html.count('<figure class="chart flagged">') == 1


def test_html_cases_are_alphabetical_not_by_score() -> None:
    view = build_view(sample_report(), with_charts=False)
    g = view["generators"]
    assert g["cases"] == ["ui_checkout", "ui_dashboard", "ui_signup"]
    assert g["names"] == ["gen-a", "gen-b"]
    for fig in g["figures"]:
        assert [cid for cid, _ in fig["rows"]] == g["cases"]  # not re-sorted by any score
    verdict = next(f for f in g["figures"] if f["key"] == "verdict_pass_rate")
    assert verdict["rows"][0][1][0].text.startswith("undefined (4 answers")
    assert [x["pass"] for x in g["gates"]] == [True, False]
    # the simpler {generator: {overall, cases, release_gate}} shape is laid out the same way
    simple = {
        "gen-z": {
            "overall": {"pass_rate": est(0.5, 0.3, 0.7, n=20)},
            "cases": {
                "b_case": {"pass_rate": est(0.2, 0.0, 0.5, n=10)},
                "a_case": {"pass_rate": est(0.8, 0.5, 1.0, n=10)},
            },
            "release_gate": False,
        }
    }
    sg = build_view({"generators": simple}, with_charts=False)["generators"]
    assert sg["cases"] == ["a_case", "b_case"] and sg["figures"][0]["rows"][0][1][0].estimate == 0.8
    assert sg["gates"][0]["pass"] is False
    assert [r["case_id"] for r in view["pairwise"]["cells"]] == ["ui_checkout", "ui_signup"]
    # the share is shown where the report gives one and the note where it does not
    shares = {r["case_id"]: (r["share"], r["note"]) for r in view["pairwise"]["cells"]}
    assert shares["ui_signup"][0].startswith("gen-a 58%")
    assert shares["ui_checkout"] == ("", "n=6 is below the minimum of 10 votes for a share")


def test_html_survives_a_minimal_and_a_sparse_report(tmp_path: Path) -> None:
    minimal = {
        "study": "s",
        "rubric": {"id": "r", "version": "v"},
        "metrics": {},
        "findings": [],
        "raters": {},
        "pairwise": {},
    }
    out = render_html(minimal)
    assert "No metric has answers yet." in out and 'id="limits"' in out
    sparse = {
        "study": "s",
        "rubric": None,
        "metrics": {"m": {"judges": {"j": None}, "human_alpha": 0.5}},
        "findings": [None, "odd", {"metric": "m"}],
        "raters": {"x": None},
        "pairwise": {"cells": {"c": {"a vs b": {"n": 3}}}, "position_bias": None},
        "generators": {"g": {"cases": {"c1": None}}},
    }
    path = write_html(sparse, tmp_path / "r.html")
    assert path.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_write_html_atomic(tmp_path: Path) -> None:
    path = write_html(sample_report(), tmp_path / "report.html")
    assert path.exists() and not tmp_path_for(path).exists()
    before = path.read_bytes()
    bad = sample_report()
    bad["metrics"] = ["not", "a", "dict"]  # rendered as nothing, not an error
    write_html(bad, path)
    assert path.read_bytes() != before


# --- with the real report model, when it exists ---------------------------------------


def synthetic_frames(n_per_cell: int = 5, seed: int = 7, hostile: bool = True):
    """A small study with every kind of input: judgements (with session positions),
    judge scores, pair votes and live anchor answers (one rater drifting upwards).
    `hostile` puts markup and formula text in the reasons."""
    frames_mod = pytest.importorskip("annotator.stats.frames")
    import random

    from annotator.ingest.rubrics import load_rubric

    root = Path(__file__).resolve().parents[2]
    rubric = load_rubric(root / "rubrics" / "ui_mockup.toml")
    rng = random.Random(seed)
    cases, gens, raters = (
        ["ui_checkout", "ui_dashboard", "ui_signup"],
        ["gen-a", "gen-b"],
        ["r1", "r2", "r3"],
    )
    items, judgements, judge, pairs, anchors = [], [], [], [], []
    position = dict.fromkeys(raters, 0)
    for ci, case in enumerate(cases):
        for gi, gen in enumerate(gens):
            for k in range(n_per_cell):
                item = f"it-{ci}{gi}{k}"
                items.append(
                    {
                        "item_id": item,
                        "display_code": f"C{ci}{gi}{k}",
                        "case_id": case,
                        "cell_id": case,
                        "generator": gen,
                        "slice": None,
                    }
                )
                truth = rng.randint(1, 5) if gi else rng.randint(2, 5)
                for r in raters:
                    v = min(5, max(0, truth + rng.choice([-1, 0, 0, 0, 1])))
                    gate = "PASS" if v >= 3 else "FAIL"
                    answers = (
                        ("layout_hierarchy", v),
                        ("instruction_following", gate),
                        ("ui_affordance", min(5, v + rng.choice([0, 1]))),
                        ("text_rendering", "PASS" if rng.random() < 0.8 else "FAIL"),
                        ("failure_tags", ("broken_layout",) if v < 2 else ()),
                        (
                            "reason",
                            (XSS if v < 2 else "=1+1 looks fine")
                            if hostile
                            else (
                                "Primary action buried; two competing buttons."
                                if v < 3
                                else "Clear hierarchy, one small spacing issue."
                            ),
                        ),
                    )
                    for metric, value in answers:
                        judgements.append(
                            {
                                "item_id": item,
                                "rater": r,
                                "metric": metric,
                                "value": value,
                                "reason": None,
                                "created_at": None,
                                "session_id": 1,
                                "position": position[r],
                            }
                        )
                    position[r] += 1
                jv = 5 if truth <= 2 and k == 0 else min(5, truth + rng.choice([0, 1]))
                judge.append(
                    {
                        "item_id": item,
                        "judge": "jj",
                        "metric": "layout_hierarchy",
                        "value": jv,
                        "reason": "judge says " + XSS
                        if hostile
                        else "Layout is clean and the call to action stands out.",
                    }
                )
                judge.append(
                    {
                        "item_id": item,
                        "judge": "jj",
                        "metric": "instruction_following",
                        "value": "PASS" if jv >= 3 else "FAIL",
                        "reason": "ok",
                    }
                )
                judge.append(
                    {
                        "item_id": item,
                        "judge": "clip",
                        "metric": "layout_hierarchy",
                        "value": round(0.15 * truth + rng.random() * 0.2, 3),
                        "reason": None,
                    }
                )
        for k in range(n_per_cell):
            left, right = f"it-{ci}0{k}", f"it-{ci}1{k}"
            for r in raters:
                swap = rng.random() < 0.5
                choice = rng.choices(["left", "right", "both", "neither"], [5, 3, 1, 1])[0]
                if swap:
                    choice = {"left": "right", "right": "left"}.get(choice, choice)
                pairs.append(
                    {
                        "pair_id": f"p-{ci}{k}",
                        "case_id": case,
                        "item_left": right if swap else left,
                        "item_right": left if swap else right,
                        "gen_left": "gen-b" if swap else "gen-a",
                        "gen_right": "gen-a" if swap else "gen-b",
                        "rater": r,
                        "choice": choice,
                        "created_at": None,
                    }
                )
    for r in raters:
        for seq in range(30):
            ref = 1 + seq % 4
            shift = 1 if (r == "r2" and seq >= 15) else 0
            val = min(5, max(0, ref + shift + rng.choice([-1, 0, 0, 0, 1])))
            anchors.append(
                {
                    "rater": r,
                    "anchor_id": f"a{seq % 10}",
                    "item_id": f"anchor-{seq % 10}",
                    "metric": "layout_hierarchy",
                    "value": val,
                    "reference": ref,
                    "seq": seq,
                    "session_id": 1 + seq // 10,
                    "created_at": None,
                    "context": "live",
                }
            )
    jpairs = [dict(p, rater="jj") for p in pairs if p["rater"] == "r1"]
    return frames_mod.StudyFrames(
        study="synthetic",
        rubric=rubric,
        items=pd.DataFrame(items),
        judgements=pd.DataFrame(judgements),
        judge_scores=pd.DataFrame(judge),
        pair_votes=pd.DataFrame(pairs),
        judge_pair_votes=pd.DataFrame(jpairs),
        anchor_answers=pd.DataFrame(anchors),
    )


def test_real_report_model_renders(tmp_path: Path) -> None:
    report_model = pytest.importorskip("annotator.stats.report_model")
    frames = synthetic_frames()
    try:
        report = report_model.build_report(frames, n_boot=50)
    except TypeError:  # no n_boot keyword
        report = report_model.build_report(frames)
    for key in CONTRACT_TOP:
        assert key in report
    path = write_json(report, tmp_path / "report.json")
    assert read_json(path) == report

    thumbs = {f["item_id"]: png_bytes((90, 140, 90)) for f in report["findings"]}
    html = write_html(report, tmp_path / "report.html", thumbs).read_text(encoding="utf-8")
    assert XSS not in html and "&lt;script&gt;" in html  # the hostile reasons are there, escaped
    assert not re.search(r"https?://", html)
    assert not re.search(r">\s*(nan|None|inf)\s*<", html)  # no raw Python values leak into cells
    for key in ("agreement", "judges", "findings", "generators", "raters", "pairwise", "limits"):
        assert f'id="{key}"' in html
    for m in report["metrics"].values():
        assert escape(m["label"]) in html  # each metric, by the label the reader knows
    assert len(re.findall(r'<img src="data:image/[^"]+" alt="item ', html)) == len(
        report["findings"]
    )
    view = build_view(report, with_charts=False)
    assert view["generators"]["cases"] == sorted(view["generators"]["cases"])
    assert any(r["flagged"] for r in view["raters"]["rows"]) == any(
        r["drift"]["flagged"] for r in report["raters"].values()
    )

    tables = report_tables(report)
    agreement = tables["agreement"]
    humans = agreement[agreement["source"] == "human"]
    assert set(humans["metric"]) == set(report["metrics"]) | {"verdict"}
    paths = write_csv_tables(tables, tmp_path / "csv")
    assert {p.name for p in paths} >= {"agreement.csv", "findings.csv"}
    back = pd.read_csv(tmp_path / "csv" / "findings.csv", keep_default_na=False)
    assert len(back) == len(report["findings"])
    for text in back.select_dtypes(exclude="number").stack():
        assert not str(text).startswith(("=", "+", "@")), text
