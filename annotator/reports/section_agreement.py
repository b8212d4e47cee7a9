"""The agreement section, for the dashboard, the HTML report and the CSV tables: the humans'
agreement metric by metric (alpha with its interval, the other agreement figures, ties), the
chart of alpha per metric with each judge as one more rater, Cohen's kappa per pair of human
raters, and the agreement on each generator's items, laid out from the rows of
reports/view_metrics.metrics_view. The per-metric and per-generator tables are formatted text
of figures `agreement.csv` and `by_generator.csv` hold as numbers, so they write no CSV; the
rater pairs' kappas are `agreement_pairs.csv`.
Tested in tests/unit/test_report_sections.py, tests/unit/test_reports_render.py and
tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .formatting import Est, fmt_num
from .sections import Block, Chart, Note, Section, Table

KEY = "agreement"
TITLE = "Agreement per metric"
SUBTITLE = (
    "Human raters among themselves, metric by metric, then each judge against the human "
    "consensus. Dots are estimates, bars the 95% interval."
)
CORRELATIONS = ("Pearson", "Spearman", "Kendall tau-b")
FOLD_ROWS = 12  # a table longer than this is folded in the HTML report
CHART_ALT = "Krippendorff's alpha per metric, humans and judges, with 95% intervals"


def figure_text(e: Est | str, *, with_n: bool = True, whole_note: bool = False) -> str:
    """An estimate as one cell: '0.94 [0.86, 1.00] n=34', or why it is undefined; a figure
    without an interval says why it has none ('0.29 (no interval)', or its whole note with
    `whole_note`: a note that differs from cell to cell, never said under the table)."""
    if not isinstance(e, Est):
        return str(e)
    s = str(e)
    note = e.note if whole_note else e.short_note
    if e.defined and not e.ci and note:
        s += f" ({note})"
    if with_n and e.defined and e.n is not None:
        s += f" n={e.n}"
    return s


def metric_name(m: Mapping[str, Any]) -> str:
    """A metric as the reader knows it: its label, after its group for a tag option."""
    return f"{m['group']}: {m['label']}" if m.get("group") else str(m["label"])


def fold_line(what: str, n_rows: int) -> str:
    """A long table is folded in the HTML report under this line ("": shown open)."""
    return f"{what} ({n_rows} rows)" if n_rows > FOLD_ROWS else ""


def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


def _num(x: Any) -> str:
    return "—" if x is None else fmt_num(x)


def figure_notes(
    found: Iterable[tuple[str, str, Est | str]], said: set[tuple[str, str]] | None = None
) -> list[Block]:
    """The explanation a figure carries that its cell does not show, once per figure and text: `found` holds (where, figure, estimate); `said` the (figure, note) pairs an
    earlier table's notes gave, which this adds to."""
    said = set() if said is None else said
    by: dict[tuple[str, str], list[str]] = {}
    for where, figure, e in found:
        if not (isinstance(e, Est) and e.present and e.note) or (figure, e.note) in said:
            continue
        # else the cell shows it whole: a defined figure without an interval, or why one is
        # undefined
        if (e.defined and e.ci) or e.note != e.short_note:
            spots = by.setdefault((figure, e.note), [])
            if where not in spots:
                spots.append(where)
    said |= set(by)
    return [Note(f"{figure} ({places(w)}): {note}", "aside") for (figure, note), w in by.items()]


def places(where: list[str]) -> str:
    """'m\ta', 'm\tb', 'n\tc' -> 'm: a, b; n: c' (a place is a metric, or a metric and a
    judge after a tab)."""
    by: dict[str, list[str]] = {}
    for p in where:
        metric, _, rest = p.partition("\t")
        by.setdefault(metric, [])
        if rest:
            by[metric].append(rest)
    return "; ".join(f"{m}: {', '.join(r)}" if r else m for m, r in by.items())


def _interval_shown(m: Mapping[str, Any]) -> bool:
    e: Est = m["human_alpha_interval"]
    return e.present and (m["kind"] == "scale" or e.defined)


