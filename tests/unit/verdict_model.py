"""Model V of tests/benchmarks/validity.md: studies with personal offsets and uninformative judges.

Model F of test_stats_findings_validity (ui_mockup rubric: item quality q ~ N(0, 1) plus a
per-metric item effect N(0, 0.5); gates PASS when q + effect + noise > threshold,
instruction_following failing 20% and text_rendering 8% of the time (the lopsided, "92% PASS"
gate); scales round(2.5 + 1.2 (q + effect) + noise) in 0..5; 7 tags ticked 5-15% of the time;
the verdict from the rubric's rules), with human noise N(0, 0.6) on gates and tags and
N(0, 0.7) on scales, and:

- every answerer (human and the exchangeable judge) adds a personal offset o ~ N(0, offset_sd)
  in scale points (o / 1.2 on the gates' and tags' latent, the same size in latent units),
  fixed for the study;
- judges: "exchangeable" (one more human), "constant" (always PASS, no tag, always 3),
  "majority" (each metric's most common human answer, every item), "random" (each metric's
  answer drawn from the humans' answers of a random item: the humans' marginals, no
  information), "noisier" (a human's model with noise sd 1.2 everywhere), "lenient"
  (exchangeable, +0.5 on layout_hierarchy's latent before rounding).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from annotator.ingest.rubrics import load_rubric
from annotator.stats.frames import JUDGEMENT_COLUMNS, StudyFrames

REPO = Path(__file__).resolve().parents[2]
UI = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
TAGS = UI.metric("failure_tags").options
GATES = {"instruction_following": -0.93, "text_rendering": -1.55}
SCALES = ("layout_hierarchy", "ui_affordance")
TAG_THRESHOLD = dict(zip(TAGS, np.linspace(1.2, 1.9, len(TAGS)), strict=True))
JUDGES = ("exchangeable", "constant", "majority", "random", "noisier", "lenient")


def draw(
    rng: np.random.Generator,
    n_items: int,
    judge: str = "exchangeable",
    n_humans: int = 3,
    offset_sd: float = 0.0,
) -> tuple[list[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """(humans, judge) answers, each {metric: values}; tags as "failure_tags:<option>" booleans."""
    q = rng.normal(0, 1, n_items)
    effect = {m: rng.normal(0, 0.5, n_items) for m in (*GATES, *SCALES, *TAGS)}

    def one(noise_gate: float, noise_scale: float, shift: float = 0.0) -> dict[str, np.ndarray]:
        o = rng.normal(0, offset_sd) if offset_sd else 0.0
        out: dict[str, np.ndarray] = {}
        for g, t in GATES.items():
            out[g] = q + effect[g] + o / 1.2 + rng.normal(0, noise_gate, n_items) > t
        for m in SCALES:
            x = 2.5 + 1.2 * (q + effect[m]) + o + rng.normal(0, noise_scale, n_items)
            x = x + (shift if m == "layout_hierarchy" else 0.0)
            out[m] = np.clip(np.rint(x), 0, 5).astype(int)
        for t in TAGS:
            lat = -q + effect[t] + o / 1.2 + rng.normal(0, noise_gate, n_items)
            out[f"failure_tags:{t}"] = lat > TAG_THRESHOLD[t]
        return verdict(out)

    humans = [one(0.6, 0.7) for _ in range(n_humans)]
    if judge in ("exchangeable", "lenient"):
        j = one(0.6, 0.7, 0.5 if judge == "lenient" else 0.0)
    elif judge == "noisier":
        j = one(1.2, 1.2)
    elif judge == "constant":
        j = {g: np.ones(n_items, bool) for g in GATES}
        j |= {m: np.full(n_items, 3) for m in SCALES}
        j |= {f"failure_tags:{t}": np.zeros(n_items, bool) for t in TAGS}
        j = verdict(j)
    elif judge == "majority":
        j = {}
        for k in humans[0]:
            if k == "verdict":
                continue
            vals, cnt = np.unique(np.concatenate([h[k] for h in humans]), return_counts=True)
            j[k] = np.full(n_items, vals[np.argmax(cnt)])
        j = verdict(j)
    elif judge == "random":
        j = {}
        for k in humans[0]:
            if k == "verdict":
                continue
            pool = np.concatenate([h[k] for h in humans])
            j[k] = pool[rng.integers(0, len(pool), n_items)]
        j = verdict(j)
    else:
        raise ValueError(f"unknown judge {judge!r}: one of {JUDGES}")
    return humans, j


def verdict(a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    a["verdict"] = (
        a["instruction_following"]
        & a["text_rendering"]
        & (a["layout_hierarchy"] >= 3)
        & (a["ui_affordance"] >= 3)
    )
    return a


def frames(humans: list[dict[str, np.ndarray]], judge: dict[str, np.ndarray]) -> StudyFrames:
    """One study as StudyFrames: humans h0.., one judge `j`."""
    n_items = len(judge["verdict"])
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
        out: dict[str, list] = {g: list(np.where(a[g], "PASS", "FAIL")) for g in GATES}
        out |= {m: [int(x) for x in a[m]] for m in SCALES}
        out["failure_tags"] = [
            tuple(t for t in TAGS if a[f"failure_tags:{t}"][i]) for i in range(n_items)
        ]
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


def long_codes(humans: list[dict[str, np.ndarray]], key: str) -> pd.DataFrame:
    """The humans' answers on one metric key as the stats functions take them (idx, rater,
    code)."""
    n = len(humans[0][key])
    return pd.DataFrame(
        {
            "idx": np.tile(np.arange(n), len(humans)),
            "rater": np.repeat([f"h{r}" for r in range(len(humans))], n),
            "code": np.concatenate([h[key] for h in humans]).astype(float),
        }
    )
