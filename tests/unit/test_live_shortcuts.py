"""A live estimate's short ways give what the long ways give, bit for bit, on the demo after 20
answers of a new rater:

- the generators' cells made carried as they are made (generator_section's `carry_from`) against
  summarising each and carrying it by the generic walk (`carry_intervals`);
- the raters' alphas with the consensus from each rater's counted features, against each
  rater's features summed by the shared bootstrap;
- the pair kappas from one product of the columns' one-hot codes (dense, sparse, and kept from
  the refresh before: stats/kept_counts.py) against the shared bootstrap's sliced block, and the
  full computation;

and a live estimate's release gate (on the humans' bounds or the debiased ones) reads the carried
bounds, marked as carried: on unchanged answers it passes and fails what the full report does.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest
from conftest import LIVE_N_BOOT

from annotator.reports.html_report import build_view
from annotator.stats import kept_counts, raters, reconcile
from annotator.stats.answers import human_answers, item_table
from annotator.stats.bootstrap import Plain, jsonable
from annotator.stats.consensus import metric_specs
from annotator.stats.generators import approximate_count, generator_section
from annotator.stats.live_estimate import carry_intervals
from annotator.stats.report_model import build_report

N_BOOT = LIVE_N_BOOT


def test_generator_cells_made_carried_are_the_generic_walks(demo_moved_on):
    frames, before, _after = demo_moved_on
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    kw: dict[str, Any] = {"n_boot": 1, "seed": 0, "min_count": 5}
    direct = generator_section(items, human, specs, carry_from=before["generators"], **kw)
    walked = generator_section(items, human, specs, **kw)
    n = carry_intervals(walked, before["generators"])
    assert approximate_count(direct) == n
    assert json.dumps(jsonable(direct)) == json.dumps(jsonable(walked))
    # both ways taken: cells whose last full figure has an interval (made at once) and cells
    # whose has none (summarised, then left as they are)
    cells = [
        (fig, before["generators"]["by_generator"][g]["by_case"][c][name])
        for g, entry in direct["by_generator"].items()
        for c, cell in entry["by_case"].items()
        for name, fig in cell.items()
        if name != "n_items"
    ]
    assert sum(bool(f.get("approximate")) for f, _ in cells) >= 50
    assert any(f["estimate"] is not None and old["low"] is None for f, old in cells)
    assert any(f["estimate"] != old["estimate"] for f, old in cells)  # the answers moved some
    assert all(type(e["by_case"]) is Plain for e in direct["by_generator"].values())
    # and the sanitiser hands them on as plain dicts, unwalked
    assert all(type(e["by_case"]) is dict for e in jsonable(direct)["by_generator"].values())


@pytest.mark.parametrize("codes", ["as answered", "cannot judge", "off the grid"])
def test_generator_means_from_the_metric_sections_consensus_are_counted_afresh(
    demo_moved_on, codes
):
    """The generators' per-item means and answer counts read from the metric sections'
    consensus tables are the ones counted from the answers: with cannot-judge answers (an item
    of them alone), and with codes off every grid (both ways take pandas' grouped mean)."""
    from annotator.stats.answers import split_by_metric
    from annotator.stats.consensus import consensus

    frames = demo_moved_on[0]
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    code = human["code"].to_numpy().copy()
    if codes == "cannot judge":
        rng = np.random.default_rng(7)
        code[rng.random(len(code)) < 0.15] = np.nan
        code[human["idx"].to_numpy() == human["idx"].iloc[0]] = np.nan  # an item of them alone
    elif codes == "off the grid":
        code = code / 3.0 + 0.1
    human = human.assign(code=code, num=code)
    h_by = split_by_metric(human)
    consensus_of = {s.key: consensus(h_by[s.key], s) for s in specs if s.key in h_by}
    kw: dict[str, Any] = {"n_boot": 40, "seed": 3, "min_count": 5}
    read = generator_section(items, human, specs, consensus_of=consensus_of, **kw)
    counted = generator_section(items, human, specs, **kw)
    assert json.dumps(jsonable(read)) == json.dumps(jsonable(counted))
    assert len(read["by_generator"]) >= 2


def _taken(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Whether each call of `module.name`, a short way that answers None where it does not
    apply, was taken (True) or left to the long way (False)."""
    seen: list[bool] = []
    short = getattr(module, name)

    def spy(*args: Any) -> Any:
        out = short(*args)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(module, name, spy)
    return seen


def _pairs(report: dict) -> dict[tuple, Any]:
    return {
        (key, pair, w): fig
        for key, sec in report["metrics"].items()
        for pair, figs in sec["rater_pairs"].items()
        for w, fig in figs.items()
        if isinstance(fig, dict)
    }


@pytest.mark.parametrize("way", ["dense", "sparse", "bootstrap block", "kept"])
def test_pair_kappas_of_a_live_estimate_are_the_full_computations(demo_moved_on, monkeypatch, way):
    frames, before, after = demo_moved_on
    kept_counts.forget()
    updated: list[bool] = []
    if way == "kept":
        # the refresh before counted the answers without the new rater's on items others
        # answered too (the same items, then); this one brings its counts up to date (the
        # demo is small: those items are more than an eighth of it)
        monkeypatch.setattr(kept_counts, "_MOST_CHANGED", 1.0)
        j = frames.judgements
        others = set(j.loc[j["rater"] != "zed", "item_id"])
        held = (j["rater"] == "zed") & j["item_id"].isin(others)
        assert held.sum() >= 5
        earlier = dataclasses.replace(frames, judgements=j[~held].reset_index(drop=True))
        build_report(earlier, n_boot=N_BOOT, intervals_from=before)
        updated = _taken(monkeypatch, kept_counts, "_updated")
    elif way == "sparse":
        monkeypatch.setattr(reconcile, "_DENSE_PRODUCT", 0)
    elif way == "bootstrap block":
        monkeypatch.setattr(reconcile, "_LIVE_TABLE_CELLS", 0)
    live = build_report(frames, n_boot=N_BOOT, intervals_from=before)
    full, est = _pairs(after), _pairs(live)
    assert set(full) == set(est) and len(full) >= 100
    for path, fig in full.items():
        assert est[path]["estimate"] == fig["estimate"], path
        assert est[path].get("n") == fig.get("n") and est[path].get("note") == fig.get("note"), path
    if way == "kept":  # every metric's tables were brought up to date, none counted whole
        assert len(updated) >= 5 and all(updated)
    kept_counts.forget()


@pytest.mark.parametrize("source", ["humans", "debiased"])
def test_a_live_release_gate_reads_the_carried_bounds(demo_moved_on, source):
    frames, _before, _after = demo_moved_on
    specs = [s for s in metric_specs(frames.rubric) if s.directed and not s.multi]
    scale = next(s.key for s in specs if not s.nominal)
    gate: dict[str, Any] = {"verdict_pass_rate": 0.3, scale: 2.0}
    if source == "debiased":
        gate |= {"source": "debiased", "judge": "demo-lenient-judge"}
    settings = {"release_gate": gate, "release_gate_min_cases": 1, "release_gate_min_items": 1}
    gated = dataclasses.replace(frames, settings={**frames.settings, **settings})
    full = build_report(gated, n_boot=N_BOOT)
    live = build_report(gated, n_boot=N_BOOT, intervals_from=full)  # the same answers
    checked = 0
    for g, entry in full["generators"]["by_generator"].items():
        want, got = entry["release_gate"], live["generators"]["by_generator"][g]["release_gate"]
        assert got["pass"] == want["pass"], g
        for name, check in want["checks"].items():
            assert got["checks"][name]["pass"] == check["pass"], (g, name)
            assert got["checks"][name].get("bound") == check.get("bound"), (g, name)
            assert got["checks"][name]["low"] == pytest.approx(check["low"], abs=1e-12)
            checked += check["low"] is not None
            # a carried bound is marked (a Wilson bound is the current answers' own)
            marked = got["checks"][name].get("approximate", False)
            assert marked == (check.get("bound") in ("bootstrap", "debiased")), (g, name)
            assert "approximate" not in check  # never in a full report
    assert checked >= 4
    # and shown so: "lower bound ≈3.78 vs threshold 2.00"
    texts = [t for gate in build_view(live)["generators"]["gates"] for _, _, t in gate["checks"]]
    assert any("lower bound ≈" in t for t in texts)
    assert not any(
        "≈" in t for gate in build_view(full)["generators"]["gates"] for *_, t in gate["checks"]
    )


def _rater_alphas(report: dict) -> dict[tuple, Any]:
    return {
        (r, key): fig["alpha"]
        for r, entry in report["raters"].items()
        for key, fig in (entry.get("agreement_with_consensus") or {}).items()
    }


def test_raters_alphas_of_a_live_estimate_are_the_full_computations(demo_moved_on, monkeypatch):
    frames, before, after = demo_moved_on
    taken = _taken(monkeypatch, raters, "_live_sliced_alpha")
    live = build_report(frames, n_boot=N_BOOT, intervals_from=before)
    assert taken and all(taken)  # the demo's gates and scales: every metric the short way
    monkeypatch.setattr(raters, "_live_sliced_alpha", lambda *args: None)
    long_way = build_report(frames, n_boot=N_BOOT, intervals_from=before)
    full, est, slow = _rater_alphas(after), _rater_alphas(live), _rater_alphas(long_way)
    assert set(full) == set(est) == set(slow) and len(full) >= 30
    assert sum(f["estimate"] is not None for f in full.values()) >= 30
    for path, fig in full.items():
        assert est[path]["estimate"] == slow[path]["estimate"] == fig["estimate"], path
        assert est[path]["n"] == slow[path]["n"] == fig["n"], path
        assert est[path].get("note") == slow[path].get("note"), path


def test_a_live_estimate_with_its_raters_beside_is_the_one_computed_in_line(
    demo_moved_on, monkeypatch
):
    """The raters' section on a thread of its own beside the metric sections (stats/beside.py)
    gives the live estimate computed in one thread, byte for byte, and leaves no thread."""
    import threading

    from annotator.stats import report_model
    from annotator.stats.beside import Beside

    frames, before, _after = demo_moved_on
    threads = set(threading.enumerate())
    beside = build_report(frames, n_boot=N_BOOT, intervals_from=before, as_of="x")
    assert set(threading.enumerate()) == threads
    started: list[bool] = []

    def in_line(on: bool) -> Beside:
        started.append(on)
        return Beside(False)

    monkeypatch.setattr(report_model, "Beside", in_line)
    alone = build_report(frames, n_boot=N_BOOT, intervals_from=before, as_of="x")
    assert started == [True]  # a live estimate asks for the thread; here it ran in line
    assert json.dumps(beside, sort_keys=True) == json.dumps(alone, sort_keys=True)
    assert len(beside["raters"]) >= 4


def test_a_rater_with_two_answers_on_an_item_takes_the_long_way(demo_moved_on):
    """Its unit holds three values, not two: the counts the short way assumes do not hold."""
    spec = next(s for s in metric_specs(demo_moved_on[0].rubric) if s.level == "nominal")
    idx = np.array([0, 0, 1, 2])
    rid = np.array([0, 0, 0, 1])
    code = np.array([1.0, 0.0, 1.0, 0.0])
    loo = np.array([1.0, 1.0, 0.0, 0.0])
    assert raters._live_sliced_alpha(idx, code, loo, rid, np.array([0.0, 1.0]), spec, 2) is None
    one_each = raters._live_sliced_alpha(
        idx[1:], code[1:], loo[1:], rid[1:], np.array([0.0, 1.0]), spec, 2
    )
    assert one_each is not None and set(one_each) == {0, 1}


def test_a_raters_totals_from_one_joint_count_are_the_summed_ones() -> None:
    """Each rater's value counts, answers and alpha features, counted once over the (rater,
    answer, consensus) cells, are the four separate counts' whole numbers, on either level."""
    from annotator.stats.agreement import alpha_finalizer

    rng = np.random.default_rng(44)
    for n, R, V in ((1, 1, 2), (50, 3, 2), (5_000, 12, 6), (20_000, 40, 11)):
        rid = rng.integers(0, R, n)
        a, b = rng.integers(0, V, n), rng.integers(0, V, n)
        agree = rng.random(n) < 0.5  # many answers on their consensus: the diagonal
        b[agree] = a[agree]
        for level in ("nominal", "ordinal"):
            k, _ = alpha_finalizer(level, np.arange(V, dtype=float))
            joint = raters._joint_totals(a, b, rid, R, V, level)
            summed = raters._summed_totals(a, b, rid, R, V, k, level)
            for got, want in zip(joint, summed, strict=True):
                assert got.shape == want.shape and np.array_equal(got, want), (n, R, V, level)
            assert joint[2].dtype == summed[2].dtype == float


def test_items_both_answered_by_a_product_are_the_masks_counts() -> None:
    """A pair's items answered on both sides, from one product of the columns where it fits
    and by blocks of pairs where it does not: the masks' counts either way."""
    rng = np.random.default_rng(8)
    for n_items, share in ((50, 0.5), (30_000, 0.9), (600_000, 0.7)):  # the last: by blocks
        ok_a = rng.random((7, n_items)) < share
        ok_b = rng.random((3, n_items)) < share
        pa = rng.integers(0, 7, 40)
        pb = rng.integers(0, 3, 40)
        want = (ok_a[pa] & ok_b[pb]).sum(axis=1)
        for b in (ok_b, ok_a):  # a judge's columns, then the humans' own
            q = pb if b is ok_b else rng.integers(0, 7, 40)
            got = reconcile._both_answered(ok_a, b, pa, q)
            assert got.dtype == np.int64
            assert np.array_equal(got, (ok_a[pa] & b[q]).sum(axis=1))
        assert np.array_equal(reconcile._both_answered(ok_a, ok_b, pa, pb), want)


def test_a_live_estimates_agreement_point_is_the_features_sums() -> None:
    """Percent agreement, Fleiss' kappa and Gwet's AC1 of a live estimate, from the sums alone,
    are those of the features summed by the plan, bit for bit."""
    from annotator.stats.agreement import value_counts
    from annotator.stats.bootstrap import ItemBootstrap
    from annotator.stats.kappa import _agreement_point, agreement_features

    rng = np.random.default_rng(12)
    for n_items, V in ((1, 2), (40, 2), (3_000, 6), (20_000, 2)):
        items = np.repeat(np.arange(n_items), rng.integers(1, 12, n_items))  # some alone
        values = rng.integers(0, V, len(items)).astype(float)
        vc = value_counts(items, values, np.arange(V, dtype=float))
        for n_categories in (V, V + 3):
            plan = ItemBootstrap(n_items, 0, 0)
            want = plan.add(*agreement_features(vc, n_categories)).point
            got = _agreement_point(vc, n_categories).point
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_a_live_views_charts_are_drawn_once_per_full_report(demo_moved_on, monkeypatch):
    """Every live estimate's view draws its charts from the same full report until the next
    one: drawn once, then the same charts found by that report's object; the view is the view
    drawn afresh, and another full report draws its own."""
    from annotator.reports import charts as charts_module
    from annotator.reports import report_sections

    frames, before, after = demo_moved_on
    live = build_report(frames, n_boot=N_BOOT, intervals_from=before, as_of="14:02")
    drawn: list[str] = []

    def counted(spec: Any) -> Any:
        def draw(report: Any) -> Any:
            drawn.append(spec.key)
            return spec.draw(report)

        return dataclasses.replace(spec, draw=draw) if spec.draw is not None else spec

    monkeypatch.setattr(report_sections, "SECTIONS", tuple(map(counted, report_sections.SECTIONS)))

    def view(charts_from: dict) -> dict:
        return build_view(live, with_charts=True, generated_at="-", charts_from=charts_from)

    charts_module._drawn.clear()
    first = view(before)
    n_first = len(drawn)
    assert n_first and view(before) == first and len(drawn) == n_first
    report_sections._CHARTS_FROM = (None, {})  # forgotten: drawn afresh, the same view
    assert view(before) == first and len(drawn) == 2 * n_first
    other = view(after)  # the next full report: its own charts
    assert len(drawn) == 3 * n_first
    assert other["agreement"]["charts"] != first["agreement"]["charts"]


def test_the_pairwise_section_is_computed_once_for_the_same_votes(demo_moved_on, monkeypatch):
    """The pairwise section is a function of the votes alone: computed once for the same votes
    (the same tables, kept by a live refresh that only added answers, or equal ones, read again
    after a new rater) and handed out as copies, so a live estimate's carried intervals written
    into one never reach the next; equal to one computed afresh; other votes or another seed
    compute it again, and nothing is kept once forgotten."""
    from annotator.stats import pairwise, report_model

    frames, before, _after = demo_moved_on
    assert len(frames.pair_votes) and len(frames.judge_pair_votes)  # the demo has both
    calls: list[int] = []
    whole = pairwise.pairwise_section

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return whole(*args, **kw)

    monkeypatch.setattr(pairwise, "pairwise_section", counted)
    report_model.forget_pairwise()
    first = report_model._pairwise(frames, N_BOOT, 0)
    assert len(calls) == 1
    first["position_bias"]["written"] = "into this copy"
    read_again = dataclasses.replace(
        frames,
        pair_votes=frames.pair_votes.copy(),
        judge_pair_votes=frames.judge_pair_votes.copy(),
    )
    again = report_model._pairwise(read_again, N_BOOT, 0)
    assert len(calls) == 1 and "written" not in again["position_bias"]
    afresh = whole(frames, n_boot=N_BOOT, seed=0, min_count=frames.settings["min_count_for_share"])
    assert json.dumps(again) == json.dumps(afresh)
    again["position_bias"]["written"] = "into this copy too"
    assert "written" not in report_model._pairwise(frames, N_BOOT, 0)["position_bias"]
    # live estimates (no resampling: n_boot 1) on the same votes: the first computes, the
    # next reads, and the carried intervals written into the first do not reach the second
    live = [build_report(frames, n_boot=N_BOOT, intervals_from=before) for _ in range(2)]
    assert len(calls) == 2
    assert json.dumps(live[0]) == json.dumps(live[1])
    assert live[0]["pairwise"]["bradley_terry"]
    report_model._pairwise(frames, 1, 1)
    one_less = dataclasses.replace(frames, pair_votes=frames.pair_votes.iloc[1:])
    report_model._pairwise(one_less, 1, 1)
    assert len(calls) == 4
    report_model.forget_pairwise()
    report_model._pairwise(one_less, 1, 1)
    assert len(calls) == 5
