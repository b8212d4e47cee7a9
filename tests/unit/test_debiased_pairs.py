"""Debiased win rates (stats/debiased_pairs.py): ppi-python on unclustered
pairs, the per-pair value (ties 1/2, humans averaged), a fast coverage check (the long one is
tests/benchmarks/bench_debiased_pairs.py), and `assign --pair-sample` through the CLI on a real
SQLite study down to the report's JSON, HTML and CSV."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import make_png, write_manifest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from annotator.cli import EXIT_BAD_INPUT, main
from annotator.stats.debiased import ppi_mean
from annotator.stats.debiased_pairs import (
    PAIR_SAMPLE_SETTING,
    debiased_pairs_section,
    pair_values,
)
from annotator.stats.frames import PAIR_COLUMNS

REPO = Path(__file__).resolve().parents[2]


def simulated_study(
    rng: np.random.Generator,
    n: int,
    *,
    cases: int = 25,
    per_case: int = 8,
    humans: int = 2,
    judge: str = "lenient",
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Pairs of "A vs B" in cases (a case effect on the preference), two humans on a simple
    random sample of n pairs, a judge on all that votes as the first human would 70% of the
    time and otherwise picks A (`lenient`) or draws another human-like vote (`unbiased`), or
    always picks A (`constant`); ties 15%. Returns votes, judge votes, and the settings with the
    sample (model P of validity.md)."""
    N = cases * per_case
    case = np.repeat(np.arange(cases), per_case)
    p = 1 / (1 + np.exp(-(0.3 + rng.normal(0, 0.6, cases)[case] + rng.normal(0, 1, N))))

    def vote(k: int) -> np.ndarray:
        return np.where(
            rng.random((k, N)) < 0.15, "both", np.where(rng.random((k, N)) < p, "left", "right")
        )

    h = vote(humans)
    if judge == "constant":
        j = np.full(N, "left")
    else:  # the first human's vote 70% of the time (on every pair, sampled or not)
        j = np.where(rng.random(N) < 0.7, h[0], "left" if judge == "lenient" else vote(1)[0])
    pid = np.array([f"p{i:05d}" for i in range(N)])
    lab = np.zeros(N, bool)
    lab[rng.choice(N, n, replace=False)] = True
    idx = np.flatnonzero(lab)

    def frame(ix: np.ndarray, rater: str, choice: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "pair_id": pid[ix],
                "case_id": [f"c{c}" for c in case[ix]],
                "item_left": [f"a{i:05d}" for i in ix],  # A's item shown left, smaller id
                "item_right": [f"b{i:05d}" for i in ix],
                "gen_left": "A",
                "gen_right": "B",
                "rater": rater,
                "choice": choice,
                "created_at": None,
            },
            columns=PAIR_COLUMNS,
        )

    votes = pd.concat([frame(idx, f"r{k}", h[k, idx]) for k in range(humans)], ignore_index=True)
    judge = frame(np.arange(N), "J", j)
    sample = {"seed": 0, "items": {pid[i]: n / N for i in idx}, "rates": {"A vs B": n / N}}
    return votes, judge, {PAIR_SAMPLE_SETTING: sample}


def true_win_rate() -> float:
    """The model's win rate of A (cases averaged, ties 1/2)."""
    g = np.random.default_rng(0)
    m = 2_000_000
    return 0.15 * 0.5 + 0.85 * float(
        np.mean(1 / (1 + np.exp(-(0.3 + g.normal(0, 0.6, m) + g.normal(0, 1, m)))))
    )


def test_pair_values_ties_half_and_the_first_named_generator():
    v = pd.DataFrame(
        [
            ("p1", "c", "x1", "x2", "zeta", "alpha", "r", "left", None),  # zeta wins: alpha 0
            ("p2", "c", "x3", "x4", "zeta", "alpha", "r", "right", None),  # alpha wins: 1
            ("p3", "c", "x5", "x6", "alpha", "zeta", "r", "neither", None),  # tie
            ("p4", "c", "x7", "x8", "alpha", "alpha", "r", "left", None),  # one generator: out
        ],
        columns=PAIR_COLUMNS,
    )
    pv = pair_values(v).set_index("pair_id")
    assert pv["value"].to_dict() == {"p1": 0.0, "p2": 1.0, "p3": 0.5}
    assert set(pv["key"]) == {"alpha vs zeta"}


