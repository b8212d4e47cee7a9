"""The pairwise section, for the dashboard, the HTML report and the CSV tables: the A/B votes
tallied per generator pair and per case, the Bradley-Terry strengths (pooled and case by case,
with their forest plot), position bias of the raters, the raters' agreement on pairs, the judges
against the human majority and the judges asked in both orders, laid out from the rows of
reports/view_study.pairwise_section_view. No CSV of the contract holds these figures, so each
table is a CSV of its own (`pairwise_generator_pairs.csv`, `pairwise_cases.csv`,
`pairwise_strengths.csv`, `pairwise_position.csv`, ...; the numbers are in report.json).
Tested in tests/unit/test_report_sections.py, tests/unit/test_reports_render.py and
tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .formatting import Est, fmt_num
from .section_judges import est_text
from .sections import Block, Chart, Note, Section, Table

KEY = "pairwise"
TITLE = "Pairwise preferences"
ALL_CASES = "all cases"
FOLD_ROWS = 30  # a case-by-case table longer than this is folded in the HTML report
TALLY_HEADERS = (
    "votes",
    "wins",
    "both good",
    "neither",
    "side chosen left / right",
    "share of votes",
)


def _subtitle(p: Mapping[str, Any]) -> str:
    least = p.get("min_count") if p.get("min_count") is not None else 10
    return (
        "A/B votes between two outputs of the same case. Which output was shown left was "
        f"randomised per vote; shares are given only from {least} votes up, below that the "
        "counts alone."
    )


def _tally(t: Mapping[str, Any]) -> tuple[str, ...]:
    """A tally's cells: votes, wins per generator, ties, sides, and the share where the report
    gives one (else why not)."""
    return (
        str(t["n"]),
        " · ".join(f"{g} {w}" for g, w in t["wins"]),
        str(t["both"]),
        str(t["neither"]),
        f"{t['left']} / {t['right']}",
        t["share"] or t["note"] or "—",
    )


def _fold(rows: Sequence[Any]) -> str:
    return f"every case ({len(rows)} rows)" if len(rows) > FOLD_ROWS else ""


def _tally_blocks(p: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    pairs = p.get("generator_pairs") or []
    numeric = frozenset({1, 2, 4, 5})
    if pairs:
        blocks += [
            Note("Votes per generator pair (pooled over cases)", "heading"),
            Table(
                "pairwiseGeneratorPairsTable",
                ("pair", "cases", *TALLY_HEADERS),
                tuple((r["pair"], str(r["n_cells"]), *_tally(r)) for r in pairs),
                numeric=numeric,
            ),
        ]
    cells = p.get("cells") or []
    if cells:
        rows = tuple((r["case_id"], r["pair"], *_tally(r)) for r in cells)
        blocks += [
            Note("Votes per case (cases alphabetical)", "heading"),
            Table(
                "pairwiseCasesTable",
                ("case", "pair", *TALLY_HEADERS),
                rows,
                numeric=frozenset({2, 4, 5}),
                fold=_fold(rows),
            ),
        ]
    return blocks


def _strength_cell(e: Est, where: str, notes: dict[str, list[str]]) -> str:
    """A strength as one cell; a note on a defined figure (why it has no interval, say) is
    kept for an aside after the table, which names each cell it is on."""
    if e.defined and e.note:
        notes.setdefault(e.note, []).append(where)
    return est_text(e)


def _strength_blocks(p: Mapping[str, Any], charts: Mapping[str, bytes]) -> list[Block]:
    bt = p.get("bradley_terry") or []
    if not bt and not p.get("bradley_terry_note"):
        return []
    blocks: list[Block] = [Note("Bradley-Terry strength", "heading")]
    if p.get("bradley_terry_note"):
        blocks.append(Note(str(p["bradley_terry_note"])))
    png = charts.get("bradley_terry")
    if png:
        blocks.append(
            Chart(
                "pairwiseStrengthChart",
                png,
                "Bradley-Terry strength per generator with 95% intervals",
                "Strength per generator on the log-odds scale (differences matter, not the "
                "zero point), strongest first, with its 95% interval and n.",
            )
        )
    notes: dict[str, list[str]] = {}
    cases = p.get("bt_cases") or []
    if cases:
        gens = tuple(p.get("bt_gens") or ())
        numeric = frozenset(range(1, 1 + len(gens)))
        overall = (
            f"{ALL_CASES} (each case weighted equally)",
            *(
                _strength_cell(e, f"{g} ({ALL_CASES})", notes)
                for g, e in zip(gens, p.get("bt_pooled") or [], strict=False)
            ),
        )
        rows = (
            overall,
            *(
                (
                    c["case_id"],
                    *(
                        _strength_cell(e, f"{g} ({c['case_id']})", notes)
                        for g, e in zip(gens, c["cells"], strict=False)
                    ),
                )
                for c in cases
            ),
        )
        fold = _fold(rows)
        blocks.append(
            Note(
                f"Per generator, the strength over {ALL_CASES} first, then case by case; a cell "
                "is the strength with its 95% interval and n (votes).",
                "aside",
            )
        )
        if fold:
            # a study of many cases: the pooled row stays in view, the case rows fold
            blocks.append(
                Table(
                    "pairwiseStrengthOverallTable",
                    ("case", *gens),
                    (overall,),
                    numeric=numeric,
                    csv="",
                )
            )
        blocks.append(
            Table("pairwiseStrengthTable", ("case", *gens), rows, numeric=numeric, fold=fold)
        )
    elif bt:
        blocks.append(
            Table(
                "pairwiseStrengthTable",
                ("generator", "strength [95%]"),
                tuple((b["name"], _strength_cell(b["est"], b["name"], notes)) for b in bt),
                numeric=frozenset({1}),
            )
        )
    blocks += [
        Note(f"{text[:1].upper()}{text[1:]}: {'; '.join(where)}.", "aside")
        for text, where in notes.items()
    ]
    return blocks


def _position_blocks(p: Mapping[str, Any]) -> list[Block]:
    pb = p.get("position_bias") or {}
    by_rater = p.get("by_rater") or []
    blocks: list[Block] = [Note("Position bias", "heading")]
    if not pb.get("present"):
        blocks.append(Note("Not reported."))
    else:
        share = f" ({pb['share_left']} left)" if pb.get("share_left") else ""
        test = f" ({pb['test']})" if pb.get("test") else ""
        text = (
            f"Of {pb['n']} decisive votes, the left output was chosen {pb['left']} times and the "
            f"right {pb['right']}{share}; p {pb['p']}{test}."
        )
        if pb.get("note"):
            note = str(pb["note"]).rstrip(".")
            text += f" {note[:1].upper()}{note[1:]}."
        blocks.append(Note(text))
        if pb.get("power"):
            blocks.append(Note(f"Not flagged does not mean fair: {pb['power']}.", "aside"))
    if not pb.get("present") and not by_rater:
        return blocks
    rows = ([pb] if pb.get("present") else []) + list(by_rater)
    holm = any(r.get("p_adjusted") for r in by_rater)
    power = any(r.get("power") and not r.get("flagged") for r in rows)
    headers: tuple[str, ...] = ("rater", "left", "right", "n", "left share", "p")
    headers += ("p (Holm)",) * holm + ("what the test can see",) * power
    blocks.append(
        Note(
            "How often the output shown on the left or the right won, over all raters and per "
            "rater (binomial test against 50 / 50); a rater whose test says they favour a side "
            "is flagged.",
            "aside",
        )
    )
    blocks.append(
        Table(
            "pairwisePositionTable",
            headers,
            tuple(
                (
                    r["name"],
                    r["left"],
                    r["right"],
                    r["n"],
                    r["share_left"] or "—",
                    r["p"],
                    *((r["p_adjusted"] or "—",) if holm else ()),
                    *(
                        (r["power"] if r.get("power") and not r.get("flagged") else "—",)
                        if power
                        else ()
                    ),
                )
                for r in rows
            ),
            frozenset(i for i, r in enumerate(rows) if r.get("flagged")),
            frozenset({1, 2, 3, 4, 5, 6} if holm else {1, 2, 3, 4, 5}),
        )
    )
    if by_rater and p.get("multiplicity"):
        blocks.append(Note(str(p["multiplicity"]), "aside"))
    return blocks


def _kv_text(rows: Sequence[tuple[str, str]]) -> str:
    return " · ".join(f"{k}: {val}" for k, val in rows)


def _agreement_blocks(p: Mapping[str, Any]) -> list[Block]:
    alpha: Est | None = p.get("rater_alpha")
    blocks: list[Block] = [
        Note("Agreement among raters on pairs", "heading"),
        Note(f"alpha {est_text(alpha) if alpha is not None else '—'}"),
    ]
    if p.get("rater_alpha_meta"):
        blocks.append(Note(_kv_text(p["rater_alpha_meta"]), "aside"))
    kappas = p.get("rater_kappas") or []
    if kappas:
        blocks.append(
            Table(
                "pairwiseRaterKappasTable",
                ("rater pair", "Cohen's kappa [95%]"),
                tuple((f"{k['a']} · {k['b']}", est_text(k["est"])) for k in kappas),
                numeric=frozenset({1}),
            )
        )
    if p.get("flagged_raters"):
        blocks.append(Note("Flagged for position bias: " + ", ".join(p["flagged_raters"]) + "."))
    if p.get("majority_counts"):
        blocks += [
            Note("Human majority per pair", "heading"),
            Table(
                "pairwiseMajorityTable",
                ("majority", "pairs"),
                tuple((str(k), str(val)) for k, val in p["majority_counts"]),
                numeric=frozenset({1}),
            ),
        ]
    return blocks


def _judge_blocks(p: Mapping[str, Any]) -> list[Block]:
    judges = p.get("judges") or []
    if not judges:
        return []
    rows: list[tuple[str, ...]] = []
    flagged: set[int] = set()
    others: list[Block] = []
    for j in judges:
        pb = j.get("position_bias")
        if pb and pb.get("flagged"):
            flagged.add(len(rows))
        rows.append(
            (
                j["name"],
                fmt_num(j.get("n")),
                est_text(j["agreement"]),
                est_text(j["kappa"]),
                j["macro_f1"],
                j["n_no_majority"],
                j["n_without_humans"],
                f"{pb['left']} / {pb['right']} p {pb['p']}" if pb else "—",
            )
        )
        if j.get("other"):
            others.append(Note(f"{j['name']}: {_kv_text(j['other'])}", "aside"))
    return [
        Note("Judges on pairs (against the human majority of each pair)", "heading"),
        Note(
            "Agreement and kappa against the human majority of each pair; the judge's left / "
            "right is how often it chose the output shown on each side (a judge whose test says "
            "it favours a side is flagged).",
            "aside",
        ),
        Table(
            "pairwiseJudgesTable",
            (
                "judge",
                "pairs",
                "agreement with majority",
                "kappa vs majority",
                "macro F1",
                "no majority",
                "no human votes",
                "judge's left / right",
            ),
            tuple(rows),
            frozenset(flagged),
            frozenset({1, 2, 3, 4, 5, 6}),
        ),
        *others,
    ]


def _swap_blocks(view: Mapping[str, Any]) -> list[Block]:
    swaps = view.get("judge_swaps") or []
    if not swaps:
        return []
    with_note = any(s.get("note") for s in swaps)
    rows = tuple(
        (
            s["judge"],
            "—" if s["n_pairs"] is None else str(s["n_pairs"]),
            est_text(s["consistency"]),
            str(s["left_left"]),
            str(s["right_right"]),
            s["p"],
            ("prefers left" if s["left_left"] > s["right_right"] else "prefers right")
            if s["flagged"]
            else "—",
            *((str(s.get("note") or "—"),) if with_note else ()),
        )
        for s in swaps
    )
    return [
        Note("Judges asked in both orders (A|B and B|A)", "heading"),
        Note(
            "Consistent: both votes pick the same output (or the same tie). Among inconsistent "
            "pairs with two decisive votes, left-left against right-right is the judge's "
            "position bias (exact binomial test, 5%; a judge that prefers a side is flagged); "
            "in the agreement above an inconsistent pair counts as a tie.",
            "aside",
        ),
        Table(
            "pairwiseJudgeSwapsTable",
            (
                "judge",
                "pairs",
                "swap consistency [95%]",
                "left-left",
                "right-right",
                "p",
                "position bias",
                *(("note",) if with_note else ()),
            ),
            rows,
            frozenset(i for i, s in enumerate(swaps) if s["flagged"]),
            frozenset({1, 2, 3, 4, 5}),
        ),
    ]


def _method_blocks(p: Mapping[str, Any]) -> list[Block]:
    rows = tuple(
        (str(k), str(val)) for k, val in [*(p.get("settings") or []), *(p.get("other") or [])]
    )
    if not rows:
        return []
    return [Note("Method", "heading"), Table("pairwiseMethodTable", ("setting", "value"), rows)]


def pairwise_section(view: Mapping[str, Any]) -> Section:
    p = view.get(KEY)
    if not p:
        return Section(KEY, TITLE, "", (Note("No pair votes yet."),))
    note = (Note(str(p["note"])),) if p.get("note") else ()
    if p.get("empty"):
        return Section(KEY, TITLE, "", (Note("No pair votes in this study yet."), *note))
    blocks: list[Block] = [
        *note,
        *_tally_blocks(p),
        *_strength_blocks(p, p.get("charts") or {}),
        *_position_blocks(p),
        *_agreement_blocks(p),
        *_judge_blocks(p),
        *_swap_blocks(p),
        *_method_blocks(p),
    ]
    return Section(KEY, TITLE, _subtitle(p), tuple(blocks))


__all__ = ["pairwise_section"]
