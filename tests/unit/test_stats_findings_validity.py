"""Findings that hold: a judge that is just another human gets no systematic finding (beyond
the false discovery rate) and its item findings match a held-out human's; a lenient judge is
caught. Seeded simulations of the model below (tests/benchmarks/validity.md has the figures).

The model (ui_mockup rubric): item quality q ~ N(0, 1) plus a per-metric item effect
N(0, 0.5); every answerer (human or judge) adds their own noise:
- gates PASS when q + effect + N(0, 0.6) > threshold; instruction_following fails 20% of the
  time, text_rendering 8% (a lopsided gate);
- scales round(2.5 + 1.2 (q + effect) + N(0, 0.7)) clipped to 0..5;
- each failure tag ticked when -q + effect + N(0, 0.6) > its threshold (5-15% of answers);
- K = 3 humans per item; the exchangeable judge is a fourth draw of the same model; the
  lenient judge adds +0.5 to its layout_hierarchy latent before rounding.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from annotator.ingest.rubrics import load_rubric
from annotator.stats.consensus import metric_specs
from annotator.stats.findings import benjamini_hochberg, held_out_difference
from annotator.stats.frames import JUDGEMENT_COLUMNS, StudyFrames
from annotator.stats.report_model import build_report

REPO = Path(__file__).resolve().parents[2]
UI = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
TAGS = UI.metric("failure_tags").options
GATE_THRESHOLD = {"instruction_following": -0.93, "text_rendering": -1.55}
TAG_THRESHOLD = dict(zip(TAGS, np.linspace(1.2, 1.9, len(TAGS)), strict=True))
RUNS = int(os.environ.get("VALIDITY_RUNS", "0"))  # > 0: more runs, for validity.md


def clopper_pearson(hits: int, n: int) -> tuple[float, float]:
    lo = beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    hi = beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return float(lo), float(hi)


def draw(
    rng: np.random.Generator, n_items: int, n_humans: int = 3, judge_shift: float = 0.0
) -> tuple[list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """Answers of the model above as arrays: (humans, judge), each {metric: values}; tags as
    one boolean array per option under "failure_tags:<option>"."""
    q = rng.normal(0, 1, n_items)
    effect = {
        m: rng.normal(0, 0.5, n_items)
        for m in (
            "instruction_following",
            "text_rendering",
            "layout_hierarchy",
            "ui_affordance",
            *TAGS,
        )
    }

    def one(shift: float) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for g, t in GATE_THRESHOLD.items():
            out[g] = q + effect[g] + rng.normal(0, 0.6, n_items) > t
        for m in ("layout_hierarchy", "ui_affordance"):
            x = 2.5 + 1.2 * (q + effect[m]) + rng.normal(0, 0.7, n_items)
            out[m] = np.clip(np.rint(x + (shift if m == "layout_hierarchy" else 0.0)), 0, 5).astype(
                int
            )
        for t in TAGS:
            out[f"failure_tags:{t}"] = (
                -q + effect[t] + rng.normal(0, 0.6, n_items) > TAG_THRESHOLD[t]
            )
        out["verdict"] = (
            out["instruction_following"]
            & out["text_rendering"]
            & (out["layout_hierarchy"] >= 3)
            & (out["ui_affordance"] >= 3)
        )
        return out

    return [one(0.0) for _ in range(n_humans)], one(judge_shift)


def simulate(
    rng: np.random.Generator,
    n_items: int,
    n_humans: int = 3,
    judge_shift: float = 0.0,
    cannot_judge: float = 0.0,
) -> StudyFrames:
    """One study of the model above as StudyFrames: humans h0.., one judge `j`."""
    humans, judge = draw(rng, n_items, n_humans, judge_shift)
    ids = np.array([f"it{i:04d}" for i in range(n_items)])
    items = pd.DataFrame(
        {
            "item_id": ids,
            "display_code": ids,
            "case_id": [f"c{i % 10}" for i in range(n_items)],
            "cell_id": None,
            "generator": [f"g{i % 3}" for i in range(n_items)],
            "slice": None,
        }
    )

    def typed(a: dict[str, np.ndarray]) -> dict[str, list]:
        out: dict[str, list] = {g: list(np.where(a[g], "PASS", "FAIL")) for g in GATE_THRESHOLD}
        out |= {m: [int(x) for x in a[m]] for m in ("layout_hierarchy", "ui_affordance")}
        out["failure_tags"] = [
            tuple(t for t in TAGS if a[f"failure_tags:{t}"][i]) for i in range(n_items)
        ]
        if cannot_judge:
            for key in out:
                miss = rng.random(n_items) < cannot_judge
                out[key] = ["cannot_judge" if m else v for v, m in zip(out[key], miss, strict=True)]
        return out

    def rows(who: str, ans: dict[str, list]) -> pd.DataFrame:
        return pd.concat(
            [
                pd.DataFrame({"item_id": ids, "rater": who, "metric": k, "value": v})
                for k, v in ans.items()
            ],
            ignore_index=True,
        )

    hum = pd.concat([rows(f"h{r}", typed(a)) for r, a in enumerate(humans)], ignore_index=True)
    hum = hum.assign(reason=None, created_at=None, session_id=None, position=None)[
        JUDGEMENT_COLUMNS
    ]
    jdf = rows("j", typed(judge)).rename(columns={"rater": "judge"}).assign(reason=None)
    return StudyFrames("sim", UI, items=items, judgements=hum, judge_scores=jdf)


SPECS = {s.key: s for s in metric_specs(UI) if s.directed}


def systematic_keys(
    rng: np.random.Generator,
    n_items: int,
    judge_shift: float,
    seed: int,
    n_relabel: int = 999,
    n_humans: int = 3,
) -> list[tuple[str, str]]:
    """(metric, direction) of every systematic finding, by the report's own test functions
    (the p-values of every metric, Benjamini-Hochberg over them) on one drawn study."""
    humans, judge = draw(rng, n_items, n_humans=n_humans, judge_shift=judge_shift)
    idx = np.tile(np.arange(n_items), len(humans))
    rater = np.repeat(np.arange(len(humans)), n_items)
    keys, ps, signs = [], [], []
    for key, spec in SPECS.items():
        h = pd.DataFrame(
            {
                "idx": idx,
                "rater": rater,
                "code": np.concatenate([a[key] for a in humans]).astype(float),
            }
        )
        r = held_out_difference(
            spec, h, pd.Series(judge[key].astype(float)), seed=seed, key=key, n_relabel=n_relabel
        )
        keys.append(key)
        ps.append(r["p_value"])
        signs.append(np.sign(r["estimate"]))
    q = benjamini_hochberg(ps)
    return [
        (k, "up" if sg > 0 else "down")
        for k, qq, sg in zip(keys, q, signs, strict=True)
        if qq < 0.05
    ]


def test_benjamini_hochberg_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = [0.001, 0.04, 0.03, 0.2, 0.5, 0.012, 0.049]
    expected = multitest.multipletests(p, method="fdr_bh")[1]
    assert benjamini_hochberg(p) == pytest.approx(list(expected), abs=1e-12)


def test_exchangeable_judge_rarely_gets_a_systematic_finding():
    # the old rule (mean difference from the consensus, interval excluding 0, no multiplicity
    # control) flagged 82.5% of such 150-item studies
    runs = RUNS or 150
    rng = np.random.default_rng(11)
    hits = sum(bool(systematic_keys(rng, 150, 0.0, seed=s)) for s in range(runs))
    lo, _ = clopper_pearson(hits, runs)
    assert lo <= 0.05, f"{hits} of {runs} exchangeable judges got a systematic finding"


def test_lenient_judge_is_caught():
    # with 8 humans: the test compares the judge's offset with the humans' own spread, which 3
    # humans estimate too loosely to single out +0.5 after the correction over 12 metrics
    # (caught in about 12% of such studies with 3 humans, 65% with 5: validity.md, model V)
    runs = RUNS or 60
    rng = np.random.default_rng(12)
    caught = sum(
        ("layout_hierarchy", "up") in systematic_keys(rng, 150, 0.5, seed=s, n_humans=8)
        for s in range(runs)
    )
    _, hi = clopper_pearson(caught, runs)
    assert hi >= 0.90 and caught >= 0.9 * runs, f"{caught} of {runs} lenient judges caught"


@pytest.mark.slow
def test_end_to_end_exchangeable_judge_and_item_finding_baseline():
    """Through build_report: systematic findings rare, and the judge's item-finding rate is the
    held-out human's (the old report had 108 item findings per 150 items and no baseline)."""
    runs = RUNS or 30
    rng = np.random.default_rng(13)
    flagged, ratio = 0, []
    for s in range(runs):
        r = build_report(simulate(rng, 150), n_boot=1, seed=s, n_perm=1)
        flagged += bool(r["systematic_findings"])
        for b in r["item_findings_baseline"]:
            if b["n_comparisons"] > 100 and b["held_out_human_rate"] > 0.05:
                ratio.append(b["judge_rate"] / b["held_out_human_rate"])
    lo, _ = clopper_pearson(flagged, runs)
    assert lo <= 0.05
    # an exchangeable judge contradicts the remaining humans as often as a held-out human does
    assert 0.9 < float(np.mean(ratio)) < 1.1


def test_report_keys_for_held_out_comparison():
    rng = np.random.default_rng(3)
    r = build_report(simulate(rng, 60, judge_shift=1.5), n_boot=50, seed=0, n_perm=10)
    j = r["metrics"]["layout_hierarchy"]["judges"]["j"]
    ho = j["vs_held_out_human"]
    assert ho["difference"]["estimate"] > 0.8 and ho["difference"]["low"] > 0
    assert ho["p_value"] < 0.01 and ho["q_value"] < 0.05
    hit = [f for f in r["systematic_findings"] if f["metric"] == "layout_hierarchy"]
    assert hit and hit[0]["kind"] == "lenient" and "Benjamini-Hochberg" in hit[0]["note"]
    rates = j["item_findings"]
    assert rates["judge_rate"] > rates["human_rate"]
    assert r["item_findings_baseline"] and all(
        "held_out_human_rate" in b for b in r["item_findings_baseline"]
    )
    # findings of groups above the held-out rate come first
    flags = [f["excess"] for f in r["findings"]]
    assert flags == sorted(flags, reverse=True)
