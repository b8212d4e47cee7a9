"""What the report knows, and what data would let it decide the rest.
(Over 500 lines on purpose: every 'to decide' entry reads the same finished report with the same
rules for 'how much more data'.)

Pure functions of the finished report dict (and of the summary's verdicts): they repeat only
figures the report holds, and compute from them how much more data a figure needs. Each entry is
`{"text", "figures"}`, a `to_decide` entry may carry a `command` (the `annotator` command that
deals or draws that data). The rules, in the order they are listed:

known
  1. a judge's systematic offset from the humans (the report's `systematic_findings`: lenient,
     severe, tags more or less often), per judge and direction, every metric with its interval;
  2. how far a judge's own generator figures were off, where a random human sample shows it
     (`summary.debiased.off_by`, the error interval excluding 0), with the sign in the verb;
  3. a judge's decided verdicts (replaceable, inside the human spread, not trustworthy);
  4. generators the debiased figures separate (intervals that do not overlap), then those the
     humans' paired difference separates (the rank rule of the summary);
  5. the release gate's decided verdicts;
  6. raters flagged (drift, a standing offset, a competence clearly below the others').

to_decide
  1. judge verdicts the alternative-annotator test could not reach: it needs MIN_ANNOTATORS
     raters each with `items` items that the judge and MIN_OTHERS more raters also answered, so
     overlap k = max(3, the overlap now) on at least max(items, items x raters / k) items, and
     the judge's scores on as many;
  2. judge verdicts whose spread test was undetermined: about `n_needed` items (the report's own
     figure, from the interval shrinking as 1/sqrt(n));
  3. rater competence not estimable for too little overlap: each rater needs MIN_OVERLAP items
     shared with another rater, at overlap 2 that is MIN_OVERLAP x raters / 2 items;
  4. generators a test does not separate: about n x (half-width / difference)^2 cases, where the
     difference has an interval and is not 0;
  5. a release gate undecided for too few cases or items (the gate's own minimum);
  6. debiased figures: no random human sample yet (`assign --sample N`, N the items humans
     alone need for +/- DEBIASED_HALF_WIDTH on a pass rate near 0.5, at most every item of a
     generator, at least MIN_SAMPLED), or a main figure wider
     than +/- DEBIASED_HALF_WIDTH (shares; DEBIASED_HALF_WIDTH_SCALE for a mean score): about
     n_sampled x ((half-width / target)^2 - 1) more human labels on that generator, counting
     the figure's design effect where items share cases (stats/debiased_plan.labels_for; when
     the cases alone are wider than the target, that only more cases narrow it; beyond its
     items: what labelling all of them gives, half-width x sqrt(n_sampled / n_items)), with what
     the judge is worth there (its `judge_value` words: rho, or that it added nothing).
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from ..domain.figures import MISSING, as_dict, metric_labels
from ..domain.settings import DEFAULT_SETTINGS
from .alt_test import MIN_ANNOTATORS, MIN_OTHERS
from .competence import MIN_OVERLAP
from .debiased import figure_words
from .debiased_plan import labels_for
from .debiased_value import NOTHING

ALT_TEST_OVERLAP = MIN_OTHERS + 1  # raters on an item for the alt-test to use it
COMPETENCE_OVERLAP = 2  # raters on an item for it to count as shared
DEBIASED_HALF_WIDTH = 0.05  # the half-width a debiased share is planned to (+/- 5 points)
DEBIASED_HALF_WIDTH_SCALE = 0.25  # ... and a debiased mean score (a quarter point)
# human labels alone for +/-DEBIASED_HALF_WIDTH on a pass rate near 0.5 (1.96^2 x 0.25 / 0.05^2)
HUMANS_ONLY_LABELS = math.ceil(1.96**2 * 0.25 / DEBIASED_HALF_WIDTH**2)
DEFAULT_ALT_TEST_ITEMS = int(DEFAULT_SETTINGS["alt_test_min_items"])
# answered sampled items for a debiased figure (the default of min_count_for_share)
MIN_SAMPLED = int(DEFAULT_SETTINGS["min_count_for_share"])


def num_text(x: Any, digits: int = 2) -> str:
    return MISSING if x is None else f"{x:.{digits}f}"


def ci_text(fig: Any, digits: int = 2, *, signed: bool = False) -> str:
    """ "0.41 [0.30, 0.52]", or the estimate with "(no interval)"."""
    fig = as_dict(fig)
    est = fig.get("estimate")
    head = f"{est:+.{digits}f}" if signed and est is not None else num_text(est, digits)
    if fig.get("low") is None or fig.get("high") is None:
        return f"{head} (no interval)"
    return f"{head} [{num_text(fig['low'], digits)}, {num_text(fig['high'], digits)}]"


def _labels(report: dict[str, Any]) -> dict[str, str]:
    out = {k: s.get("label") or k for k, s in (report.get("metrics") or {}).items()}
    if report.get("verdict"):
        out["verdict"] = report["verdict"].get("label") or "verdict"
    return out


def _study_arg(report: dict[str, Any]) -> str:
    return shlex.quote(str(report.get("study") or "STUDY"))


def _design(report: dict[str, Any]) -> dict[str, int]:
    """The study's design as the report shows it: raters, items with human answers or judge
    scores, and the overlap (human answers per item, rounded)."""
    sections = dict(report.get("metrics") or {})
    if report.get("verdict"):
        sections["verdict"] = report["verdict"]
    n_items = max(
        [int(s.get("n_items") or 0) for s in sections.values()]
        + [
            int(j.get("n_items") or 0)
            for s in sections.values()
            for j in (s.get("judges") or {}).values()
        ]
        + [0]
    )
    overlap = max(
        [
            round(int(s.get("n_judgements") or 0) / int(s["n_items"]))
            for s in sections.values()
            if s.get("n_items")
        ]
        + [0]
    )
    return {"raters": len(report.get("raters") or {}), "items": n_items, "overlap": overlap}


# -- known ---------------------------------------------------------------------------------------
_KIND_WORDS = {
    "lenient": "is lenient: it scores above the humans",
    "severe": "is severe: it scores below the humans",
    "judge_tags_more_often": "tags more often than the humans",
    "judge_tags_less_often": "tags less often than the humans",
}


def _systematic(report: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in report.get("systematic_findings") or []:
        groups.setdefault((f["judge_name"], f["kind"]), []).append(f)
    out = []
    # a judge's offset on the scales, gates and verdict first: a tag rate comes after it
    order = {k: i for i, k in enumerate(_KIND_WORDS)}
    for (judge, kind), fs in sorted(groups.items(), key=lambda x: (x[0][0], order.get(x[0][1], 9))):
        parts, figures = [], []
        for f in fs:
            diff = (f.get("vs_held_out_human") or {}).get("difference") or f.get("mean_difference")
            parts.append(f"{labels.get(f['metric'], f['metric'])} {ci_text(diff, signed=True)}")
            figures.append(
                {
                    "metric": f["metric"],
                    "difference": diff,
                    "q_value": f.get("q_value"),
                    "human_offset_range": f.get("human_offset_range"),
                }
            )
        out.append(
            {
                "text": f"The judge {judge} {_KIND_WORDS.get(kind, kind)} on {len(fs)} "
                f"metric{'' if len(fs) == 1 else 's'}: {'; '.join(parts)} (the judge minus the "
                "mean human answer per item; each beyond the humans' own offsets, after "
                "allowing for the number of metrics tested)",
                "figures": figures,
            }
        )
    return out


_DECIDED = {
    "replaceable": "can replace a human rater on",
    "inside_human_spread": "agrees with the humans as they agree with each other on",
    "not_trustworthy": "agrees with the humans less than they agree with each other on",
}


def _decided_verdicts(judges: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for judge, per in sorted(judges.items()):
        for verdict, words in _DECIDED.items():
            keys = [k for k, v in per.items() if v.get("verdict") == verdict]
            if keys:
                out.append(
                    {
                        "text": f"The judge {judge} {words} "
                        + ", ".join(per[k].get("label") or k for k in keys),
                        "figures": [{"metric": k, "verdict": verdict} for k in keys],
                    }
                )
    return out


def _debiased_known(report: dict[str, Any], debiased: dict[str, Any]) -> list[dict[str, Any]]:
    """The judge's own generator figures off by a clear amount (`summary.debiased.off_by`, the
    error interval excluding 0), one entry per judge and generator, the main figure first, said
    with the sign in the verb and the size as a positive interval: "the judge J understates
    gen-b's pass rate by 0.12 [0.05, 0.19]"."""
    kinds = (report.get("debiased") or {}).get("figures") or {}
    labels = metric_labels(report)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in debiased.get("off_by") or []:
        err = r.get("judge_minus_humans") or {}
        if r.get("clear") and err.get("low") is not None:
            groups.setdefault((str(r.get("judge")), str(r.get("generator"))), []).append(r)
    out = []
    for (judge, gen), rows in sorted(groups.items()):
        rows.sort(key=lambda r: r.get("figure") != "verdict_pass_rate")
        parts, nothing = [], []
        for r in rows:
            err = r["judge_minus_humans"]
            over = err["estimate"] > 0
            lo, hi = (err["low"], err["high"]) if over else (-err["high"], -err["low"])
            name = str(r.get("figure"))
            what = figure_words(gen, name, kinds.get(name, "figure"), labels)
            part = (
                f"{'overstates' if over else 'understates'} {what} by "
                f"{abs(err['estimate']):.2f} [{lo:.2f}, {hi:.2f}]"
            )
            if (r.get("debiased") or {}).get("low") is not None:
                value = r.get("judge_value") or {}
                if value.get("added_nothing"):
                    part += f" (humans only {ci_text(r['debiased'])})"
                    nothing.append(str(value.get("words") or NOTHING))
                else:
                    part += f" (debiased {ci_text(r['debiased'])})"
            parts.append(part)
        # where the judge added nothing, why is said once for the group, not after each figure
        why = "; ".join(dict.fromkeys(w.removeprefix(NOTHING).strip() for w in nothing))
        out.append(
            {
                "text": f"The judge {judge} {'; '.join(parts)}: its own figures minus the "
                "humans' on the random sample"
                + (
                    f"; on those marked humans only the judge added nothing {why}"
                    if nothing
                    else ""
                ),
                "figures": [
                    {k: r.get(k) for k in ("judge", "generator", "figure", "judge_minus_humans")}
                    for r in rows
                ],
            }
        )
    return out


