"""The published figures through the other door: tests/data/interop/real holds TIFA v1.0 and
PandaLM (tests/data/tifa, tests/data/pandalm) as Label Studio tasks written by
`annotator export label-studio --with-annotations` (commands in its README). Importing them
must reproduce what test_real_data.py reproduces from the CSV files: the same published
correlations, agreements and kappas."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from tifa_reference import HUMAN_ALPHA, TIFA_PUBLISHED

from annotator.cli import main
from annotator.ingest import label_studio
from annotator.ingest.mapping import load_mapping
from annotator.ingest.rubrics import load_rubric

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "interop" / "real"


def _run(*args: str) -> None:
    assert main(list(args)) == 0, args


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ---- quick: the fixture holds exactly the rows of the CSV files -------------------------------


def test_tifa_tasks_hold_the_ratings_and_judge_scores():
    rubric = load_rubric(DATA / "tifa" / "rubric.toml")
    got = label_studio.parse(
        REAL / "tifa.json",
        rubric,
        load_mapping(REAL / "tifa.map.toml", "label-studio", rubric),
        set(),
    )
    assert len(got.items.specs) == 800 and not got.skipped
    ratings = {
        (r["item_id"], r["rater"]): int(r["value"]) for r in _csv(DATA / "tifa" / "ratings.csv")
    }
    assert {(j.item_id, j.rater): j.answers["faithfulness"] for j in got.judgements} == ratings
    judge = {
        (r["item_id"], r["judge"]): float(r["value"]) for r in _csv(DATA / "tifa" / "judge.csv")
    }
    assert {
        (r.item_id, r.judge): r.value for r in got.judge_rows
    } == judge  # floats exact through the JSON


def test_pandalm_tasks_hold_the_pair_votes_with_their_sides():
    rubric = load_rubric(DATA / "pandalm" / "rubric.toml")
    mapping = load_mapping(REAL / "pandalm.map.toml", "label-studio", rubric)
    items = label_studio.parse(REAL / "pandalm.json", rubric, mapping, set())
    assert len(items.items.specs) == 1998
    known = {s.item_id for s in items.items.specs}
    got = label_studio.parse(REAL / "pandalm-pairs.json", rubric, mapping, known)
    for is_judge, f in ((False, "pair_votes.csv"), (True, "judge_pairs.csv")):
        want = sorted(
            (r["pair_id"], r["item_left"], r["item_right"], r["rater"], r["choice"])
            for r in _csv(DATA / "pandalm" / f)
        )
        assert (
            sorted(
                (v.pair_id, v.item_left, v.item_right, v.rater, v.choice)
                for v in got.votes
                if v.is_judge == is_judge
            )
            == want
        )


# ---- slow: the whole report, as test_real_data.py checks it -------------------------------------


@pytest.fixture(scope="module")
def tifa_report(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("tifa_ls")
    st = str(d / "study")
    _run("new", st, "--rubric", str(DATA / "tifa" / "rubric.toml"))
    _run(
        "import",
        "label-studio",
        str(REAL / "tifa.json"),
        "--study",
        st,
        "--map",
        str(REAL / "tifa.map.toml"),
    )
    _run("report", "--study", st, "--json", str(d / "r.json"), "--boot", "1000")
    return json.loads((d / "r.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("judge", sorted(TIFA_PUBLISHED))
def test_tifa_judge_correlations_match_the_paper(tifa_report, judge):
    j = tifa_report["metrics"]["faithfulness"]["judges"][judge]
    pearson, kendall = TIFA_PUBLISHED[judge]
    assert j["n_items"] == 800
    assert j["pearson"]["estimate"] == pytest.approx(pearson, abs=1e-9)
    assert j["kendall_tau_b"]["estimate"] == pytest.approx(kendall, abs=1e-9)
    assert j["pearson"]["low"] < pearson < j["pearson"]["high"]


@pytest.mark.slow
def test_tifa_human_alpha_matches_krippendorff_package(tifa_report):
    m = tifa_report["metrics"]["faithfulness"]
    assert m["level"] == "ordinal" and m["n_items"] == 800 and m["n_judgements"] == 1600
    alpha = HUMAN_ALPHA["ratings.csv"]
    assert m["human_alpha"]["estimate"] == pytest.approx(alpha["ordinal"], abs=1e-12)
    assert m["human_alpha_interval"]["estimate"] == pytest.approx(alpha["interval"], abs=1e-12)


@pytest.fixture(scope="module")
def pandalm_report(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("pandalm_ls")
    st = str(d / "study")
    m = str(REAL / "pandalm.map.toml")
    _run("new", st, "--rubric", str(DATA / "pandalm" / "rubric.toml"))
    _run("import", "label-studio", str(REAL / "pandalm.json"), "--study", st, "--map", m)
    _run("import", "label-studio", str(REAL / "pandalm-pairs.json"), "--study", st, "--map", m)
    _run("report", "--study", st, "--json", str(d / "r.json"), "--boot", "1000")
    return json.loads((d / "r.json").read_text())


@pytest.mark.slow
def test_pandalm_published_judge_agreement(pandalm_report):
    judges = pandalm_report["pairwise"]["judges"]
    assert judges["gpt-3.5-turbo"]["n"] == 999
    assert judges["gpt-3.5-turbo"]["agreement_with_majority"] == pytest.approx(0.7107, abs=5e-5)
    assert judges["pandalm-7b"]["agreement_with_majority"] == pytest.approx(0.6677, abs=5e-5)
    assert judges["gpt-3.5-turbo"]["kappa_vs_majority"] == pytest.approx(0.495784, abs=1e-6)
    assert judges["pandalm-7b"]["kappa_vs_majority"] == pytest.approx(0.435355, abs=1e-6)


@pytest.mark.slow
def test_pandalm_rater_alpha_kappas_tallies_and_position_bias(pandalm_report):
    p = pandalm_report["pairwise"]
    assert p["rater_alpha"]["estimate"] == pytest.approx(0.864221, abs=1e-6)
    kappas = p["rater_kappas"]
    assert kappas["annotator1|annotator2"] == pytest.approx(0.8520, abs=5e-5)
    assert kappas["annotator1|annotator3"] == pytest.approx(0.8789, abs=5e-5)
    assert kappas["annotator2|annotator3"] == pytest.approx(0.8617, abs=5e-5)
    assert sum(v["n"] for cell in p["cells"].values() for v in cell.values()) == 2997
    assert set(p["position_bias"]["by_rater"]) == {"annotator1", "annotator2", "annotator3"}
    assert set(p["bradley_terry"]) == {
        "llama-7b",
        "bloom-7b",
        "cerebras-gpt-6.7B",
        "opt-7b",
        "pythia-6.9b",
    }


_TIMES = re.compile(r'"(created_at|updated_at)":"[^"]*"')


@pytest.mark.slow
def test_the_fixture_is_what_the_exporter_writes(tmp_path, monkeypatch):
    """Rebuilt from the CSV files and exported again, the tasks are the committed ones (but for
    the times of the answers, which are the times of the import)."""
    monkeypatch.chdir(tmp_path)
    for name, steps in (
        ("tifa", [("items", "items.jsonl"), ("ratings", "ratings.csv"), ("judge", "judge.csv")]),
        (
            "pandalm",
            [
                ("items", "items.jsonl"),
                ("pairs", "pair_votes.csv"),
                ("judge-pairs", "judge_pairs.csv"),
            ],
        ),
    ):
        _run("new", name, "--rubric", str(DATA / name / "rubric.toml"))
        for kind, f in steps:
            _run("import", kind, str(DATA / name / f), "--study", name)
        _run(
            "export",
            "label-studio",
            "--study",
            name,
            "--out",
            str(tmp_path / "out" / f"{name}.json"),
            "--with-annotations",
        )
    for f in REAL.iterdir():
        if f.suffix in (".json", ".xml", ".toml"):
            fresh = (tmp_path / "out" / f.name).read_text()
            assert _TIMES.sub("", fresh) == _TIMES.sub("", f.read_text()), f.name
