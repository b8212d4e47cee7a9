"""The generators section, for the dashboard, the HTML report and the CSV tables: each
generator's items, cases and release gate, then every figure case by case with the generators
side by side (cases alphabetical, never ordered by a score), and the paired differences between
generators, laid out from the rows of reports/view_study.generators_view. Its tables are new
CSVs (`generators.csv`, `generator_cases.csv`, `generator_differences.csv`): `by_generator.csv`
is another figure (agreement per generator)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cell_memo import TextMemo
from .formatting import Est
from .section_judges import est_text
from .sections import Block, Note, Section, Table

KEY = "generators"
TITLE = "Generators, case by case"
SUBTITLE = (
    "Each row holds one case fixed and varies the generator. Cases are in alphabetical order, "
    'never ordered by a score; the "all cases" row of each figure weighs every case equally.'
)
ALL_CASES = "all cases"
FOLD_ROWS = 30  # a case-by-case table longer than this is folded in the HTML report


def _cell(c: Est | str) -> str:
    return est_text(c) if isinstance(c, Est) else str(c)


def _gate_text(gate: Mapping[str, Any] | None) -> str:
    """A generator's release gate in one cell: the verdict, then each check and anything else."""
    if gate is None:
        return "—"
    parts = {True: ["passes"], False: ["does not pass"]}.get(gate["pass"], [])
    parts += [f"{fig}: {text}" for fig, _ok, text in gate["checks"]]
    parts += [f"{k}: {val}" for k, val in gate.get("other") or []]
    return " · ".join(parts) or "—"


def _counts_blocks(g: Mapping[str, Any]) -> list[Block]:
    counts = g.get("counts") or []
    if not counts:
        return []
    gates = {x["name"]: x for x in g.get("gates") or []}
    headers: tuple[str, ...] = ("generator", "items", "cases")
    if gates:
        headers += ("release gate",)
    rows = tuple(
        (
            c["name"],
            c["n_items"],
            c["n_cases"],
            *((_gate_text(gates.get(c["name"])),) if gates else ()),
        )
        for c in counts
    )
    # a generator the gate stops is what a release decision reads first
    flagged = frozenset(
        i for i, c in enumerate(counts) if gates.get(c["name"], {}).get("pass") is False
    )
    blocks: list[Block] = [Table("generatorsTable", headers, rows, flagged, frozenset({1, 2}))]
    if g.get("gate_rule") or g.get("gate_thresholds"):
        thresholds = ", ".join(f"{k} {val}" for k, val in g.get("gate_thresholds") or [])
        blocks.append(
            Note(
                f"Release gate: {g.get('gate_rule') or ''}"
                + (f"; thresholds {thresholds}" if thresholds else "")
                + ".",
                "aside",
            )
        )
    blocks += [Note(f"{k}: {val}", "aside") for k, val in g.get("other") or []]
    return blocks


def _cases_blocks(g: Mapping[str, Any]) -> list[Block]:
    figures = g.get("figures") or []
    if not figures:
        return []
    names = tuple(g.get("names") or ())
    overall = tuple((f["label"], ALL_CASES, *(_cell(c) for c in f["overall"])) for f in figures)
    rows: list[tuple[str, ...]] = []
    text = TextMemo()  # the case rows' cells: 25,000 at a million judgements
    for f, first in zip(figures, overall, strict=True):
        rows.append(first)
        rows += [text.row((f["label"], cid), cells) for cid, cells in f["rows"]]
    text.keep()
    labels = ", ".join(f["label"] for f in figures)
    numeric = frozenset(range(2, 2 + len(names)))
    # a study of many cases has a long table: the report shows each figure over all cases
    # first and folds the case rows (the app and generator_cases.csv hold every row)
    fold = f"every case ({len(rows)} rows)" if len(rows) > FOLD_ROWS else ""
    return [
        Note("Each figure case by case", "heading"),
        Note(
            f"Figures: {labels}. Per figure, the {ALL_CASES!r} row first (the mean over cases, "
            "each case weighted equally), then each of the "
            f"{len(g.get('cases') or [])} cases; a cell is the figure with its 95% interval "
            "and n.",
            "aside",
        ),
        *(
            (
                Table(
                    "generatorOverallTable",
                    ("figure", "case", *names),
                    overall,
                    numeric=numeric,
                    csv="",
                ),
            )
            if fold
            else ()
        ),
        Table(
            "generatorCasesTable",
            ("figure", "case", *names),
            tuple(rows),
            numeric=numeric,
            fold=fold,
        ),
    ]


def _clear(e: Est | str) -> bool:
    """Whether a difference's interval excludes 0."""
    return isinstance(e, Est) and (
        (e.low is not None and e.low > 0) or (e.high is not None and e.high < 0)
    )


def _differences_blocks(g: Mapping[str, Any]) -> list[Block]:
    diffs = g.get("differences") or []
    if not diffs:
        return []
    return [
        Note("Differences between generators", "heading"),
        Note(
            "Per pair of generators and figure, the first minus the second over the cases both "
            "have (each case weighted equally), with its 95% interval; a row is flagged where "
            "the interval excludes 0.",
            "aside",
        ),
        Table(
            "generatorDifferencesTable",
            ("generator pair", "figure", "difference [95%]"),
            tuple((d["pair"], d["figure"], _cell(d["difference"])) for d in diffs),
            frozenset(i for i, d in enumerate(diffs) if _clear(d["difference"])),
            frozenset({2}),
        ),
    ]


def generators_section(view: Mapping[str, Any]) -> Section:
    g = view.get(KEY)
    if not g:
        return Section(KEY, TITLE, SUBTITLE, (Note("No generator has results yet."),))
    blocks = _counts_blocks(g) + _cases_blocks(g) + _differences_blocks(g)
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))


__all__ = ["generators_section"]
