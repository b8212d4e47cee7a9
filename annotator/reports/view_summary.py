"""View rows of the report's first section (`summary`), the alt-test and the competence tables.

Plain words first: every verdict reads as a sentence with the figure behind it, and every term
the section uses has a one-line glossary entry (from the report's `summary.glossary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain import figures
from .formatting import as_dict, est_of, fmt_num

VERDICT_WORDS = {
    "replaceable": ("can replace a rater", "ok"),
    "inside_human_spread": ("inside the human spread", "ok"),
    "biased": ("biased", "warn"),
    "not_trustworthy": ("not trustworthy", "warn"),
    "undetermined": ("cannot tell", ""),
}


def summary_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    s = as_dict(report.get("summary"))
    if not s:
        return None
    judges = []
    for name, per in as_dict(s.get("judges")).items():
        rows = []
        per = as_dict(per)
        for key, v in per.items():
            if not isinstance(v, Mapping):
                continue  # the judge's sentence (`text`), shown above its rows
            v = as_dict(v)
            words, tone = VERDICT_WORDS.get(str(v.get("verdict")), (str(v.get("verdict")), ""))
            rows.append(
                {
                    "label": str(v.get("label") or key),
                    "words": words,
                    "tone": tone,
                    "why": v.get("why") or "",
                }
            )
        counts = {w: sum(1 for r in rows if r["words"] == w) for w, _ in VERDICT_WORDS.values()}
        judges.append(
            {
                "name": str(name),
                "text": str(per.get("text") or ""),
                "rows": rows,
                "counts": [(w, n) for w, n in counts.items() if n],
            }
        )
    g = as_dict(s.get("generators"))
    ranking = []
    for r in g.get("ranking") or []:
        r = as_dict(r)
        gate = as_dict(r.get("release_gate"))
        ranking.append(
            {
                "name": str(r.get("generator")),
                "rubric_rank": r.get("rubric_rank"),
                "rubric": est_of({"x": r.get("rubric")}, "x"),
                "pairwise_rank": r.get("pairwise_rank"),
                "pairwise": est_of({"x": r.get("pairwise")}, "x"),
                "debiased_rank": r.get("debiased_rank"),
                # every rank the data allow, all generators together (stats/debiased_ranks.py)
                "debiased_rank_set": str(as_dict(r.get("debiased_rank_set")).get("text") or ""),
                "debiased": est_of({"x": r.get("debiased")}, "x"),
                "gate": None if not gate else ("passes" if gate.get("pass") else "does not pass"),
            }
        )
    gate = as_dict(s.get("release_gate"))
    return {
        # what is known first, then what data would decide the rest (stats/next_steps.py)
        "has_next_steps": "known" in s,  # a report of an earlier version has neither list
        "known": [str(as_dict(e).get("text") or "") for e in s.get("known") or []],
        "to_decide": [
            (str(as_dict(e).get("text") or ""), str(as_dict(e).get("command") or ""))
            for e in s.get("to_decide") or []
        ],
        "judges": judges,
        "generators": ranking,
        "rubric_figure": str(g.get("rubric_figure") or "").replace("_", " "),
        "disagree": [str(x) for x in g.get("disagree") or []],
        # a column shows when its figures exist, ranked or not (not comparable: no ranks)
        "has_rubric": any(as_dict(r).get("rubric") for r in g.get("ranking") or []),
        "has_pairwise": any(as_dict(r).get("pairwise") for r in g.get("ranking") or []),
        "has_debiased": g.get("ranked_by") == "debiased",
        "ranked_by_note": str(g.get("ranked_by_note") or ""),
        "ranks_note": str(g.get("ranks_note") or ""),
        "generators_note": " ".join(str(x) for x in (g.get("note"), g.get("rank_rule")) if x)
        or None,
        "gate_set": bool(gate.get("set")),
        "gate_note": (
            "on the debiased lower bounds"
            + (f" (the judge {gate['judge']})" if gate.get("judge") else "")
            + ": "
            if gate.get("source") == "debiased"
            else ""
        )
        + str(gate.get("note") or gate.get("rule") or ""),
        "raters": [
            (str(as_dict(r).get("rater")), list(as_dict(r).get("why") or []))
            for r in s.get("raters_needing_attention") or []
        ],
        "glossary": sorted(as_dict(s.get("glossary")).items()),
    }


ALT_TESTS = (
    ("alt_test", "the paper's"),
    ("alt_test_balanced", "class-balanced (ours)"),
)


def alt_test_rows(m: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per judge of a metric one row for each alternative-annotator test (the paper's and the
    project's class-balanced variant), or why it did not run."""
    rows: list[dict[str, Any]] = []
    for name, j in as_dict(m.get("judges")).items():
        j = as_dict(j)
        for key, test in ALT_TESTS:
            if key not in j:
                continue
            a = j.get(key)
            if not isinstance(a, Mapping):
                rows.append(
                    {
                        "name": str(name),
                        "test": test,
                        "note": str(j.get(f"{key}_note") or "not run"),
                    }
                )
                continue
            eps = a.get("min_passing_epsilon")
            rows.append(
                {
                    "name": str(name),
                    "test": test,
                    "note": None,
                    "epsilon": fmt_num(a.get("epsilon")),
                    "winning_rate": fmt_num(a.get("winning_rate")),
                    "advantage": _with_interval(
                        a.get("advantage_probability"), a.get("advantage_probability_ci")
                    ),
                    "passed": bool(a.get("passed")),
                    "min_eps": "not even at 1" if eps is None else f"{eps:.3f}",
                    "n_annotators": a.get("n_annotators"),
                    "n_items": a.get("n_items"),
                }
            )
    return rows


def _with_interval(est: Any, ci: Any) -> str:
    """ "0.81 [0.77, 0.85]", or the estimate alone when the report has no interval."""
    ci = as_dict(ci)
    if ci.get("low") is None or ci.get("high") is None:
        return fmt_num(est)
    return f"{fmt_num(est)} [{fmt_num(ci['low'])}, {fmt_num(ci['high'])}]"


def metric_labels(report: Mapping[str, Any]) -> dict[str, str]:
    """Metric key -> the label the reader knows it by, the verdict's too (the summary's
    sentences read `figures.metric_labels`, the metrics' alone)."""
    out = {str(k): str(v) for k, v in figures.metric_labels(report).items()}
    v = as_dict(report.get("verdict"))
    if v.get("label"):
        out["verdict"] = str(v["label"])
    return out


__all__ = ["alt_test_rows", "metric_labels", "summary_view"]
