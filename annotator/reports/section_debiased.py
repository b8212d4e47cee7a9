"""The debiased section, for the dashboard, the HTML report and the CSV tables: the report's
debiased figures, items and pairs, laid out from the rows of reports/view_debiased.py, so the
app and the report cannot disagree. Its tables are formatted text: the numbers are in
`debiased.csv` (view_debiased.debiased_table), so none is written as a CSV of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .sections import Block, Note, Section, Table

KEY = "debiased"
TITLE = "Debiased generator figures (judge on every item, humans on a random sample)"
SUBTITLE = (
    "Prediction-powered inference (PPI++): the judge's figures over every item (and pair), "
    "corrected by what it gets wrong on a random human sample. The interval is never much wider "
    "than the humans' alone and narrower the better the judge. Beside the debiased estimate: "
    "humans only and judge only, the judge's error with its sign, what the judge is worth in "
    "human labels (where its weight is 0 the figure is the humans' sample alone and says \"humans "
    'only"), and how many more labels an interval of the planned width needs.'
)
HEADERS = (
    "judge",
    "generator",
    "figure",
    "debiased [95% CI]",
    "rank-set",
    "humans only",
    "judge only",
    "judge − humans",
    "worth (human labels)",
    "items",
    "more labels (plan)",
    "what the judge is worth",
)
PAIR_HEADERS = (
    "judge",
    "generator pair",
    "figure",
    "debiased [95% CI]",
    "humans only",
    "judge only",
    "judge − humans",
    "worth (human votes)",
    "pairs",
    "more votes (plan)",
    "what the judge is worth",
)
_NUMERIC = frozenset({3, 4, 5, 6, 7, 8})
# the items' table: a rank-set after the debiased figure (pairs have their strengths' ranks)
_NUMERIC_RANKED = frozenset({3, 5, 6, 7, 8, 9})


def _rows(judges: Any, ranked: bool = False) -> tuple[tuple[tuple[str, ...], ...], frozenset[int]]:
    """Table rows from the view's judges ({name, rows}); flagged: a judge error that excludes 0
    (the signed interval lies on one side). `ranked`: with each row's rank-set."""
    rows, flagged = [], set()
    for j in judges or []:
        for r in j.get("rows") or []:
            err = str(r.get("error") or "—")
            rows.append(
                (
                    str(j.get("name")),
                    str(r.get("generator")),
                    str(r.get("figure")),
                    str(r.get("debiased")),
                    *((str(r.get("rank_set") or "—"),) if ranked else ()),
                    str(r.get("humans")),
                    str(r.get("judge")),
                    err,
                    str(r.get("labels")),
                    _text(r.get("n_items")),
                    str(r.get("plan") or "—"),
                    str(r.get("value") or "—"),
                )
            )
            if _clear(err):
                flagged.add(len(rows) - 1)
    return tuple(rows), frozenset(flagged)


def _notes(judges: Any) -> list[Block]:
    """The rows' notes after the table, each once: a note every row of a judge has (a judge
    off the rubric's scale) is said once for the judge, else for each row it is on."""
    by_text: dict[str, list[tuple[str, str, str]]] = {}
    n_rows: dict[str, int] = {}
    for j in judges or []:
        name = str(j.get("name"))
        for r in j.get("rows") or []:
            n_rows[name] = n_rows.get(name, 0) + 1
            if r.get("note"):
                by_text.setdefault(str(r["note"]), []).append(
                    (name, str(r.get("generator")), str(r.get("figure")))
                )
    out: list[Block] = []
    for text, where in by_text.items():
        judges_of = sorted({w[0] for w in where})
        whole = all(sum(w[0] == j for w in where) == n_rows[j] for j in judges_of)
        who = ", ".join(judges_of) if whole else "; ".join(f"{j}, {g}, {f}" for j, g, f in where)
        out.append(Note(f"{who}: {text}.", "aside"))
    return out


def _text(x: Any) -> str:
    return "—" if x is None else str(x)


