"""Drift on live anchors: CUSUM/EWMA mechanics, the two run-length requirements, the summary."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, norm

from annotator.demo.simulate import SimulatedRater
from annotator.domain.rubric import CANNOT_JUDGE, FAIL, PASS
from annotator.ingest.rubrics import load_rubric
from annotator.stats.drift import (
    EWMA_LAMBDA,
    H_REF,
    K_REF,
    H,
    K,
    _metric_flag,
    check_rater_drift,
    cusum,
    ewma,
    first_alarm,
    flag_runs,
    live_deviations,
    rank_scores,
    rater_drift_summary,
    reference_k,
)
from annotator.stats.frames import ANCHOR_COLUMNS, StudyFrames

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = load_rubric(ROOT / "rubrics" / "ui_mockup.toml")
GATES = ("instruction_following", "text_rendering")
SCALES = ("layout_hierarchy", "ui_affordance")
P_REF = [0.03, 0.20, 0.27, 0.27, 0.20, 0.03]  # reference scale values 0..5: mostly 1..4
P_PASS = 0.6
RUNS = 1000

# Steady raters of four noise levels (scale deviation law, gate flip rate), the model of
# tests/benchmarks/drift.md: none of them drifts, so every flag is false.
NOISE = {
    "quiet": (lambda rng, shape: rng.choice([-1, 0, 1], p=[0.03, 0.94, 0.03], size=shape), 0.03),
    "steady": (lambda rng, shape: rng.choice([-1, 0, 1], p=[0.15, 0.70, 0.15], size=shape), 0.15),
    # DSG-TIFA-like: sd about 0.75, 5% of deviations 2 or more, a personal offset of -0.3
    "tifa": (lambda rng, shape: np.rint(rng.normal(-0.3, 0.7, shape)), 0.20),
    "noisy": (
        lambda rng, shape: rng.choice([-2, -1, 0, 1, 2], p=[0.05, 0.2, 0.5, 0.2, 0.05], size=shape),
        0.25,
    ),
}


def clopper_pearson(hits: int, n: int) -> tuple[float, float]:
    lo = beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    hi = beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return float(lo), float(hi)


def test_cusum_follows_its_recursion():
    d = [1, 1, 0, -1, 2, 0, -2, -2, -1]
    up, down = cusum(d, k=0.5)
    sp = sm = 0.0
    for t, x in enumerate(d):
        sp, sm = max(0.0, sp + x - 0.5), max(0.0, sm - x - 0.5)
        assert (up[t], down[t]) == (sp, sm)
    assert list(up[:3]) == [0.5, 1.0, 0.5] and list(down[-3:]) == [1.5, 3.0, 3.5]


def test_rank_scores_are_the_raters_own_mid_ranks():
    d = np.array([0, 1, -1, 0, 0, 1, 0, 2, -3] + [0] * 30, dtype=float)
    u = rank_scores(d)
    assert list(u[:5]) == [0.0] * 5  # fewer than 5 earlier answers: nothing charted
    # t = 5: value 1 among [0, 1, -1, 0, 0]: 4 below, 1 equal -> (4 + 0.5 + 0.5) / 6
    assert u[5] == pytest.approx(norm.ppf(5 / 6))
    assert u[8] == pytest.approx(norm.ppf(0.5 / 9))  # below everything
    # a personal offset is the chart's zero: the same series shifted gives the same scores
    assert np.allclose(rank_scores(d - 0.3), u)
    # after 30 answers the baseline is frozen: the 31st and later are ranked among the first 30
    late = np.concatenate([d[:30], [5.0, 5.0]])
    assert rank_scores(late)[-1] == pytest.approx(norm.ppf(30.5 / 31))


def test_check_rater_drift_names_the_chart_and_the_earliest_metric():
    steady = [0, 1, -1, 0, 0, 1, -1, 0, 0, 0] * 3
    # two points up from the rater's own habit on one metric while another stays steady:
    # the calibrated chart of that metric decides
    flag = check_rater_drift({"a": steady + [0] * 10, "b": steady + [2] * 10})
    assert flag["metric"] == "b" and flag["direction"] == "up" and flag["chart"] == "calibrated"
    assert 30 <= flag["index"] < 36
    # far from the reference from the very first anchor: no change from where the rater started,
    # so no drift (the combined chart reads deviations from the rater's own early offset); the
    # app's notice comes from the reference chart at the sixth anchor, of kind "offset"
    flag = check_rater_drift({"c": [-2] * 10})
    assert (flag["metric"], flag["direction"], flag["index"], flag["chart"], flag["kind"]) == (
        "c",
        "down",
        5,
        "reference",
        "offset",
    )
    ref = _metric_flag([-2] * 10, reference=True)
    assert (ref["index"], ref["chart"], ref["statistic"]) == (5, "reference", 6.0)
    assert _metric_flag([-2] * 10) is None  # the report's drift: calibrated chart only
    assert check_rater_drift({"x": [0.0] * 200, "y": []}) is None


def test_ewma_and_its_limits():
    z, limit = ewma([1.0, 0.0, 0.0])
    lam = EWMA_LAMBDA
    assert z.tolist() == pytest.approx([lam, lam * (1 - lam), lam * (1 - lam) ** 2])
    assert limit[0] == pytest.approx(
        3 * lam
    )  # first limit: L sigma lambda, sigma 1 for normal scores
    _, long = ewma(np.zeros(200))
    assert long[-1] == pytest.approx(3 * math.sqrt(lam / (2 - lam)))


# ---- the two requirements, measured over many seeded runs --------------------------


def gate_dev(rng, runs, steps, flip):
    flips = rng.random((runs, steps)) < flip
    ref_pass = rng.random((runs, steps)) < P_PASS
    return (flips * np.where(ref_pass, -1, 1)).astype(float)  # a flipped PASS reads -1, a FAIL +1


def rater_devs(rng, noise, runs, steps, shift_at=None, shifted=SCALES):
    draw, flip = NOISE[noise]
    devs = []
    for m in SCALES:
        d = draw(rng, (runs, steps)).astype(float)
        if shift_at is not None and m in shifted:
            d[:, shift_at:] += 1
        devs.append(d)
    return devs + [gate_dev(rng, runs, steps, flip) for _ in GATES]


@pytest.mark.parametrize("noise", sorted(NOISE))
def test_steady_rater_of_any_noise_rarely_flagged_within_100_anchors(noise):
    rng = np.random.default_rng(2024)
    runs = 600
    false = int((flag_runs(rater_devs(rng, noise, runs, 100)) < 100).sum())
    lo, _ = clopper_pearson(false, runs)
    assert lo <= 0.02, f"{false} of {runs} steady {noise} raters flagged"


def test_one_point_shift_flagged_within_15_anchors():
    rng = np.random.default_rng(7)
    first = flag_runs(rater_devs(rng, "steady", RUNS, 45, shift_at=30))
    detected = int(((first >= 30) & (first < 45)).sum())
    lo, hi = clopper_pearson(detected, RUNS)
    assert lo >= 0.90 or hi >= 0.95, f"{detected} of {RUNS} drifts caught within 15 anchors"
    assert detected >= 0.9 * RUNS


def test_the_old_fixed_chart_flagged_realistic_steady_raters():
    # why the chart is calibrated: the fixed CUSUM (k 0.5, h 3.5 points) on a TIFA-like rater
    rng = np.random.default_rng(3)
    devs = rater_devs(rng, "tifa", 400, 100)
    old = np.min([first_alarm(d, 0.5, 3.5)[0] for d in devs], axis=0)
    assert (old < 100).mean() > 0.3 and (flag_runs(devs) < 100).mean() < 0.03


# ---- through the frames, with the simulated rater ----------------------------------


def simulated_anchor_answers(raters, n_anchors, rng, sessions_every=25):
    """Live anchor answers of each rater on a fresh ui_mockup-like anchor per showing."""
    rows = []
    for rater in raters:
        for seq in range(n_anchors):
            truth = {m: (PASS if rng.random() < P_PASS else FAIL) for m in GATES}
            truth |= {m: int(rng.choice(6, p=P_REF)) for m in SCALES}
            answers = rater.answer(truth, RUBRIC, rng, anchor_index=seq)
            for metric, reference in truth.items():
                rows.append(
                    {
                        "rater": rater.name,
                        "anchor_id": f"{rater.name}-a{seq}",
                        "item_id": f"i{seq}",
                        "metric": metric,
                        "value": answers[metric],
                        "reference": reference,
                        "seq": seq,
                        "session_id": f"s{seq // sessions_every}",
                        "created_at": None,
                        "context": "live",
                    }
                )
    return pd.DataFrame(rows, columns=ANCHOR_COLUMNS)


@pytest.mark.slow
def test_summary_flags_simulated_drift_and_spares_steady_raters():
    rng = np.random.default_rng(99)
    n = 150
    drifting = [
        SimulatedRater(f"d{i}", noise=0.48, drift_at=30, drift_shift=1.0, drift_kinds=("scale",))
        for i in range(n)
    ]
    steady = [SimulatedRater(f"s{i}", noise=0.48) for i in range(n)]
    frames = StudyFrames(
        study="sim",
        rubric=RUBRIC,
        anchor_answers=pd.concat(
            [
                simulated_anchor_answers(drifting, 45, rng),
                simulated_anchor_answers(steady, 100, rng),
            ]
        ),
    )
    summary = rater_drift_summary(frames)
    caught = [summary[r.name]["drift"] for r in drifting]
    on_time = sum(
        d["flagged"]
        and 30 <= d["first_flag_at"] < 45
        and d["direction"] == "up"
        and d["metric"] in SCALES
        for d in caught
    )
    assert clopper_pearson(on_time, n)[0] >= 0.80
    false = sum(summary[r.name]["drift"]["flagged"] for r in steady)
    assert clopper_pearson(false, n)[1] <= 0.05
    assert all(summary[r.name]["anchors"] == 100 for r in steady)


def anchor_rows(rater, rows):
    """rows: (seq, anchor_id, metric, value, reference, session, context)."""
    return [
        {
            "rater": rater,
            "anchor_id": a,
            "item_id": f"item-{a}",
            "metric": m,
            "value": v,
            "reference": ref,
            "seq": seq,
            "session_id": sess,
            "created_at": None,
            "context": ctx,
        }
        for seq, a, m, v, ref, sess, ctx in rows
    ]


def test_summary_shape_accuracy_and_test_retest():
    rows = []
    # 10 live showings: gate right 8 times; scale within one point 9 times, exact 5 times
    gate_answers = [PASS] * 8 + [FAIL, FAIL]
    scale_answers = [3, 3, 3, 3, 3, 4, 2, 4, 2, 5]
    for seq in range(10):
        anchor = f"a{seq % 5}"  # five anchors, each seen in session s1 and again in s2
        sess = "s1" if seq < 5 else "s2"
        rows.append((seq, anchor, "instruction_following", gate_answers[seq], PASS, sess, "live"))
        rows.append((seq, anchor, "layout_hierarchy", scale_answers[seq], 3, sess, "live"))
    rows.append((10, "a0", "layout_hierarchy", CANNOT_JUDGE, 3, "s2", "live"))
    rows.append((None, "a0", "layout_hierarchy", 0, 3, "c1", "calibration"))
    frames = StudyFrames(
        study="t", rubric=RUBRIC, anchor_answers=pd.DataFrame(anchor_rows("ann", rows))
    )
    s = rater_drift_summary(frames)["ann"]
    json.dumps(s, allow_nan=False)
    assert s["anchors"] == 11
    assert s["drift"] == {
        "flagged": False,
        "metric": None,
        "direction": None,
        "first_flag_at": None,
    }
    gate = s["accuracy"]["instruction_following"]
    assert (gate["estimate"], gate["n"]) == (0.8, 10)
    # Clopper-Pearson 95% for 8 of 10 (published tables: 0.4439, 0.9748)
    assert (gate["low"], gate["high"]) == pytest.approx((0.4439, 0.9748), abs=1e-4)
    scale = s["accuracy"]["layout_hierarchy"]
    # "cannot judge" against a reference counts as not met (the one anchor rule, domain/kinds.py)
    assert (scale["estimate"], scale["n"], scale["exact"], scale["n_cannot_judge"]) == (
        9 / 11,
        11,
        5 / 11,
        1,
    )
    assert s["calibration_accuracy"]["layout_hierarchy"]["estimate"] == 0.0
    rr = s["test_retest"]["layout_hierarchy"]
    # pairs (s1, s2) per anchor: (3,4) (3,2) (3,4) (3,2) (3,5) -> 4 of 5 within one point, none exact
    assert (rr["n_pairs"], rr["n_anchors"], rr["agreement"], rr["exact"]) == (5, 5, 0.8, 0.0)
    assert s["test_retest"]["instruction_following"]["agreement"] == 0.6
    series = s["series"]["layout_hierarchy"]
    assert series["seq"] == list(range(10))  # cannot_judge (seq 10) skipped
    assert series["deviation"] == [float(a - 3) for a in scale_answers]
    assert (series["k"], series["h"], series["k_reference"], series["h_reference"]) == (
        K,
        H,
        K_REF,
        H_REF,
    )
    assert s["series"]["instruction_following"]["k_reference"] == 0.5
    assert set(series) == {
        "seq",
        "deviation",
        "adjusted",
        "score",
        "cusum_up",
        "cusum_down",
        "ewma",
        "ewma_limit",
        "k",
        "h",
        "reference_up",
        "reference_down",
        "k_reference",
        "h_reference",
    }
    assert set(s["series"]) == {"instruction_following", "layout_hierarchy"}


def test_first_flag_at_is_the_seq_and_the_earliest_metric_decides():
    gate, scale = [], []
    for seq in range(20):
        # the gate is answered FAIL on PASS anchors from seq 4 on
        gate.append(
            (seq, f"a{seq}", "text_rendering", FAIL if seq >= 4 else PASS, PASS, "s", "live")
        )
        # the scale is skipped (cannot judge) at odd seqs and 3 points high from seq 4
        value = CANNOT_JUDGE if seq % 2 else (5 if seq >= 4 else 2)
        scale.append((seq, f"a{seq}", "ui_affordance", value, 2, "s", "live"))
    both = StudyFrames(
        study="t", rubric=RUBRIC, anchor_answers=pd.DataFrame(anchor_rows("r", gate + scale))
    )
    # the scale is 3 points high from its third answer (seq 4) and the gate FAIL from seq 4: both
    # are off the reference almost from the start, before any baseline of the rater's own, so they
    # are calibration offsets, not drift (drift is a change from the rater's own baseline)
    s = rater_drift_summary(both)["r"]
    assert s["drift"]["flagged"] is False
    off = s["calibration_offset"]["ui_affordance"]
    assert (
        off["flagged"] and off["direction"] == "lenient" and off["estimate"] == pytest.approx(2.4)
    )
    assert "consistently lenient by 2.40" in off["text"]
    gate_off = s["calibration_offset"]["text_rendering"]
    assert gate_off["flagged"] and gate_off["direction"] == "severe"
    assert s["detectability"]["ui_affordance"] == {
        "n_anchors": 20,
        "up": 20,
        "down": 20,
        "text": "a shift up can show on 20 of 20 anchors, a shift down on 20",
    }
    # every gate reference is PASS: more PASS cannot show on any of them
    assert (
        s["detectability"]["text_rendering"]["up"],
        s["detectability"]["text_rendering"]["down"],
    ) == (0, 20)
    # the app's notice still tells the rater (kind "offset", the reference chart)
    notice = check_rater_drift(live_deviations(both.anchor_answers, RUBRIC), rubric=RUBRIC)
    assert notice["kind"] == "offset" and notice["chart"] == "reference"
    only_gate = StudyFrames(
        study="t", rubric=RUBRIC, anchor_answers=pd.DataFrame(anchor_rows("r", gate))
    )
    assert rater_drift_summary(only_gate)["r"]["drift"]["flagged"] is False
    # a change after a baseline of the rater's own: the gate FAIL on PASS anchors from seq 30
    late = [
        (seq, f"a{seq}", "text_rendering", FAIL if seq >= 30 else PASS, PASS, "s", "live")
        for seq in range(45)
    ]
    late_frames = StudyFrames(
        study="t", rubric=RUBRIC, anchor_answers=pd.DataFrame(anchor_rows("r", late))
    )
    d = rater_drift_summary(late_frames)["r"]["drift"]
    assert d["flagged"] and d["direction"] == "down" and 30 <= d["first_flag_at"] < 40
    # the reference chart of a two-valued metric has k 0.5 (with the rubric), 1 without
    devs = [0.0] * 4 + [-1.0] * 16
    assert (
        _metric_flag(devs, reference_k(RUBRIC.metric("text_rendering")), reference=True)["index"]
        == 14
    )
    assert _metric_flag(devs) is None or _metric_flag(devs)["chart"] != "reference"
    # four answers are no baseline: for the app, the reference chart at 14 (an offset notice)
    assert check_rater_drift({"text_rendering": devs}, rubric=RUBRIC)["index"] == 14
