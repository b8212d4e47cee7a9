"""Bulk writes for importers, inside the caller's transaction (`StudyDB.write()`):
the service lands everything of one import (items, media rows, scores, ratings,
anchors) in ONE transaction, so an import lands whole or not at all."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as OrmSession

from ..domain.answers import encode, encode_value
from ..domain.errors import InputError
from ..domain.pairs import minted_pair_id
from ..domain.records import ItemSpec
from .chains import append
from .db import StudyDB
from .items import add_items, case_ids, item_pks
from .locks import lock_imports
from .models import (
    IMPORTED,
    Anchor,
    Item,
    Judgement,
    JudgeRun,
    JudgeScore,
    Media,
    Rater,
    Session,
)
from .models_pairs import Pair, PairVote
from .people import ensure_rater


@contextmanager
def refused_if_duplicate(message: str, source: str) -> Iterator[None]:
    """A unique rule broken anywhere (at any flush or the commit) refuses the whole file.

    Put it outside `db.write()` so the transaction is rolled back before the error is raised.
    """
    try:
        yield
    except IntegrityError:
        raise InputError(message, source=source) from None


DUPLICATE = {
    "ratings": "some of these ratings are already in the study (same rater and item); nothing was imported",
    "judge": "some of these judge scores are already in the study (same judge, item and metric); nothing was imported. To correct scores imported before, import the file again with --replace: its scores become the judge's new version, the earlier ones are kept",
    "pairs": "a vote in this file is already in the study (one vote per rater per pair); nothing was imported",
    "items": "another import added some of these items at the same moment; nothing was imported, run it again",
}


def import_items(
    s: OrmSession,
    specs: Sequence[ItemSpec],
    media_rows: Sequence[tuple],
    *,
    anchors: tuple | None = None,
) -> int:
    """Store items; with `anchors=(set_name, references, rationales)` they become anchors."""
    lock_imports(s)
    pks = add_items(s, specs, media_rows, is_anchor=anchors is not None)
    if anchors is not None:
        from .adjudication import new_version

        name, refs, rats = anchors
        new = [
            (pks[spec.item_id], ref, rat)
            for spec, ref, rat in zip(specs, refs, rats, strict=True)
            if s.get(Anchor, pks[spec.item_id]) is None
        ]
        if new:  # a set that changes is a new version of it
            version = new_version(s, name, f"imported {len(new)} anchors")
            for pk, ref, rat in new:
                s.add(
                    Anchor(
                        item_pk=pk,
                        anchor_set=name,
                        reference=json.dumps(ref),
                        rationale=json.dumps(rat),
                        set_version=version,
                    )
                )
    return len(pks)


def known_item_ids(db: StudyDB) -> set[str]:
    with db.read() as s:
        return set(s.scalars(select(Item.item_id)))


def referenced_media(s: OrmSession, shas: Sequence[str]) -> set[str]:
    """Which of these media files a committed row uses (ask inside the write lock)."""
    out: set[str] = set()
    for i in range(0, len(shas), 500):
        out |= set(s.scalars(select(Media.sha256).where(Media.sha256.in_(list(shas[i : i + 500])))))
    return out


def import_ratings(s: OrmSession, groups: Sequence[Any], version: str) -> int:
    """groups: ingest.tables.RatingGroup. Creates raters the study does not know (never operators)."""
    lock_imports(s)
    pks = item_pks(s, [g.item_id for g in groups])
    raters: dict[str, Rater] = {}
    sessions: dict[tuple[int, str], int] = {}
    for g in groups:
        r = raters.get(g.rater) or ensure_rater(s, g.rater)
        raters[g.rater] = r
        sess = None
        if g.session:
            key = (r.id, g.session)
            if key not in sessions:
                row = Session(rater_pk=r.id, mode=f"import:{g.session}")
                s.add(row)
                s.flush()
                sessions[key] = row.id
            sess = sessions[key]
        j = Judgement(
            rater_pk=r.id,
            item_pk=pks[g.item_id],
            rubric_version=version,
            session_pk=sess,
            context="live",
            answers=encode(g.answers),
            reason=g.reason,
            source="import",
        )
        if g.created_at:
            j.created_at = g.created_at
        append(s, j)
    return len(groups)


def import_judge(
    s: OrmSession,
    rows: Sequence[Any],
    *,
    kind: str,
    source: str,
    model: str | None = None,
    replace: bool = False,
    versions: dict[str, str] | None = None,
) -> int:
    """rows: ingest.tables.JudgeRow. One JudgeRun per judge name; the scores imported.

    `replace`: a judge that has imported scores gets the file's as a new version (`import-2`,
    `import-3`, ...; its run's settings name the version it replaces), so the figures read the
    corrected scores and the earlier ones stay for `judge compare`; a judge whose file equals its
    latest imported scores gets nothing. `versions` receives {judge: version written}."""
    lock_imports(s)
    pks = item_pks(s, [r.item_id for r in rows])
    by_judge: dict[str, list[Any]] = {}
    for r in rows:
        by_judge.setdefault(r.judge, []).append(r)
    runs: dict[str, JudgeRun] = {}
    for judge, theirs in by_judge.items():
        version, replaces = IMPORTED, None
        if replace:
            version, replaces = _next_import(s, judge)
            if replaces is not None and _same_scores(s, judge, replaces, theirs, pks):
                continue
        runs[judge] = JudgeRun(
            judge=judge,
            model=model or judge,
            kind=kind,
            source=source,
            version=version,
            settings=json.dumps({"replaces": replaces}) if replaces else None,
        )
        s.add(runs[judge])
        if versions is not None:
            versions[judge] = version
    s.flush()
    added = 0
    for r in rows:  # in the file's order: exports list them so
        run = runs.get(r.judge)
        if run is None:
            continue
        s.add(
            JudgeScore(
                run_pk=run.id,
                judge=r.judge,
                item_pk=pks[r.item_id],
                metric=r.metric,
                value=encode_value(r.value),
                reason=r.reason,
                confidence=getattr(r, "confidence", None),
                version=run.version,
            )
        )
        added += 1
    return added


def _next_import(s: OrmSession, judge: str) -> tuple[str, str | None]:
    """(the version a replacing import writes, the latest imported version it replaces or None)."""
    taken = set(
        s.scalars(
            select(JudgeRun.version).where(JudgeRun.judge == judge, JudgeRun.kind == "import")
        )
    )
    if not taken:
        return IMPORTED, None
    n = 2
    while f"{IMPORTED}-{n}" in taken:
        n += 1
    latest = IMPORTED if n == 2 else f"{IMPORTED}-{n - 1}"
    return f"{IMPORTED}-{n}", latest


def _same_scores(
    s: OrmSession, judge: str, version: str, rows: Sequence[Any], pks: dict[str, int]
) -> bool:
    """Whether `rows` are exactly the scores `judge` holds under `version`."""
    held = {
        (item, metric, value, reason, conf)
        for item, metric, value, reason, conf in s.execute(
            select(
                JudgeScore.item_pk,
                JudgeScore.metric,
                JudgeScore.value,
                JudgeScore.reason,
                JudgeScore.confidence,
            ).where(JudgeScore.judge == judge, JudgeScore.version == version)
        )
    }
    given = {
        (pks[r.item_id], r.metric, encode_value(r.value), r.reason, getattr(r, "confidence", None))
        for r in rows
    }
    return held == given


def ensure_pair(s, pair_id: str | None, a: int, b: int) -> Pair:
    lo, hi = min(a, b), max(a, b)
    pair = s.scalars(select(Pair).where(Pair.item_a == lo, Pair.item_b == hi)).first()
    if pair is None:
        if pair_id is None:
            ids = dict(s.execute(select(Item.id, Item.item_id).where(Item.id.in_((lo, hi)))).all())
            pair_id = minted_pair_id(ids[lo], ids[hi])
        pair = Pair(pair_id=pair_id, item_a=lo, item_b=hi)
        s.add(pair)
        s.flush()
    return pair


def import_pair_votes(s: OrmSession, rows: Sequence[Any], *, judges: bool, source: str) -> int:
    """rows: ingest.tables.VoteRow. Both items of a pair must belong to one case."""
    lock_imports(s)
    pks = item_pks(s, [r.item_left for r in rows] + [r.item_right for r in rows])
    case_of = case_ids(s, pks.values())
    raters: dict[str, int] = {}
    for r in rows:
        left, right = pks[r.item_left], pks[r.item_right]
        if case_of[left] != case_of[right]:
            raise InputError(
                f"pair '{r.pair_id}' joins items of different cases; a pair holds the case fixed",
                source=source,
                line=r.line,
                field="item_right",
            )
        pair = ensure_pair(s, r.pair_id, left, right)
        vote = PairVote(
            pair_pk=pair.id, item_left=left, item_right=right, choice=r.choice, source="import"
        )
        if judges:
            vote.judge = r.rater
        else:
            if r.rater not in raters:
                raters[r.rater] = ensure_rater(s, r.rater).id
            vote.rater_pk = raters[r.rater]
        if r.created_at:
            vote.created_at = r.created_at
        s.add(vote)
    return len(rows)
