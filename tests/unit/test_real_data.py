"""Published figures reproduced end to end: `annotator import` + `annotator report --json`
on the real public data in tests/data (TIFA v1.0, PandaLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tifa_reference import HUMAN_ALPHA, TIFA_PUBLISHED

from annotator.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def _run(*args: str) -> None:
    assert main(list(args)) == 0, args


@pytest.fixture(scope="module")
def tifa_report(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("tifa")
    st = str(d / "study")
    _run("new", st, "--rubric", str(DATA / "tifa" / "rubric.toml"))
    _run("import", "items", str(DATA / "tifa" / "items.jsonl"), "--study", st)
    _run("import", "ratings", str(DATA / "tifa" / "ratings.csv"), "--study", st)
    _run("import", "judge", str(DATA / "tifa" / "judge.csv"), "--study", st)
    _run("report", "--study", st, "--json", str(d / "r.json"), "--boot", "1000")
    return json.loads((d / "r.json").read_text())


@pytest.mark.parametrize("judge", sorted(TIFA_PUBLISHED))
def test_tifa_judge_correlations_match_the_paper(tifa_report, judge):
    j = tifa_report["metrics"]["faithfulness"]["judges"][judge]
    pearson, kendall = TIFA_PUBLISHED[judge]
    assert j["n_items"] == 800
    assert j["pearson"]["estimate"] == pytest.approx(pearson, abs=1e-9)
    assert j["kendall_tau_b"]["estimate"] == pytest.approx(kendall, abs=1e-9)
    assert j["pearson"]["low"] < pearson < j["pearson"]["high"]
    # a judge on a [0, 1] or CLIPScore scale is not on the 1-5 human scale: no alpha is made up
    assert j["alpha_vs_consensus"]["estimate"] is None and j["alpha_vs_consensus"].get("note")


def test_tifa_human_alpha_matches_krippendorff_package(tifa_report):
    m = tifa_report["metrics"]["faithfulness"]
    assert m["level"] == "ordinal" and m["n_items"] == 800 and m["n_judgements"] == 1600
    alpha = HUMAN_ALPHA["ratings.csv"]
    assert m["human_alpha"]["estimate"] == pytest.approx(alpha["ordinal"], abs=1e-12)
    assert m["human_alpha_interval"]["estimate"] == pytest.approx(alpha["interval"], abs=1e-12)
    assert m["human_alpha"]["low"] < alpha["ordinal"] < m["human_alpha"]["high"]


@pytest.fixture(scope="module")
def pandalm_report(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("pandalm")
    st = str(d / "study")
    _run("new", st, "--rubric", str(DATA / "pandalm" / "rubric.toml"))
    _run("import", "items", str(DATA / "pandalm" / "items.jsonl"), "--study", st)
    _run("import", "pairs", str(DATA / "pandalm" / "pair_votes.csv"), "--study", st)
    _run("import", "judge-pairs", str(DATA / "pandalm" / "judge_pairs.csv"), "--study", st)
    _run("report", "--study", st, "--json", str(d / "r.json"), "--boot", "1000")
    return json.loads((d / "r.json").read_text())


def test_pandalm_published_judge_agreement(pandalm_report):
    judges = pandalm_report["pairwise"]["judges"]
    assert judges["gpt-3.5-turbo"]["n"] == 999
    assert judges["gpt-3.5-turbo"]["agreement_with_majority"] == pytest.approx(0.7107, abs=5e-5)
    assert judges["pandalm-7b"]["agreement_with_majority"] == pytest.approx(0.6677, abs=5e-5)
    assert judges["gpt-3.5-turbo"]["kappa_vs_majority"] == pytest.approx(0.495784, abs=1e-6)
    assert judges["pandalm-7b"]["kappa_vs_majority"] == pytest.approx(0.435355, abs=1e-6)


def test_pandalm_rater_alpha_and_kappas(pandalm_report):
    p = pandalm_report["pairwise"]
    assert p["rater_alpha"]["estimate"] == pytest.approx(0.864221, abs=1e-6)
    assert p["rater_alpha"]["low"] < 0.864221 < p["rater_alpha"]["high"]
    kappas = p["rater_kappas"]
    assert kappas["annotator1|annotator2"] == pytest.approx(0.8520, abs=5e-5)
    assert kappas["annotator1|annotator3"] == pytest.approx(0.8789, abs=5e-5)
    assert kappas["annotator2|annotator3"] == pytest.approx(0.8617, abs=5e-5)


def test_pandalm_tallies_and_position_bias(pandalm_report):
    p = pandalm_report["pairwise"]
    total = sum(v["n"] for cell in p["cells"].values() for v in cell.values())
    assert total == 2997
    pb = p["position_bias"]
    assert (
        pb["left"]
        + pb["right"]
        + sum(v["both"] + v["neither"] for c in p["cells"].values() for v in c.values())
        == 2997
    )
    assert set(pb["by_rater"]) == {"annotator1", "annotator2", "annotator3"}
    assert set(p["bradley_terry"]) == {
        "llama-7b",
        "bloom-7b",
        "cerebras-gpt-6.7B",
        "opt-7b",
        "pythia-6.9b",
    }


def test_pandalm_pair_level_figures_through_the_cli(pandalm_report):
    """Three annotators vote on each pair in one layout that was never randomized (the
    alphabetically first generator on the left in all 999 pairs): no side test is printed, with a
    note saying why; Bradley-Terry treats a pair, not a vote, as the unit."""
    pb = pandalm_report["pairwise"]["position_bias"]
    assert pb["p_value"] is None and pb["n_pairs"] == 914 and "power" not in pb
    assert pb["layout"]["n_layouts"] == 999
    assert pb["layout"]["randomized"] is False and pb["layout"]["determined_by"] == "generator"
    assert "not randomized" in pb["note"] and "alphabetically first" in pb["note"]
    assert not pb["flagged_raters"]
    assert all(r["p_value"] is None for r in pb["by_rater"].values())
    bt = pandalm_report["pairwise"]["bradley_terry"]
    assert bt["pythia-6.9b"]["low"] < 0 < bt["pythia-6.9b"]["high"]
    assert all(g["n_pairs"] > 0 for g in bt.values())


def _tifa_by_generator() -> dict[str, dict]:
    """From the shipped files, per generator: the 2 x items ratings and each judge's scores."""
    import pandas as pd

    items = pd.read_json(DATA / "tifa" / "items.jsonl", lines=True)[["item_id", "generator"]]
    ratings = pd.read_csv(DATA / "tifa" / "ratings.csv").merge(items, on="item_id")
    judge = pd.read_csv(DATA / "tifa" / "judge.csv").merge(items, on="item_id")
    out = {}
    for gen, r in ratings.groupby("generator"):
        wide = r.pivot(index="item_id", columns="rater", values="value").sort_index()
        out[gen] = {"wide": wide, "judge": judge[judge["generator"] == gen]}
    return out