def _debiased_order(generators: dict[str, Any]) -> list[dict[str, Any]]:
    """Generators the debiased figure separates: by the rank-sets where the ranking reads them
    (all generators together), else by intervals that do not overlap."""
    if generators.get("ranked_by") != "debiased":
        return []
    rows = [
        r
        for r in generators.get("ranking") or []
        if (r.get("debiased") or {}).get("low") is not None
    ]
    by_sets = any(r.get("debiased_rank_set") for r in rows)
    pairs = [
        (h, g)
        for h in rows
        for g in rows
        if (
            h["generator"] in ((g.get("debiased_rank_set") or {}).get("below") or [])
            if by_sets
            else h["debiased"]["low"] > g["debiased"]["high"]
        )
    ]
    if not pairs:
        return []
    label = str(generators.get("rubric_figure") or "").replace("_", " ")
    unused = set(generators.get("humans_only") or [])
    source = (
        f"the random human sample alone: the judge {generators.get('debiased_judge')} added "
        "nothing here"
        if unused >= {r["generator"] for r in rows}
        else f"the judge {generators.get('debiased_judge')} corrected by the random human sample"
        + (f"; humans only on {', '.join(sorted(unused))}" if unused else "")
    )
    return [
        {
            "text": f"On the debiased {label} ({source}): "
            + "; ".join(
                f"{h['generator']} {ci_text(h['debiased'])} is above {g['generator']} "
                f"{ci_text(g['debiased'])}"
                for h, g in pairs
            )
            + (" (all generators' figures together at 95%)" if by_sets else ""),
            "figures": [
                {
                    "above": h["generator"],
                    "below": g["generator"],
                    "above_figure": h["debiased"],
                    "below_figure": g["debiased"],
                }
                for h, g in pairs
            ],
        }
    ]


