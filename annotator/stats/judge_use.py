"""One verdict per judge, first: what a lead may use the judge for.

The per-metric verdicts (`summary.judge_verdict`) read agreement only; the report also knows
where a judge is biased: a systematic offset from the humans (`systematic_findings`, beyond the
humans' own offsets at Benjamini-Hochberg q < 0.05) and a generator figure the judge gets wrong on
the random human sample (`summary.debiased.off_by`, the error's interval excluding 0). A bias
known on a metric is said in that metric's `why` whatever its verdict, and the verdict can no
longer read as trust nor as "cannot tell":

| evidence on the metric                                     | verdict                |
|------------------------------------------------------------|------------------------|
| a known bias, agreement not shown below the humans'        | `biased`               |
| a known bias, agreement below the humans'                  | `not_trustworthy`      |
| no bias; alt-test passed, kappa above 0, inside the spread | `replaceable`          |
| no bias; inside (or above) the human spread                | `inside_human_spread`  |
| no bias; below the human spread                            | `not_trustworthy`      |
| no bias; nothing decides                                   | `undetermined`         |

The judge's sentence (`summary.judges.<judge>.text`) is built from those verdicts alone, in the
lead's words: use it for ...; not for ... (the bias or the low agreement); undecided on ... until
about N more items are rated by the judge and the raters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.figures import metric_labels
from .debiased import figure_words

BIAS_WORDS = {
    "lenient": "scores above your raters by",
    "severe": "scores below your raters by",
    "judge_tags_more_often": "tags more often than your raters by",
    "judge_tags_less_often": "tags less often than your raters by",
}


def _size(fig: Mapping[str, Any]) -> str:
    """A signed interval as a positive size: 0.47 [0.10, 0.85] for -0.47 [-0.85, -0.10] too."""
    est, lo, hi = fig.get("estimate"), fig.get("low"), fig.get("high")
    if est is None:
        return ""
    if lo is None or hi is None:
        return f"{abs(est):.2f}"
    if est < 0:
        lo, hi = -hi, -lo
    return f"{abs(est):.2f} [{lo:.2f}, {hi:.2f}]"


def known_biases(
    report: Mapping[str, Any], debiased: Mapping[str, Any]
) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """judge -> metric key -> what is known of its bias there: (in full, as the judge's sentence
    says it beside the metric's name)."""
    out: dict[str, dict[str, list[tuple[str, str]]]] = {}
    kinds = (report.get("debiased") or {}).get("figures") or {}
    labels = metric_labels(report)
    for f in report.get("systematic_findings") or []:
        diff = (f.get("vs_held_out_human") or {}).get("difference") or f.get("mean_difference")
        if not diff:
            continue
        words = BIAS_WORDS.get(str(f.get("kind")), str(f.get("kind")))
        said = f"{words} {_size(diff)}"
        out.setdefault(str(f["judge_name"]), {}).setdefault(str(f["metric"]), []).append(
            (said, said)
        )
    for r in debiased.get("off_by") or []:
        err = r.get("judge_minus_humans") or {}
        if not r.get("clear") or err.get("estimate") is None:
            continue
        figure = str(r.get("figure"))
        metric = "verdict" if figure == "verdict_pass_rate" else figure
        verb = "overstates" if err["estimate"] > 0 else "understates"
        gen = str(r.get("generator"))
        kind = kinds.get(figure, "figure")
        what = figure_words(gen, figure, kind, labels)
        short = f"{gen}'s {'share tagged' if ':' in figure else kind}"
        out.setdefault(str(r.get("judge")), {}).setdefault(metric, []).append(
            (
                f"{verb} {what} by {_size(err)} on the random sample",
                f"{verb} {short} by {_size(err)}",
            )
        )
    return out


def fold_biases(
    judges: dict[str, dict[str, Any]], biases: Mapping[str, Mapping[str, list[tuple[str, str]]]]
) -> None:
    """Each metric's verdict and `why` with its known bias (the rule table above), in place."""
    for judge, per in judges.items():
        for key, v in per.items():
            known = (biases.get(judge) or {}).get(key)
            if not known:
                continue
            v["bias"] = [full for full, _ in known]
            v["bias_short"] = [short for _, short in known]
            v["why"] = "known bias: " + "; ".join(v["bias"]) + ". " + str(v.get("why") or "")
            if v.get("verdict") != "not_trustworthy":
                v["verdict"] = "biased"


def _names(per: Mapping[str, Any], keys: list[str]) -> str:
    return ", ".join(str(per[k].get("label") or k) for k in keys)


def judge_text(judge: str, per: Mapping[str, Any]) -> str:
    """The judge's one sentence, from its per-metric verdicts."""
    by: dict[str, list[str]] = {}
    for key, v in per.items():
        by.setdefault(str(v.get("verdict")), []).append(key)
    parts = []
    use = by.get("replaceable", []) + by.get("inside_human_spread", [])
    if use:
        parts.append(
            f"use it for {_names(per, use)} (it agrees with your raters as often as they agree "
            "with each other)"
        )
    nots = []
    for key in by.get("biased", []) + by.get("not_trustworthy", []):
        v = per[key]
        reason = (v.get("bias_short") or [None])[0] or (
            "it agrees with your raters less than they agree with each other"
        )
        nots.append(f"{v.get('label') or key} ({reason})")
    if nots:
        parts.append("not for " + "; ".join(nots))
    open_ = by.get("undetermined", [])
    if open_:
        needed = [int(per[k]["n_needed"]) for k in open_ if per[k].get("n_needed")]
        until = (
            f" until about {max(needed)} items are rated by the judge and your raters"
            if needed
            else ": too little overlap between the judge and your raters to tell"
        )
        parts.append(f"undecided on {_names(per, open_)}{until}")
    if not parts:
        return f"The judge {judge}: nothing to judge it by yet."
    return f"The judge {judge}: " + "; ".join(parts) + "."


__all__ = ["BIAS_WORDS", "fold_biases", "judge_text", "known_biases"]
