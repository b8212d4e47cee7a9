"""Stratified PPI++ (stats/debiased_strata.py): the estimate against ppi-python per stratum, one
stratum against the unstratified PPI++, the Neyman allocation, the report's `stratified` block
on a real study with judge confidences, and a fast coverage check (the full simulation is
tests/benchmarks/bench_debiased_strata.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_pointestimate
from scipy.stats import norm
from test_certified_study import _judge_rows, _new_study, _rate, _truths, _write_csv

from annotator.cli import main
from annotator.domain.settings import problem
from annotator.stats.debiased import _one_figure, design
from annotator.stats.debiased_strata import (
    confidence_bins,
    merge_thin,
    neyman_allocation,
    stratified_entry,
    stratified_ppi,
)


def _sub(rng: np.random.Generator, n: int, big_n: int, per_case: int = 1) -> pd.DataFrame:
    """A generator's items: a pass rate, a judge wrong 40% of the time when unsure (confidence
    below 0.7) and 5% when sure, a uniform sample of n."""
    y = (rng.random(big_n) < 0.55).astype(float)
    conf = rng.uniform(0.5, 1.0, big_n)
    wrong = rng.random(big_n) < np.where(conf < 0.7, 0.4, 0.05)
    f = np.where(wrong, 1.0 - y, y)
    drawn = np.zeros(big_n, dtype=bool)
    drawn[rng.choice(big_n, n, replace=False)] = True
    return pd.DataFrame(
        {
            "case_id": (np.arange(big_n) // per_case).astype(str),
            "y": np.where(drawn, y, np.nan),
            "f": f,
            "pi": n / big_n,
            "in_sample": drawn,
            "conf": conf,
            "slice": None,
        }
    )


def test_the_estimate_is_the_strata_ppi_python_estimates_weighted_by_their_shares() -> None:
    rng = np.random.default_rng(11)
    for _ in range(10):
        sub = _sub(rng, int(rng.integers(90, 300)), int(rng.integers(600, 3000)))
        d = design(sub)
        y, f, conf = sub["y"].to_numpy(), sub["f"].to_numpy(), sub["conf"].to_numpy()
        strata = merge_thin(confidence_bins(conf, None, 3), y, d.lab)
        got = stratified_ppi(y, f, d, strata)
        # by hand: tertiles of the confidence, each a ppi_py PPI++ estimate, W_k its item share
        cuts = np.quantile(conf, [1 / 3, 2 / 3])
        k_of = (conf >= cuts[0]).astype(int) + (conf >= cuts[1]).astype(int)
        lab = ~np.isnan(y)
        want = 0.0
        for k in range(3):
            m = k_of == k
            est = ppi_mean_pointestimate(y[m & lab], f[m & lab], f[m & ~lab])
            want += m.mean() * float(np.ravel(est)[0])
            assert got.strata[k].n_items == m.sum() and got.strata[k].n_sampled == (m & lab).sum()
        assert got.interval.estimate == pytest.approx(want, abs=1e-9)
        # its variance: the strata's, weighted by W_k^2
        var = sum(s.weight**2 * s.result.ppi.se**2 for s in got.strata)
        assert got.interval.se == pytest.approx(np.sqrt(var), rel=1e-12)


@pytest.mark.parametrize("per_case", [1, 3])
def test_one_stratum_is_the_unstratified_ppi(per_case: int) -> None:
    rng = np.random.default_rng(5)
    sub = _sub(rng, 60, 600, per_case)
    d = design(sub)
    y, f = sub["y"].to_numpy(), sub["f"].to_numpy()
    one = stratified_ppi(y, f, d, np.zeros(len(sub), dtype=np.int64))
    fig = _one_figure(sub.drop(columns=["conf", "slice"]), True, 10, 0.05, (0.0, 1.0))
    assert one.interval.estimate == pytest.approx(fig["ppi"]["estimate"], abs=1e-12)
    assert one.interval.low == pytest.approx(fig["ppi"]["low"], abs=1e-12)
    assert one.interval.high == pytest.approx(fig["ppi"]["high"], abs=1e-12)
    assert one.strata[0].result.lam == fig["lambda"]


def test_the_allocation_is_neymans() -> None:
    rng = np.random.default_rng(2)
    sub = _sub(rng, 120, 1200)
    d = design(sub)
    y, f = sub["y"].to_numpy(), sub["f"].to_numpy()
    conf = sub["conf"].to_numpy()
    st = stratified_ppi(y, f, d, merge_thin(confidence_bins(conf, None, 3), y, d.lab))
    width = 0.05
    got = neyman_allocation(st.strata, width)
    # by hand: S_k the sample standard deviation (ddof 1) of y - lambda_k f in the stratum,
    # n = (2 z sum W_k S_k / width)^2, n_k = n W_k S_k / sum W_j S_j, less what it has
    lab = ~np.isnan(y)
    bins = confidence_bins(conf, None, 3)
    ws = []
    for k, s in enumerate(st.strata):
        m = lab & (bins == k)
        ws.append(s.weight * np.std(y[m] - s.result.lam * f[m], ddof=1))
    z = norm.ppf(0.975)
    n = (2 * z * sum(ws) / width) ** 2
    want = {
        s.name: max(0, int(np.ceil(n * w / sum(ws))) - s.n_sampled)
        for s, w in zip(st.strata, ws, strict=True)
    }
    assert got == want
    # the unsure stratum, where the judge is often wrong, gets the most
    assert got[st.strata[0].name] == max(got.values()) > 0


def test_thin_strata_merge_with_their_neighbour() -> None:
    lab = np.array([True, True, True, False, True, True, True, True])
    y = np.array([1.0, 0.0, 1.0, np.nan, 1.0, 1.0, 0.0, 1.0])
    # stratum 1 holds no answered item, stratum 2's answers are all 1: both merge upward/down
    strata = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    assert merge_thin(strata, y, lab).tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    assert merge_thin(np.zeros(8, dtype=int), y, lab).tolist() == [0] * 8


def test_few_labels_or_no_confidence_leave_no_strata() -> None:
    rng = np.random.default_rng(3)
    sub = _sub(rng, 50, 500)
    out = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.1)
    assert out["stratified"] is None and "fewer than the 60" in out["stratified_note"]
    sub = _sub(rng, 200, 500).assign(conf=np.nan)
    out = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.1)
    assert out["stratified"] is None and "no confidence" in out["stratified_note"]
    assert stratified_entry(sub, "none", 0.05, (0.0, 1.0), 0.1)["stratified"] is None


def test_slices_as_strata() -> None:
    """debiased_strata = "slice": the items' slices, in name order, a thin one merged."""
    rng = np.random.default_rng(8)
    sub = _sub(rng, 120, 900)
    lab = sub["y"].notna().to_numpy()
    slices = np.where(sub["conf"] < 0.7, "hard", "easy").astype(object)
    # one labelled item only in "rare": it merges with its neighbour in name order ("hard")
    rare = np.flatnonzero(lab)[:1]
    slices[rare] = "rare"
    sub["slice"] = slices
    block = stratified_entry(sub, "slice", 0.05, (0.0, 1.0), 0.1)["stratified"]
    assert block["by"] == "slice"
    assert [s["name"] for s in block["strata"]] == ["easy", "hard+rare"]
    d = design(sub)
    y, f = sub["y"].to_numpy(), sub["f"].to_numpy()
    k = (slices != "easy").astype(np.int64)
    assert block["estimate"] == pytest.approx(
        stratified_ppi(y, f, d, k).interval.estimate, abs=1e-12
    )
    assert [s["n_items"] for s in block["strata"]] == [int((k == 0).sum()), int((k == 1).sum())]
    one = stratified_entry(sub.assign(slice="all"), "slice", 0.05, (0.0, 1.0), 0.1)
    assert one["stratified"] is None and "one slice" in one["stratified_note"]


