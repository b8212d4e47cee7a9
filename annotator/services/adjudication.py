"""Adjudication: from published disagreement to a resolved gold set and a better anchor set.

The review queue lists what needs the lead's decision, item by item and metric by
metric: where the humans disagree (no clear consensus), where a judge contradicts
a clear human consensus, and where a rater said "cannot judge". The lead's answer
is a row of its own (`adjudications`), beside the raters' judgements, never over
them; agreement is always computed on the raters' own answers.

Whether the humans agree clearly, and whether a judge contradicts them, is the report's rule
(stats/consensus.py), read through stats/review.py: the queue's "judge_contradicts" is the
report's findings, item by item and judge by judge, and its clear consensus is the gold's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..domain.clear_consensus import CLEAR_SHARE, MIN_HUMANS, SCALE_GAP
from ..domain.errors import InputError
from ..domain.kinds import CANNOT_JUDGE
from ..domain.rubric import Metric, format_value
from ..domain.text import check_name, check_text
from ..store import adjudication as store
from ..store import rows as R
from .study import DEFAULT_SETTINGS, Study

if TYPE_CHECKING:  # pandas and the statistics load on the worker, not with the view's import
    from ..stats.review import ReviewFigures

CATEGORIES = ("rubric_unclear", "rater_error", "judge_error", "ambiguous_item", "other")
DEFAULT_ADJUDICATOR = "lead"


def _key(value: Any) -> str:
    """A comparable form of one answer (tags: the set, sorted)."""
    return format_value(tuple(sorted(value)) if isinstance(value, (list, tuple)) else value)


@dataclass(frozen=True)
class Consensus:
    """What the human answers on one item x metric say by themselves."""

    value: Any  # the clear answer, or None
    clear: bool
    n: int  # answers that are not "cannot judge"
    n_cannot_judge: int
    spread: float  # 1 - top share (nominal; multi-select: its least agreed option) or max - min
    rule: str


NO_ANSWER = Consensus(None, False, 0, 0, 0.0, "no answer")


def consensus(metric: Metric, answers: list[Any]) -> Consensus:
    """The consensus of one item's human answers on one metric, by the report's rule
    (stats/consensus.metric_consensus)."""
    import pandas as pd

    from ..stats import consensus as rule

    specs = rule.specs_of(metric)
    codes = rule.encode_series(specs, pd.Series(list(answers), dtype=object))
    idx = [0] * len(answers)
    cons = {
        s.key: rule.consensus(pd.DataFrame({"idx": idx, "code": codes[s.key]}), s) for s in specs
    }
    table = rule.metric_consensus(specs, cons)
    return _consensus(metric, table.iloc[0]) if len(table) else NO_ANSWER


def _consensus(metric: Metric, row: Any) -> Consensus:
    """A row of metric_consensus() as the queue shows it, with the rule it was decided by."""
    n, n_cj, clear = int(row["n"]), int(row["n_cannot_judge"]), bool(row["clear"])
    if not n:
        return Consensus(None, False, 0, n_cj, 0.0, "no answer")
    if metric.spec.ordered:
        spread = float(row["spread"])
        rule = f"range {spread:g} {'<' if clear else '>='} {SCALE_GAP:g} points"
        return Consensus(row["value"], clear, n, n_cj, spread, rule)
    share = float(row["share"])
    # a multi-select metric: its least agreed-upon option's share (each option is its question)
    which = " on the least agreed option" if metric.spec.multi else ""
    rule = f"{share:.0%} agree{which} ({'>=' if clear else '<'} {CLEAR_SHARE:.0%})"
    return Consensus(row["value"], clear, n, n_cj, 1 - share, rule)


def _figures(study: Study, *, judges: bool) -> tuple[Any, ReviewFigures]:
    """The study's frames and what the queue and the gold read from them."""
    from ..stats.review import review_figures
    from .frames import build_frames  # pandas: on the worker, not with the view's import

    frames = build_frames(
        study.db, study.rubric, study.name, {**DEFAULT_SETTINGS, **study.db.all_settings()}
    )
    return frames, review_figures(frames, judges=judges)


