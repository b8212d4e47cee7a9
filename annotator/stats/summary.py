"""The report's answers in one place: the `summary` key (docs/design.md 5.5, second round).

Built from the finished report dict, never from the data, so it can only repeat
figures the report already holds:

- per judge and metric a verdict: `replaceable` when the judge passes the
  alternative-annotator test, its mean kappa with the humans is above zero with
  its interval and the spread test shows it inside the human spread; else `inside_human_spread`
  when the interval of its mean kappa minus the humans' mean kappa lies above
  -0.1 (or above 0); `not_trustworthy` when that interval lies below 0;
  `undetermined` otherwise ("too few items (n = 30; about N needed)") or when
  no figure could be computed (the note says why). Each comes with the figures
  behind it, with their intervals (`why`, in words).
- generators ranked by the per-case rubric results (the verdict pass rate, or
  the first figure when the rubric has no verdict) and by the pairwise
  Bradley-Terry strength, side by side with intervals; `disagree` lists the
  generators whose two ranks differ. Where a random human sample gives debiased figures the
  ranking reads them, its ranks from their rank-sets (stats/debiased_ranks.py: all generators
  together, shared cases counted), else from debiased intervals that do not overlap.
- the release gate's verdict per generator (conservative bounds, from the
  generators section).
- raters needing attention: drift flagged on anchors, or a competence whose
  upper bound is below the median competence of the other raters on a metric
  where the others are mostly competent, on an interval no wider than 0.5 (see
  competence.low_competence).
- `known` and `to_decide` lead: what the figures above say for sure (a lenient judge with its
  interval), and the data that would decide the rest, with numbers and the command that deals
  it (stats/next_steps.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.figures import metric_labels
from .alt_test import verdict_test
from .competence import low_competence
from .debiased import debiased_summary
from .judge_use import fold_biases, judge_text, known_biases
from .next_steps import ci_text as _ci
from .next_steps import known, to_decide
from .next_steps import num_text as _f

VERDICTS = ("replaceable", "inside_human_spread", "biased", "not_trustworthy", "undetermined")
GLOSSARY = {
    "alternative-annotator test": "the judge is compared with each human in turn on how well "
    "it agrees with the other humans; it may replace a rater when it does at least as well "
    "(up to a margin epsilon) against at least half of them",
    "epsilon": "the share of items the judge may lose against a human and still count as "
    "good enough (the study setting alt_test_epsilon)",
    "human spread": "the range of agreement (Cohen's kappa) between every two human raters",
    "competence": "how often a rater gives the true answer rather than a guess, estimated "
    "by MACE from all raters' answers (1 = always knows, 0 = guesses)",
    "drift": "a rater's answers on repeated anchor items moved away from where they started",
    "interval": "95% range from resampling the items; two figures whose ranges overlap are "
    "not clearly different",
    "release gate": "a generator passes only if the lower end of each named figure's "
    "interval reaches the study's threshold",
}


def _kappa_above_zero(hr: dict[str, Any]) -> bool:
    jm = hr.get("judge_mean_ci") or {}
    return jm.get("low") is not None and jm["low"] > 0


def judge_verdict(j: dict[str, Any]) -> dict[str, Any]:
    """The verdict on one judge and metric from its report entry.

    `replaceable` needs three things: the alternative-annotator test passes, the judge's mean
    kappa with the humans is above zero with its interval (a constant or uninformative judge
    never is), and the spread test shows the judge inside the human spread (its mean kappa at
    most `margin` below the humans', non-inferiority at 2.5%): a judge noisier than every
    human can pass the alt-test on a small study, never this. `inside` /
    `below` the human spread come from that test (the interval of the difference between the
    judge's and the humans' mean kappas: reconcile.SPREAD_TEST), never from a point estimate
    against a min/max; where the interval cannot decide the verdict is `undetermined`, with
    about how many items would.
    """
    alt = verdict_test(j)  # the paper's test and the project's variant, both required
    hr = j.get("human_range") or {}
    pos = hr.get("position")
    kappa = (
        f"mean {hr.get('measure', 'kappa').replace('_', ' ')} with the humans "
        f"{_ci(hr.get('judge_mean_ci'))}, humans among themselves {_ci(hr.get('human_mean'))}, "
        f"difference {_ci(hr.get('difference'))}"
        if hr.get("difference")
        else None
    )
    blocked = None
    if alt and alt.get("passed"):
        passed = (
            f"passes the alternative-annotator test at epsilon {_f(alt['epsilon'])}: "
            f"as good as or better than {round(alt['winning_rate'] * alt['n_annotators'])} of "
            f"{alt['n_annotators']} raters on {alt['n_items']} items"
        )
        if _kappa_above_zero(hr) and pos in ("inside", "above"):
            return {
                "verdict": "replaceable",
                "why": f"{passed}; {kappa}",
                "figure": {"alt_test": alt, "human_range": hr},
            }
        blocked = passed + (
            ", but its kappa with the humans is not above zero with its interval"
            if not _kappa_above_zero(hr)
            else ", but it agrees with the humans less than they agree with each other"
            if pos == "below"
            else ", but its kappa with the humans is not shown to be within "
            f"{hr.get('margin', 0.1):g} of theirs"
        )
    failed = (
        blocked
        if blocked
        else f"fails the alternative-annotator test at epsilon {_f(alt['epsilon'])} "
        + (
            f"(passes from epsilon {_f(alt['min_passing_epsilon'], 3)})"
            if alt.get("min_passing_epsilon") is not None
            else "(does not pass even at epsilon 1)"
        )
        if alt
        else None
    )
    extra = f"; {failed}" if failed else ""
    if pos in ("inside", "above"):
        # above is not worse than inside: the judge agrees with each human more than the
        # humans agree with each other (without passing the alt-test, still no more)
        return {
            "verdict": "inside_human_spread",
            "why": f"{kappa}: above -{hr.get('margin', 0.1):g}"
            + (" (above the humans' own agreement)" if pos == "above" else "")
            + extra,
            "figure": {"human_range": hr},
        }
    if pos == "below":
        return {
            "verdict": "not_trustworthy",
            "why": f"{kappa}: below 0" + extra,
            "figure": {"alt_test": alt, "human_range": hr},
        }
    if j.get("same_scale") is False:
        return {
            "verdict": "undetermined",
            "why": "the judge does not answer on the rubric's scale: it can only be read through "
            "its correlations with the human mean",
            "figure": None,
        }
    notes = [
        hr.get("position_note"),
        failed,
        j.get("alt_test_balanced_note") or j.get("alt_test_note"),
        hr.get("note"),
    ]
    out = {
        "verdict": "undetermined",
        "why": "; ".join(n for n in notes if n) or "no figure to judge by",
        "figure": {"alt_test": alt, "human_range": hr} if (alt or hr.get("difference")) else None,
    }
    if hr.get("n_needed"):
        out["n_needed"] = hr["n_needed"]
    return out


def _judges(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    sections = dict(report.get("metrics") or {})
    if report.get("verdict"):
        sections["verdict"] = report["verdict"]
    out: dict[str, dict[str, Any]] = {}
    for key, sec in sections.items():
        for name, j in (sec.get("judges") or {}).items():
            v = judge_verdict(j)
            v["label"] = sec.get("label") or key
            out.setdefault(name, {})[key] = v
    return out


def _ranked(fig: Mapping[str, Any]) -> list[str]:
    # fig: name -> its figure dict, or None where it has none
    have = [g for g, f in fig.items() if f and f.get("estimate") is not None]
    return sorted(have, key=lambda g: -fig[g]["estimate"])


def _separated_ranks(order: list[str], above: Any) -> dict[str, int]:
    """Ranks that only a test separates: a generator's rank is 1 + the number of generators
    shown above it (`above(h, g)`: h's figure is above g's by a test), the rule of Chatbot
    Arena's ranks with intervals; ties share a rank. Two generators a test does not separate can
    still differ in rank when a third is separated from one of them only."""
    return {g: 1 + sum(1 for h in order if h != g and above(h, g)) for g in order}


def _diff_above(differences: dict[str, Any], name: str) -> Any:
    """h above g when the interval of their paired difference (shared cases) excludes 0."""

    def above(h: str, g: str) -> bool:
        d = (differences.get(f"{h} - {g}") or {}).get(name)
        if d and d.get("low") is not None:
            return bool(d["low"] > 0)
        d = (differences.get(f"{g} - {h}") or {}).get(name)
        return bool(d and d.get("high") is not None and d["high"] < 0)

    return above


def _interval_above(fig: dict[str, dict[str, Any]]) -> Any:
    """h above g when their intervals do not overlap (no paired difference to test)."""

    def above(h: str, g: str) -> bool:
        lo, hi = fig[h].get("low"), fig[g].get("high")
        return lo is not None and hi is not None and lo > hi

    return above


def _generators(report: dict[str, Any]) -> dict[str, Any]:
    gens = report.get("generators") or {}
    by_gen = gens.get("by_generator") or {}
    figures = list((gens.get("figures") or {}).keys())
    name = (
        "verdict_pass_rate" if "verdict_pass_rate" in figures else figures[0] if figures else None
    )
    rubric = {g: (e.get("overall") or {}).get(name) for g, e in by_gen.items()} if name else {}
    bt = (report.get("pairwise") or {}).get("bradley_terry") or {}
    r_rank, p_rank = _ranked(rubric), _ranked(bt)
    comparable = gens.get("comparable") is not False
    r_num = (
        _separated_ranks(r_rank, _diff_above(gens.get("differences") or {}, name or ""))
        if comparable
        else {}
    )
    p_num = _separated_ranks(p_rank, _interval_above(bt))
    rows = []
    # rubric ranks first, then pairwise-only generators, then the unranked by name: the same
    # report for the same data (a set's order would move with the hash seed)
    order = {g: i for i, g in enumerate(dict.fromkeys(r_rank + p_rank))}
    for g in sorted(set(by_gen) | set(bt), key=lambda g: (order.get(g, len(order)), g)):
        rows.append(
            {
                "generator": g,
                "rubric_rank": r_num.get(g),
                "rubric": rubric.get(g),
                "pairwise_rank": p_num.get(g),
                "pairwise": bt.get(g),
                "release_gate": (by_gen.get(g) or {}).get("release_gate"),
            }
        )
    debiased, judge, sets = _debiased_figures(report, name)
    if debiased:
        # where a judge on every item corrected by a random human sample gives the figure, the
        # ranking reads it (narrower, and unbiased where the humans are); its ranks come from
        # the rank-sets (all generators together, their shared cases counted) where there are
        d_rank = _ranked(debiased)
        d_num = _separated_ranks(d_rank, _set_above(sets) if sets else _interval_above(debiased))
        at = {g: i for i, g in enumerate(d_rank)}
        rows.sort(key=lambda r: (at.get(r["generator"], len(at)), r["generator"]))
        for r in rows:
            r["debiased"] = debiased.get(r["generator"])
            r["debiased_rank"] = d_num.get(r["generator"])
            if sets and r["generator"] in sets:
                r["debiased_rank_set"] = sets[r["generator"]]
    both = [r for r in rows if r["rubric_rank"] and r["pairwise_rank"]]
    disagree = [r["generator"] for r in both if r["rubric_rank"] != r["pairwise_rank"]]
    out: dict[str, Any] = {
        "rubric_figure": name,
        "ranking": rows,
        "disagree": disagree,
        "comparable": gens.get("comparable"),
        "rank_rule": "a rank counts only the generators shown above by a test, ties share a "
        "rank: rubric ranks from the paired difference over shared cases (95% interval "
        "excluding 0), none when the generators are not comparable; pairwise ranks from "
        "Bradley-Terry intervals that do not overlap (rank = 1 + the number shown above)",
    }
    if debiased:
        out["ranked_by"] = "debiased"
        out["debiased_judge"] = judge
        unused = _judge_unused(report, str(judge), str(name), list(debiased))
        out["humans_only"] = unused
        jd = ((report.get("debiased") or {}).get("judges") or {}).get(judge) or {}
        why = ((jd.get("rank_sets") or {}).get(str(name)) or {}).get("note")
        if not sets and why:  # ranked by the intervals instead: why there are no rank-sets
            out["rank_sets_note"] = why
        label = str(name).replace("_", " ")
        how = (
            "ranks from the rank-sets (a rank counts the generators shown above by all the "
            "figures together at 95%, their shared cases counted)"
            if sets
            else "ranks from intervals that do not overlap"
        )
        if len(unused) == len(debiased):
            # lambda 0 everywhere: the "debiased" figure is the humans' sample alone, said so
            out["ranked_by_note"] = (
                f"ranked by the {label} of the random human sample alone: the judge {judge} "
                f"added nothing here (its weight is 0 on every generator), so these are "
                f"humans-only figures; {how}"
            )
        else:
            out["ranked_by_note"] = (
                f"ranked by the debiased {label} (the judge {judge} on every item, corrected by "
                f"the random human sample), {how.replace('intervals', 'debiased intervals')}"
                + (
                    f"; humans only on {', '.join(unused)} (the judge added nothing there: its "
                    "weight is 0)"
                    if unused
                    else ""
                )
            )
    else:
        out["ranked_by"] = "humans"
    differ = [
        r["generator"]
        for r in rows
        if r.get("debiased_rank")
        and r.get("rubric_rank")
        and r["debiased_rank"] != r["rubric_rank"]
    ]
    if differ:
        # one ordering leads (the debiased figure); where the humans' own ranks differ, say why
        out["ranks_differ"] = differ
        out["ranks_note"] = (
            f"the humans' own ranks differ on {', '.join(differ)}: they compare generators "
            "only on the cases the raters rated, paired case by case, while the order above "
            "reads the debiased figure"
        )
    if gens.get("comparable_note"):
        out["note"] = gens["comparable_note"]
    return out


def _judge_unused(report: dict[str, Any], judge: str, name: str, gens: list[str]) -> list[str]:
    """The generators whose debiased `name` gives the judge no weight (lambda 0): humans only."""
    by_gen = (((report.get("debiased") or {}).get("judges") or {}).get(judge) or {}).get(
        "by_generator"
    ) or {}
    return sorted(
        g for g in gens if ((by_gen.get(g) or {}).get(name) or {}).get("lambda") in (0, 0.0)
    )


def _set_above(sets: dict[str, Any]) -> Any:
    """h above g when g's rank-set names h among those it is surely below."""

    def above(h: str, g: str) -> bool:
        return h in ((sets.get(g) or {}).get("below") or [])

    return above


def _debiased_figures(
    report: dict[str, Any], name: str | None
) -> tuple[dict[str, dict[str, Any]], str | None, dict[str, Any] | None]:
    """Per generator the debiased (PPI++) figure `name` of one judge: the judge the debiased
    release gate reads, else the first by name with that figure for two generators or more;
    with its rank-sets (stats/debiased_ranks.py) where they cover those generators."""
    sec = report.get("debiased") or {}
    if not name or not sec.get("recorded"):
        return {}, None, None
    gate = (report.get("generators") or {}).get("release_gate") or {}
    judges = sorted(sec.get("judges") or {})
    if gate.get("source") == "debiased" and gate.get("judge") in judges:
        judges = [gate["judge"]]
    for j in judges:
        by_gen = (sec["judges"][j] or {}).get("by_generator") or {}
        figs = {
            g: f[name]["ppi"]
            for g, f in by_gen.items()
            if ((f.get(name) or {}).get("ppi") or {}).get("estimate") is not None
        }
        if len(figs) >= 2:
            sets = ((sec["judges"][j] or {}).get("rank_sets") or {}).get(name) or {}
            ranked = sets.get("rank_sets") or None
            return figs, j, ranked if ranked and set(ranked) == set(figs) else None
    return {}, None, None


def _release_gate(report: dict[str, Any]) -> dict[str, Any]:
    gens = report.get("generators") or {}
    rule = gens.get("release_gate")
    if not rule:
        return {"set": False, "note": "no release gate set (study setting release_gate)"}
    per = {
        g: {
            "pass": (e.get("release_gate") or {}).get("pass"),
            "note": e["release_gate"].get("note"),
        }
        for g, e in (gens.get("by_generator") or {}).items()
        if e.get("release_gate")
    }
    return {
        "set": True,
        "source": rule.get("source", "humans"),
        "judge": rule.get("judge"),
        "rule": rule.get("rule"),
        "thresholds": rule.get("thresholds"),
        "generators": per,
    }


def _raters(report: dict[str, Any]) -> list[dict[str, Any]]:
    raters = report.get("raters") or {}
    labels = metric_labels(report)
    low = low_competence({r: d.get("competence") or {} for r, d in raters.items()})
    out = []
    for r in sorted(raters):
        reasons = []
        drift = raters[r].get("drift") or {}
        if drift.get("flagged"):
            reasons.append(
                f"drift on {labels.get(str(drift.get('metric')), drift.get('metric'))} "
                f"({drift.get('direction')}) from anchor answer {drift.get('first_flag_at')}"
            )
        for key, off in (raters[r].get("calibration_offset") or {}).items():
            if off.get("flagged"):  # a constant offset is calibration, not drift (drift.py)
                reasons.append(
                    f"consistently {off.get('direction')} by {_f(abs(off['estimate']))} "
                    f"[{_f(abs(off['high'] if off['estimate'] < 0 else off['low']))}, "
                    f"{_f(abs(off['low'] if off['estimate'] < 0 else off['high']))}] on "
                    f"{labels.get(key, key)} (anchor answers minus the reference before any "
                    "drift: a standing offset, not drift)"
                )
        for key, fig in low.get(r, {}).items():
            reasons.append(
                f"low competence on {labels.get(key, key)}: {_f(fig['estimate'])} "
                f"[{_f(fig['low'])}, {_f(fig['high'])}], others' median {_f(fig['peers'])}"
                + (f" (as of {fig['as_of']})" if fig.get("as_of") else "")
            )
        if reasons:
            out.append({"rater": r, "why": reasons, "low_competence": low.get(r, {})})
    return out


def build_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The `summary` key of a finished report dict: what is known first, then what data would
    decide the rest (stats/next_steps.py), then the parts they are read from."""
    judges = _judges(report)
    generators = _generators(report)
    gate = _release_gate(report)
    raters = _raters(report)
    debiased = debiased_summary(report.get("debiased") or {}, metric_labels(report))
    fold_biases(judges, known_biases(report, debiased))  # a known bias is never "cannot tell"
    said = {
        "known": known(report, judges, generators, gate, raters, debiased),
        "to_decide": to_decide(report, judges, generators, gate),
    }
    for name, per in judges.items():  # last: the sentence sits beside the metrics it reads
        per["text"] = judge_text(name, per)  # type: ignore[assignment]
    return {
        **said,
        "judges": judges,
        "generators": generators,
        "release_gate": gate,
        "raters_needing_attention": raters,
        "debiased": debiased,
        "glossary": GLOSSARY,
    }


__all__ = ["GLOSSARY", "VERDICTS", "build_summary", "judge_verdict"]