def _clear(err: str) -> bool:
    """Whether a signed interval "+0.12 [+0.05, +0.19]" excludes 0."""
    try:
        lo, hi = (float(x) for x in err.split("[", 1)[1].rstrip("]").split(","))
    except (IndexError, ValueError):
        return False
    return lo > 0 or hi < 0


STRENGTH_HEADERS = ("judge", "generator", "strength", "rank", "humans only", "rank (humans)")


def _strength_blocks(judges: Any) -> list[Block]:
    """Each judge's Bradley-Terry strengths with their rank-sets, as the report's table, after
    what each judge's fit rests on (its reference generator, pairs and weight)."""
    rows: list[tuple[str, ...]] = []
    notes: list[Block] = []
    for j in judges or []:
        s = j.get("strengths")
        if not s:
            continue
        if s.get("note"):
            notes.append(Note(f"Strengths ({j['name']}): {s['note']}"))
            continue
        notes.append(
            Note(
                f"{j['name']}: log-odds of beating {s.get('reference')} (0), from {s.get('n')} "
                f"(judge weight λ {s.get('lam')}); a rank-set is every rank the data allow, and "
                f"the {s.get('coverage')}.",
                "aside",
            )
        )
        for r in s["rows"]:
            rows.append(
                (
                    j["name"],
                    r["generator"],
                    r["strength"],
                    r["ranks"],
                    r["humans"],
                    r["humans_ranks"],
                )
            )
    if rows or notes:
        notes.insert(
            0,
            Note(
                "Generator strengths and ranks (Bradley-Terry fitted on the judge's votes, "
                "corrected by the pair sample)",
                "heading",
            ),
        )
    if rows:
        notes.append(
            Table(
                "debiasedStrengthTable",
                STRENGTH_HEADERS,
                tuple(rows),
                numeric=frozenset({2, 4}),
                csv="",  # debiased.csv: figure "bt_strength"
            )
        )
    return notes


def debiased_section(view: Mapping[str, Any]) -> Section:
    """The section: the items' table (with the summary's sentences), then the pairs' one."""
    d = view.get("debiased")
    if not d:
        return Section(KEY, TITLE, SUBTITLE, (Note("No judge scores yet."),))
    blocks: list[Block] = []
    if not d.get("recorded"):
        blocks.append(Note(str(d.get("note") or "")))
    else:
        blocks.append(Note(f"{d.get('used')}. Sample: {d.get('sample')}."))
        for line in d.get("lines") or []:
            blocks.append(Note(str(line)))
        rows, flagged = _rows(d.get("judges"), ranked=True)
        if rows:
            blocks.append(Table("debiasedTable", HEADERS, rows, flagged, _NUMERIC_RANKED, csv=""))
            blocks += _notes(d.get("judges"))
            for j in d.get("judges") or []:
                for text in j.get("ranks") or []:
                    blocks.append(Note(f"Rank-sets ({j['name']}): {text}.", "aside"))
    p = d.get("pairs")
    if p:
        blocks.append(
            Note(
                "Debiased win rates (judge on every pair, humans on a random pair sample)",
                "heading",
            )
        )
        if not p.get("recorded"):
            blocks.append(Note(f"Win rates: {p.get('note')}"))
        else:
            blocks.append(
                Note(
                    "The same correction for pairs: per generator pair, the first-named "
                    "generator's win rate (a tie counts one half) from the judge's votes on every "
                    "pair, corrected by the humans' votes on a random sample of pairs (several "
                    f"humans averaged per pair first). {p.get('used')}. Pairs sample: "
                    f"{p.get('sample')}."
                )
            )
            rows, flagged = _rows(p.get("judges"))
            if rows:
                blocks.append(
                    Table("debiasedPairsTable", PAIR_HEADERS, rows, flagged, _NUMERIC, csv="")
                )
                blocks += _notes(p.get("judges"))
            blocks += _strength_blocks(p.get("judges"))
    return Section(KEY, TITLE, SUBTITLE, tuple(blocks))