@dataclass
class ReviewEntry:
    item_id: str
    case_id: str
    generator: str
    metric: str
    reasons: list[str]  # humans_disagree | judge_contradicts | cannot_judge
    consensus: Consensus
    humans: list[dict[str, Any]] = field(default_factory=list)  # {rater, value, reason}
    # {judge, value, reason, contradicts}: contradicts when the report lists it as a finding
    judges: list[dict[str, Any]] = field(default_factory=list)
    adjudicated: dict[str, Any] | None = None
    systematic: bool = False

    @property
    def priority(self) -> tuple:
        # systematic findings first, then judge contradictions, then by spread
        return (
            not self.systematic,
            "judge_contradicts" not in self.reasons,
            -self.consensus.spread,
            self.case_id,
            self.item_id,
            self.metric,
        )


def review_queue(
    study: Study,
    *,
    metric: str | None = None,
    generator: str | None = None,
    case: str | None = None,
    rater: str | None = None,
    report: dict[str, Any] | None = None,
    include_resolved: bool = True,
) -> list[ReviewEntry]:
    """What needs a decision, sorted by what matters; filters narrow it (the lead's view: names
    of raters and generators are shown).

    Systematic findings come first: they are read from `report`, or else from the last report
    kept for the study (`annotator report` or the dashboard keeps one), so the queue itself never
    pays for a report."""
    study.require_lead("the review queue")
    if report is None:
        from .report_cache import last_report

        report = last_report(study)
    rubric = study.rubric
    frames, figures = _figures(study, judges=True)
    items = frames.items.set_index("item_id")
    # per rubric metric: a tags metric's findings are per tag ("failure_tags:broken_layout")
    contradicting = {
        (f["item_id"], f["metric"].split(":", 1)[0], f["judge_name"]) for f in figures.findings
    }
    systematic = {
        (f["metric"].split(":", 1)[0], f["judge_name"])
        for f in (report or {}).get("systematic_findings", [])
    }
    done = {(a.item_id, a.metric): a for a in store.rows(study.db)}
    human = frames.judgements
    judge = frames.judge_scores
    out: list[ReviewEntry] = []
    for m in rubric.judged_metrics:
        h = human[human["metric"] == m.key]
        j = judge[judge["metric"] == m.key]
        j_by = {iid: g for iid, g in j.groupby("item_id")} if len(j) else {}
        table = figures.consensus[m.key]
        for iid, g in h.groupby("item_id"):
            if iid not in items.index:
                continue
            row = items.loc[iid]
            c = _consensus(m, table.loc[iid]) if iid in table.index else NO_ANSWER
            reasons = []
            if c.n >= MIN_HUMANS and not c.clear:
                reasons.append("humans_disagree")
            if c.n_cannot_judge:
                reasons.append("cannot_judge")
            judges = []
            for jn, jv, jr in (
                zip(j_by[iid]["judge"], j_by[iid]["value"], j_by[iid]["reason"], strict=True)
                if iid in j_by
                else ()
            ):
                contradicts = (iid, m.key, jn) in contradicting
                judges.append(
                    {"judge": jn, "value": _key(jv), "reason": jr, "contradicts": contradicts}
                )
                if contradicts and "judge_contradicts" not in reasons:
                    reasons.append("judge_contradicts")
            adj = done.get((iid, m.key))
            if not reasons or (adj is not None and not include_resolved):
                continue
            out.append(
                ReviewEntry(
                    str(iid),
                    str(row["case_id"]),
                    str(row["generator"]),
                    m.key,
                    reasons,
                    c,
                    [
                        {"rater": r, "value": _key(v), "reason": rs}
                        for r, v, rs in sorted(
                            zip(g["rater"], g["value"], g["reason"], strict=True)
                        )
                    ],
                    judges,
                    None if adj is None else _adjudicated(adj),
                    any((m.key, x["judge"]) in systematic for x in judges),
                )
            )
    narrowed = (
        e
        for e in out
        if entry_matches(e, metric=metric, generator=generator, case=case, rater=rater)
    )
    return sorted(narrowed, key=lambda e: e.priority)


def entry_matches(
    entry: ReviewEntry,
    *,
    metric: str | None = None,
    generator: str | None = None,
    case: str | None = None,
    rater: str | None = None,
) -> bool:
    """`review_queue`'s filters (the review view narrows its list with them without reading the
    study again)."""
    return (
        (not metric or entry.metric == metric)
        and (not generator or entry.generator == generator)
        and (not case or entry.case_id == case)
        and (not rater or any(h["rater"] == rater for h in entry.humans))
    )