def _metrics_blocks(metrics: list[Mapping[str, Any]], said: set[tuple[str, str]]) -> list[Block]:
    if not metrics:
        return [Note("No metric has answers yet.")]
    labels: list[str] = []
    for m in metrics:
        labels += [label for label, _ in m["extras"] if label not in labels]
    interval = any(_interval_shown(m) for m in metrics)
    cannot = any(m.get("n_cannot_judge") for m in metrics)
    headers = (
        "metric",
        "kind · level",
        "items",
        "raters",
        "answers",
        *(("cannot judge",) if cannot else ()),
        "human alpha [95%]",
        *(("alpha, as interval data",) if interval else ()),
        *labels,
    )
    rows = []
    for m in metrics:
        extras = dict(m["extras"])
        rows.append(
            (
                metric_name(m),
                f"{m['kind']} · {m['level']}",
                _num(m.get("n_items")),
                _num(m.get("n_raters")),
                _num(m.get("n_judgements")),
                *((_num(m.get("n_cannot_judge") or 0),) if cannot else ()),
                figure_text(m["human_alpha"]),
                *(
                    (
                        figure_text(m["human_alpha_interval"], with_n=False)
                        if _interval_shown(m)
                        else "—",
                    )
                    if interval
                    else ()
                ),
                *(figure_text(extras[x], with_n=False) if x in extras else "—" for x in labels),
            )
        )
    blocks: list[Block] = [
        Table(
            "agreementTable",
            headers,
            tuple(rows),
            numeric=frozenset(range(2, len(headers))),
            csv="",  # agreement.csv: the same figures as numbers
        )
    ]
    for m in metrics:
        parts = []
        if m.get("n_ties"):
            n = m["n_ties"]
            parts.append(
                f"{_num(n)} item{'' if n == 1 else 's'} with a tie for the consensus (left out "
                "of judge comparisons)"
            )
        parts += [f"{k}: {val}" for k, val in m.get("other") or []]
        if parts:
            blocks.append(Note(f"{metric_name(m)}: {' · '.join(parts)}.", "aside"))
    found: list[tuple[str, str, Est | str]] = []
    for m in metrics:
        found.append((metric_name(m), "human alpha", m["human_alpha"]))
        if _interval_shown(m):
            found.append((metric_name(m), "alpha, as interval data", m["human_alpha_interval"]))
        found += [(metric_name(m), label, e) for label, e in m["extras"]]
    return blocks + figure_notes(found, said)


def _chart_blocks(metrics: list[Mapping[str, Any]], charts: Mapping[str, bytes]) -> list[Block]:
    png = charts.get("agreement")
    if not png:
        return []
    # the chart leaves out a metric with nothing defined (the table says why)
    omitted = [
        metric_name(m)
        for m in metrics
        if not m["human_alpha"].defined
        and not any(j["alpha_with_judge_as_rater"].defined for j in m["judges"])
    ]
    caption = (
        f"Not drawn, nothing defined: {', '.join(omitted)} (see the table for the reasons)."
        if omitted
        else ""
    )
    return [Chart("agreementChart", png, CHART_ALT, caption)]


# a pair cell's text by the cell itself (held, so its id is never another's): the view hands an
# unmoved pair's figure the very Est of the last refresh (formatting.kept_est_of)
_PAIR_TEXTS: dict[int, tuple[Est | str, str]] = {}
_PAIR_TEXTS_MAX = 20_000


def _pair_text(e: Est | str) -> str:
    made = _PAIR_TEXTS.get(id(e))
    if made is None or made[0] is not e:
        if len(_PAIR_TEXTS) >= _PAIR_TEXTS_MAX:
            _PAIR_TEXTS.clear()
        made = _PAIR_TEXTS[id(e)] = (e, figure_text(e, with_n=False))
    return made[1]