def test_matches_ppi_python_on_unclustered_pairs_and_averages_humans_first():
    rng = np.random.default_rng(4)
    for _ in range(10):
        n = int(rng.integers(15, 80))
        # one pair per case: unclustered, every pair the same weight
        votes, judge, settings = simulated_study(
            rng, n, cases=int(rng.integers(n + 20, 400)), per_case=1
        )
        sec = debiased_pairs_section(votes, judge, settings)
        fig = sec["judges"]["J"]["by_pair"]["A vs B"]
        assert fig["clustered_by_case"] is False
        pv = pair_values(votes)
        y = pv.groupby("pair_id")["value"].mean()  # two humans averaged per pair
        fj = pair_values(judge).set_index("pair_id")["value"]
        lab = fj.index.isin(y.index)
        yl, fl, fu = y.loc[fj.index[lab]].to_numpy(), fj[lab].to_numpy(), fj[~lab].to_numpy()
        est = float(np.ravel(ppi_mean_pointestimate(yl, fl, fu))[0])
        assert fig["ppi"]["estimate"] == pytest.approx(est, abs=1e-9)
        assert fig["humans_only"]["estimate"] == pytest.approx(float(yl.mean()), abs=1e-12)
        # the plain interval on the section's values is ppi_py's, to 1e-9 (the report prints the
        # jackknife one, tested in test_debiased.py)
        plain = ppi_mean(yl, fl, fu)
        lo, hi = (float(np.ravel(v)[0]) for v in ppi_mean_ci(yl, fl, fu, alpha=0.05))
        assert (plain.ppi.low, plain.ppi.high) == pytest.approx((lo, hi), abs=1e-9)
        assert fig["lambda"] == pytest.approx(plain.lam, abs=1e-9)


def test_votes_outside_the_sample_never_enter_and_no_sample_says_how():
    rng = np.random.default_rng(2)
    votes, judge, settings = simulated_study(rng, 40)
    sec = debiased_pairs_section(votes, judge, settings)
    # a hand-picked pair voted by a human: counted, not used
    extra = judge[~judge["pair_id"].isin(votes["pair_id"])].iloc[:3].assign(rater="r0")
    more = debiased_pairs_section(pd.concat([votes, extra]), judge, settings)
    assert more["sample"]["n_human_pairs_outside_sample"] == 3
    a = sec["judges"]["J"]["by_pair"]["A vs B"]
    b = more["judges"]["J"]["by_pair"]["A vs B"]
    assert a["ppi"] == b["ppi"] and a["n_sampled"] == 40
    none = debiased_pairs_section(votes, judge, {})
    assert none["recorded"] is False and "--pair-sample N" in none["note"]
    assert debiased_pairs_section(votes, judge.iloc[0:0], {}) is None  # no pairs compared


def test_intervals_cover_the_win_rate_fast_check():
    """300 studies (the 1000-run figures are in validity.md, model P): 60 of 200 pairs in 25
    cases, eight pairs per case (clustered), two humans per pair, a lenient judge."""
    rng = np.random.default_rng(12)
    theta, hits = true_win_rate(), 0
    for _ in range(300):
        sec = debiased_pairs_section(*simulated_study(rng, 60))
        ppi = sec["judges"]["J"]["by_pair"]["A vs B"]["ppi"]
        hits += ppi["low"] <= theta <= ppi["high"]
    assert 0.92 <= hits / 300 <= 0.985


GENS = ("gen-a", "gen-b")
N_CASES = 30


