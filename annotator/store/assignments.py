"""Assignments in the study: who gets which items and pairs (dealt by domain.assignment),
and the per-rater progress the lead's status shows."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Select,
    and_,
    case,
    cast,
    func,
    insert,
    literal_column,
    select,
    text,
)
from sqlalchemy.orm import Session as OrmSession

from ..domain import assignment as design
from ..domain import pairs as pair_design
from ..domain.settings import setting
from .db import StudyDB
from .imports import ensure_pair
from .locks import lock_imports
from .models import Anchor, Item, Judgement, Rater
from .models_pairs import Pair, PairVote
from .models_team import Assignment, Merge, PairAssignment
from .people import rater_pk
from .planner_hints import likely


@dataclass(frozen=True)
class Dealt:
    items: int  # new (rater, item) assignments
    pairs: int
    raters: int


def _dealt_to(s: OrmSession, model: Any, column: Any, rpk: int) -> list[int] | None:
    """What one assignment table (`model`, its dealt `column`) deals a rater, or None when the
    table is empty: the study deals nothing of that kind, so everyone gets everything."""
    if s.scalar(select(model.id).limit(1)) is None:
        return None
    return list(s.scalars(select(column).where(model.rater_pk == rpk).order_by(column)))


def assigned_items(s: OrmSession, rpk: int) -> list[int] | None:
    """The items dealt to a rater, or None when the study deals nothing (everyone gets everything)."""
    return _dealt_to(s, Assignment, Assignment.item_pk, rpk)


def assigned_pairs(s: OrmSession, rpk: int) -> list[int] | None:
    """The pairs dealt to a rater, or None when the study deals no pairs."""
    return _dealt_to(s, PairAssignment, PairAssignment.pair_pk, rpk)


ON_DEMAND = (
    "deal_on_demand"  # setting: K, when raters take items as they go instead of a dealt list
)


def on_demand(s: OrmSession) -> int | None:
    import json as _json

    from .models import Setting

    raw = s.scalar(select(Setting.value).where(Setting.key == ON_DEMAND))
    k = _json.loads(raw) if raw else None
    return int(k) if k else None


def claim_next(s: OrmSession, rpk: int, seed: int, k: int) -> int | None:
    """Deal this rater one more item: one that has fewer than `k` raters and is not theirs yet,
    the least covered first (then a seeded order of the rater's own).

    Two raters asking at once must never both take the last open slot of an item. SQLite: the
    write transaction (BEGIN IMMEDIATE) serialises claims. PostgreSQL: each candidate is taken
    only under a lock on its item row, tried without waiting (SKIP LOCKED), and its count is read
    again under the lock, so a claim committed meanwhile is seen. A row lock, not an advisory
    one: any login may take an advisory lock of any number (a rater's role holding them made
    every other claim fail), a row lock needs rights on `items` a rater's role does not have. A
    rater's role can neither read other raters' assignments nor insert one: the server claims for
    it (`annotator_claim`, store/roles.py: the same rule, one claim a transaction).
    """
    from .roles import is_rater_session

    if is_rater_session(s):
        got = s.scalar(text("SELECT public.annotator_claim(:k, :seed)"), {"k": k, "seed": seed})
        return int(got) if got is not None else None
    n_raters = (
        select(func.count(Assignment.id)).where(Assignment.item_pk == Item.id).scalar_subquery()
    )
    mine = select(Assignment.item_pk).where(Assignment.rater_pk == rpk)
    shuffle = (cast(Item.id, BigInteger) * 2654435761 + seed) % 4294967291  # 64-bit on both engines
    server = s.get_bind().dialect.name == "postgresql"
    candidates = (
        select(Item.id)
        .where(Item.is_anchor.is_(False), Item.id.not_in(mine), n_raters < k)
        .order_by(n_raters, shuffle)
        .limit(32 if server else 1)
    )
    for _ in range(10):
        found = list(s.scalars(candidates))
        if not found:
            return None
        for item_pk in found:
            if server and (
                s.scalar(
                    select(Item.id)
                    .where(Item.id == item_pk)
                    .with_for_update(key_share=True, skip_locked=True)
                )
                is None
            ):
                continue  # another rater is taking this one right now
            taken = (
                s.scalar(select(func.count(Assignment.id)).where(Assignment.item_pk == item_pk))
                or 0
            )
            if taken < k:
                s.execute(insert(Assignment), [dict(rater_pk=rpk, item_pk=item_pk, seed=seed)])
                return item_pk
    return None


CLAIM_EXPIRY = "claim_expiry_minutes"  # setting: an on-demand claim unanswered this long is freed

# The expiry rule of on-demand claims, as SQL both engines run (the lead's processes here; the
# server's `annotator_claim` should run the same two statements first, as the study's owner): a
# claim (an assignment, and its queue entry) older than :cutoff whose rater has not answered its
# item goes back to the pool; :rater NULL: every rater's, else only that rater's. The queue entry
# first: it is found through the assignment.
_STALE = (
    "a.created_at < :cutoff AND (CAST(:rater AS INTEGER) IS NULL OR a.rater_pk = :rater) "
    "AND NOT EXISTS (SELECT 1 FROM judgements j WHERE j.rater_pk = a.rater_pk "
    "AND j.item_pk = a.item_pk)"
)
EXPIRE_QUEUE_SQL = (
    "DELETE FROM queue WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.rater_pk = queue.rater_pk "
    f"AND a.item_pk = queue.item_pk AND {_STALE})"
)
EXPIRE_CLAIMS_SQL = (
    f"DELETE FROM assignments WHERE id IN (SELECT a.id FROM assignments a WHERE {_STALE})"
)


def claim_expiry_minutes(s: OrmSession) -> float:
    import json as _json

    from .models import Setting

    raw = s.scalar(select(Setting.value).where(Setting.key == CLAIM_EXPIRY))
    return float(setting({CLAIM_EXPIRY: _json.loads(raw) if raw else None}, CLAIM_EXPIRY))


def expire_claims(
    s: OrmSession, *, rater_pk: int | None = None, minutes: float | None = None
) -> int:
    """Free on-demand claims left unanswered (`minutes` old, default the study's setting; 0: every
    unanswered claim, as `annotator assign --release`); dealt lists never expire. The claims freed."""
    from datetime import timedelta

    from .models import utcnow

    if not on_demand(s):
        return 0
    age = claim_expiry_minutes(s) if minutes is None else minutes
    args = {"cutoff": utcnow() - timedelta(minutes=age), "rater": rater_pk}
    if age <= 0:
        args["cutoff"] = utcnow() + timedelta(days=1)
    s.execute(text(EXPIRE_QUEUE_SQL), args)
    freed = s.execute(text(EXPIRE_CLAIMS_SQL), args)
    return int(getattr(freed, "rowcount", 0) or 0)


def release_claims(db: StudyDB, rater: str) -> int | None:
    """Free every on-demand claim `rater` holds without an answer; None: the study deals lists."""
    with db.write() as s:
        if not on_demand(s):
            return None
        return expire_claims(s, rater_pk=rater_pk(s, rater), minutes=0)


def assign(
    db: StudyDB,
    raters: list[str],
    *,
    overlap: int,
    pair_overlap: int | None,
    seed: int,
    only: set[int] | None = None,
    only_pairs: set[int] | None = None,
) -> Dealt:
    """Deal every live item to `overlap` raters (and every pair to `pair_overlap`), in one transaction.

    `only`: deal just these items (the random human sample, services/sampling.py);
    `only_pairs`: just these pairs (the random pair sample).

    Earlier assignments are kept as they are (an answered item never moves): items and pairs
    with fewer raters than asked are topped up, new ones dealt.
    """
    design.check_design(raters, overlap)
    if pair_overlap is not None:
        design.check_design(raters, pair_overlap)
    with db.write() as s:
        lock_imports(s)  # dealing reads the items: not while an import adds some
        pks = {name: rater_pk(s, name) for name in raters}
        name_of = {pk: name for pk, name in s.execute(select(Rater.id, Rater.name))}
        items = list(s.scalars(select(Item.id).where(Item.is_anchor.is_(False)).order_by(Item.id)))
        if only is not None:
            items = [it for it in items if it in only]
        before: dict[int, set[str]] = defaultdict(set)
        for r, it in s.execute(select(Assignment.rater_pk, Assignment.item_pk)):
            before[it].add(name_of[r])
        new = design.deal(items, raters, overlap, seed, before)
        rows = [dict(rater_pk=pks[r], item_pk=it, seed=seed) for it, rs in new.items() for r in rs]
        if rows:
            s.execute(insert(Assignment), rows)
        n_pairs = 0
        if pair_overlap is not None:
            live = s.execute(
                select(Item.id, Item.cell_pk, Item.generator).where(Item.is_anchor.is_(False))
            ).all()
            for a, b in pair_design.design_pairs(live):
                ensure_pair(s, None, a, b)
            pairs = list(s.scalars(select(Pair.id).order_by(Pair.id)))
            if only_pairs is not None:
                pairs = [p for p in pairs if p in only_pairs]
            pbefore: dict[int, set[str]] = defaultdict(set)
            for r, p in s.execute(select(PairAssignment.rater_pk, PairAssignment.pair_pk)):
                pbefore[p].add(name_of[r])
            pnew = design.deal(pairs, raters, pair_overlap, seed + 1, pbefore)
            prows = [
                dict(rater_pk=pks[r], pair_pk=p, seed=seed + 1)
                for p, rs in pnew.items()
                for r in rs
            ]
            if prows:
                s.execute(insert(PairAssignment), prows)
            n_pairs = len(prows)
        return Dealt(len(rows), n_pairs, len(raters))


@dataclass(frozen=True)
class RaterProgress:
    rater: str
    is_operator: bool
    assigned: int | None  # None: the study deals nothing (the rater may label every item)
    done: int
    anchors: int
    pairs_assigned: int | None
    pairs_done: int
    last_activity: datetime | None


def done_items() -> Select[int, int]:
    """Each rater's count of items with a first live answer, read from the partial index of
    first live answers (uq_judgement_live), which `likely` lets SQLite's planner take: it took
    the index of superseded answers, which nearly every answer matches, and read every row
    (a million-judgement study: 0.14 -> 0.02 s, on every refresh of the dashboard)."""
    return (
        select(Judgement.rater_pk, func.count(func.distinct(Judgement.item_pk)))
        # 'live' written in the SQL: against a bound parameter SQLite reads every row to check
        # it, the partial index's own WHERE clause no longer implied
        .where(
            likely(Judgement.supersedes.is_(None)), Judgement.context == literal_column("'live'")
        )
        .group_by(Judgement.rater_pk)
    )


def progress(db: StudyDB) -> list[RaterProgress]:
    with db.read() as s:
        dealing = s.scalar(select(Assignment.id).limit(1)) is not None
        pair_dealing = s.scalar(select(PairAssignment.id).limit(1)) is not None
        assigned = dict(
            s.execute(select(Assignment.rater_pk, func.count()).group_by(Assignment.rater_pk)).all()
        )
        passigned = dict(
            s.execute(
                select(PairAssignment.rater_pk, func.count()).group_by(PairAssignment.rater_pk)
            ).all()
        )
        first = Judgement.supersedes.is_(None)
        done: dict[int, int] = {pk: n for pk, n in s.execute(done_items())}
        # the anchors and the last activity in one read of the answers
        anchors, last_j = {}, {}
        for rater_pk, n_anchors, last in s.execute(
            select(
                Judgement.rater_pk,
                func.count(case((and_(Judgement.context == "anchor", first), 1))),
                func.max(Judgement.created_at),
            ).group_by(Judgement.rater_pk)
        ):
            anchors[rater_pk], last_j[rater_pk] = n_anchors, last
        pdone = dict(
            s.execute(
                select(PairVote.rater_pk, func.count(func.distinct(PairVote.pair_pk)))
                .where(PairVote.rater_pk.is_not(None))
                .group_by(PairVote.rater_pk)
            ).all()
        )
        last_v = dict(
            s.execute(
                select(PairVote.rater_pk, func.max(PairVote.created_at))
                .where(PairVote.rater_pk.is_not(None))
                .group_by(PairVote.rater_pk)
            ).all()
        )
        out = []
        for r in s.scalars(select(Rater).order_by(Rater.name)):
            times = [t for t in (last_j.get(r.id), last_v.get(r.id)) if t is not None]
            out.append(
                RaterProgress(
                    r.name,
                    r.is_operator,
                    assigned.get(r.id, 0) if dealing else None,
                    done.get(r.id, 0),
                    anchors.get(r.id, 0),
                    passigned.get(r.id, 0) if pair_dealing else None,
                    pdone.get(r.id, 0),
                    max(times) if times else None,
                )
            )
        return out


def balance_warnings(rows: list[RaterProgress]) -> list[str]:
    """One line per rater whose load is off the others' by more than one item."""
    loads = [
        r.assigned for r in rows if r.assigned is not None and not r.is_operator and r.assigned > 0
    ]
    if not loads:
        return []
    lo, hi = min(loads), max(loads)
    out = []
    for r in rows:
        if r.assigned is None or r.is_operator or r.assigned == 0 or hi - lo <= 1:
            continue
        if r.assigned == hi:
            out.append(
                f"{r.rater} has {r.assigned} items, more than one above the lightest load ({lo})"
            )
        elif r.assigned == lo:
            out.append(
                f"{r.rater} has {r.assigned} items, more than one below the heaviest load ({hi})"
            )
    return out


def merges(db: StudyDB) -> list[dict]:
    with db.read() as s:
        import json

        return [
            {
                "package_sha256": m.package_sha256,
                "rater": name,
                "rows_added": json.loads(m.counts),
                "at": m.created_at.isoformat(timespec="seconds"),
            }
            for m, name in s.execute(
                select(Merge, Rater.name).join(Rater, Rater.id == Merge.rater_pk).order_by(Merge.id)
            )
        ]


def n_anchors(db: StudyDB) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(Anchor)) or 0