def test_tifa_agreement_per_generator_matches_krippendorff_statsmodels_and_scipy(tifa_report):
    """The field reports agreement per model: the report's `by_generator` block reproduces, per
    generator, krippendorff's ordinal alpha, statsmodels' Fleiss' kappa and scipy's correlations
    of each judge with the human mean, on the generator's own items."""
    import krippendorff
    from scipy import stats
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    block = tifa_report["metrics"]["faithfulness"]["by_generator"]
    ref = _tifa_by_generator()
    assert sorted(block) == sorted(ref) and len(block) == 5
    for gen, r in ref.items():
        got = block[gen]
        data = r["wide"].to_numpy(dtype=float)
        assert got["n_items"] == 160
        want = krippendorff.alpha(reliability_data=data.T, level_of_measurement="ordinal")
        assert got["human_alpha"]["estimate"] == pytest.approx(want, abs=1e-9), gen
        assert got["human_alpha"]["low"] <= want <= got["human_alpha"]["high"]
        table, _ = aggregate_raters(data.astype(int), n_cat=None)
        assert got["fleiss_kappa"]["estimate"] == pytest.approx(fleiss_kappa(table), abs=1e-9)
        mean = r["wide"].mean(axis=1)
        for name, scores in r["judge"].groupby("judge"):
            x = scores.set_index("item_id")["value"].reindex(mean.index).to_numpy(float)
            j = got["judges"][name]
            assert j["pearson"]["estimate"] == pytest.approx(stats.pearsonr(x, mean).statistic)
            assert j["spearman"]["estimate"] == pytest.approx(stats.spearmanr(x, mean).statistic)
            tau = stats.kendalltau(x, mean).statistic
            assert j["kendall_tau_b"]["estimate"] == pytest.approx(tau)
            for k in ("pearson", "spearman", "kendall_tau_b"):
                assert j[k]["low"] < j[k]["estimate"] < j[k]["high"], (gen, name, k)
