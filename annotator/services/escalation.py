"""Certified judging put to work: the items (and pairs) every judge abstained on go to raters
(`annotator assign --escalated`), and every item and pair gets its final label with where it
comes from (`annotator export labels`, and the `labels` table of `export hf`).

The decisions are the report's (stats/certified.py), computed on the study as it is now: a
new judge version, more human answers or a changed setting move them, and the next call reads
them afresh.
"""

from __future__ import annotations

from typing import Any

from ..domain.rubric import format_value
from ..stats.certified import CONFORMAL, Certified, certify, escalated_ids
from ..stats.certified_pairs import METRIC as PAIR_METRIC
from .study import Study


def certification(study: Study) -> Certified:
    """The study's certification now (the report's `certified` section and its decisions)."""
    from ..stats.answers import human_answers, item_table
    from ..stats.consensus import metric_specs
    from .reporting import study_frames

    frames = study_frames(study)
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    return certify(frames, items, specs, human_answers(frames, specs, items))


def escalated(study: Study) -> tuple[set[int], set[int], str]:
    """The keys of the items some certified metric escalates to raters, of the pairs no judge
    may decide and no human has voted on, and the lines for the lead."""
    from ..store import rows as R
    from ..store.pairs import pair_rows

    study.require_lead("escalation")
    cert = certification(study)
    ids = set(escalated_ids(cert.decisions))
    pks = {r.pk for r in R.items(study.db) if r.item_id in ids and not r.is_anchor}
    sec = cert.conformal if cert.conformal.get("decides") else cert.section
    split = sec.get("items") or {}
    line = (
        f"escalated: {len(pks)} items no judge may decide on some certified metric "
        f"({split.get('accepted', 0)} decided by the judges, {split.get('already_rated', 0)} "
        f"already rated; {guarantee_label(cert)})"
    )
    pair_ids = set(escalated_ids(cert.pair_decisions, "pair_id"))
    pair_pks = {pk for pk, pid, _a, _b in pair_rows(study.db) if pid in pair_ids}
    pairs = cert.section.get("pairs")
    if pairs:
        line += (
            f"\nescalated: {len(pair_pks)} pairs no judge may decide ({pairs['accepted']} decided "
            f"by the judges, {pairs['already_rated']} already voted on; "
            f"{guarantee_label(cert, pairs=True)})"
        )
    return pks, pair_pks, line


def guarantee_label(cert: Certified, *, pairs: bool = False) -> str:
    """The guarantee the decisions were taken under, short: for the labels' `guarantee` column.
    `pairs`: the pair decisions', always the PAC rule's (stats/certified_pairs.py)."""
    if cert.conformal.get("decides") and not pairs:
        c = cert.conformal
        return (
            f"conformal alignment q={c.get('q'):g} (expected share of disagreements), "
            f"calibration: {c.get('calibration')}"
        )
    s = cert.section
    calibration = (s.get("pairs") or {}).get("calibration") if pairs else s.get("calibration")
    return (
        f"Trust or Escalate alpha={s.get('alpha'):g} delta={s.get('delta'):g}, "
        f"calibration: {calibration}"
    )


def label_rows(study: Study) -> list[dict[str, Any]]:
    """One row per live item x certified metric: the final label and its source.

    `source`: `judge` (the judge's answer, accepted under the guarantee named in `guarantee`;
    `judge` names judge@version and `threshold` its threshold), `adjudicated` or
    `clear_consensus` (the humans' answer, as in the gold), `unresolved` (rated, no clear
    consensus: adjudicate it), or `escalated` (no judge may decide it and no human has rated
    it yet: `annotator assign --escalated`). Then one row per pair (`pair_label_rows`)."""
    from .adjudication import gold_rows

    study.require_lead("the labels")
    cert = certification(study)
    gold = {(g["item_id"], g["metric"]): g for g in gold_rows(study)}
    meta = {g["item_id"]: (g["case_id"], g["generator"]) for g in gold.values()}
    under = guarantee_label(cert)
    mode = CONFORMAL if cert.conformal.get("decides") else "pac"
    out = []
    for d in cert.decisions.itertuples(index=False):
        g = gold.get((d.item_id, d.metric), {})
        case_id, generator = meta.get(d.item_id, (None, None))
        row = _label_row(
            item_id=d.item_id,
            case_id=case_id,
            generator=generator,
            metric=d.metric,
            source=d.decision,
            n_raters=g.get("n_raters"),
        )
        if d.decision == "accepted":
            row.update(
                value=format_value(d.value),
                source="judge",
                judge=f"{d.judge}@{d.version}",
                confidence=d.confidence,
                threshold=d.threshold,
                guarantee=under,
                mode=mode,
            )
        elif d.decision == "rated":
            row.update(value=g.get("value"), source=g.get("source") or "unresolved")
        out.append(row)
    return out + pair_label_rows(study, cert)


# the columns of `export labels`, in order: an item's row leaves the pair's empty and back
LABEL_COLUMNS = (
    "item_id",
    "case_id",
    "generator",
    "metric",
    "value",
    "source",
    "judge",
    "confidence",
    "threshold",
    "guarantee",
    "mode",
    "n_raters",
)


def _label_row(**given: Any) -> dict[str, Any]:
    """One row of the label export: every column, None where not given (a pair's row adds its
    pair_id, item_a and item_b after them)."""
    return {c: given.pop(c, None) for c in LABEL_COLUMNS} | given


def pair_label_rows(study: Study, cert: Certified) -> list[dict[str, Any]]:
    """One row per pair a judge or a human voted on: the winner (`value`: the winning item's
    id, or `both` / `neither` for a tie; `generator`: the winning generator) and its source:
    `judge` (judge@version, accepted under the guarantee named), `clear_consensus` (the humans'
    unique most frequent vote), `unresolved` (humans voted, no clear majority) or `escalated`."""
    from ..store.judge_store import latest_pair_run_version

    if not len(cert.pair_decisions):
        return []
    frames_votes = _human_voters(study)
    version: dict[str, str] = {}
    under = guarantee_label(cert, pairs=True)
    out = []
    for d in cert.pair_decisions.itertuples(index=False):
        code = d.code
        winner = {"a": d.item_a, "b": d.item_b}.get(code, code)
        gen = {"a": d.gen_a, "b": d.gen_b}.get(code)
        row = _label_row(
            case_id=d.case_id,
            generator=gen,
            metric=PAIR_METRIC,
            value=winner,
            source=d.decision,
            n_raters=frames_votes.get(str(d.pair_id), 0),
            pair_id=d.pair_id,
            item_a=d.item_a,
            item_b=d.item_b,
        )
        if d.decision == "accepted":
            if d.judge not in version:
                version[d.judge] = latest_pair_run_version(study.db, d.judge)
            row.update(
                source="judge",
                judge=f"{d.judge}@{version[d.judge]}",
                confidence=d.confidence,
                threshold=d.threshold,
                guarantee=under,
                mode="pac",
            )
        elif d.decision == "rated":
            row.update(source="clear_consensus" if code is not None else "unresolved")
        out.append(row)
    return out


def _human_voters(study: Study) -> dict[str, int]:
    """Per pair id, how many raters (operators not counted) voted on it."""
    from ..store import rows as R

    n: dict[str, int] = {}
    for v in R.pair_votes(study.db):
        if not v.is_judge:
            n[str(v.pair_id)] = n.get(str(v.pair_id), 0) + 1
    return n


__all__ = ["certification", "escalated", "guarantee_label", "label_rows", "pair_label_rows"]
