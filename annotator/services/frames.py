"""The tidy StudyFrames the statistics read, built from the store's plain rows:
current answers only, operators removed, anchors kept apart from live items."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import closing
from typing import Any

import pandas as pd

from ..domain.rubric import Rubric
from ..stats import frames as F
from ..store import rows as R
from ..store.adjudication import rows as adjudication_rows
from ..store.db import StudyDB


def _anchor_answers(
    rows: list[R.JudgementRow], rubric: Rubric, refs: dict[int, dict], item_ids: dict[int, str]
) -> pd.DataFrame:
    """Answers on anchors with their reference; seq numbers a rater's live anchor answers in order."""
    out = []
    seq: dict[str, int] = {}
    for j in rows:
        ref = refs.get(j.item_pk)
        if ref is None:
            continue
        ctx = "live" if j.context == "anchor" else "calibration"
        n = None
        if ctx == "live":
            n = seq.get(j.rater, 0)
            seq[j.rater] = n + 1
        for key, value in j.answers.items():
            # anchors score the metrics with a reference answer (tags are feedback only)
            if not rubric.has(key) or not (
                rubric.metric(key).judgeable and rubric.metric(key).accepts_cannot_judge
            ):
                continue
            item_id = item_ids[j.item_pk]
            out.append(
                (
                    j.rater,
                    item_id,
                    item_id,
                    key,
                    value,
                    ref.get(key),
                    n,
                    j.session_pk,
                    j.created_at,
                    ctx,
                )
            )
    return pd.DataFrame(out, columns=F.ANCHOR_COLUMNS)


def rater_anchor_frames(
    db: StudyDB, rubric: Rubric, rater: str, study_name: str = ""
) -> F.StudyFrames:
    """Only one rater's anchor answers: what the drift check at an item boundary needs."""
    rows = list(R.judgements(db, ("anchor", "calibration"), rater=rater))
    answers = _anchor_answers(rows, rubric, R.anchor_references(db), R.anchor_labels(db))
    return F.StudyFrames(study=study_name, rubric=rubric, anchor_answers=answers)


def version_order(scores: list[Any]) -> dict[tuple[str, str], int]:
    """Each (judge, version)'s rank among that judge's versions, 0 for the oldest: versions in
    the order they first ran (runs are numbered in order)."""
    first_run: dict[tuple[str, str], int] = {}
    for sc in scores:
        key = (sc.judge, sc.version)
        first_run[key] = min(first_run.get(key, sc.run_pk), sc.run_pk)
    return {
        key: rank
        for judge in {j for j, _ in first_run}
        for rank, key in enumerate(
            sorted((k for k in first_run if k[0] == judge), key=first_run.__getitem__)
        )
    }


def latest_versions(scores: list[Any]) -> dict[str, str]:
    """{judge: its latest version}: the one today's figures and exports read."""
    latest: dict[str, tuple[int, str]] = {}
    for (judge, version), rank in version_order(scores).items():
        if rank >= latest.get(judge, (-1, ""))[0]:
            latest[judge] = (rank, version)
    return {judge: version for judge, (_rank, version) in latest.items()}


def live_rows(
    stream: Iterable[R.JudgementRow],
    by_pk: dict[int, R.ItemRow],
    judged: dict[str, Any],
    answered: list[tuple[int, int | None]] | None = None,
    jids: list[int] | None = None,
    skipped: list[int] | None = None,
) -> list[tuple[Any, ...]]:
    """One row per (answer, judged metric) of live items, with each answer's place in its
    session. `answered` collects (id, session) of every live answer read, `jids` the answer id
    of each row and `skipped` the ids of answers on anchors: what a live refresh (live_frames)
    needs to update the rows in place."""
    rows = []
    session_pos: dict[int, int] = {}
    for j in stream:
        it = by_pk[j.item_pk]
        if it.is_anchor:
            if skipped is not None:
                skipped.append(j.id)
            continue
        if answered is not None:
            answered.append((j.id, j.session_pk))
        pos = None
        if j.session_pk is not None:
            pos = session_pos.get(j.session_pk, 0)
            session_pos[j.session_pk] = pos + 1
        for key, value in j.answers.items():
            m = judged.get(key)
            if m is None:
                continue
            rows.append(
                (
                    it.item_id,
                    j.rater,
                    key,
                    m.spec.from_json(value),
                    j.reason,
                    j.created_at,
                    j.session_pk,
                    pos,
                )
            )
            if jids is not None:
                jids.append(j.id)
    return rows


def item_frame(item_rows: list[R.ItemRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (r.item_id, r.display_code, r.case_id, r.cell_pk, r.generator, r.slice)
            for r in item_rows
            if not r.is_anchor
        ],
        columns=F.ITEM_COLUMNS,
    )


