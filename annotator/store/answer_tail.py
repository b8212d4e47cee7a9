"""Where a read of the answer log stopped, so that the next read takes only the rows after it.

The answer log (`judgements`) is append-only: an answer is never changed or deleted, a
correction is a new row that supersedes it. So what changed since a read is the rows added
after it, and which earlier rows they supersede. "After it" cannot be "ids above the last one
read" alone: on a server ids are handed out before commit, so a lower id can commit after a
higher one. The tail therefore also holds how many rows the log held up to its last id and a
digest of that row. A late commit below it moves the count: the caller compares every current
id (`rows.current_judgement_ids`). Another row at its last id means a copy of the study was put
back and answered again: the ids it read may now be other answers, so it reads every answer.
Which rows count depends on who is an operator: a change to that set makes it compare ids too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .db import StudyDB
from .models import Judgement, Rater


@dataclass(frozen=True)
class LogTail:
    last_id: int  # the largest id the log held (0: it was empty)
    count: int  # how many rows it held up to last_id
    digest: str  # of the row last_id ("" for an empty log)
    operators: frozenset[int]  # the raters whose answers did not count


@dataclass(frozen=True)
class AddedRow:
    id: int
    supersedes: int | None  # a correction's: the same context, rater and item, a lower id
    context: str  # live | anchor | calibration
    by_operator: bool


def tail_of(db: StudyDB) -> LogTail:
    """The log's tail now: read it before the ids it stands for, so that a row committed in
    between is at worst read twice (the caller knows the ids it has), never missed."""
    with db.read() as s:
        last = s.execute(select(func.max(Judgement.id))).scalar()
        if last is None:
            return LogTail(0, 0, "", _operators(s))
        count = s.execute(
            select(func.count()).select_from(Judgement).where(Judgement.id <= last)
        ).scalar_one()
        return LogTail(int(last), int(count), _digest(s, int(last)), _operators(s))


# what a caller does instead of reading the rows after the tail
COMPARE_IDS = "compare every current id"  # a late commit below it, or the operators changed
READ_AGAIN = "read every answer again"  # another row at its last id: a copy of the study put back


def rows_after(db: StudyDB, tail: LogTail) -> tuple[list[AddedRow], LogTail] | str:
    """The rows added after `tail`, ascending by id, and the tail after them; or, when the log
    up to the tail is no longer what it was, COMPARE_IDS (the rows read are still the log's,
    some were added among them or count otherwise) or READ_AGAIN (they may not be)."""
    with db.read() as s:
        if tail.last_id and _digest(s, tail.last_id) != tail.digest:
            return READ_AGAIN
        operators = _operators(s)
        if operators != tail.operators or not _none_added_below(s, tail):
            return COMPARE_IDS
        found = s.execute(
            select(Judgement.id, Judgement.supersedes, Judgement.context, Judgement.rater_pk)
            .where(Judgement.id > tail.last_id)
            .order_by(Judgement.id)
        ).all()
        added = [AddedRow(int(i), sup, ctx, rater in operators) for i, sup, ctx, rater in found]
        if not added:
            return added, tail
        last = added[-1].id
        # counted, not read: a row committed below `last` after this read (a server's late
        # commit) makes the next count differ, and that read compares every id again
        return added, LogTail(last, tail.count + len(added), _digest(s, last), operators)


def _none_added_below(s: Session, tail: LogTail) -> bool:
    """Whether the log up to the tail's last id holds the rows it held (its last row checked)."""
    if not tail.last_id or s.connection().dialect.name == "sqlite":
        # one writer at a time: ids commit in order, and a log that holds the same row at
        # last_id holds every row before it (a copy is a prefix: it cannot lack one)
        return True
    count = s.execute(
        select(func.count()).select_from(Judgement).where(Judgement.id <= tail.last_id)
    ).scalar_one()
    return bool(count == tail.count)


def _operators(s: Session) -> frozenset[int]:
    return frozenset(s.scalars(select(Rater.id).where(Rater.is_operator.is_(True))))


def _digest(s: Session, jid: int) -> str:
    row = s.execute(select(Judgement.__table__).where(Judgement.id == jid)).first()
    return hashlib.sha256(repr(tuple(row or ())).encode()).hexdigest()
