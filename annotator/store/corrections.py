"""Answers brought in from other tools, inside the caller's transaction: first answers,
relabels as corrections (a new row superseding the current one, never an update),
and unchanged re-imports left alone.

Another tool's export is re-exported and re-imported as a team keeps working there:
an annotation we already hold comes back unchanged (skipped, counted), or relabelled
(kept as a correction of ours, so the chain shows both), or new (a first answer). An
answer older than the one the study holds (an earlier version of a relabel the export
still carries) is left out and counted: it would otherwise supersede a newer answer.
Unlike `imports.import_ratings` these rows keep the tool's lead time (`time_ms`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session as OrmSession

from ..domain.answers import encode, encode_value
from ..domain.errors import InputError
from ..domain.pairs import minted_pair_id
from .chains import append, is_current
from .imports import import_judge
from .items import case_ids, item_pks
from .locks import lock_imports, lock_rater
from .models import Judgement, JudgeScore, Session
from .models_pairs import Pair, PairVote
from .people import ensure_rater


@dataclass
class Landed:
    added: int = 0
    corrections: int = 0
    unchanged: int = 0
    older: int = 0

    def keep(self, same: bool, new_time: Any, head_time: Any) -> bool:
        """Whether an answer for a slot the study already answered lands as a correction."""
        if same:
            self.unchanged += 1
            return False
        if new_time is not None and head_time is not None and new_time <= head_time:
            self.older += 1
            return False
        return True

    def land(
        self, s: OrmSession, heads: dict[Any, Any], key: Any, row: Any, created_at: Any
    ) -> None:
        """Store `row` on its slot `key`: a first answer, or the correction of the slot's head as
        known (stored, or this import's own earlier row), keeping the tool's time when it has one."""
        head = heads.get(key)
        if created_at is not None:
            row.created_at = created_at
        append(s, row, head)
        heads[key] = row
        if head is None:
            self.added += 1
        else:
            self.corrections += 1


def add_judgements(
    s: OrmSession, records: Sequence[Any], version: str, *, source: str = "import"
) -> Landed:
    """records: ingest.mapping.ToolJudgement, landed in their `order` (a later relabel supersedes)."""
    got = Landed()
    if not records:
        return got
    lock_imports(s)  # PostgreSQL: the heads read below stay the heads until this import commits
    pks = item_pks(s, [r.item_id for r in records])
    raters = {name: ensure_rater(s, name).id for name in sorted({r.rater for r in records})}
    for rpk in raters.values():
        lock_rater(s, rpk)  # ...and the raters' own submits wait for it
    heads: dict[tuple[int, int], Judgement] = {
        (j.rater_pk, j.item_pk): j
        for j in s.scalars(
            select(Judgement).where(
                Judgement.rater_pk.in_(list(raters.values())),
                Judgement.rubric_version == version,
                Judgement.context == "live",
                is_current(Judgement),
            )
        )
    }
    sessions: dict[tuple[int, str], int] = {}
    for r in sorted(records, key=lambda r: r.order):
        key = (raters[r.rater], pks[r.item_id])
        answers = encode(r.answers)
        head = heads.get(key)
        if head is not None and not got.keep(
            head.answers == answers and head.reason == r.reason, r.created_at, head.created_at
        ):
            continue
        row = Judgement(
            rater_pk=key[0],
            item_pk=key[1],
            rubric_version=version,
            context="live",
            answers=answers,
            reason=r.reason,
            time_ms=r.time_ms,
            source=source,
            session_pk=_session(s, sessions, key[0], r.session),
        )
        got.land(s, heads, key, row, r.created_at)
    return got


def _session(
    s: OrmSession, cache: dict[tuple[int, str], int], rater_pk: int, name: str | None
) -> int | None:
    """The rater's imported session of that name (found again on a re-import, not made twice)."""
    if not name:
        return None
    key = (rater_pk, name)
    if key not in cache:
        mode = f"import:{name}"
        pk = s.scalar(
            select(Session.id).where(Session.rater_pk == rater_pk, Session.mode == mode).limit(1)
        )
        if pk is None:
            row = Session(rater_pk=rater_pk, mode=mode)
            s.add(row)
            s.flush()
            pk = row.id
        cache[key] = pk
    return cache[key]


def add_votes(s: OrmSession, records: Sequence[Any], *, source: str = "import") -> Landed:
    """records: ingest.mapping.ToolVote (human and judge votes). A pair holds one case fixed."""
    got = Landed()
    if not records:
        return got
    lock_imports(s)
    pks = item_pks(s, [r.item_left for r in records] + [r.item_right for r in records])
    case_of = case_ids(s, pks.values())
    raters = {
        name: ensure_rater(s, name).id
        for name in sorted({r.rater for r in records if not r.is_judge})
    }
    for rpk in raters.values():
        lock_rater(s, rpk)
    judges = sorted({r.rater for r in records if r.is_judge})
    # ("judge", judge, pair pk, left item pk) or ("rater", rater pk, pair pk)
    heads: dict[tuple[Any, ...], PairVote] = {}
    for v in s.scalars(
        select(PairVote)
        .where(is_current(PairVote))
        .where(PairVote.rater_pk.in_(list(raters.values())) | PairVote.judge.in_(judges))
    ):
        # a judge votes on a pair once per order shown (its position bias: uq_pair_vote_judge), a
        # rater once per pair
        heads[
            ("judge", v.judge, v.pair_pk, v.item_left)
            if v.judge
            else ("rater", v.rater_pk, v.pair_pk)
        ] = v
    pairs = _pairs(s, records, pks)
    for r in sorted(records, key=lambda r: r.order):
        left, right = pks[r.item_left], pks[r.item_right]
        if case_of[left] != case_of[right]:
            raise InputError(
                f"the pair joins items of different cases ('{case_of[left]}', '{case_of[right]}'); a pair "
                "holds the case fixed",
                source=r.where,
            )
        pair_pk = pairs[(min(left, right), max(left, right))]
        key = (
            ("judge", r.rater, pair_pk, left) if r.is_judge else ("rater", raters[r.rater], pair_pk)
        )
        head = heads.get(key)
        same = head is not None and (head.item_left, head.item_right, head.choice) == (
            left,
            right,
            r.choice,
        )
        if head is not None and not got.keep(same, r.created_at, head.created_at):
            continue
        vote = PairVote(
            pair_pk=pair_pk,
            item_left=left,
            item_right=right,
            choice=r.choice,
            time_ms=r.time_ms,
            source=source,
        )
        if r.is_judge:
            vote.judge = r.rater
        else:
            vote.rater_pk = raters[r.rater]
        got.land(s, heads, key, vote, r.created_at)
    return got


def _pairs(
    s: OrmSession, records: Sequence[Any], pks: dict[str, int]
) -> dict[tuple[int, int], int]:
    """(item_a, item_b) -> pair pk for every pair the votes name, the missing ones made in one
    statement (a query and a flush per vote made a 3,000-vote file take seconds)."""
    have = {(a, b): pk for pk, a, b in s.execute(select(Pair.id, Pair.item_a, Pair.item_b))}
    named = set(s.scalars(select(Pair.pair_id)))
    new: dict[tuple[int, int], str] = {}
    for r in records:
        a, b = sorted((pks[r.item_left], pks[r.item_right]))
        if (a, b) in have or (a, b) in new:
            continue
        pid = r.pair_id or minted_pair_id(r.item_left, r.item_right)
        if pid in named:
            raise InputError(
                f"pair_id '{pid}' is already the study's name for two other items; give the pair another "
                "id",
                source=r.where,
                field="pair_id",
            )
        named.add(pid)
        new[(a, b)] = pid
    if new:
        rows = [{"pair_id": pid, "item_a": a, "item_b": b} for (a, b), pid in new.items()]
        for pk, a, b in s.execute(
            insert(Pair).returning(Pair.id, Pair.item_a, Pair.item_b, sort_by_parameter_order=True),
            rows,
        ):
            have[(a, b)] = pk
    return have


def add_judge_scores(s: OrmSession, rows: Sequence[Any], *, source: str) -> Landed:
    """rows: ingest.tables.JudgeRow. A score the study holds with the same value is skipped; with
    another value it is refused (judge scores have no corrections: name the new run apart)."""
    got = Landed()
    if not rows:
        return got
    lock_imports(s)
    pks = item_pks(s, [r.item_id for r in rows])
    have = {
        (sc.judge, sc.item_pk, sc.metric): sc.value
        for sc in s.scalars(
            select(JudgeScore).where(JudgeScore.judge.in_(sorted({r.judge for r in rows})))
        )
    }
    fresh = []
    for r in rows:
        value = encode_value(r.value)
        old = have.get((r.judge, pks[r.item_id], r.metric))
        if old is None:
            fresh.append(r)
        elif old == value:
            got.unchanged += 1
        else:
            raise InputError(
                f"judge '{r.judge}' already scored '{r.metric}' of '{r.item_id}' as {old}, not {value}; "
                "name this run apart in the mapping's [judges]",
                source=source,
                field="judge",
            )
    got.added = import_judge(s, fresh, kind="import", source=source)
    return got
