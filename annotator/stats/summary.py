"""The report's answers in one place: the `summary` key (DESIGN.md 5.5, second round).

Built from the finished report dict, never from the data, so it can only repeat
figures the report already holds:

- per judge and metric a verdict: `replaceable` when the judge passes the
  alternative-annotator test; else `inside_human_spread` when its mean kappa
  with each human lies within the range of the human-human kappas (or above
  it: agreeing with each human more than they agree with each other); else
  `not_trustworthy` when either figure exists and says no; `undetermined` when
  neither could be computed (the note says why). Each comes with the figure
  behind it (`why`, in words).
- generators ranked by the per-case rubric results (the verdict pass rate, or
  the first figure when the rubric has no verdict) and by the pairwise
  Bradley-Terry strength, side by side with intervals; `disagree` lists the
  generators whose two ranks differ.
- the release gate's verdict per generator (conservative bounds, from the
  generators section).
- raters needing attention: drift flagged on anchors, or a competence whose
  upper bound is below the median competence of the other raters on a metric
  where the others are mostly competent (see competence.low_competence).
"""

from __future__ import annotations

from typing import Any

from .competence import low_competence

VERDICTS = ("replaceable", "inside_human_spread", "not_trustworthy", "undetermined")
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


def _f(x: Any, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def judge_verdict(j: dict[str, Any]) -> dict[str, Any]:
    """The verdict on one judge and metric from its report entry."""
    alt = j.get("alt_test")
    hr = j.get("human_range") or {}
    pos = hr.get("position")
    if alt and alt.get("passed"):
        return {
            "verdict": "replaceable",
            "why": f"passes the alternative-annotator test at epsilon {_f(alt['epsilon'])}: "
            f"as good as or better than {round(alt['winning_rate'] * alt['n_annotators'])} of "
            f"{alt['n_annotators']} raters on {alt['n_items']} items",
            "figure": {"alt_test": alt},
        }
    hh = hr.get("human_vs_human") or {}
    spread = (
        f"mean kappa with the humans {_f(hr.get('judge_mean'))}, humans among themselves "
        f"{_f(hh.get('min'))} to {_f(hh.get('max'))}"
    )
    failed = (
        f"fails the alternative-annotator test at epsilon {_f(alt['epsilon'])} "
        + (
            f"(passes from epsilon {_f(alt['min_passing_epsilon'], 3)})"
            if alt.get("min_passing_epsilon") is not None
            else "(does not pass even at epsilon 1)"
        )
        if alt
        else None
    )
    if pos in ("inside", "above"):
        # above the range is not worse than inside it: the judge agrees with each human more
        # than the humans agree with each other (without passing the alt-test, still no more)
        why = spread + (" (above the human range)" if pos == "above" else "")
        why += f"; {failed}" if failed else ""
        return {"verdict": "inside_human_spread", "why": why, "figure": {"human_range": hr}}
    if alt or pos == "below":
        parts = [p for p in (failed, spread if pos else None) if p]
        return {
            "verdict": "not_trustworthy",
            "why": "; ".join(parts),
            "figure": {"alt_test": alt, "human_range": hr if pos else None},
        }
    if j.get("same_scale") is False:
        return {
            "verdict": "undetermined",
            "why": "the judge does not answer on the rubric's scale: it can only be read through "
            "its correlations with the human mean",
            "figure": None,
        }
    notes = [j.get("alt_test_note"), hr.get("note")]
    return {
        "verdict": "undetermined",
        "why": "; ".join(n for n in notes if n) or "no figure to judge by",
        "figure": None,
    }


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


def _ranked(fig: dict[str, dict[str, Any]]) -> list[str]:
    have = [g for g, f in fig.items() if f and f.get("estimate") is not None]
    return sorted(have, key=lambda g: -fig[g]["estimate"])


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
    rows = []
    # rubric ranks first, then pairwise-only generators, then the unranked by name: the same
    # report for the same data (a set's order would move with the hash seed)
    order = {g: i for i, g in enumerate(dict.fromkeys(r_rank + p_rank))}
    for g in sorted(set(by_gen) | set(bt), key=lambda g: (order.get(g, len(order)), g)):
        rows.append(
            {
                "generator": g,
                "rubric_rank": r_rank.index(g) + 1 if g in r_rank else None,
                "rubric": rubric.get(g),
                "pairwise_rank": p_rank.index(g) + 1 if g in p_rank else None,
                "pairwise": bt.get(g),
                "release_gate": (by_gen.get(g) or {}).get("release_gate"),
            }
        )
    both = [r for r in rows if r["rubric_rank"] and r["pairwise_rank"]]
    disagree = [r["generator"] for r in both if r["rubric_rank"] != r["pairwise_rank"]]
    out: dict[str, Any] = {
        "rubric_figure": name,
        "ranking": rows,
        "disagree": disagree,
        "comparable": gens.get("comparable"),
    }
    if gens.get("comparable_note"):
        out["note"] = gens["comparable_note"]
    return out


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
        "rule": rule.get("rule"),
        "thresholds": rule.get("thresholds"),
        "generators": per,
    }


def _raters(report: dict[str, Any]) -> list[dict[str, Any]]:
    raters = report.get("raters") or {}
    labels = {k: s.get("label") or k for k, s in (report.get("metrics") or {}).items()}
    low = low_competence({r: d.get("competence") or {} for r, d in raters.items()})
    out = []
    for r in sorted(raters):
        reasons = []
        drift = raters[r].get("drift") or {}
        if drift.get("flagged"):
            reasons.append(
                f"drift on {labels.get(drift.get('metric'), drift.get('metric'))} "
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
            )
        if reasons:
            out.append({"rater": r, "why": reasons, "low_competence": low.get(r, {})})
    return out


def build_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The `summary` key of a finished report dict."""
    return {
        "judges": _judges(report),
        "generators": _generators(report),
        "release_gate": _release_gate(report),
        "raters_needing_attention": _raters(report),
        "glossary": GLOSSARY,
    }


__all__ = ["GLOSSARY", "VERDICTS", "build_summary", "judge_verdict"]
