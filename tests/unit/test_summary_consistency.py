"""The summary never contradicts itself, read mechanically over 100 simulated small
studies (2-6 raters, 20-200 items, 2-4 generators, with and without a recorded random human
sample, judges lenient, severe or honest):

* a judge-metric with a known bias (a systematic offset, or a generator figure the judge gets
  wrong on the random sample with the error's interval excluding 0) is never "cannot tell",
  "inside the human spread" or "replaceable", and its `why` says the bias;
* no "corrected by the random human sample" where the judge's weight (lambda) is 0 on every
  generator ranked;
* a pair of generators "known" in order is never also "unsettled" in "to decide";
* every judge has its one sentence, in plain words: no settings key, method acronym or
  "resamples" in it, nor in the known and to-decide lines' first clause.

A summary that says "undetermined, too few items" beside a clear bias misleads the reader who
reads only the summary, so each rule is checked on every simulated study."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotator.domain.sampling import draw_sample
from annotator.ingest.rubrics import load_rubric
from annotator.stats.frames import JUDGE_COLUMNS, JUDGEMENT_COLUMNS, StudyFrames
from annotator.stats.report_model import build_report

RUBRIC = load_rubric(Path(__file__).parents[2] / "rubrics" / "ui_mockup.toml")
JARGON = re.compile(
    r"alt_test|epsilon|resamples|PPI|Bradley-Terry|cohen kappa|min_items|lambda|"
    r"Benjamini|q < 0\.05|`",
    re.I,
)


def _study(seed: int) -> StudyFrames:
    rng = np.random.default_rng(seed)
    n_raters = int(rng.integers(2, 7))
    n_items = int(rng.integers(20, 201))
    n_gens = int(rng.integers(2, 5))
    n_cases = max(2, n_items // n_gens)
    ids = [f"it{i:03d}" for i in range(n_items)]
    gens = [f"gen-{chr(97 + i % n_gens)}" for i in range(n_items)]
    cases = [f"c{(i // n_gens) % n_cases:03d}" for i in range(n_items)]
    items = pd.DataFrame(
        {
            "item_id": ids,
            "display_code": ids,
            "case_id": cases,
            "cell_id": [f"{c}/{g}" for c, g in zip(cases, gens, strict=True)],
            "generator": gens,
            "slice": None,
        }
    )
    quality = {g: rng.uniform(0.2, 0.9) for g in set(gens)}
    truth_pass = np.array([rng.random() < quality[g] for g in gens])
    truth_scale = np.clip(np.round(rng.normal(3, 1, n_items)), 0, 5).astype(int)
    rows = []
    for r in range(n_raters):
        noise = rng.uniform(0.05, 0.25)
        for i in range(n_items):
            flip = rng.random() < noise
            scale = int(
                np.clip(truth_scale[i] + rng.integers(-1, 2) * (rng.random() < noise), 0, 5)
            )
            for metric, value in (
                ("instruction_following", "PASS" if truth_pass[i] ^ flip else "FAIL"),
                ("layout_hierarchy", scale),
            ):
                rows.append((ids[i], f"r{r}", metric, value, None, None, None, None))
    judgements = pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)
    bias = rng.choice(["lenient", "severe", "honest"])
    shift = {"lenient": 1, "severe": -1, "honest": 0}[bias]
    judge_rows = []
    for i in range(n_items):
        p = truth_pass[i] if bias == "honest" or rng.random() < 0.6 else shift > 0
        if rng.random() < 0.1:
            p = not p
        s = int(np.clip(truth_scale[i] + shift * (rng.random() < 0.7), 0, 5))
        judge_rows.append((ids[i], "judge", "instruction_following", "PASS" if p else "FAIL", None))
        judge_rows.append((ids[i], "judge", "layout_hierarchy", s, None))
    judge = pd.DataFrame(judge_rows, columns=JUDGE_COLUMNS)
    settings: dict = {}
    if rng.random() < 0.5:
        live = [(i, ids[i], gens[i], cases[i]) for i in range(n_items)]
        settings["human_sample"] = draw_sample(
            live, n=None, share=0.3, seed=seed, before=None, created_at="2026-01-01T00:00:00"
        )
    return StudyFrames(
        f"sim{seed}",
        RUBRIC,
        items=items,
        judgements=judgements,
        judge_scores=judge,
        settings=settings,
    )


def contradictions(report: dict) -> list[str]:
    """Every way the summary disagrees with itself or with the figures it reads."""
    s = report["summary"]
    out = []
    biased = {(f["judge_name"], f["metric"]) for f in report.get("systematic_findings") or []}
    for r in (s.get("debiased") or {}).get("off_by") or []:
        err = r.get("judge_minus_humans") or {}
        if r.get("clear") and err.get("low") is not None:
            fig = str(r["figure"])
            biased.add((r["judge"], "verdict" if fig == "verdict_pass_rate" else fig))
    for judge, metric in biased:
        v = (s["judges"].get(judge) or {}).get(metric)
        if v is None:
            continue
        if v["verdict"] not in ("biased", "not_trustworthy"):
            out.append(f"{judge}/{metric}: '{v['verdict']}' beside a known bias")
        if "known bias" not in v["why"]:
            out.append(f"{judge}/{metric}: the bias is not said in why")
    g = s["generators"]
    if g.get("ranked_by") == "debiased":
        ranked = {r["generator"] for r in g["ranking"] if r.get("debiased")}
        texts = [g.get("ranked_by_note") or ""] + [k["text"] for k in s["known"]]
        if ranked and ranked <= set(g.get("humans_only") or []):
            if any("corrected by the random human sample" in t for t in texts):
                out.append("'corrected by the sample' where lambda is 0 everywhere")
    differ = [
        r["generator"]
        for r in g["ranking"]
        if r.get("debiased_rank")
        and r.get("rubric_rank")
        and r["debiased_rank"] != r["rubric_rank"]
    ]
    if differ and set(g.get("ranks_differ") or []) != set(differ):
        out.append(f"ranks differ between columns without a note: {differ}")
    known_pairs = {
        frozenset((f["above"], f["below"]))
        for k in s["known"]
        for f in k.get("figures") or []
        if "above" in f and "below" in f
    }
    for d in s["to_decide"]:
        for f in d.get("figures") or []:
            pair = f.get("generators") if isinstance(f, dict) else None
            if pair and frozenset(pair) in known_pairs:
                out.append(f"{pair}: known in order and unsettled")
    for judge, per in s["judges"].items():
        text = per.get("text")
        if not isinstance(text, str) or not text.startswith(f"The judge {judge}:"):
            out.append(f"{judge}: no sentence")
        elif JARGON.search(text):
            out.append(f"{judge}: jargon in its sentence: {JARGON.search(text).group(0)}")
    for line in [k["text"] for k in s["known"] + s["to_decide"]] + [g.get("ranked_by_note") or ""]:
        if JARGON.search(line):
            out.append(f"jargon in the summary: {JARGON.search(line).group(0)}: {line[:80]}")
    return out


@pytest.mark.slow
def test_no_contradiction_in_100_simulated_studies() -> None:
    found = {}
    for seed in range(100):
        report = build_report(_study(seed), n_boot=60, seed=seed, n_perm=20)
        bad = contradictions(report)
        if bad:
            found[seed] = bad
    assert not found, found


def test_no_contradiction_in_a_few_simulated_studies() -> None:
    """The same check on five of them, in the default run."""
    for seed in (0, 1, 2, 3, 4):
        assert contradictions(build_report(_study(seed), n_boot=60, seed=seed, n_perm=20)) == []