def _separated(generators: dict[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [r for r in generators.get("ranking") or [] if r.get("rubric_rank")]
    name = generators.get("rubric_figure")
    if not rows or not name:
        return []
    label = str(generators.get("rubric_figure_label") or name).replace("_", " ")
    diffs = (report.get("generators") or {}).get("differences") or {}
    pairs = []
    for h in rows:
        for g in rows:
            d = (diffs.get(f"{h['generator']} - {g['generator']}") or {}).get(name)
            if d and d.get("low") is not None and d["low"] > 0:
                pairs.append((h["generator"], g["generator"], d))
    if not pairs:
        return []
    return [
        {
            "text": f"On the {label}: "
            + "; ".join(f"{h} is above {g} by {ci_text(d)}" for h, g, d in pairs)
            + " (paired over shared cases)",
            "figures": [{"above": h, "below": g, "difference": d} for h, g, d in pairs],
        }
    ]


def _gate_known(gate: dict[str, Any]) -> list[dict[str, Any]]:
    if not gate.get("set"):
        return []
    decided = {g: v for g, v in (gate.get("generators") or {}).items() if not v.get("note")}
    if not decided:
        return []
    passing = sorted(g for g, v in decided.items() if v.get("pass"))
    failing = sorted(g for g, v in decided.items() if not v.get("pass"))
    parts = []
    if passing:
        parts.append(f"{', '.join(passing)} pass{'es' if len(passing) == 1 else ''}")
    if failing:
        parts.append(f"{', '.join(failing)} do{'es' if len(failing) == 1 else ''} not pass")
    source = " (on the debiased lower bounds)" if gate.get("source") == "debiased" else ""
    return [
        {
            "text": f"Release gate{source}: {'; '.join(parts)}",
            "figures": [{"generator": g, "pass": bool(v.get("pass"))} for g, v in decided.items()],
        }
    ]


def known(
    report: dict[str, Any],
    judges: dict[str, dict[str, Any]],
    generators: dict[str, Any],
    gate: dict[str, Any],
    raters: list[dict[str, Any]],
    debiased: dict[str, Any],
) -> list[dict[str, Any]]:
    """What the report can say for sure, most telling first (rules 1-6 of the module)."""
    labels = _labels(report)
    out = _systematic(report, labels) + _debiased_known(report, debiased)
    out += _decided_verdicts(judges) + _debiased_order(generators)
    out += _separated(generators, report) + _gate_known(gate)
    for r in raters:
        out.append(
            {
                "text": f"The rater {r['rater']} needs attention: {'; '.join(r['why'])}",
                "figures": [{"rater": r["rater"], "low_competence": r.get("low_competence")}],
            }
        )
    return out


# -- to decide -----------------------------------------------------------------------------------
def _alt_test_design(
    report: dict[str, Any], judges: dict[str, dict[str, Any]], design: dict[str, int]
) -> list[dict[str, Any]]:
    """Rule 1: the raters' overlap and the items (and the judge's scores) the alt-test needs."""
    sections = dict(report.get("metrics") or {})
    if report.get("verdict"):
        sections["verdict"] = report["verdict"]
    out = []
    for judge in sorted(judges):
        blocked, items, scored = [], DEFAULT_ALT_TEST_ITEMS, []
        for key, sec in sections.items():
            j = (sec.get("judges") or {}).get(judge) or {}
            # the variant needs more than the paper's test, and a verdict needs both
            need = j.get("alt_test_balanced_needs") or j.get("alt_test_needs")
            if need and (judges[judge].get(key) or {}).get("verdict") == "undetermined":
                blocked.append(key)
                items = int(need.get("items_per_annotator") or items)
                scored.append(int(j.get("n_items") or 0))
        if not blocked:
            continue
        raters = max(design["raters"], MIN_ANNOTATORS)
        # at overlap k each of R raters answers k x N / R items, all shared with k - 1 others
        overlap = max(ALT_TEST_OVERLAP, design["overlap"])
        n_needed = max(items, math.ceil(items * raters / overlap))
        more_raters = max(0, MIN_ANNOTATORS - design["raters"])
        more_items = max(0, n_needed - design["items"])
        humans_short = bool(more_raters or more_items or design["overlap"] < ALT_TEST_OVERLAP)
        judge_now = min(scored)
        parts = []
        if humans_short:
            extra = []
            if more_raters:
                extra.append(f"add {more_raters} rater{'' if more_raters == 1 else 's'}")
            if more_items:
                extra.append(f"{more_items} more items rated")
            parts.append(
                f"overlap {overlap} on at least {n_needed} items ({design['raters']} raters, "
                f"{design['items']} items at overlap {design['overlap']} now"
                + (f"; {', '.join(extra)}" if extra else "")
                + ")"
            )
        if judge_now < n_needed:
            parts.append(
                f"the judge's scores on at least {n_needed} of those items (it scored "
                f"{judge_now} on the least covered of these metrics)"
            )
        if not parts:  # the design is there: the answers are not (cannot judge, unanswered)
            parts.append(
                f"answers from the raters dealt the {n_needed} items (the design is there; "
                "answers are missing or 'cannot judge')"
            )
        entry: dict[str, Any] = {
            "text": f"Whether the judge {judge} can replace a rater ({len(blocked)} "
            f"metric{'' if len(blocked) == 1 else 's'} undecided): to compare it with each "
            f"rater it needs {MIN_ANNOTATORS} raters with {items} items each that the judge and "
            f"{MIN_OTHERS} other raters also answered: " + "; and ".join(parts),
            "figures": {
                "judge": judge,
                "metrics": blocked,
                "overlap_needed": overlap,
                "items_needed": n_needed,
                "items_now": design["items"],
                "overlap_now": design["overlap"],
                "raters_now": design["raters"],
                "raters_needed": MIN_ANNOTATORS,
                "judge_items_now": judge_now,
            },
        }
        if humans_short:
            entry["command"] = f"annotator assign --study {_study_arg(report)} --overlap {overlap}"
        out.append(entry)
    return out


def _spread_items(
    report: dict[str, Any], judges: dict[str, dict[str, Any]], design: dict[str, int]
) -> list[dict[str, Any]]:
    """Rule 2: the items the spread test needs (the report's `n_needed` per metric)."""
    out = []
    for judge in sorted(judges):
        need = {k: v["n_needed"] for k, v in judges[judge].items() if v.get("n_needed")}
        if not need:
            continue
        most = max(need.values())
        more = max(0, most - design["items"])
        out.append(
            {
                "text": f"Whether the judge {judge} agrees with the humans as they agree with "
                f"each other on {len(need)} metric{'' if len(need) == 1 else 's'}: about "
                f"{most} items rated by your raters and scored by the judge would decide (from "
                f"the width of each difference's interval now; {design['items']} items now"
                + (f": {more} more, dealt to the raters with the command below" if more else "")
                + ")",
                "command": f"annotator assign --study {_study_arg(report)} --overlap "
                f"{max(ALT_TEST_OVERLAP, design['overlap'])}",
                "figures": {"judge": judge, "items_needed": need, "items_now": design["items"]},
            }
        )
    return out


def _competence_overlap(report: dict[str, Any], design: dict[str, int]) -> list[dict[str, Any]]:
    shared: dict[str, int] = {}
    as_of = None  # a live estimate's fits are the last full computation's: said so
    for r, d in (report.get("raters") or {}).items():
        for f in (d.get("competence") or {}).values():
            if str(f.get("note") or "").startswith("not estimable: too little overlap"):
                shared[r] = max(shared.get(r, 0), int(f.get("n_overlap") or 0))
                as_of = as_of or f.get("as_of")
    if not shared:
        return []
    raters = max(design["raters"], 3)
    n_needed = math.ceil(MIN_OVERLAP * raters / COMPETENCE_OVERLAP)
    more = max(0, n_needed - design["items"])
    return [
        {
            "text": f"Rater competence (MACE) of {', '.join(sorted(shared))}: not estimable, "
            f"each rater needs at least {MIN_OVERLAP} items shared with another rater (now at "
            f"most {max(shared.values())}): overlap {COMPETENCE_OVERLAP} on at least "
            f"{n_needed} items ({design['raters']} raters, {design['items']} items now"
            + (f"; import {more} more items" if more else "")
            + ")"
            + (f" (as of {as_of})" if as_of else ""),
            "command": f"annotator assign --study {_study_arg(report)} --overlap "
            f"{max(COMPETENCE_OVERLAP, design['overlap'])}",
            "figures": {
                "raters": sorted(shared),
                "shared_needed": MIN_OVERLAP,
                "shared_now": shared,
                "items_needed": n_needed,
                "items_now": design["items"],
            },
        }
    ]


def _ties(generators: dict[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [r for r in generators.get("ranking") or [] if r.get("rubric_rank")]
    name = generators.get("rubric_figure")
    if len(rows) < 2 or not name:
        return []
    diffs = (report.get("generators") or {}).get("differences") or {}
    # a pair "known" already orders by the ranking's own figure (the debiased intervals) is not
    # also "unsettled" here: the two lists read one comparison
    settled = {
        frozenset((f["above"], f["below"]))
        for k in _debiased_order(generators)
        for f in k["figures"]
    }
    ties, figures = [], []
    for i, h in enumerate(rows):
        for g in rows[i + 1 :]:
            a, b = h["generator"], g["generator"]
            if frozenset((a, b)) in settled:
                continue
            d = (diffs.get(f"{a} - {b}") or {}).get(name) or (diffs.get(f"{b} - {a}") or {}).get(
                name
            )
            if not d or (d.get("low") is not None and (d["low"] > 0 or d["high"] < 0)):
                continue
            n = int(d.get("n_cases") or 0)
            need = None
            if d.get("low") is not None and abs(d.get("estimate") or 0) > 1e-9 and n:
                half = (d["high"] - d["low"]) / 2
                need = math.ceil(n * (half / abs(d["estimate"])) ** 2)
            if need:
                ties.append(f"{a} and {b}: difference {ci_text(d)}, about {need} cases needed")
            elif abs(d.get("estimate") or 0) <= 1e-9:
                ties.append(f"{a} and {b}: no difference on {n} cases")
            else:
                ties.append(
                    f"{a} and {b}: {num_text(abs(d['estimate']))} apart on every one of the {n} "
                    "cases, too few for an interval: rate more cases"
                )
            figures.append({"generators": [a, b], "difference": d, "cases_needed": need})
    if not ties:
        return []
    label = str(name).replace("_", " ")
    return [
        {
            "text": f"The order of the generators on the {label}, which no test settles yet: "
            + "; ".join(ties),
            "figures": figures,
        }
    ]


def _gate_data(gate: dict[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    if not gate.get("set"):
        return []
    few = {g: v["note"] for g, v in (gate.get("generators") or {}).items() if v.get("note")}
    if not few:
        return []
    rule = (report.get("generators") or {}).get("release_gate") or {}
    return [
        {
            "text": "Release gate undecided for "
            + "; ".join(f"{g}: {note}" for g, note in sorted(few.items())),
            "figures": {
                "generators": sorted(few),
                "cases_needed": rule.get("min_cases"),
                "items_needed": rule.get("min_items"),
            },
        }
    ]


def _debiased_labels(report: dict[str, Any]) -> list[dict[str, Any]]:
    section = report.get("debiased") or {}
    has_judge = any((sec.get("judges") or {}) for sec in (report.get("metrics") or {}).values())
    if not section.get("recorded"):
        if not has_judge:
            return []
        n_gens = max(1, len((report.get("generators") or {}).get("by_generator") or {}))
        per_gen = math.ceil(_design(report)["items"] / n_gens)
        n = max(MIN_SAMPLED, min(HUMANS_ONLY_LABELS, per_gen))
        return [
            {
                "text": "Generator figures corrected for the judge's bias (debiased) need a "
                f"random human sample: {n} items per generator ("
                + (
                    f"a debiased figure needs {MIN_SAMPLED} answered sampled items; the study "
                    f"has about {per_gen} per generator: import {n - per_gen} more each"
                    if per_gen < MIN_SAMPLED
                    else "every item"
                    if n == per_gen
                    else f"what humans alone need for +/-{DEBIASED_HALF_WIDTH:g} on a pass rate "
                    "near 0.5; the judge makes the interval narrower"
                )
                + "); answers on hand-picked items cannot correct the judge",
                "command": f"annotator assign --study {_study_arg(report)} --sample {n}",
                "figures": {
                    "recorded": False,
                    "sample_per_generator": n,
                    "items_per_generator": per_gen,
                },
            }
        ]
    out = []
    kinds = section.get("figures") or {}
    for judge, jd in sorted((section.get("judges") or {}).items()):
        for gen, figs in sorted((jd.get("by_generator") or {}).items()):
            name = "verdict_pass_rate" if "verdict_pass_rate" in figs else next(iter(figs), None)
            fig = figs.get(name) if name else None
            ppi = (fig or {}).get("ppi") or {}
            n = int((fig or {}).get("n_sampled") or 0)
            if ppi.get("low") is None or not n:
                continue
            target = (
                DEBIASED_HALF_WIDTH_SCALE
                if kinds.get(name) == "mean score"
                else DEBIASED_HALF_WIDTH
            )
            half = (ppi["high"] - ppi["low"]) / 2
            if half <= target:
                continue
            value = (fig or {}).get("judge_value") or {}
            # items sharing cases: the spread between cases does not shrink with more labels
            need = labels_for(n, 2 * half, 2 * target, float(value.get("design_effect") or 1.0))
            kind = str(kinds.get(name) or name)
            what = (
                f"{kind} from the random human sample (the judge {judge}'s weight is 0)"
                if value.get("added_nothing")
                else f"debiased {kind} with the judge {judge}"
            )
            worth = f"; {value['words']}" if value.get("words") else ""
            if (fig or {}).get("clustered_by_case") and value.get("design_effect") is None:
                worth = " (a lower bound: items share cases, too few sampled to measure it)" + worth
            if need is None:
                out.append(
                    {
                        "text": f"{gen}'s {what} cannot reach +/-{target:g} on its "
                        f"{(fig or {}).get('n_cases')} cases (now {ci_text(ppi)} from {n} labels): "
                        "the spread between cases alone is wider; only more cases narrow it"
                        + worth,
                        "figures": {
                            "judge": judge,
                            "generator": gen,
                            "figure": name,
                            "labels_now": n,
                            "labels_more": None,
                            "half_width_now": half,
                            "half_width_target": target,
                            "judge_value": value or None,
                        },
                    }
                )
                continue
            more = need - n
            n_items = int((fig or {}).get("n_items") or 0)
            if n_items and n + more > n_items:
                # the sample cannot outgrow the generator's items: say what all of them give
                at_all = half * math.sqrt(n / n_items)
                text = (
                    f"About {more} more human labels on {gen} for its {what} within "
                    f"+/-{target:g} (now {ci_text(ppi)} from {n} labels), more than its "
                    f"{n_items} items: labelling all of them gives about +/-{at_all:.2f}; "
                    "more items of it would narrow it further"
                )
                command = f"annotator assign --study {_study_arg(report)} --sample {n_items}"
            else:
                text = (
                    f"About {more} more human labels on {gen} (a random sample) for its {what} "
                    f"within +/-{target:g} (now {ci_text(ppi)} from {n} labels)"
                )
                command = f"annotator assign --study {_study_arg(report)} --sample {n + more}"
            if (section.get("sample") or {}).get("by_strata"):
                # a sample topped up by strata grows by strata only (a uniform top-up is refused)
                command += f" --by-strata {name} --judge {judge}"
                text = text.replace("(a random sample)", "(by strata)")
            out.append(
                {
                    "text": text + worth,
                    "command": command,
                    "figures": {
                        "judge": judge,
                        "generator": gen,
                        "figure": name,
                        "labels_now": n,
                        "labels_more": more,
                        "half_width_now": half,
                        "half_width_target": target,
                        "judge_value": value or None,
                    },
                }
            )
    return out


def to_decide(
    report: dict[str, Any],
    judges: dict[str, dict[str, Any]],
    generators: dict[str, Any],
    gate: dict[str, Any],
) -> list[dict[str, Any]]:
    """What the report cannot decide yet, each with the data that would decide it (rules 1-6)."""
    design = _design(report)
    return (
        _alt_test_design(report, judges, design)
        + _spread_items(report, judges, design)
        + _competence_overlap(report, design)
        + _ties(generators, report)
        + _gate_data(gate, report)
        + _debiased_labels(report)
    )


__all__ = ["ci_text", "known", "num_text", "to_decide"]