def test_the_setting_is_checked() -> None:
    for ok in (None, "confidence", "slice", "none"):
        assert problem("debiased_strata", ok) is None
    assert problem("debiased_strata", "judge") == 'null, "confidence", "slice" or "none"'


def test_coverage_fast() -> None:
    """300 studies of a judge whose error steps with its confidence (at 0.7, not at the
    tertiles the bins cut): the stratified interval covers 95% +/- what 300 runs allow, and is
    on average no more than 5% wider than the unstratified one."""
    rng = np.random.default_rng(20261205)
    covered, ratios = 0, []
    for _ in range(300):
        sub = _sub(rng, 150, 1500)
        # against the rate the items are drawn at: PPI++ makes no finite population correction
        block = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.1)["stratified"]
        covered += block["low"] <= 0.55 <= block["high"]
        ratios.append(block["width_ratio"])
    assert 0.91 <= covered / 300 <= 0.985
    assert np.mean(ratios) <= 1.05


def test_the_report_block_on_a_study_with_confidences(tmp_path) -> None:
    """A real study (SQLite, imports through the services): 240 items in cases of three per
    generator, a judge with confidences, a random sample of 60 per generator rated by two
    raters. The report's `stratified` block: tertile strata of the cases' mean confidence,
    each estimate ppi_py's at the block's lambda, weighted by its share of the items."""
    from annotator.services.sampling import draw

    truths = _truths()
    st = _new_study(tmp_path, truths)
    judge = _judge_rows(truths, "j1", seed=1)
    st.import_judge(
        _write_csv(
            tmp_path / "judge.csv",
            ("item_id", "judge", "metric", "value", "reason", "confidence"),
            judge,
        )
    )
    sample, _pks, _line = draw(st, n=60, share=None, seed=5)
    rated = sorted(sample["items"])
    _rate(st, tmp_path, truths, rated)
    st.close()
    path = tmp_path / "study"  # where _new_study made it
    out = tmp_path / "report.json"
    assert main(["report", "--study", str(path), "--json", str(out), "--boot", "20"]) == 0
    sec = json.loads(out.read_text())["debiased"]
    conf = {r[0]: r[5] for r in judge if r[2] == "ok"}
    f_of = {r[0]: float(r[3] == "PASS") for r in judge if r[2] == "ok"}
    for gen in ("gen-a", "gen-b"):
        fig = sec["judges"]["j1"]["by_generator"][gen]["ok"]
        block = fig["stratified"]
        assert block is not None, fig.get("stratified_note")
        assert block["by"] == "confidence" and len(block["strata"]) == 2  # 60 labels: 2 bins
        items = [i for i, t in truths.items() if t["generator"] == gen]
        # a case's items stay together: bins of the cases' mean confidence
        case_conf = (
            pd.Series({i: conf[i] for i in items}).groupby(lambda i: truths[i]["case"]).mean()
        )
        cut = np.quantile(case_conf.to_numpy(), 0.5)
        upper = {i for i in items if case_conf[truths[i]["case"]] >= cut}
        want = 0.0
        for k, s in enumerate(block["strata"]):
            members = [i for i in items if (i in upper) == bool(k)]
            lab = [i for i in members if i in sample["items"]]
            # two raters: their mean (every tenth rated item they split)
            y = []
            for n, i in enumerate(rated):
                if i in lab:
                    ok = float(truths[i]["ok"] == "PASS")
                    y.append(0.5 if n % 10 == 9 else ok)
            unl = [i for i in members if i not in sample["items"]]
            est = ppi_mean_pointestimate(
                np.array(y),
                np.array([f_of[i] for i in lab]),
                np.array([f_of[i] for i in unl]),
                lam=s["lambda"],
            )
            assert s["n_items"] == len(members) and s["n_sampled"] == len(lab)
            want += len(members) / len(items) * float(np.ravel(est)[0])
        assert block["estimate"] == pytest.approx(want, abs=1e-9)
        assert block["low"] < block["estimate"] < block["high"]
        assert block["width_ratio"] > 0 and set(block["allocation"]) == {
            s["name"] for s in block["strata"]
        }
        # the unstratified figure is as it was
        assert fig["ppi"]["estimate"] != block["estimate"]
        # the HTML row and the CSV carry it beside the unstratified figure
        from annotator.reports.view_debiased import debiased_table, debiased_view

        rep = json.loads(out.read_text())
        rows = [r for j in debiased_view(rep)["judges"] for r in j["rows"]]
        shown = [r["debiased"] for r in rows if r["generator"] == gen]
        assert any(f"by 2 strata {block['estimate']:.2f} [" in text for text in shown), shown
        table = debiased_table(rep)
        csv_row = table[(table["generator"] == gen) & (table["figure"] == "ok")].iloc[0]
        assert csv_row["stratified"] == pytest.approx(block["estimate"])
        assert csv_row["stratified_low"] == pytest.approx(block["low"])
        assert csv_row["stratified_width_ratio"] == pytest.approx(block["width_ratio"])