def _pair_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    with_pairs = [m for m in metrics if m.get("pair_rows")]
    if not with_pairs:
        return []
    weights: list[str] = []
    for m in with_pairs:
        weights += [w for w in m["pair_weights"] if w not in weights]
    rows = []
    for m in with_pairs:
        for name, n, cells in m["pair_rows"]:
            by_weight = dict(zip(m["pair_weights"], cells, strict=False))
            rows.append(
                (
                    metric_name(m),
                    name,
                    _num(n),
                    *(_pair_text(by_weight[w]) if w in by_weight else "—" for w in weights),
                )
            )
    return [
        Note("Rater pairs", "heading"),
        Note("Cohen's kappa for each pair of human raters, per metric.", "aside"),
        Table(
            "agreementPairsTable",
            ("metric", "pair", "items", *weights),
            tuple(rows),
            numeric=frozenset(range(2, 3 + len(weights))),
            # folded whatever its length, as the report always had it: a detail few read
            fold=f"Cohen's kappa for each pair of human raters, per metric ({_rows(len(rows))})",
        ),
    ]


def _row_notes(cells: Iterable[tuple[str, Est | str]], said: set[tuple[str, str]]) -> str:
    """The notes a row's figures carry that their cells do not show and no note above said."""
    return "; ".join(
        f"{figure}: {e.note}"
        for figure, e in cells
        if isinstance(e, Est)
        and e.defined
        and e.note
        and (e.ci or e.note != e.short_note)
        and (figure, e.note) not in said
    )


def _by_generator_blocks(
    metrics: list[Mapping[str, Any]], said: set[tuple[str, str]]
) -> list[Block]:
    rows: list[tuple[str, ...]] = []
    for m in metrics:
        for g in m.get("by_generator") or []:
            judges = g["judges"] or [("no judge", [])]
            for i, (name, cells) in enumerate(judges):
                head = (
                    (metric_name(m), g["generator"], _num(g["n_items"])) if i == 0 else ("", "", "")
                )
                humans = (
                    (figure_text(g["alpha"], with_n=False), figure_text(g["fleiss"], with_n=False))
                    if i == 0
                    else ("", "")
                )
                corr = tuple(figure_text(c, with_n=False) for c in cells) or ("—", "—", "—")
                # a figure's note (its interval's coverage, resamples left out) beside it, in
                # the folded table rather than under it
                figures = [
                    (f"{name}, {fig}", c) for fig, c in zip(CORRELATIONS, cells, strict=False)
                ]
                if i == 0:
                    figures = [
                        ("human alpha", g["alpha"]),
                        ("Fleiss' kappa", g["fleiss"]),
                        *figures,
                    ]
                rows.append((*head, *humans, name, *corr, _row_notes(figures, said)))
    if not rows:
        return []
    noted = any(r[-1] for r in rows)
    return [
        Note("Agreement per generator", "heading"),
        Note(
            "The humans' alpha and Fleiss' kappa on each generator's items, and each judge's "
            "correlations with the human mean there (as the field reports agreement per model).",
            "aside",
        ),
        Table(
            "byGeneratorTable",
            (
                "metric",
                "generator",
                "items",
                "human alpha [95%]",
                "Fleiss' kappa",
                "judge",
                *CORRELATIONS,
                *(("notes",) if noted else ()),
            ),
            tuple(r if noted else r[:-1] for r in rows),
            numeric=frozenset({2, 3, 4, 6, 7, 8}),
            csv="",  # by_generator.csv: the same figures as numbers
            fold=f"Agreement on each generator's items ({_rows(len(rows))})",
        ),
    ]


def _verdict_blocks(rows: list[tuple[str, str]]) -> list[Block]:
    """The verdict when the report gives it as label/value pairs rather than as a metric."""
    if not rows:
        return []
    return [
        Note("Verdict", "heading"),
        Table("agreementVerdictTable", ("figure", "value"), tuple(rows)),
    ]


def agreement_section(view: Mapping[str, Any]) -> Section:
    a = view.get(KEY)
    if not a:
        return Section(KEY, TITLE, SUBTITLE, (Note("No metric has answers yet."),))
    metrics = list(a.get("metrics") or [])
    said: set[tuple[str, str]] = set()  # the figures' notes already given
    blocks = (
        _verdict_blocks(list(a.get("verdict") or []))
        + _chart_blocks(metrics, a.get("charts") or {})
        + _metrics_blocks(metrics, said)
        + _pair_blocks(metrics)
        + _by_generator_blocks(metrics, said)
    )
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = [
    "agreement_section",
    "figure_notes",
    "figure_text",
    "fold_line",
    "metric_name",
    "places",
]
