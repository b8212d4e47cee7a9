"""Certified judging put to work: the items every judge abstained on go to raters (`annotator
assign --escalated`), and every item gets its final label with where it comes from (`annotator
export labels`, and the `labels` table of `export hf`).

The decisions are the report's (stats/certified.py), computed on the study as it is now: a
new judge version, more human answers or a changed setting move them, and the next call reads
them afresh.
"""

from __future__ import annotations

from typing import Any

from ..domain.rubric import format_value
from ..stats.certified import CONFORMAL, Certified, certify, escalated_items
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


def escalated(study: Study) -> tuple[set[int], str]:
    """The keys of the items some certified metric escalates to raters, and a line for the lead."""
    from ..store import rows as R

    study.require_lead("escalation")
    cert = certification(study)
    ids = set(escalated_items(cert.decisions))
    pks = {r.pk for r in R.items(study.db) if r.item_id in ids and not r.is_anchor}
    sec = cert.conformal if cert.conformal.get("decides") else cert.section
    split = sec.get("items") or {}
    line = (
        f"escalated: {len(pks)} items no judge may decide on some certified metric "
        f"({split.get('accepted', 0)} decided by the judges, {split.get('already_rated', 0)} "
        f"already rated; {guarantee_label(cert)})"
    )
    return pks, line


def guarantee_label(cert: Certified) -> str:
    """The guarantee the decisions were taken under, short: for the labels' `guarantee` column."""
    if cert.conformal.get("decides"):
        c = cert.conformal
        return (
            f"conformal alignment q={c.get('q'):g} (expected share of disagreements), "
            f"calibration: {c.get('calibration')}"
        )
    s = cert.section
    return (
        f"Trust or Escalate alpha={s.get('alpha'):g} delta={s.get('delta'):g}, "
        f"calibration: {s.get('calibration')}"
    )


def label_rows(study: Study) -> list[dict[str, Any]]:
    """One row per live item x certified metric: the final label and its source.

    `source`: `judge` (the judge's answer, accepted under the guarantee named in `guarantee`;
    `judge` names judge@version and `threshold` its threshold), `adjudicated` or
    `clear_consensus` (the humans' answer, as in the gold), `unresolved` (rated, no clear
    consensus: adjudicate it), or `escalated` (no judge may decide it and no human has rated
    it yet: `annotator assign --escalated`)."""
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
        row: dict[str, Any] = {
            "item_id": d.item_id,
            "case_id": case_id,
            "generator": generator,
            "metric": d.metric,
            "value": None,
            "source": d.decision,
            "judge": None,
            "confidence": None,
            "threshold": None,
            "guarantee": None,
            "mode": None,
            "n_raters": g.get("n_raters"),
        }
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
    return out


__all__ = ["certification", "escalated", "guarantee_label", "label_rows"]