def review_screen(study: Study) -> tuple[list[ReviewEntry], dict[str, Any]]:
    """The whole review queue (resolved entries included) and what each entry's item shows
    (``ItemView`` by item_id): what the lead's review view reads in one go."""
    entries = review_queue(study)
    views = study.views_of(sorted({e.item_id for e in entries})) if entries else {}
    return entries, views


def current_adjudication(study: Study, item_id: str, metric: str) -> dict[str, Any] | None:
    """The adjudication in force on one item x metric, shaped as `ReviewEntry.adjudicated`."""
    study.require_lead("the review queue")
    found = [a for a in store.rows(study.db) if a.item_id == item_id and a.metric == metric]
    return _adjudicated(found[-1]) if found else None


def _adjudicated(adj: store.AdjudicationRow) -> dict[str, Any]:
    return {"value": _key(adj.value), "reason": adj.reason, "by": adj.by, "category": adj.category}


def adjudicate(
    study: Study,
    *,
    item_id: str,
    metric: str,
    value: str,
    reason: str,
    by: str | None = None,
    category: str | None = None,
) -> int:
    """Record the lead's resolved answer (a new row; a later one supersedes it)."""
    study.require_lead("adjudication")
    rubric = study.rubric
    if not rubric.has(metric) or not rubric.metric(metric).judgeable:
        judged = ", ".join(m.key for m in rubric.judged_metrics)
        raise InputError(
            f"'{metric}' is not a judged metric of rubric '{rubric.id}' (one of {judged})",
            field="--metric",
        )
    m = rubric.metric(metric)
    typed = m.spec.parse_value(m, value, source="--value")
    if typed == CANNOT_JUDGE and not m.accepts_cannot_judge:
        raise InputError(f"'{metric}' does not take cannot_judge", field="--value")
    reason = check_text(reason.strip(), "the reason", field="--reason")
    if not reason:
        raise InputError("an adjudication needs its reason (what decided it)", field="--reason")
    if category is not None and category not in CATEGORIES:
        raise InputError(
            f"category '{category}' is not one of {', '.join(CATEGORIES)}", field="--category"
        )
    who = check_name(by or DEFAULT_ADJUDICATOR, "the adjudicator", field="--by")
    return store.add(
        study.db,
        item_id=item_id,
        metric=metric,
        value=m.spec.to_json(typed),
        reason=reason,
        category=category,
        by=who,
    )


# ---- gold -------------------------------------------------------------------------------------


def gold_rows(study: Study) -> list[dict[str, Any]]:
    """One row per live item x judged metric: the final answer and where it comes from."""
    study.require_lead("the gold set")
    rubric = study.rubric
    frames, figures = _figures(study, judges=False)
    adjudicated = {(a.item_id, a.metric): a for a in store.rows(study.db)}
    human = (
        {k: g for k, g in frames.judgements.groupby(["item_id", "metric"])}
        if len(frames.judgements)
        else {}
    )
    judge = (
        {k: g for k, g in frames.judge_scores.groupby(["item_id", "metric"])}
        if len(frames.judge_scores)
        else {}
    )
    out = []
    for it in frames.items.itertuples(index=False):
        for m in rubric.judged_metrics:
            g = human.get((it.item_id, m.key))
            answers = (
                [] if g is None else list(zip(g["rater"], g["value"], g["reason"], strict=True))
            )
            table = figures.consensus[m.key]
            c = _consensus(m, table.loc[it.item_id]) if it.item_id in table.index else NO_ANSWER
            adj = adjudicated.get((it.item_id, m.key))
            if adj is not None:
                value, source = _key(adj.value), "adjudicated"
            elif c.clear:
                value, source = _key(c.value), "clear_consensus"
            else:
                value, source = None, "unresolved"
            jg = judge.get((it.item_id, m.key))
            out.append(
                {
                    "item_id": it.item_id,
                    "case_id": it.case_id,
                    "generator": it.generator,
                    "metric": m.key,
                    "value": value,
                    "source": source,
                    "n_raters": c.n + c.n_cannot_judge,
                    "answers": json.dumps(
                        [{"rater": r, "value": _key(v), "reason": rs} for r, v, rs in answers],
                        ensure_ascii=False,
                    ),
                    "judge": None
                    if jg is None
                    else json.dumps(
                        [
                            {"judge": n, "value": _key(v), "reason": r}
                            for n, v, r in zip(jg["judge"], jg["value"], jg["reason"], strict=True)
                        ],
                        ensure_ascii=False,
                    ),
                    "adjudication_reason": adj.reason if adj else None,
                    "adjudicated_by": adj.by if adj else None,
                    "category": adj.category if adj else None,
                }
            )
    return out