def _build(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    rows = []
    for c in range(N_CASES):
        for g, gen in enumerate(GENS):
            item = f"it-{gen}-{c:02d}"
            img = make_png(src / "out" / f"{item}.png", colour=(8 * c, 100 * g, 0))
            rows.append(
                {
                    "item_id": item,
                    "case_id": f"case{c:02d}",
                    "prompt": f"Draw screen {c}",
                    "generator": gen,
                    "images": [str(img.relative_to(src))],
                }
            )
    study = tmp_path / "study"
    assert main(["new", str(study), "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(study)]) == 0
    return study


def _pairs(study: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(study / "study.sqlite") as con:
        return {
            # gen-a's item first (left) whatever order the pair stores them in: item numbers
            # follow a random import order, so the stored first item is either generator
            pid: (a, b) if ga == "gen-a" else (b, a)
            for pid, a, b, ga in con.execute(
                "SELECT p.pair_id, ia.item_id, ib.item_id, ia.generator FROM pairs p "
                "JOIN items ia ON ia.id = p.item_a JOIN items ib ON ib.id = p.item_b"
            )
        }


def test_assign_pair_sample_deals_only_the_sample_and_the_report_corrects_the_judge(
    tmp_path, capsys
):
    study = _build(tmp_path)
    # --pair-sample needs to know how many raters vote on each drawn pair
    assert (
        main(["assign", "--study", str(study), "--raters", "ann", "--pair-sample", "5"])
        == EXIT_BAD_INPUT
    )
    assert "--pair-overlap" in capsys.readouterr().err
    args = ["assign", "--study", str(study), "--raters", "ann,bob", "--pair-overlap", "2"]
    assert main([*args, "--pair-sample", "12", "--seed", "5"]) == 0
    assert "pair sample: 12 pairs (12 new" in capsys.readouterr().out
    with sqlite3.connect(study / "study.sqlite") as con:
        (key,) = con.execute(
            "SELECT value FROM settings WHERE key = ?", (PAIR_SAMPLE_SETTING,)
        ).fetchone()
        dealt = con.execute("SELECT count(DISTINCT pair_pk) FROM pair_assignments").fetchone()[0]
    sample = json.loads(key)
    assert sample["seed"] == 5 and sample["rates"] == {"gen-a vs gen-b": pytest.approx(0.4)}
    assert list(sample["items"].values()) == pytest.approx([0.4] * 12)
    assert dealt == 12  # the sampled pairs only, not all 30
    # a top-up keeps the drawn pairs and the seed
    assert main([*args, "--pair-sample", "20"]) == 0
    with sqlite3.connect(study / "study.sqlite") as con:
        (key,) = con.execute(
            "SELECT value FROM settings WHERE key = ?", (PAIR_SAMPLE_SETTING,)
        ).fetchone()
    topped = json.loads(key)
    assert set(sample["items"]) <= set(topped["items"]) and topped["seed"] == 5
    assert len(topped["items"]) == 20

    # the pair sample names pairs and generators: it stays in the study, never in a package
    from annotator.services.packages import export_package
    from annotator.services.study import Study

    st = Study.open(study)
    try:
        export_package(st, "ann", tmp_path / "ann.annot")
    finally:
        st.close()
    assert b"human_pair_sample" not in (tmp_path / "ann.annot").read_bytes()

    pairs = _pairs(study)
    rng = np.random.default_rng(3)
    hv, jv = tmp_path / "votes.csv", tmp_path / "judge.csv"
    with hv.open("w", newline="") as fh, jv.open("w", newline="") as fj:
        wh, wj = csv.writer(fh), csv.writer(fj)
        wh.writerow(["pair_id", "item_left", "item_right", "rater", "choice"])
        wj.writerow(["pair_id", "item_left", "item_right", "rater", "choice"])
        for pid, (a, b) in sorted(pairs.items()):
            truth = "left" if rng.random() < 0.4 else "right"  # gen-a (left) wins 40%
            # the judge prefers gen-a: it says "left" on every pair the humans gave gen-b
            # one time in two
            wj.writerow([pid, a, b, "lenient", "left" if rng.random() < 0.5 else truth])
            if pid in topped["items"]:
                wh.writerow([pid, a, b, "ann", truth])
                wh.writerow([pid, a, b, "bob", truth if rng.random() < 0.8 else "both"])
        # one hand-picked pair off the sample
        pid = next(p for p in sorted(pairs) if p not in topped["items"])
        wh.writerow([pid, *pairs[pid], "ann", "left"])
    assert main(["import", "pairs", str(hv), "--study", str(study)]) == 0
    assert main(["import", "judge-pairs", str(jv), "--study", str(study)]) == 0
    out = tmp_path / "r.json"
    html, csv_dir = tmp_path / "r.html", tmp_path / "csv"
    assert (
        main(
            [
                "report",
                "--study",
                str(study),
                "--json",
                str(out),
                "--html",
                str(html),
                "--csv",
                str(csv_dir),
                "--boot",
                "50",
            ]
        )  # fmt: skip
        == 0
    )
    sec = json.loads(out.read_text())["debiased"]["pairs"]
    assert sec["recorded"] and sec["sample"]["n_drawn"] == 20
    assert sec["sample"]["n_human_pairs_outside_sample"] == 1
    fig = sec["judges"]["lenient"]["by_pair"]["gen-a vs gen-b"]
    assert (fig["first"], fig["n_items"], fig["n_sampled"]) == ("gen-a", 30, 20)
    assert fig["judge_minus_humans"]["estimate"] > 0  # the judge overstates gen-a
    assert fig["ppi"]["low"] <= fig["ppi"]["estimate"] <= fig["ppi"]["high"]
    # the same votes as Bradley-Terry strengths (stats/debiased_bt.py): with two generators and
    # the humans alone, gen-b's strength is the log-odds of its win rate among the sampled pairs
    bt = sec["judges"]["lenient"]["bradley_terry"]
    assert (bt["reference"], bt["n_labelled"], bt["n_unlabelled"]) == ("gen-a", 20, 10)
    ybar = fig["humans_only"]["estimate"]
    assert bt["humans_only"]["gen-b"]["estimate"] == pytest.approx(np.log((1 - ybar) / ybar))
    assert bt["humans_only"]["gen-a"]["estimate"] == 0.0
    assert set(bt["rank_sets"]) == {"gen-a", "gen-b"}
    assert "Generator strengths and ranks" in html.read_text()
    strength_rows = [
        r for r in csv.DictReader((csv_dir / "debiased.csv").open()) if r["figure"] == "bt_strength"
    ]
    assert {r["generator"] for r in strength_rows} == {"gen-a", "gen-b"}
    assert "win rate" in html.read_text() and "gen-a vs gen-b" in html.read_text()
    rows = list(csv.DictReader((csv_dir / "debiased.csv").open()))
    pair_rows = [r for r in rows if r["generator"] == "gen-a vs gen-b"]
    assert len(pair_rows) == 1 and pair_rows[0]["figure"] == "win_rate"
    assert float(pair_rows[0]["ppi"]) == pytest.approx(fig["ppi"]["estimate"])
    # the dashboard reads the same figures, so its rows must match the report's
    from annotator.services.dashboard import Table, compute, read_inputs

    s = Study.open(study, mode="read")
    try:
        model = compute(read_inputs(s, n_boot=20, seed=0, use_cache=False))
    finally:
        s.close()
    section = next(x for x in model.sections if x.key == "debiased")
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert table.name == "debiasedPairsTable" and table.headers[1] == "generator pair"
    (row,) = table.rows
    assert row[:3] == ("lenient", "gen-a vs gen-b", "gen-a's win rate")
    assert row[3].startswith(f"{fig['ppi']['estimate']:.2f} [")
    # the plan's votes for the report's width
    assert row[table.headers.index("more votes (plan)")].startswith("+")
