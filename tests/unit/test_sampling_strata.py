"""A top-up by strata (`assign --sample N --by-strata FIGURE [--judge J]`): Neyman's sizes, the
draw on a real study (counts per stratum, the recorded probabilities, the report reading them,
a further top-up), one-line errors for a bad request, and a simulation: coverage after a
Neyman top-up and its width against a uniform top-up of the same size."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import study_settings
from ppi_py import ppi_mean_pointestimate
from scipy.stats import binomtest
from test_certified_study import _judge_rows, _new_study, _rate, _truths, _write_csv

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.domain.sampling import draw_sample
from annotator.domain.sampling_strata import draw_by_strata, neyman_sizes
from annotator.services.sampling import draw, neyman_strata
from annotator.services.study import Study
from annotator.stats.debiased import _one_figure, design
from annotator.stats.debiased_strata import stratified_entry

JUDGE_COLS = ("item_id", "judge", "metric", "value", "reason", "confidence")


def test_neyman_sizes_follow_w_s_within_what_each_stratum_has_and_holds() -> None:
    # nothing bound: n_k = n ws_k / sum ws, rounded to whole items summing to n
    assert neyman_sizes([0.3, 0.1], [10, 10], [500, 500], 100) == [75, 25]
    assert neyman_sizes([1.0, 1.0, 1.0], [0, 0, 0], [50, 50, 50], 100) == [34, 33, 33]
    # a stratum that already has more than its share keeps it; the rest split by ws
    assert neyman_sizes([0.1, 0.3, 0.1], [40, 10, 10], [500, 500, 500], 100) == [40, 45, 15]
    # a stratum cannot take more than its items: the rest spill to the others by ws
    assert neyman_sizes([0.9, 0.1], [0, 0], [20, 500], 100) == [20, 80]
    # every S_k 0 (a judge right everywhere): by size; never below what is drawn
    assert neyman_sizes([0.0, 0.0], [5, 5], [100, 300], 45) == [11, 34]
    assert neyman_sizes([0.5, 0.5], [30, 30], [100, 100], 40) == [30, 30]
    # more than the strata hold: all of them
    assert neyman_sizes([0.5, 0.5], [0, 0], [10, 10], 99) == [10, 10]


def _study(tmp_path: Path, judges: tuple[str, ...] = ("j1",)) -> tuple[Study, dict]:
    """240 items (2 generators, cases of three items each), judges with confidences, a uniform
    sample of 60 per generator rated by two raters."""
    truths = _truths()
    st = _new_study(tmp_path, truths)
    rows = [r for k, j in enumerate(judges) for r in _judge_rows(truths, j, seed=1 + k)]
    st.import_judge(_write_csv(tmp_path / "judge.csv", JUDGE_COLS, rows))
    sample, _pks, _line = draw(st, n=60, share=None, seed=5)
    _rate(st, tmp_path, truths, sorted(sample["items"]))
    return st, truths


def _pi(sample: dict) -> dict[str, float]:
    return {**sample["unsampled"], **sample["items"]}


def test_the_top_up_follows_neyman_and_records_each_strata_probability(tmp_path) -> None:
    st, truths = _study(tmp_path)
    try:
        before = st.db.all_settings()["human_sample"]
        strata, _what, _why = neyman_strata(st, "ok", None)
        sample, pks, line = draw(st, n=100, share=None, seed=None, by_strata="ok")
        assert sample["seed"] == 5  # a top-up keeps the first draw's seed
        assert set(before["items"]) <= set(sample["items"])  # drawn items stay drawn
        assert len(pks) == len(sample["items"]) == 200
        pi = _pi(sample)
        for g, (names, ws, members) in strata.items():
            ids = [i for i, t in truths.items() if t["generator"] == g]
            assert set(members) == set(ids)
            done = sample["neyman"][-1]["strata"][g]
            for k, name in enumerate(names):
                in_k = [i for i in ids if members[i] == k]
                n_k = sum(1 for i in in_k if i in sample["items"])
                had = sum(1 for i in in_k if i in before["items"])
                assert done[name] == {"ws": ws[k], "items": len(in_k), "had": had, "now": n_k}
                # the allocation scaled to 100: n_k = 100 W_k S_k / sum, within rounding (each
                # stratum had about 30 of the 60 drawn, below its share)
                assert abs(n_k - 100 * ws[k] / sum(ws)) < 1
                # every item of the stratum, drawn or not, has the design's probability
                assert [pi[i] for i in in_k] == pytest.approx([n_k / len(in_k)] * len(in_k))
                assert f"{name} +{n_k - had} ({had} -> {n_k} of {len(in_k)}; W " in line
            assert sum(1 for i in ids if i in sample["items"]) == 100
        assert line.startswith("human sample by strata (judge j1's ok by confidence; Neyman")
    finally:
        st.close()


def test_the_report_weighs_each_item_by_its_stratum_probability(tmp_path) -> None:
    """After the top-up is rated, the debiased figure is PPI++ with each item weighted by
    1 / pi (ppi_py's weighted estimate at the report's lambda), and the stratified figure the
    report's strata (now three bins, across the draw's two) each weighted the same way."""
    st, truths = _study(tmp_path)
    try:
        before = set(st.db.all_settings()["human_sample"]["items"])
        sample, _pks, _line = draw(st, n=100, share=None, seed=None, by_strata="ok")
        _rate(st, tmp_path, truths, sorted(set(sample["items"]) - before), name="r2.csv")
        strata_now, _what, _why = neyman_strata(st, "ok", None)
    finally:
        st.close()
    out = tmp_path / "report.json"
    assert (
        main(["report", "--study", str(tmp_path / "study"), "--json", str(out), "--boot", "20"])
        == 0
    )
    rep = json.loads(out.read_text())
    judge = {r[0]: r for r in _judge_rows(truths, "j1", seed=1) if r[2] == "ok"}
    # the raters' mean per item: _rate splits every tenth item of each file
    y_of: dict[str, float] = {}
    for items in (sorted(before), sorted(set(sample["items"]) - before)):
        for n, i in enumerate(items):
            ok = float(truths[i]["ok"] == "PASS")
            y_of[i] = 0.5 if n % 10 == 9 else ok
    pi = _pi(sample)
    assert rep["debiased"]["sample"]["design"] == sample["design"]
    # the sample no longer stands for every item alike: no certified threshold calibrated on it
    assert rep["certified"]["calibration"] is None
    assert "--by-strata" in rep["certified"]["calibration_note"]
    for g in ("gen-a", "gen-b"):
        fig = rep["debiased"]["judges"]["j1"]["by_generator"][g]["ok"]
        ids = [i for i, t in truths.items() if t["generator"] == g]

        def est(members: list[str], lam: float) -> float:
            lab = [i for i in members if i in sample["items"]]
            unl = [i for i in members if i not in sample["items"]]
            f = {i: float(judge[i][3] == "PASS") for i in members}
            return float(
                np.ravel(
                    ppi_mean_pointestimate(
                        np.array([y_of[i] for i in lab]),
                        np.array([f[i] for i in lab]),
                        np.array([f[i] for i in unl]),
                        lam=lam,
                        w=np.array([1 / pi[i] for i in lab]),
                        w_unlabeled=np.array([1 / (1 - pi[i]) for i in unl]),
                    )
                )[0]
            )

        assert fig["n_sampled"] == 100
        assert fig["ppi"]["estimate"] == pytest.approx(est(ids, fig["lambda"]), abs=1e-9)
        block = fig["stratified"]
        names, _ws, members = strata_now[g]
        assert len(names) == 3 == len(block["strata"])
        want = sum(
            s["weight"] * est([i for i in ids if members[i] == k], s["lambda"])
            for k, s in enumerate(block["strata"])
        )
        assert block["estimate"] == pytest.approx(want, abs=1e-9)


def test_a_further_top_up_keeps_the_drawn_items_and_a_uniform_one_is_refused(tmp_path) -> None:
    st, _truths_ = _study(tmp_path)
    try:
        one, _pks, _line = draw(st, n=100, share=None, seed=None, by_strata="ok")
        two, _pks, line = draw(st, n=110, share=None, seed=None, by_strata="ok")
        assert set(one["items"]) <= set(two["items"]) and len(two["items"]) == 220
        assert "(20 new)" in line.splitlines()[0] and len(two["neyman"]) == 2
        # the cells: the items that shared a stratum at both draws, each at its drawn share
        pi = _pi(two)
        for cell in set(two["cells"].values()):
            members = [i for i, c in two["cells"].items() if c == cell]
            drawn = sum(1 for i in members if i in two["items"])
            assert [pi[i] for i in members] == pytest.approx([drawn / len(members)] * len(members))
        # asking for no more keeps the sample
        same, _pks, line = draw(st, n=50, share=None, seed=None, by_strata="ok")
        assert same["items"] == two["items"] and "(0 new)" in line
        with pytest.raises(InputError, match="topped up by strata.*--by-strata FIGURE"):
            draw(st, n=150, share=None, seed=None)
        with pytest.raises(InputError, match="mix designs"):
            draw(st, n=150, share=None, seed=None, active=True)
    finally:
        st.close()


def test_answered_items_stand_for_the_drawn_within_their_cell() -> None:
    """A stratum just topped up (40 drawn, 10 answered so far) beside one fully answered (20 of
    20): the answered items of each cell carry its pi times its answered share, so the new
    draws still waiting for labels do not thin the other stratum (over the generator, both
    would be scaled by 30 / 60)."""
    n = 200
    cell = np.array(["g/0"] * 100 + ["g/1"] * 100)
    drawn = np.zeros(n, dtype=bool)
    drawn[:40] = drawn[100:120] = True
    answered = np.zeros(n, dtype=bool)
    answered[:10] = answered[100:120] = True
    sub = pd.DataFrame(
        {
            "case_id": [str(k) for k in range(n)],
            "y": np.where(answered, 1.0, np.nan),
            "f": 1.0,
            "pi": np.where(cell == "g/0", 0.4, 0.2),
            "in_sample": drawn,
            "cell": cell,
        }
    )
    d = design(sub)
    assert d.pi_lab.tolist() == pytest.approx([0.4 * 10 / 40] * 10 + [0.2] * 20)
    assert d.unl.sum() == 140  # the 30 drawn and unanswered are in neither set


def _fails(args: list[str], capsys, *words: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


def test_bad_requests_get_one_line_errors(tmp_path, capsys) -> None:
    st, truths = _study(tmp_path, ("j1", "j2"))
    # a third judge that states no confidence
    nc = [r[:5] + ("",) for r in _judge_rows(truths, "j3", seed=9)]
    st.import_judge(_write_csv(tmp_path / "j3.csv", JUDGE_COLS, nc))
    st.close()
    args = ["assign", "--study", str(tmp_path / "study"), "--raters", "ann", "--overlap", "1"]
    _fails([*args, "--by-strata", "ok"], capsys, "--by-strata", "--sample N")
    _fails([*args, "--sample", "80", "--judge", "j1"], capsys, "--judge", "--by-strata")
    _fails([*args, "--sample", "80", "--by-strata", "ok", "--active"], capsys, "--by-strata")
    _fails([*args, "--sample", "80", "--by-strata", "nope"], capsys, "no debiased figure", "ok")
    _fails([*args, "--sample", "80", "--by-strata", "ok"], capsys, "j1, j2, j3", "--judge J")
    _fails([*args, "--sample", "80", "--by-strata", "ok", "--judge", "j9"], capsys, "--judge j9")
    _fails(
        [*args, "--sample", "80", "--by-strata", "ok", "--judge", "j3"],
        capsys,
        "no strata yet",
        "the judge states no confidence",
    )
    assert main(["set", "debiased_strata", "none", "--study", str(tmp_path / "study")]) == 0
    _fails(
        [*args, "--sample", "80", "--by-strata", "ok", "--judge", "j1"],
        capsys,
        'debiased_strata is "none"',
    )
    assert main(["set", "debiased_strata", "confidence", "--study", str(tmp_path / "study")]) == 0
    before = study_settings(tmp_path / "study")["human_sample"]
    assert main([*args, "--sample", "80", "--by-strata", "ok", "--judge", "j2"]) == 0
    out = capsys.readouterr().out
    assert "judge j2's ok by confidence" in out and "(40 new)" in out
    assert set(before["items"]) < set(study_settings(tmp_path / "study")["human_sample"]["items"])


def test_no_recorded_sample_is_a_one_line_error(tmp_path, capsys) -> None:
    truths = _truths()
    st = _new_study(tmp_path, truths)
    st.import_judge(
        _write_csv(tmp_path / "judge.csv", JUDGE_COLS, _judge_rows(truths, "j1", seed=1))
    )
    st.close()
    args = ["assign", "--study", str(tmp_path / "study"), "--raters", "ann", "--overlap", "1"]
    _fails([*args, "--sample", "80", "--by-strata", "ok"], capsys, "draw one first")


# the simulation: a generator of 1,500 items, one per case; the judge's error steps with its
# confidence (45% wrong below 2/3, 12% to 5/6, 1% above), so the residual y - lambda_k f has a
# standard deviation near 0.5 in the unsure stratum and near 0.1 in the sure one
BIG_N, FIRST, AFTER = 1500, 90, 240


def _population(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    y = (rng.random(BIG_N) < 0.55).astype(float)
    conf = rng.uniform(0.5, 1.0, BIG_N)
    wrong = rng.random(BIG_N) < np.select([conf < 2 / 3, conf < 5 / 6], [0.45, 0.12], 0.01)
    return y, np.where(wrong, 1.0 - y, y), conf


def _frame(y, f, conf, ids: list[str], sample: dict) -> pd.DataFrame:
    """The generator's items as the report reads them from the recorded sample."""
    drawn = np.array([i in sample["items"] for i in ids])
    pi_of = {**sample.get("unsampled", {}), **sample["items"]}
    sub = pd.DataFrame(
        {
            "item_id": ids,
            "case_id": ids,
            "y": np.where(drawn, y, np.nan),
            "f": f,
            "pi": [pi_of.get(i, sample["rates"]["g"]) for i in ids],
            "in_sample": drawn,
            "conf": conf,
            "slice": None,
        }
    )
    if sample.get("cells"):
        sub["cell"] = [sample["cells"][i] for i in ids]
    return sub


