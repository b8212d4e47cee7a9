"""The report model: every figure of a study as one JSON-ready dict (docs/design.md 5.5).

`build_report` codes the answers, registers every estimate on one seeded item
bootstrap (an item's answers from every rater, metric and judge are resampled
together), runs it once, and resolves the estimates into
{"estimate", "low", "high", "n"} dicts; an undefined figure is None with a
"note". Extra keys beside the contract: per metric percent_agreement,
fleiss_kappa, gwet_ac1, rater_pairs, human_alpha_nominal (scales), n_ties,
n_cannot_judge, and per judge cohen_kappa, confusion, human_range, slices,
exact_agreement_ci, alpha_humans_same_items, alpha_gain, permutation_pearson;
top level "verdict", "adjudication" (None when nothing was adjudicated), "generators",
"debiased" (stats/debiased.py), "certified" and "conformal_alignment" (stats/certified.py),
"systematic_findings", "definitions",
"n_boot", "seed", "n_perm".
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..domain.settings import setting
from .adjudication import adjudication_section
from .alt_test import judge_alt_tests
from .answers import human_answers, item_table, judge_answers, split_by_metric
from .beside import Beside
from .bootstrap import ItemBootstrap, check_n_boot, jsonable, resolve, undefined
from .certified import certify
from .competence import rater_competence
from .consensus import DEFINITION, VERDICT_KEY, metric_specs
from .debiased_plan import debiased_figures
from .distinct import distinct_text
from .findings import (
    baseline_summary,
    contradictions,
    offset_pools,
    order_findings,
    systematic,
)
from .frames import StudyFrames
from .generators import approximate_count, generator_section
from .judge_calibration import judge_calibration_section
from .judge_versions import judge_versions_section
from .live_estimate import CARRIED_NOTE, carry_competence, carry_intervals, stamp_carried
from .raters import rater_section
from .reconcile import Context, metric_section, settle_spread
from .release_gate import debiased_release_gate
from .summary import build_summary


def _empty_pairwise(note: str) -> dict[str, Any]:
    return {
        "cells": {},
        "bradley_terry": {},
        "position_bias": {"left": 0, "right": 0, "p_value": None, "by_rater": {}},
        "rater_alpha": undefined(0, note),
        "judges": {},
        "note": note,
    }


# the last pairwise section and what it was computed from: the vote tables (held, not weakly:
# a live refresh after a new rater reads equal votes into new tables), the resamples, the seed
# and the smallest count; forgotten with forget_pairwise
_PAIRWISE: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
_PAIRWISE_LOCK = threading.Lock()


def _pairwise(frames: StudyFrames, n_boot: int, seed: int) -> dict[str, Any]:
    """The pairwise section: a function of the votes alone, so computed once for the same votes
    (a live refresh that only added answers keeps their tables; one after a new rater reads them
    again, equal) and handed out as a copy, which a live estimate's carried intervals are
    written into: a refresh that only added answers fits no Bradley-Terry model again."""
    try:
        from .pairwise import pairwise_section
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.pairwise":
            raise
        return _empty_pairwise("pairwise figures not computed (pairwise module not available)")
    min_count = setting(frames.settings, "min_count_for_share")
    made_with = (frames.pair_votes, frames.judge_pair_votes, n_boot, seed, min_count)
    with _PAIRWISE_LOCK:
        last = _PAIRWISE[0] if _PAIRWISE else None
    if last is not None and _same_votes(last[0], made_with):
        return copy.deepcopy(last[1])
    section = pairwise_section(frames, n_boot=n_boot, seed=seed, min_count=min_count)
    with _PAIRWISE_LOCK:
        _PAIRWISE[:] = [(made_with, section)]
    return copy.deepcopy(section)


def _same_votes(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same votes (the tables, or equal ones: values, types and labels) and numbers."""
    same = all(
        x is y or (x.columns.equals(y.columns) and x.equals(y))
        for x, y in zip(a[:2], b[:2], strict=True)
    )
    return same and a[2:] == b[2:]


def forget_pairwise() -> None:
    """Let go of the last pairwise section and its votes (the dashboard stops following)."""
    with _PAIRWISE_LOCK:
        _PAIRWISE.clear()


def _label(spec: Any, rubric: Any) -> str:
    """What the reader calls the metric: the rubric's label (and the option's, for a tag)."""
    if spec.metric is None:
        return "verdict (from the rubric's rules)" if spec.key == VERDICT_KEY else spec.key
    return str(rubric.key_label(spec.key))