def judge_frames(db: StudyDB, by_pk: dict[int, R.ItemRow]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(judge_scores: each judge's latest version, judge_score_versions: every version)."""

    def typed(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    scores = [sc for sc in R.judge_scores(db) if not by_pk[sc.item_pk].is_anchor]
    # a judge's versions in the order they first ran; today's figures read the latest one
    order = version_order(scores)
    latest = latest_versions(scores)
    vrows = [
        (
            by_pk[sc.item_pk].item_id,
            sc.judge,
            sc.metric,
            typed(sc.value),
            sc.reason,
            sc.version,
            order[(sc.judge, sc.version)],
            sc.confidence,
        )
        for sc in scores
    ]
    versions = pd.DataFrame(vrows, columns=F.JUDGE_VERSION_COLUMNS)
    latest_scores = pd.DataFrame(
        [r[:5] for r in vrows if latest[r[1]] == r[5]], columns=F.JUDGE_COLUMNS
    )
    return latest_scores, versions


def anchor_frame(
    db: StudyDB, rubric: Rubric, by_pk: dict[int, R.ItemRow], unreadable: list[int]
) -> pd.DataFrame:
    anchor_rows = list(R.judgements(db, ("anchor", "calibration"), unreadable=unreadable))
    return _anchor_answers(
        anchor_rows, rubric, R.anchor_references(db), {pk: r.item_id for pk, r in by_pk.items()}
    )


def adjudication_frame(db: StudyDB, judged: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (
                a.item_id,
                a.metric,
                judged[a.metric].spec.from_json(a.value) if a.metric in judged else a.value,
                a.reason,
                a.category,
                a.by,
                a.created_at,
            )
            for a in adjudication_rows(db)
        ],
        columns=F.ADJUDICATION_COLUMNS,
    )


def pair_frames(db: StudyDB, by_pk: dict[int, R.ItemRow]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the raters' pair votes, the judges')."""
    human: list[tuple[Any, ...]] = []
    judge: list[tuple[Any, ...]] = []
    for v in R.pair_votes(db):
        left, right = by_pk[v.item_left], by_pk[v.item_right]
        row = (
            v.pair_id,
            left.case_id,
            left.item_id,
            right.item_id,
            left.generator,
            right.generator,
            v.rater,
            v.choice,
            v.created_at,
        )
        (judge if v.is_judge else human).append(row)
    return pd.DataFrame(human, columns=F.PAIR_COLUMNS), pd.DataFrame(judge, columns=F.PAIR_COLUMNS)


def judged_metrics(rubric: Rubric) -> dict[str, Any]:
    return {m.key: m for m in rubric.metrics if m.judgeable}


def live_judgement_frame(
    db: StudyDB,
    by_pk: dict[int, R.ItemRow],
    judged: dict[str, Any],
    unreadable: list[int],
    answered: list[tuple[int, int | None]] | None = None,
    jids: list[int] | None = None,
    skipped: list[int] | None = None,
) -> pd.DataFrame:
    # closed however the loop ends: an open stream holds a read transaction (on a server, a
    # connection) until it is
    with closing(R.judgements(db, ("live",), unreadable=unreadable)) as stream:
        rows = live_rows(stream, by_pk, judged, answered, jids, skipped)
    return pd.DataFrame(rows, columns=F.JUDGEMENT_COLUMNS)


def with_sample_frame(settings: dict[str, Any], item_rows: list[R.ItemRow]) -> dict[str, Any]:
    """`settings` with the human sample's `imported_after`: the live items imported after the
    draw (a key above its `frame_max_pk`), which no human could have been asked about, so the
    debiased figures cover the draw's frame only (stats/debiased.py)."""
    out = dict(settings)
    for key in ("human_sample",):
        sample = out.get(key)
        if isinstance(sample, dict) and sample.get("frame_max_pk") is not None:
            frame = int(sample["frame_max_pk"])
            after = [r.item_id for r in item_rows if r.pk > frame and not r.is_anchor]
            out[key] = {**sample, "imported_after": after}
    return out


def build_frames(
    db: StudyDB, rubric: Rubric, study_name: str, settings: dict[str, Any]
) -> F.StudyFrames:
    judged = judged_metrics(rubric)
    item_rows = R.items(db)
    by_pk = {r.pk: r for r in item_rows}
    unreadable: list[int] = []
    judgements = live_judgement_frame(db, by_pk, judged, unreadable)
    anchor_answers = anchor_frame(db, rubric, by_pk, unreadable)
    return study_frames(
        db, rubric, study_name, settings, item_rows, judgements, anchor_answers, unreadable
    )


def study_frames(
    db: StudyDB,
    rubric: Rubric,
    study_name: str,
    settings: dict[str, Any],
    item_rows: list[R.ItemRow],
    judgements: pd.DataFrame,
    anchor_answers: pd.DataFrame,
    unreadable: list[int],
) -> F.StudyFrames:
    """The study's frames around the humans' answers the caller read its own way (`build_frames`
    plainly, live_frames.read_live keeping the ids a refresh compares): the items, the judges'
    scores and pair votes, the humans' votes, the adjudications and the sample read here alike.
    `unreadable`: the answers' ids the caller could not decode."""
    judged = judged_metrics(rubric)
    by_pk = {r.pk: r for r in item_rows}
    judge_scores, judge_score_versions = judge_frames(db, by_pk)
    pair_votes, judge_pair_votes = pair_frames(db, by_pk)
    return F.StudyFrames(
        study=study_name,
        rubric=rubric,
        items=item_frame(item_rows),
        judgements=judgements,
        judge_scores=judge_scores,
        judge_score_versions=judge_score_versions,
        pair_votes=pair_votes,
        judge_pair_votes=judge_pair_votes,
        anchor_answers=anchor_answers,
        adjudications=adjudication_frame(db, judged),
        settings=with_sample_frame(settings, item_rows),
        unreadable=sorted(unreadable),
    )