def test_simulated_neyman_top_up_covers_and_is_narrower_than_a_uniform_one() -> None:
    """300 studies: a uniform sample of 90, then topped up to 240 by strata (the first
    sample's three confidence bins, Neyman) or uniformly. The stratified interval after the
    Neyman top-up covers the rate the items are drawn at (0.55; the interval makes no finite
    population correction, so against the 1,500 items' own mean it covers more) at 95% within
    what 300 runs allow, as does the unstratified PPI++ reading the unequal probabilities, and
    is narrower than after the uniform top-up (measured: 283/300 = 94.3% [91.1, 96.4] Wilson
    95%, 99.0% against the items' mean; unstratified 96.0% [93.1, 97.7]; width 0.89 of the
    uniform top-up's, unstratified 0.95)."""
    rng = np.random.default_rng(20261205)
    ids = [f"i{k:05d}" for k in range(BIG_N)]
    live = [(k + 1, i, "g", i) for k, i in enumerate(ids)]
    covered = {"neyman": 0, "uniform": 0, "neyman_flat": 0}
    ratio, ratio_flat = [], []
    runs = 300
    for r in range(runs):
        y, f, conf = _population(rng)
        first = draw_sample(live, n=FIRST, share=None, seed=r, before=None, created_at="t")
        sub = _frame(y, f, conf, ids, first)
        block = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.05, members=True)["stratified"]
        ss = block["strata"]
        strata = {
            "g": ([s["name"] for s in ss], [s["weight"] * s["sd"] for s in ss], block["members"])
        }
        ney = draw_by_strata(live, strata, n=AFTER, seed=r, before=first, created_at="t", why="s")
        uni = draw_sample(live, n=AFTER, share=None, seed=r, before=first, created_at="t")
        width = {}
        for name, sample in (("neyman", ney), ("uniform", uni)):
            sub = _frame(y, f, conf, ids, sample)
            st = stratified_entry(sub, None, 0.05, (0.0, 1.0), 0.05)["stratified"]
            flat = _one_figure(sub.drop(columns=["conf", "slice"]), True, 10, 0.05, (0.0, 1.0))
            covered[name] += st["low"] <= 0.55 <= st["high"]
            if name == "neyman":
                covered["neyman_flat"] += flat["ppi"]["low"] <= 0.55 <= flat["ppi"]["high"]
            width[name] = (st["high"] - st["low"], flat["ppi"]["high"] - flat["ppi"]["low"])
        ratio.append(width["neyman"][0] / width["uniform"][0])
        ratio_flat.append(width["neyman"][1] / width["uniform"][1])
    for k in ("neyman", "neyman_flat"):
        ci = binomtest(covered[k], runs).proportion_ci(0.99, method="wilson")
        assert ci.low <= 0.95 <= ci.high, (k, covered[k], runs)
    assert np.mean(ratio) < 0.93, np.mean(ratio)
    assert np.mean(ratio_flat) < 1.0, np.mean(ratio_flat)