# ---- anchors ------------------------------------------------------------------------------------


def promote(
    study: Study, *, item_id: str, rationale: str | None = None, anchor_set: str | None = None
) -> tuple[str, int]:
    """The item's final answers (adjudicated, else clear consensus) become an anchor's reference and
    the adjudication reasons its rationale, in a new version of the study's anchor set."""
    study.require_lead("promoting an anchor")
    rubric = study.rubric
    rows = [r for r in gold_rows(study) if r["item_id"] == item_id]
    if not rows:
        raise InputError(f"no live item '{item_id}' in this study", field="--item")
    reference: dict[str, Any] = {}
    why: dict[str, str] = {}
    for r in rows:
        m = rubric.metric(r["metric"])
        if r["value"] is None:
            if m.spec.multi:
                reference[m.key] = []
                continue
            raise InputError(
                f"'{item_id}' has no final answer on '{m.key}' (neither adjudicated nor a clear "
                f"consensus): adjudicate it first",
                field="--item",
            )
        reference[m.key] = m.spec.to_json(m.spec.parse_value(m, r["value"]))
        text = r["adjudication_reason"] or rationale or f"clear consensus of {r['n_raters']} raters"
        why[m.key] = text
    names = sorted(store.versions(study.db)) or ["promoted"]
    return store.promote(
        study.db,
        item_id=item_id,
        anchor_set=anchor_set or names[0],
        reference=reference,
        rationale=why,
    )


def export_anchors(study: Study, out: str | Path, *, anchor_set: str | None = None) -> Path:
    """The study's anchor set in the shipped format (anchors/README.md): anchors.jsonl, images/ with
    neutral names, and a README; ready to import into the next study."""
    from ..store.anchors import anchors as anchor_rows

    study.require_lead("exporting anchors")
    folder = Path(out)
    if folder.exists() and any(folder.iterdir()):
        raise InputError(
            "the folder is not empty; export the anchor set into a new folder",
            source=str(folder),
            field="--out",
        )
    rows = anchor_rows(study.db, anchor_set)
    if not rows:
        raise InputError("this study has no anchors to export", field="anchors")
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    records = {r.pk: r for r in R.items(study.db)}
    for n, (pk, _set, ref, rat) in enumerate(rows, start=1):
        view = study.views_of([records[pk].item_id])[records[pk].item_id]
        names = []
        for k, sha in enumerate(view.outputs):
            name = f"images/anchor-{n:02d}{'' if k == 0 else f'-{k + 1}'}.png"
            (folder / name).write_bytes(study.media.read(sha))
            names.append(name)
        inputs = []
        for k, sha in enumerate(view.inputs):
            name = f"images/anchor-{n:02d}-input-{k + 1}.png"
            (folder / name).write_bytes(study.media.read(sha))
            inputs.append(name)
        mask = None
        if view.mask:
            mask = f"images/anchor-{n:02d}-mask.png"
            (folder / mask).write_bytes(study.media.read(view.mask))
        lines.append(
            {
                "item_id": f"anchor-{n:02d}",
                "case_id": records[pk].case_id,
                "prompt": view.prompt,
                "criteria": view.criteria or None,
                "generator": records[pk].generator,
                "images": names,
                "inputs": inputs,
                "mask": mask,
                "text": view.text,
                "reference": ref,
                "rationale": rat,
            }
        )
    (folder / "anchors.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    versions = store.versions(study.db)
    (folder / "README.md").write_text(
        f"# Anchor set exported from study {study.name}\n\n{len(lines)} anchors for rubric `{study.rubric.id}` "
        f"({', '.join(f'{k} v{v}' for k, v in sorted(versions.items()))}). Format: anchors/README.md of "
        "annotator. Import with `annotator import anchors anchors.jsonl --study STUDY`.\n",
        encoding="utf-8",
    )
    return folder
