"""The humans-vs-judges section, for the dashboard, the HTML report and the CSV tables: per
metric and judge, alpha with the judge as one more rater against the humans alone, alpha
against the consensus beside its shuffled baseline, exact agreement, the mean difference and
the judge against a held-out human, the correlations, Cohen's kappas, the judge among the
raters, confusion matrices, the figures per case and per generator, the alternative-annotator
test and the latent truth, laid out from the rows of reports/view_agreement.metrics_view
(the confusion matrices and per-slice tables in reports/section_judge_detail.py). One table
per part with a metric and a judge column, so that each part is one CSV (`judges_alpha.csv`,
`judges_correlation.csv`, `judges_details.csv`, `judges_alt_test.csv`,
`judges_slices_<dimension>.csv`, one `judges_confusion_<metric>__<judge>.csv` per matrix);
the kappas are in `agreement.csv` as numbers, so their table writes none. A tag metric's rows
are a table of their own, folded in the HTML report (a rubric may have many tags).
Tested in tests/unit/test_report_sections.py, tests/unit/test_reports_render.py and
tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formatting import Est
from .section_agreement import figure_notes, figure_text, fold_line, metric_name
from .section_judge_detail import confusion_blocks, slice_blocks
from .sections import Block, Note, Section, Table

KEY = "judges"
TITLE = "Humans vs judges"
SUBTITLE = (
    "For each metric, how each judge relates to the humans. Correlations are between the "
    "judge's value and the human mean per item."
)
OWN_SCALE = "own scale"
ALT_TEST_TEXT = (
    "Alternative-annotator test: can the judge replace one of these raters? Each rater left out "
    "in turn: does the judge agree with the remaining raters at least as well as the left-out "
    "rater did, on all but a share epsilon of the items? Winning rate: share of raters the "
    "judge matches (Benjamini-Yekutieli at 0.05; a decision on these raters, so no interval); "
    "advantage probability: share of items where the judge did at least as well, with its "
    'item-bootstrap interval; "passes from epsilon" is itself a one-sided bound. Two tests: the '
    "paper's (Calderon, Reichart & Dror 2025, as its authors compute it: items with two raters "
    "or more, every item weighing the same) and ours, class-balanced on gates, tags and choices "
    "(every answer class weighs the same, items with three raters or more, three raters at "
    "least), which keeps a judge that always gives the common answer from passing. Passing is "
    "not enough to replace a rater: the summary needs both tests passed, the judge's kappa with "
    "the humans above zero with its interval and the judge not below the human spread. A failed "
    "test's row is flagged."
)

# (is a tag metric's row, the row, flagged)
Rows = list[tuple[bool, tuple[str, ...], bool]]


def _tables(
    name: str,
    what: str,
    headers: tuple[str, ...],
    rows: Rows,
    numeric: frozenset[int],
    csv: str | None = None,
) -> list[Block]:
    """The part's table, then its tag metrics' rows as a second one folded in the HTML report
    (`<name>Tags`): every tag of a rubric is a metric of its own."""
    out: list[Block] = []
    for tags, suffix in ((False, ""), (True, "Tags")):
        part = [(row, flag) for is_tags, row, flag in rows if is_tags == tags]
        if not part:
            continue
        fold = (
            f"{what} of the tag metrics ({len(part)} row{'' if len(part) == 1 else 's'})"
            if tags
            else fold_line(what, len(part))
        )
        out.append(
            Table(
                f"{name}{suffix}Table",
                headers,
                tuple(r for r, _ in part),
                frozenset(i for i, (_, f) in enumerate(part) if f),
                numeric,
                csv,
                fold,
            )
        )
    return out


def _tags(m: Mapping[str, Any]) -> bool:
    return m.get("kind") == "tags"


def _scale(j: Mapping[str, Any]) -> str:
    if j.get("off_scale"):
        return OWN_SCALE
    if j.get("between_points"):
        return "between the points: interval figures"
    return "the rubric's"


def _num(x: Any) -> str:
    return "—" if x is None else str(x)


def _perm(j: Mapping[str, Any]) -> str:
    if not j.get("perm_present"):
        return "—"
    if j.get("perm_mean") is None:
        return "undefined" + (f" ({j['perm_note']})" if j.get("perm_note") else "")
    return f"{j['perm_mean']} · p {j['perm_p']}"


def _alpha_blocks(metrics: list[Mapping[str, Any]], said: set[tuple[str, str]]) -> list[Block]:
    rows: Rows = []
    found: list[tuple[str, str, Est | str]] = []
    own: dict[tuple[str, str], list[str]] = {}
    for m in metrics:
        for j in m["judges"]:
            where = f"{metric_name(m)}\t{j['name']}"
            if j.get("off_scale"):
                own.setdefault((metric_name(m), j["off_scale"]), []).append(j["name"])
                figures: tuple[str, ...] = ("—",) * 6
            else:
                alone = j["alpha_humans_same_items"]
                figures = (
                    figure_text(j["alpha_gain"]),
                    figure_text(j["alpha_with_judge_as_rater"]),
                    f"{alone.text} (same items)"
                    if alone.present
                    else figure_text(m["human_alpha"], with_n=False),
                    figure_text(j["alpha_vs_consensus"]),
                    _perm(j),
                    figure_text(j["exact_agreement"]),
                )
                found += [
                    (where, "alpha gain", j["alpha_gain"]),
                    (where, "alpha, humans + judge", j["alpha_with_judge_as_rater"]),
                    (where, "alpha vs consensus", j["alpha_vs_consensus"]),
                    (where, "exact agreement", j["exact_agreement"]),
                ]
            rows.append(
                (
                    _tags(m),
                    (metric_name(m), j["name"], _num(j.get("n_items")), _scale(j), *figures),
                    bool(j.get("off_scale")),
                )
            )
    if not rows:
        return []
    notes: list[Block] = [
        Note(
            f"{', '.join(names)} ({metric}): answers on its own scale ({why}): the figures that "
            "need the rubric's scale do not apply; see the correlations.",
            "aside",
        )
        for (metric, why), names in own.items()
    ]
    return [
        Note("Alpha: the judge as one more rater, and against the consensus", "heading"),
        Note(
            "Read the gain first: alpha of the humans with the judge as one more rater, minus "
            "alpha of the humans alone on the same items; if it barely moves, the judge sits "
            "inside the human spread. Alpha against the human consensus flatters the judge; the "
            "shuffled baseline is that alpha with the judge's scores shuffled across items, with "
            "how often shuffling matched the real agreement (p). A row is flagged where the "
            "judge answers on its own scale.",
            "aside",
        ),
        *_tables(
            "judgesAlpha",
            "alpha per judge",
            (
                "metric",
                "judge",
                "items",
                "scale",
                "alpha gain: humans + judge as a rater − humans alone",
                "alpha, humans + judge as a rater",
                "alpha, humans alone",
                "alpha vs human consensus (flatters the judge)",
                "shuffled baseline · p",
                "exact agreement",
            ),
            rows,
            frozenset({2, 4, 5, 6, 7, 8, 9}),
        ),
        *notes,
        *figure_notes(found, said),
    ]


def _correlation_blocks(
    metrics: list[Mapping[str, Any]], said: set[tuple[str, str]]
) -> list[Block]:
    rows: Rows = []
    found: list[tuple[str, str, Est | str]] = []
    for m in metrics:
        for j in m["judges"]:
            where = f"{metric_name(m)}\t{j['name']}"
            held = "—"
            if j.get("held_out") is not None:
                held = figure_text(j["held_out"])
                if j.get("held_out_q"):
                    held += f"; q {j['held_out_q']}"
                found.append((where, "judge − a held-out human", j["held_out"]))
            rows.append(
                (
                    _tags(m),
                    (
                        metric_name(m),
                        j["name"],
                        "not on the rubric's scale"
                        if j.get("off_scale")
                        else figure_text(j["mean_difference"]),
                        held,
                        figure_text(j["pearson"]),
                        j.get("perm_pearson") or "—",
                        figure_text(j["spearman"]),
                        figure_text(j["kendall_tau_b"]),
                    ),
                    False,
                )
            )
            found += [
                (where, "mean difference", j["mean_difference"]),
                (where, "Pearson r", j["pearson"]),
                (where, "Spearman rho", j["spearman"]),
                (where, "Kendall tau-b", j["kendall_tau_b"]),
            ]
    if not rows:
        return []
    return [
        Note("Differences and correlations with the humans", "heading"),
        Note(
            "Mean difference: the judge's value minus the human mean (on the rubric's scale). "
            "Judge − a held-out human: each human in turn left out, the judge's distance from "
            "the others beside that human's (q: the multiple-testing adjusted p). The "
            "correlations are with the human mean per item; shuffled: Pearson with the judge's "
            "scores shuffled across items, and p.",
            "aside",
        ),
        *_tables(
            "judgesCorrelation",
            "differences and correlations per judge",
            (
                "metric",
                "judge",
                "mean difference (judge − humans)",
                "judge − a held-out human; q",
                "Pearson r",
                "shuffled Pearson · p",
                "Spearman rho",
                "Kendall tau-b",
            ),
            rows,
            frozenset({2, 3, 4, 5, 6, 7}),
        ),
        *figure_notes(found, said),
    ]


def _kappa_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    with_kappa = [m for m in metrics if any(j["kappas"] for j in m["judges"])]
    if not with_kappa:
        return []
    weights: list[str] = []
    for m in with_kappa:
        for j in m["judges"]:
            weights += [w for w, _ in j["kappas"] if w not in weights]
    rows: Rows = []
    for m in with_kappa:
        for j in m["judges"]:
            kappas = dict(j["kappas"])
            cells = tuple(
                "—" if j.get("off_scale") or w not in kappas else figure_text(kappas[w])
                for w in weights
            )
            rows.append((_tags(m), (metric_name(m), j["name"], *cells), False))
    return [
        Note("Cohen's kappa against the consensus", "heading"),
        *_tables(
            "judgesKappa",
            "Cohen's kappa per judge",
            ("metric", "judge", *weights),
            rows,
            frozenset(range(2, 2 + len(weights))),
            csv="",  # agreement.csv: cohen_kappa_<weighting>
        ),
    ]


def _details_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    """What the old report gave under each judge's name: where it sits among the raters, the
    items it could not judge, and any other figure of its entry."""
    rows: Rows = []
    for m in metrics:
        for j in m["judges"]:
            other = [*j.get("perm_extra", []), *j.get("other", [])]
            rng = j.get("human_range") if not j.get("off_scale") else None
            if not (rng or other or j.get("n_cannot_judge") is not None):
                continue
            rows.append(
                (
                    _tags(m),
                    (
                        metric_name(m),
                        j["name"],
                        rng or "—",
                        _num(j.get("n_cannot_judge")),
                        " · ".join(f"{k}: {v}" for k, v in other) or "—",
                    ),
                    False,
                )
            )
    if not rows:
        return []
    return [
        Note("Each judge among the raters", "heading"),
        Note(
            "Judge among the raters: the judge's kappa with each human against the humans' "
            "kappas with each other. Could not judge: the items the judge gave no answer on.",
            "aside",
        ),
        *_tables(
            "judgesDetails",
            "each judge among the raters",
            ("metric", "judge", "judge among the raters", "could not judge", "other figures"),
            rows,
            frozenset({3}),
        ),
    ]


def _alt_test_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    rows: Rows = []
    for m in metrics:
        for a in m.get("alt_test") or []:
            if a.get("note"):
                cells: tuple[str, ...] = ("—", "—", "—", str(a["note"]), "—", "—", "—")
            else:
                cells = (
                    str(a["epsilon"]),
                    str(a["winning_rate"]),
                    str(a["advantage"]),
                    "passed" if a["passed"] else "failed",
                    str(a["min_eps"]),
                    _num(a.get("n_annotators")),
                    _num(a.get("n_items")),
                )
            rows.append(
                (
                    _tags(m),
                    (metric_name(m), a["name"], a["test"], *cells),
                    not a.get("note") and not a["passed"],
                )
            )
    if not rows:
        return []
    return [
        Note("Alternative-annotator test", "heading"),
        Note(ALT_TEST_TEXT, "aside"),
        *_tables(
            "judgesAltTest",
            "alternative-annotator tests",
            (
                "metric",
                "judge",
                "test",
                "epsilon",
                "winning rate",
                "advantage probability",
                "passed",
                "passes from epsilon",
                "raters",
                "items",
            ),
            rows,
            frozenset({3, 4, 5, 7, 8, 9}),
        ),
    ]


def humans_judges_section(view: Mapping[str, Any]) -> Section:
    v = view.get(KEY)
    metrics = [m for m in (v or {}).get("metrics") or [] if m.get("judges")]
    if not metrics:
        return Section(
            KEY, TITLE, SUBTITLE, (Note("No judge scores on the rubric's metrics yet."),)
        )
    said: set[tuple[str, str]] = set()  # the figures' notes already given
    blocks = (
        _alpha_blocks(metrics, said)
        + _correlation_blocks(metrics, said)
        + _kappa_blocks(metrics)
        + _details_blocks(metrics)
        + confusion_blocks(metrics)
        + slice_blocks(metrics)
        + _alt_test_blocks(metrics)
        + [Note(f"{metric_name(m)}: {m['latent']}.", "aside") for m in metrics if m.get("latent")]
    )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["humans_judges_section"]
