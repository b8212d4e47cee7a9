"""A judge on a finer grid than the raters (`judge_scale = "interval"`): raters answer on a
scale's points, a vision-language judge between them (0-1 in steps of 0.1 against raters on
0 / 0.5 / 1, a scale declared with its step). The figures defined for an interval reading are computed with the judge in the
humans' units (interval alpha with the judge as one more rater, against the consensus, the
mean difference, the held-out offset, the alt-test on RMSE), checked against `krippendorff`
and a direct computation; those that need the points (exact agreement, kappas) say why. A
judge on a scale of its own (`judge_scale = "own"`) keeps only the correlations."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annotator.domain.errors import InputError
from annotator.domain.rubric import parse_rubric
from annotator.stats.frames import JUDGEMENT_COLUMNS, StudyFrames
from annotator.stats.report_model import build_report

RUBRIC = """id = "grid"
title = "A judge between the points"
[[metrics]]
key = "faithful"
kind = "scale"
label = "Faithful"
min = 0
max = 1
step = 0.5
judge_scale = "{scale}"
"""
N_ITEMS, N_RATERS = 60, 3


def _study(scale: str, seed: int = 5) -> tuple[StudyFrames, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0, 1, N_ITEMS)
    noisy = quality + rng.normal(0, 0.25, (N_RATERS, N_ITEMS))
    humans = np.clip(np.floor(noisy / 0.5 + 0.5) * 0.5, 0, 1)
    judge = np.clip(np.round((quality + 0.08 + rng.normal(0, 0.15, N_ITEMS)) / 0.1) * 0.1, 0, 1)
    judge = np.round(judge, 1)
    ids = np.array([f"it{i:03d}" for i in range(N_ITEMS)])
    items = pd.DataFrame(
        {
            "item_id": ids,
            "display_code": ids,
            "case_id": [f"c{i % 12}" for i in range(N_ITEMS)],
            "cell_id": None,
            "generator": [f"g{i % 2}" for i in range(N_ITEMS)],
            "slice": None,
        }
    )
    hum = pd.concat(
        [
            pd.DataFrame(
                {"item_id": ids, "rater": f"h{r}", "metric": "faithful", "value": _stored(row)}
            )
            for r, row in enumerate(humans)
        ],
        ignore_index=True,
    ).assign(reason=None, created_at=None, session_id=None, position=None)[JUDGEMENT_COLUMNS]
    values = _stored(judge)
    jdf = pd.DataFrame(
        {"item_id": ids, "judge": "vlm", "metric": "faithful", "value": values, "reason": None}
    )
    rubric = parse_rubric(RUBRIC.format(scale=scale))
    return (
        StudyFrames("grid", rubric, items=items, judgements=hum, judge_scores=jdf),
        humans,
        judge,
    )


def _stored(values: np.ndarray) -> list[int | float]:
    return [int(v) if float(v).is_integer() else float(v) for v in values]


def _median_up(col: np.ndarray) -> float:
    """The consensus of a scale: the median, a tie between two points rounded up to the upper
    point (the gold's rule), here on points half a unit apart."""
    return float(np.floor(np.median(col) / 0.5 + 0.5) * 0.5)


def test_a_judge_between_the_points_gets_the_interval_figures() -> None:
    frames, humans, judge = _study("interval")
    report = build_report(frames, n_boot=200, n_perm=20)
    j = report["metrics"]["faithful"]["judges"]["vlm"]
    assert j["reading"] == "interval" and j["same_scale"] is True
    assert (judge % 1 != 0).any()  # the judge really is between the points
    with_judge = np.vstack([humans, judge])
    want = krippendorff.alpha(reliability_data=with_judge, level_of_measurement="interval")
    assert j["alpha_with_judge_as_rater"]["estimate"] == pytest.approx(want, abs=1e-9)
    alone = krippendorff.alpha(reliability_data=humans, level_of_measurement="interval")
    assert j["alpha_humans_same_items"]["estimate"] == pytest.approx(alone, abs=1e-9)
    assert j["alpha_gain"]["estimate"] == pytest.approx(want - alone, abs=1e-9)
    assert j["alpha_with_judge_as_rater"]["low"] < want < j["alpha_with_judge_as_rater"]["high"]
    cons = np.array([_median_up(humans[:, i]) for i in range(N_ITEMS)])
    vs_cons = krippendorff.alpha(
        reliability_data=np.vstack([cons, judge]), level_of_measurement="interval"
    )
    assert j["alpha_vs_consensus"]["estimate"] == pytest.approx(vs_cons, abs=1e-9)
    assert j["mean_difference"]["estimate"] == pytest.approx((judge - cons).mean(), abs=1e-9)
    held_out = (judge - humans.mean(axis=0)).mean()
    assert j["vs_held_out_human"]["difference"]["estimate"] == pytest.approx(held_out, abs=1e-9)
    # the figures that need the points say why, in the judge's words
    assert j["exact_agreement"] is None
    assert "between the rubric's points" in j["exact_agreement_ci"]["note"]
    for w in ("unweighted", "linear", "quadratic"):
        assert j["cohen_kappa"][w]["estimate"] is None
        assert "between the rubric's points" in j["cohen_kappa"][w]["note"]
    assert "between the rubric's points" in j["human_range"]["note"]
    for s in j["slices"]["by_generator"].values():
        assert s["alpha_vs_consensus"]["estimate"] is not None
        assert "between the rubric's points" in s["exact_agreement"]["note"]
    # the alt-test scores ratings by RMSE, which a judge between the points has too
    alt = j.get("alt_test") or {}
    assert alt.get("winning_rate") is not None or "30" in str(j.get("alt_test_note")), j


def test_a_judge_on_a_scale_of_its_own_keeps_only_the_correlations() -> None:
    frames, _, judge = _study("own")
    report = build_report(frames, n_boot=50, n_perm=10)
    j = report["metrics"]["faithful"]["judges"]["vlm"]
    assert j["reading"] == "own" and j["same_scale"] is False
    assert j["alpha_with_judge_as_rater"]["estimate"] is None
    assert 'judge_scale = "own"' in j["alpha_with_judge_as_rater"]["note"]
    assert j["spearman"]["estimate"] is not None


def test_interval_reading_takes_values_in_the_metric_units_only() -> None:
    rubric = parse_rubric(RUBRIC.format(scale="interval"))
    m = rubric.metric("faithful")
    kind = m.spec
    assert kind.parse_judge_value(m, "0.7") == pytest.approx(0.7)
    assert kind.parse_judge_value(m, "1") == 1
    with pytest.raises(InputError, match=r'1\.3 is outside .* judge_scale = "own"'):
        kind.parse_judge_value(m, "1.3", source="judge.csv", line=3)
    own = parse_rubric(RUBRIC.format(scale="own")).metric("faithful")
    assert own.spec.parse_judge_value(own, "27.5") == pytest.approx(27.5)
    with pytest.raises(InputError, match='"points", "interval" or "own"'):
        parse_rubric(RUBRIC.format(scale="ratio"))


# -- a scale whose points are not whole numbers ------------------------------------------------


def test_a_scale_declares_points_between_whole_numbers() -> None:
    m = parse_rubric(RUBRIC.format(scale="points")).metric("faithful")
    assert m.values() == (0, 0.5, 1)
    assert m.spec.parse_value(m, "0.5") == 0.5 and m.spec.parse_value(m, "1") == 1
    assert isinstance(m.spec.parse_value(m, "1.0"), int)  # stored as the point: 1, never 1.0
    with pytest.raises(
        InputError, match=r"0\.7 is outside faithful's scale 0\.\.1 in steps of 0\.5"
    ):
        m.spec.parse_value(m, "0.7", source="ratings.csv", line=4)
    tenth = parse_rubric(RUBRIC.format(scale="points").replace("step = 0.5", "step = 0.1"))
    points = tenth.metric("faithful").values()
    assert len(points) == 11 and points[3] == 0.3  # counted in decimals, not 0.30000000000000004
    # the step is part of the version; a whole-number step is the default and left out
    plain = parse_rubric(RUBRIC.format(scale="points").replace("step = 0.5", ""))
    one = parse_rubric(RUBRIC.format(scale="points").replace("step = 0.5", "step = 1"))
    assert plain.version == one.version != parse_rubric(RUBRIC.format(scale="points")).version
    for bad, says in (("step = 0.3", "does not divide 0..1"), ("step = -1", "positive number")):
        with pytest.raises(InputError, match=says):
            parse_rubric(RUBRIC.format(scale="points").replace("step = 0.5", bad))
    # levels and rules on its points
    described = RUBRIC.format(scale="points") + 'levels = { "0.5" = "Partly" }\n'
    assert parse_rubric(described).metric("faithful").level_text(0.5) == "Partly"
    with pytest.raises(InputError, match="level 0.25 is outside"):
        parse_rubric(RUBRIC.format(scale="points") + 'levels = { "0.25" = "x" }\n')
    ruled = parse_rubric(RUBRIC.format(scale="points") + '[verdict]\nrules = ["faithful >= 0.5"]\n')
    f = ruled.metric("faithful")
    assert f.spec.anchor_match(f, 0.5, 1).met and not f.spec.anchor_match(f, 0, 1).met


def test_a_stepped_scale_consensus_is_a_point_of_its_grid() -> None:
    frames, humans, _ = _study("points")
    frames.judge_scores = frames.judge_scores.iloc[0:0]
    report = build_report(frames, n_boot=50, n_perm=10)
    assert report["metrics"]["faithful"]["human_alpha"]["estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=humans, level_of_measurement="ordinal"), abs=1e-9
    )


def test_a_judge_between_the_points_has_an_error_on_the_random_sample() -> None:
    """The debiased figures read it in the humans' units too: its own figure and its error on
    the sample are stated (a judge on a scale of its own has neither)."""
    from dataclasses import replace

    frames, humans, judge = _study("interval")
    ids = list(frames.items["item_id"])
    sample = {"items": dict.fromkeys(ids, 1.0), "seed": 1, "design": "uniform"}
    frames = replace(frames, settings={"human_sample": sample})
    report = build_report(frames, n_boot=50, n_perm=10)
    fig = next(iter(report["debiased"]["judges"]["vlm"]["by_generator"]["g0"].values()))
    g0 = np.arange(N_ITEMS) % 2 == 0
    assert fig["judge_only"]["estimate"] == pytest.approx(judge[g0].mean(), abs=1e-9)
    want = (judge[g0] - humans[:, g0].mean(axis=0)).mean()
    assert fig["judge_minus_humans"]["estimate"] == pytest.approx(want, abs=1e-9)