def _generators_of(report: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The generators' section of the last full report, for a live estimate to carry from."""
    if report is None:
        return None
    section = report.get("generators")
    return section if isinstance(section, Mapping) else {}


def build_report(
    frames: StudyFrames,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    n_perm: int = 200,
    rater_bootstrap: bool = False,
    intervals_from: Mapping[str, Any] | None = None,
    as_of: str | None = None,
) -> dict[str, Any]:
    """All figures of a study as a JSON-serialisable dict (contract 5.5 plus extras).

    Alpha intervals hold the raters fixed (they say how far *these* raters agree);
    `rater_bootstrap=True` adds `human_alpha_two_way` per metric, with raters as a sample of
    raters in general too. Raises ValueError when n_boot is not a whole number >= 1.

    `intervals_from`, an earlier full report of the same study, makes a live estimate
    (live_estimate.py): no resampling; every point estimate exact, every interval moved from
    that report onto it and marked `approximate`, and what it carries whole (the EM fits) is
    marked `carried` with `as_of`, when that report was computed. Never for a published report.
    """
    if intervals_from is not None:
        n_boot = 1
    n_boot = check_n_boot(n_boot)
    min_count = int(setting(frames.settings, "min_count_for_share"))
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    # rater: a categorical of str (answers._categories), as the figures expect
    judged = judge_answers(frames, specs, items)
    # a live estimate resamples nothing: the shared bootstrap gives point estimates only
    plan = ItemBootstrap.for_items(items, 0 if intervals_from is not None else n_boot, seed)
    ctx = Context(
        plan, items, seed=seed, n_perm=n_perm, min_count=min_count, rater_bootstrap=rater_bootstrap
    )

    sections: dict[str, Any] = {}
    findings: list[dict[str, Any]] = []
    h_by, j_by = split_by_metric(human), split_by_metric(judged)
    if j_by:  # read only by the judges' held-out test: a study without a judge has no use
        ctx.offset_pools = offset_pools(specs, h_by)
    empty_h, empty_j = human.iloc[0:0], judged.iloc[0:0]
    consensus_of: dict[str, pd.DataFrame] = {}  # per metric, for the generators' item means
    # a live estimate's raters' section on the second core meanwhile: it reads the coded
    # answers only, and a plan that resamples nothing keeps no order among its statistics
    with Beside(intervals_from is not None) as beside:
        raters_of = beside.run(rater_section, plan, frames, items, specs, human, min_count)
        for spec in specs:
            h = h_by.get(spec.key, empty_h)
            j = j_by.get(spec.key, empty_j)
            sec, detail = metric_section(ctx, spec, h, j)
            for name, alt in judge_alt_tests(
                detail["views"],
                h,
                nominal=spec.nominal,
                epsilon=float(setting(frames.settings, "alt_test_epsilon")),
                min_items=int(setting(frames.settings, "alt_test_min_items")),
            ).items():
                sec["judges"][name].update(alt)
            sec["label"] = _label(spec, frames.rubric)
            sections[spec.key] = sec
            findings.extend(contradictions(spec, detail, items))
            consensus_of[spec.key] = detail["consensus"]
        raters = raters_of()
    judge_versions = judge_versions_section(plan, frames, items, specs, human)
    judge_calibration = judge_calibration_section(plan, frames, items, specs, human)
    adjudication = adjudication_section(plan, frames, specs, items, human, judged, min_count)
    plan.run()
    sections = resolve(sections)
    if intervals_from is not None:  # before anything reads the intervals
        exact = dict(intervals_from.get("metrics") or {})
        if intervals_from.get("verdict") is not None:
            exact[VERDICT_KEY] = intervals_from["verdict"]
        carry_intervals(sections, exact)
    for sec in sections.values():  # the human-spread test reads the resolved intervals
        for j in (sec.get("judges") or {}).values():
            if isinstance(j.get("human_range"), dict):
                settle_spread(j["human_range"])
    raters = resolve(raters)
    adjudication = resolve(adjudication)
    if intervals_from is None:
        competence, latent = rater_competence(human, specs, n_boot=n_boot, seed=seed)
    else:  # EM fits: the last full computation's, marked (live_estimate.py)
        competence, latent = carry_competence(intervals_from, list(sections), VERDICT_KEY)
        competence = {r: figs for r, figs in competence.items() if r in raters}
        n_carried = stamp_carried([competence, latent], as_of)
        for r in distinct_text(human["rater"], leaving_out=set(competence)):
            raters.setdefault(r, {})["competence_note"] = CARRIED_NOTE
    for r, figs in competence.items():
        raters.setdefault(r, {})["competence"] = figs
    for key, lt in latent.items():
        sections[key]["latent_truth"] = lt
    spec_of = {s.key: s for s in specs}
    verdict = sections.pop(VERDICT_KEY, None)
    # one Benjamini-Hochberg family: every metric (and the verdict) and judge of the report
    tested = dict(sections) | ({VERDICT_KEY: verdict} if verdict is not None else {})
    systematic_findings = systematic(tested, spec_of)
    baseline = baseline_summary(tested, findings)

    report = {
        "study": frames.study,
        "rubric": {"id": frames.rubric.id, "version": frames.rubric.version},
        "metrics": sections,
        "verdict": verdict,
        "findings": order_findings(findings, baseline),
        "item_findings_baseline": baseline,
        "systematic_findings": systematic_findings,
        "raters": raters,
        "adjudication": adjudication,
        "pairwise": _pairwise(frames, n_boot, seed),
        "judge_versions": resolve(judge_versions),
        "judge_calibration": resolve(judge_calibration),
        "generators": generator_section(
            items,
            human,
            specs,
            n_boot=n_boot,
            seed=seed,
            min_count=min_count,
            release_gate=setting(frames.settings, "release_gate"),
            min_cases=int(setting(frames.settings, "release_gate_min_cases")),
            min_items=int(setting(frames.settings, "release_gate_min_items")),
            carry_from=_generators_of(intervals_from),
            consensus_of=consensus_of,
        ),
        "debiased": debiased_figures(frames, tables=(items, human, judged)),
        "certified": None,
        "conformal_alignment": None,
        "definitions": {
            "clear_consensus": DEFINITION,
            "consensus": "majority for gates, tags, choices and the verdict (ties flagged, no "
            "value); median for scales",
            "intervals": "95% intervals from a seeded item bootstrap (all of an item's answers "
            "resampled together): BCa for alpha, percentile otherwise; none when "
            "every resample is equal or more than 5% of them are undefined. They hold "
            "the raters fixed: they say how far these raters agree, not raters in "
            "general (rater_bootstrap=True adds a two-way interval)",
            "alpha_gain": "read first: alpha with the judge as one more rater minus alpha of the "
            "humans alone on the same items; alpha_vs_consensus flatters a judge (a "
            "judge that is just another human scores higher against the consensus "
            "than humans do among themselves)",
            "shares": f"a share is shown only from {min_count} answers (for a cell's pass rate: "
            "answers over its items, several per item) or items (a judge's exact "
            "agreement)",
            "permutation": "judge values shuffled across items; p = (1 + #{shuffled >= "
            "observed}) / (1 + shuffles)",
            "judge_version": "a hash of the judge's model, prompt, schema and answer-changing "
            "settings; the figures read each judge's latest version, judge_versions compares it "
            "with the one before on the same items",
            "calibration": "ECE: confidence-weighted gap between the judge's stated probability "
            "and its accuracy against the clear human consensus over ten bins; Brier: mean "
            "squared distance between that probability and being right",
            "swap_consistency": "share of pairs the judge voted on in both orders whose two votes "
            "pick the same item or tie; an inconsistent pair counts as a tie in its agreement",
        },
        "n_boot": int(n_boot),
        "seed": int(seed),
        "n_perm": int(n_perm),
    }
    if intervals_from is not None:
        # the generators' section carried its own (generator_section's carry_from)
        rest = {k: v for k, v in report.items() if k != "generators"}
        report["live_estimate"] = {
            "approximate_intervals": carry_intervals(rest, intervals_from)
            + approximate_count(report["generators"]),
            "exact_n_boot": intervals_from.get("n_boot"),
            "carried": n_carried,
            "as_of": as_of,
        }
    certified = certify(frames, items, specs, human, judged, with_decisions=False)
    report["certified"] = certified.section
    report["conformal_alignment"] = certified.conformal
    gate = frames.settings.get("release_gate") or {}
    if gate.get("source") == "debiased":  # the gate on the debiased lower bounds
        debiased_release_gate(report["generators"], report["debiased"], gate.get("judge"))
    report["summary"] = build_summary(report)  # its `debiased` part too
    return jsonable(report)
