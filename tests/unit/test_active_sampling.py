"""Active sampling (`assign --sample N --active [--batch K]`): the design against its formula,
the recalibration, the batches and their combination, end to end on a real study, and a fast
coverage check (the full simulation is tests/benchmarks/bench_active.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from factories import study_settings
from scipy.optimize import brentq
from scipy.stats import binomtest
from test_debiased_report import _build, _report, record_llm_scores

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.domain.sampling_active import (
    active_design,
    calibrated_errors,
    combined,
    draw_active,
    error_sizes,
    errors_follow,
    flat_loss,
)
from annotator.stats.debiased import _one_figure


def _expected_design(err: list[float], n: float, tau: float) -> np.ndarray:
    """The design written out: (1 - tau) of n in proportion to the error's size,
    sqrt(e (1 - e) + (mean e - e)^2), capped at 1 (the scale found by root finding), plus
    tau * n / N on every item."""
    e = np.asarray(err, float)
    s = np.sqrt(e * (1 - e) + (e.mean() - e) ** 2)
    scale = brentq(lambda c: np.minimum(1.0, c * s).sum() - n, 0.0, 1e6)
    return (1 - tau) * np.minimum(1.0, scale * s) + tau * n / len(err)


@pytest.mark.parametrize("n", [3.0, 12.0, 30.0])
def test_the_design_is_the_formula_sums_to_n_and_keeps_the_uniform_floor(n):
    rng = np.random.default_rng(3)
    err = list(rng.uniform(0, 0.5, 40) ** 2) + [0.0] * 5 + [0.9] * 5
    pi, t = active_design(err, n, tau=0.1)
    assert t == 0.1 and np.array(pi) == pytest.approx(_expected_design(err, n, 0.1), abs=1e-9)
    assert sum(pi) == pytest.approx(n) and max(pi) <= 1.0 + 1e-12
    assert min(pi) >= 0.1 * n / 50 - 1e-12  # the judge's sure items can still be drawn
    assert active_design(err, n, tau=1.0)[0] == pytest.approx([n / 50] * 50)  # tau 1: uniform


def test_a_judge_sure_everywhere_or_wrong_half_the_time_gets_a_uniform_design():
    assert active_design([0.0] * 10, 4, tau=0.1)[0] == pytest.approx([0.4] * 10)
    # a judge wrong on half its items leans on nothing (lam = 1 - 2 * 0.5): its confident
    # answers carry as much of the figure's error as its unsure ones
    sizes = error_sizes([0.0, 0.5, 1.0])
    assert sizes == pytest.approx([0.5, 0.5, 0.5])


def test_the_loss_budget_raises_tau_until_a_meaningless_confidence_costs_at_most_it():
    u = [0.01] * 80 + [0.4] * 20  # lopsided: most items sure
    free, _ = active_design(u, 10, tau=0.1)
    assert flat_loss(free) > 0.2  # followed blindly, a confidence that means nothing costs 20%+
    held, t = active_design(u, 10, tau=0.1, max_loss=0.03)
    assert flat_loss(held) == pytest.approx(0.03, abs=1e-6) and 0.1 < t < 1
    assert sum(held) == pytest.approx(10)
    assert held[-1] > held[0]  # still leaning toward the unsure items
    assert flat_loss([0.1] * 10) == pytest.approx(0.0)


def test_the_trend_test_confirms_a_confidence_that_tells_errors_and_rarely_one_that_does_not():
    rng = np.random.default_rng(8)
    u = rng.uniform(0, 0.5, 100)
    told = sum(
        errors_follow(list(u), list((rng.random(100) < u).astype(float))) for _ in range(200)
    )
    flat = sum(
        errors_follow(list(u), list((rng.random(100) < 0.25).astype(float))) for _ in range(400)
    )
    assert told >= 150  # errors rising with u (a calibrated judge, 100 labels): mostly confirmed
    assert flat <= 12  # errors whatever u says: confirmed only by chance (alpha 0.01; 4 expected)
    assert not errors_follow([0.1, 0.2, 0.3], [0.0, 0.0, 0.0])  # no error: nothing to follow


def test_the_error_map_follows_the_labels_only_as_far_as_they_confirm_it():
    u = [0.02] * 40 + [0.3] * 10
    assert calibrated_errors(u, {}) == (u, False)  # no labels: the stated confidence
    # the labels show the errors where the judge said: bins move toward the labels, shrunk
    # toward the stated values (10 labels' worth)
    told = {i: float(i >= 40 and i % 2 == 0) for i in range(0, 50)}
    err, confirmed = calibrated_errors(u, told)
    assert confirmed and err[45] == pytest.approx((5 + 10 * 0.3) / (10 + 10))
    assert err[0] == pytest.approx((0 + 10 * 0.02) / (10 + 10))
    # errors as common where it was sure: not confirmed, every item the pooled rate (uniform)
    flat = {i: float(i % 5 == 0) for i in range(50)}
    assert calibrated_errors(u, flat) == ([0.2] * 50, False)


def _live(n: int, gens: tuple[str, ...] = ("g",)) -> list[tuple[int, str, str, str]]:
    return [
        (k * len(gens) + j + 1, f"{g}-{k}", g, f"c{k}")
        for k in range(n)
        for j, g in enumerate(gens)
    ]


def test_batches_are_recorded_and_combined_as_the_size_weighted_average_of_their_estimates():
    live = _live(50, ("a", "b"))
    unc = {i: (0.02 if k % 2 else 0.4) for _, i, _, _ in live for k in [int(i.split("-")[1])]}
    first = draw_active(live, unc, n=20, share=None, seed=7, created_at="t", batch=8)
    assert len(first["batches"]) == 1 and first["batches"][0]["size"] == {"a": 8.0, "b": 8.0}
    assert first["request"]["batch"] == 8 and first["request"]["max_loss"] == 0.03
    b1 = first["batches"][0]
    # no labels yet: the stated confidence is trusted only as far as the budget allows, 8 of 20
    # labels drawn on it may lose 0.03 * 20 / 8 to uniform
    assert not b1["confirmed"] and b1["loss"]["a"] == pytest.approx(0.03 * 20 / 8, abs=1e-6)
    # the labels say the judge errs on its sure items as much as on the others
    observed = dict.fromkeys(first["items"], 0.3)
    second = draw_active(
        live, unc, n=20, share=None, seed=7, created_at="t", before=first, observed=observed
    )
    assert second["batches"][0] == b1
    b2 = second["batches"][1]
    assert b2["size"] == {"a": 12.0, "b": 12.0} and b2["calibrated_on"] == len(observed)
    assert not b2["confirmed"]  # a flat relation: the pooled error rate, a uniform design
    for g in ("a", "b"):
        ids = [i for _, i, gg, _ in live if gg == g]
        rest = [i for i in ids if i not in b1["drawn"]]
        assert set(b2["p"]) >= set(rest) and not set(b2["p"]) & set(b1["drawn"])
        assert [b2["p"][i] for i in rest] == pytest.approx([12 / len(rest)] * len(rest))
        for i in ids:
            # batch 1 estimates all items from its draws; batch 2 counts batch 1's as known
            # and estimates the rest from its own
            if i in b1["drawn"]:
                w = 8 / 20 / b1["p"][i] + 12 / 20
            else:
                w = 12 / 20 * (i in b2["drawn"]) / b2["p"][i]
            if w:
                assert second["items"][i] == pytest.approx(1 / w)
            else:
                missed = (1 - b1["p"][i]) * (1 - b2["p"][i])
                assert second["unsampled"][i] == pytest.approx(1 - missed)
    assert set(second["items"]) >= set(first["items"])  # a drawn item stays drawn
    with pytest.raises(InputError, match="complete"):
        draw_active(live, unc, n=20, share=None, seed=7, created_at="t", before=second)


def test_the_papers_design_follows_the_map_with_neither_guard():
    """`active_rule` "zrnic-candes" (guarded=False): Zrnic & Candes's design as they define it,
    the recalibrated map followed at tau from the first batch, whether or not the labels
    confirm it; the guarded default holds the pilot to the budget and flattens an unconfirmed
    map."""
    u = [0.02] * 40 + [0.3] * 10
    flat = {i: float(i % 5 == 0) for i in range(50)}
    err, follows = calibrated_errors(u, flat, gate=False)
    assert not follows and err[45] == pytest.approx((2 + 10 * 0.3) / (10 + 10))
    assert err[0] == pytest.approx((2 + 10 * 0.02) / (10 + 10))
    live = _live(200)
    unc = {i: (0.02 if k % 4 else 0.4) for _, i, _, _ in live for k in [int(i.split("-")[1])]}
    kw = {"n": 80, "share": None, "seed": 3, "created_at": "t", "batch": 40}
    paper = draw_active(live, unc, guarded=False, **kw)
    guarded = draw_active(live, unc, **kw)
    assert paper["request"]["rule"] == "zrnic-candes" and guarded["request"]["rule"] == "guarded"
    assert paper["batches"][0]["tau"]["g"] == 0.1  # no budget: tau as set
    assert guarded["batches"][0]["tau"]["g"] > 0.1  # the budget raised it
    # labels that say the confidence means nothing: the paper still follows the map
    observed = dict.fromkeys(paper["items"], 0.3)
    nxt = draw_active(live, unc, guarded=False, before=paper, observed=observed, **kw)
    b2 = nxt["batches"][1]
    assert not b2["confirmed"] and b2["tau"]["g"] == 0.1
    unsure = [b2["p"][i] for i in b2["p"] if unc[i] > 0.1]
    sure = [b2["p"][i] for i in b2["p"] if unc[i] < 0.1]
    assert min(unsure) > max(sure)


def test_a_confirmed_confidence_is_followed_after_the_pilot():
    live = _live(200)
    unc = {i: (0.02 if k % 4 else 0.4) for _, i, _, _ in live for k in [int(i.split("-")[1])]}
    first = draw_active(live, unc, n=80, share=None, seed=3, created_at="t", batch=40)
    # the labels agree with the stated confidence: the unsure items are wrong 40% of the time
    observed = {i: float(unc[i] > 0.1 and int(i.split("-")[1]) % 8 == 0) for i in first["items"]}
    second = draw_active(
        live, unc, n=80, share=None, seed=3, created_at="t", before=first, observed=observed
    )
    b1, b2 = second["batches"]
    assert b2["confirmed"] and b2["tau"]["g"] == 0.1  # followed at active_tau, no budget
    unsure = [i for i in b2["p"] if unc[i] > 0.1]
    sure = [i for i in b2["p"] if unc[i] < 0.1]
    assert min(b2["p"][i] for i in unsure) > 1.5 * max(b2["p"][i] for i in sure)
    assert b2["loss"]["g"] > b1["loss"]["g"]  # leaning harder than the pilot could
    # a budget of 0 makes the pilot uniform: the stated confidence waits for the labels
    pilot = draw_active(live, unc, n=80, share=None, seed=3, created_at="t", batch=40, max_loss=0)
    assert list(pilot["batches"][0]["p"].values()) == pytest.approx([40 / 200] * 200)


def test_batches_recorded_before_the_known_part_count_a_redraw_as_before():
    """A sample drawn when batches went over every item (a drawn item could be drawn again):
    an item whose later batch gave it a probability counts only if drawn again."""
    by_gen = {"g": [(1, "x", "c"), (2, "y", "c")]}
    old = [
        {"size": {"g": 1.0}, "p": {"x": 0.5, "y": 0.5}, "drawn": ["x"]},
        {"size": {"g": 1.0}, "p": {"x": 0.25, "y": 0.75}, "drawn": ["y"]},
    ]
    got = combined(by_gen, old)
    assert got["items"] == pytest.approx({"x": 1 / (0.5 / 0.5), "y": 1 / (0.5 / 0.75)})
    new = [old[0], {"size": {"g": 1.0}, "p": {"y": 1.0}, "drawn": ["y"]}]
    assert combined(by_gen, new)["items"] == pytest.approx({"x": 1 / (1 + 0.5), "y": 1 / 0.5})


def _study(rng: np.random.Generator, big_n: int) -> dict[str, np.ndarray]:
    """A judge mostly sure and right there: 80% of items stated 0.95-1, the rest 0.5-0.8,
    wrong with probability 1 - c."""
    sure = rng.random(big_n) < 0.8
    c = np.where(sure, rng.uniform(0.95, 1.0, big_n), rng.uniform(0.5, 0.8, big_n))
    f = (rng.random(big_n) < 0.7).astype(float)
    wrong = rng.random(big_n) < 1 - c
    return {"f": f, "c": c, "y": np.where(wrong, 1 - f, f), "wrong": wrong.astype(float)}


def _batched(pop: dict[str, np.ndarray], n: int, batches: int, seed: int) -> dict:
    ids = [f"i{k}" for k in range(len(pop["f"]))]
    live = [(k + 1, i, "g", i) for k, i in enumerate(ids)]
    unc = {i: float(1 - pop["c"][k]) for k, i in enumerate(ids)}
    sample = None
    for _ in range(batches):
        observed = {i: float(pop["wrong"][int(i[1:])]) for i in sample["items"]} if sample else None
        sample = draw_active(
            live,
            unc,
            n=n,
            share=None,
            seed=seed,
            created_at="t",
            batch=n // batches,
            before=sample,
            observed=observed,
        )
    assert sample is not None
    return sample


def test_the_average_of_the_batches_estimates_is_unbiased():
    """Zrnic & Candes' estimator written out from the stored batches: the judge's mean plus the
    size-weighted average over batches of the batch's estimate of sum (y - f): the items drawn
    before it as they are, plus sum (y - f) / p_b over its own draws; / N."""
    pop = _study(np.random.default_rng(11), 300)
    truth = float(pop["y"].mean())
    est = []
    for seed in range(300):
        s = _batched(pop, 60, 3, seed)
        corr, known = 0.0, 0.0
        for b in s["batches"]:
            w = b["size"]["g"] / 60
            d = {i: pop["y"][int(i[1:])] - pop["f"][int(i[1:])] for i in b["drawn"]}
            corr += w * (known + sum(d[i] / b["p"][i] for i in b["drawn"]))
            known += sum(d.values())  # the next batch counts these as they are
        est.append(pop["f"].mean() + corr / 300)
    est_a = np.array(est)
    assert abs(est_a.mean() - truth) < 3.5 * est_a.std() / np.sqrt(len(est_a))


def test_the_reports_interval_covers_on_a_batched_active_sample():
    """A fast coverage check of the interval the report prints: 200 studies of 600 items, 80
    labels in two batches (the benchmark runs 1,000 per cell)."""
    rng = np.random.default_rng(5)
    covered = printed = 0
    for seed in range(200):
        pop = _study(rng, 600)
        s = _batched(pop, 80, 2, seed)
        ids = [f"i{k}" for k in range(600)]
        probs = {**s["unsampled"], **s["items"]}
        drawn = np.array([i in s["items"] for i in ids])
        sub = pd.DataFrame(
            {
                "case_id": ids,
                "f": pop["f"],
                "y": np.where(drawn, pop["y"], np.nan),
                "pi": [probs[i] for i in ids],
                "in_sample": drawn,
            }
        )
        ppi = _one_figure(sub, True, 10, 0.05, (0.0, 1.0))["ppi"]
        if ppi["low"] is not None:
            printed += 1
            covered += ppi["low"] <= pop["y"].mean() <= ppi["high"]
    assert printed >= 190
    ci = binomtest(covered, printed).proportion_ci(0.99, method="wilson")
    assert ci.low <= 0.95 <= ci.high or covered / printed > 0.95


def test_assign_active_in_batches_on_a_real_study_recalibrates_and_the_report_reweights(
    tmp_path, capsys
):
    study, truth = _build(tmp_path)
    # sure on every third item, and wrong on half of those: the labels will say its
    # confidence is no guide
    record_llm_scores(
        study,
        [
            (
                item,
                # wrong on every other item it is sure of
                {"instruction_following": "PASS" if y != (i % 6 == 0) else "FAIL"},
                "",
                "",
                {"instruction_following": 0.99 if i % 3 == 0 else 0.6},
            )
            for i, (item, y) in enumerate(truth.items())
        ],
    )
    args = ["assign", "--study", str(study), "--raters", "ann", "--overlap", "1"]
    assert main([*args, "--batch", "5"]) == 2  # --batch without --active
    assert "--active" in capsys.readouterr().err
    assert main([*args, "--sample", "20", "--active", "--batch", "10", "--seed", "4"]) == 0
    one = study_settings(study)["human_sample"]
    assert len(one["batches"]) == 1 and one["batches"][0]["calibrated_on"] == 0
    assert main([*args, "--sample", "20", "--active"]) == 0  # the next batch, same seed
    two = study_settings(study)["human_sample"]
    b1, b2 = two["batches"]
    assert two["seed"] == 4 and b1 == one["batches"][0]
    assert b2["calibrated_on"] == len(truth)  # the humans rated every item
    # the judge erred where it was sure: those items' predicted error rose, so their share did
    gen_a = [i for i in truth if "-gen-a-" in i]
    sure = [i for k, i in enumerate(truth) if k % 3 == 0 and i in gen_a]
    assert sum(b2["p"][i] for i in sure) > 1.5 * sum(b1["p"][i] for i in sure)
    assert main([*args, "--sample", "20", "--active"]) == 2  # complete: refused, unchanged
    assert "complete" in capsys.readouterr().err
    assert study_settings(study)["human_sample"] == two
    rep = _report(study, tmp_path, "batched")
    fig = rep["debiased"]["judges"]["llm"]["by_generator"]["gen-a"]["instruction_following"]
    drawn = [i for i in two["items"] if i in gen_a]
    assert fig["n_sampled"] == len(drawn)
    # the humans-only figure is the combined-weight (1 / stored pi) mean of the drawn items
    w = np.array([1 / two["items"][i] for i in drawn])
    y = np.array([truth[i] for i in drawn], float)
    assert fig["humans_only"]["estimate"] == pytest.approx(float(w @ y / w.sum()))
    # the planner's top-up grows an active sample by one more batch, recalibrated
    assert main([*args, "--top-up", "0.05"]) == 0
    three = study_settings(study)["human_sample"]
    assert len(three["batches"]) == 3 and three["request"]["top_up_width"] == 0.05
    assert three["batches"][:2] == two["batches"] and set(three["items"]) >= set(two["items"])
    # a plan that asks no more than the batches drew leaves the sample as it is
    assert main([*args, "--top-up", "0.9"]) == 0
    assert "(0 new)" in capsys.readouterr().out
    assert study_settings(study)["human_sample"] == three


def test_the_studys_active_tau_sets_the_uniform_floor(tmp_path, capsys):
    study, truth = _build(tmp_path)
    record_llm_scores(
        study,
        [
            (item, {"instruction_following": "PASS"}, "", "", {"instruction_following": c})
            for item, c in zip(truth, np.linspace(0.5, 1.0, len(truth)), strict=True)
        ],
    )
    assert main(["set", "active_tau", "2", "--study", str(study)]) == 2
    assert "active_tau" in capsys.readouterr().err
    assert main(["set", "active_tau", "0.5", "--study", str(study)]) == 0
    assert main(["set", "active_max_loss", "-1", "--study", str(study)]) == 2
    assert "active_max_loss" in capsys.readouterr().err
    assert main(["set", "active_max_loss", "1", "--study", str(study)]) == 0  # no budget to hold
    args = ["assign", "--study", str(study), "--raters", "ann", "--overlap", "1"]
    assert main([*args, "--sample", "12", "--active", "--seed", "2"]) == 0
    (b,) = study_settings(study)["human_sample"]["batches"]
    assert b["tau"] == {"gen-a": 0.5, "gen-b": 0.5}
    assert min(b["p"].values()) >= 0.5 * 12 / 30 - 1e-12  # every item: at least the floor
    assert max(b["p"].values()) > 0.5 * 12 / 30 + 0.1
