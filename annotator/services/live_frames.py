"""The live dashboard's frames, kept between refreshes and brought up to date by reading only
what changed.

A full read decodes every answer's JSON (a million answers: seconds). A refresh instead reads
the rows added to the answer log since the last read (`store.answer_tail`: the log is
append-only, and its tail says where the last read stopped), drops the rows of the answers a
correction superseded, reads and decodes only the new answers, and renumbers the session
positions of the sessions touched. When the log up to the tail moved (a server's late commit
below it, the operators changed) it compares every current id with the ids it has read
instead (by id set, not "ids above the last one": on a server ids are handed out before
commit), and when another row sits at the tail (a copy of the study put back) it reads
everything again. Every other table is re-read only when its mark
(`store.changes.table_marks`) moved, the anchors' answers only when one came; a change to the
items, anchors, settings or rubric rebuilds everything. The result equals `build_frames` on
the same data, table for table, row order and dtypes included (tests/unit/test_live_frames.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.internals.construction import convert_object_array

from ..domain.rubric import Rubric
from ..stats import frames as F
from ..store import rows as R
from ..store.answer_tail import READ_AGAIN, AddedRow, LogTail, rows_after, tail_of
from ..store.changes import table_marks
from ..store.db import StudyDB
from . import frames as B

# what a refresh cannot update in place: any change rebuilds the frames
_REBUILD = ("items", "settings", "rubric_versions", "anchors")
# what each part of the frames is read from: a part is read again when one of its marks moved
# (a rater added or made an operator changes which answers and votes count)
_SOURCES = {
    "answers": ("judgements", "raters"),
    "judge_scores": ("judge_scores",),
    "pair_votes": ("pair_votes", "raters"),
    "adjudications": ("adjudications",),
}


# the judgement columns an answer's codes are read from (stats/row_codes.py): a refresh that
# types one of them again cannot keep the earlier rows' codes
_CODED = {"item_id", "rater", "metric", "value", "reason"}


@dataclass(frozen=True)
class LiveFrames:
    """Frames plus what a refresh needs to update them (never mutated: a report may be
    computing on the previous one in another thread)."""

    frames: F.StudyFrames
    marks: dict[str, str]
    by_pk: dict[int, R.ItemRow]
    # per row of frames.judgements, the id of the answer it came from
    row_answer: np.ndarray
    # every current live answer read, in id order: its session (positions are counted in it)
    answered: dict[int, int | None]
    unreadable_live: frozenset[int]
    unreadable_anchor: frozenset[int]
    # current live answers on anchor items: read, no rows (anchors are counted apart)
    skipped: frozenset[int]
    # how the last update was made: "full" (everything read), "delta" (new answers only) or
    # "kept" (read back from the frames cache, frames_cache.py)
    how: str = "full"
    n_new: int = 0
    n_dropped: int = 0
    # answers read or dropped since the frames were last kept on disk (frames_cache.due)
    unkept: int = 0
    # where the last read of the answer log stopped (None: unknown, the next refresh compares
    # every current id, as after frames_cache.load)
    tail: LogTail | None = None
    # the answers of `answered` by session (None: found from `answered` when a refresh needs
    # it): a refresh counts its sessions' places again from them, not from every answer
    by_session: Mapping[int, tuple[int, ...]] | None = None


def read_live(db: StudyDB, rubric: Rubric, study_name: str, settings: dict[str, Any]) -> LiveFrames:
    """Everything read, as `build_frames` does, keeping the ids a refresh compares."""
    marks = table_marks(db)
    tail = tail_of(db)  # before the answers: a row committed in between is read, not missed
    judged = B.judged_metrics(rubric)
    item_rows = R.items(db)
    by_pk = {r.pk: r for r in item_rows}
    live_bad: list[int] = []
    answered: list[tuple[int, int | None]] = []
    jids: list[int] = []
    skipped: list[int] = []
    judgements = B.live_judgement_frame(db, by_pk, judged, live_bad, answered, jids, skipped)
    anchor_bad: list[int] = []
    anchor_answers = B.anchor_frame(db, rubric, by_pk, anchor_bad)
    frames = B.study_frames(
        db,
        rubric,
        study_name,
        settings,
        item_rows,
        judgements,
        anchor_answers,
        live_bad + anchor_bad,
    )
    return LiveFrames(
        frames=frames,
        marks=marks,
        by_pk=by_pk,
        row_answer=np.asarray(jids, dtype=np.int64),
        answered=dict(answered),
        unreadable_live=frozenset(live_bad),
        unreadable_anchor=frozenset(anchor_bad),
        skipped=frozenset(skipped),
        unkept=len(answered) + len(live_bad) + len(skipped),
        tail=tail,
    )


def refresh(
    live: LiveFrames, db: StudyDB, rubric: Rubric, study_name: str, settings: dict[str, Any]
) -> LiveFrames:
    """`live` brought up to date: itself when nothing changed, a delta when only answers, judge
    scores, votes, calibrations or adjudications were added, else a full read."""
    marks = table_marks(db)
    # the frames' settings carry what was read with them (the sample's frame): compare those
    settings = B.with_sample_frame(settings, list(live.by_pk.values()))
    if marks == live.marks and settings == live.frames.settings and rubric is live.frames.rubric:
        return live
    if (
        rubric is not live.frames.rubric
        or settings != live.frames.settings
        or any(marks.get(t) != live.marks.get(t) for t in _REBUILD)
    ):
        return read_live(db, rubric, study_name, settings)
    frames = live.frames
    out = replace(live, marks=marks, how="delta", n_new=0, n_dropped=0)
    changes: dict[str, Any] = {}

    def moved(part: str) -> bool:
        return any(marks.get(t) != live.marks.get(t) for t in _SOURCES[part])

    if moved("answers"):
        after = rows_after(db, live.tail) if live.tail is not None else None
        if after == READ_AGAIN:
            return read_live(db, rubric, study_name, settings)
        out, anchors_moved = _answers_delta(out, db, rubric, after)
        changes["judgements"] = out.frames.judgements
        changes["judgements_grown"] = out.frames.judgements_grown
        if anchors_moved:
            anchor_bad: list[int] = []
            changes["anchor_answers"] = B.anchor_frame(db, rubric, live.by_pk, anchor_bad)
            out = replace(out, unreadable_anchor=frozenset(anchor_bad))
    if moved("judge_scores"):
        changes["judge_scores"], changes["judge_score_versions"] = B.judge_frames(db, live.by_pk)
    if moved("pair_votes"):
        changes["pair_votes"], changes["judge_pair_votes"] = B.pair_frames(db, live.by_pk)
    if moved("adjudications"):
        changes["adjudications"] = B.adjudication_frame(db, B.judged_metrics(rubric))
    changes["unreadable"] = sorted(out.unreadable_live | out.unreadable_anchor)
    return replace(out, frames=replace(frames, **changes))


def _answers_delta(
    live: LiveFrames,
    db: StudyDB,
    rubric: Rubric,
    after: tuple[list[AddedRow], LogTail] | str | None,
) -> tuple[LiveFrames, bool]:
    """The live answers' rows after the answers added and superseded since `live` was read, and
    whether the anchors' and calibrations' answers may have moved too."""
    dropped, added, tail, anchors_moved = _changed_ids(live, db, after)
    frame = live.frames.judgements
    rows_of = live.row_answer
    answered = dict(live.answered)
    by_session = dict(_by_session(live))
    touched: set[int] = set()
    for i in dropped:
        sess = answered.pop(i, None)
        if sess is not None:
            touched.add(sess)
            by_session[sess] = tuple(x for x in by_session[sess] if x != i)
    gone = np.fromiter(dropped, dtype=np.int64, count=len(dropped))
    # nothing dropped (new answers only, the usual refresh): the million rows are not copied
    keep = ~np.isin(rows_of, gone) if dropped else slice(None)
    unreadable = set(live.unreadable_live - dropped)
    bad: list[int] = []
    new = R.judgements_by_id(db, added, unreadable=bad)
    unreadable.update(bad)
    seen: list[tuple[int, int | None]] = []
    jids: list[int] = []
    skipped: list[int] = []
    rows = B.live_rows(new, live.by_pk, B.judged_metrics(rubric), seen, jids, skipped)
    joined: dict[int, list[int]] = {}
    for i, sess in seen:
        answered[i] = sess
        if sess is not None:
            touched.add(sess)
            joined.setdefault(sess, []).append(i)
    for sess, ids in joined.items():
        by_session[sess] = (*by_session.get(sess, ()), *ids)
    parts = [frame[keep]]
    if rows:
        parts.append(pd.DataFrame(rows, columns=F.JUDGEMENT_COLUMNS))
    merged = (
        pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    )
    row_answer = np.concatenate([rows_of[keep], np.asarray(jids, dtype=np.int64)])
    reordered = False
    if jids and len(row_answer) > len(jids) and jids[0] < row_answer[: -len(jids)].max():
        # an answer committed after one with a higher id (a server's ids are handed out before
        # commit): a full read orders the rows by id, an answer's own rows in their order
        order = np.argsort(row_answer, kind="stable")
        merged = merged.iloc[order].reset_index(drop=True)
        row_answer = row_answer[order]
        reordered = True
    if touched:
        merged = _renumber(merged, row_answer, by_session, touched)
    grown = None
    if dropped or len(parts) == 1:
        merged = _as_built(merged)
    else:
        # No row dropped: every value kept, and new ones added. Values added to a column keep
        # the type a full read infers for it (ints with a gap stay float, mixed types stay
        # object), so only a column whose two parts were typed apart is typed again.
        apart = [c for c in merged.columns if _typed_apart(parts[0][c].dtype, parts[1][c].dtype)]
        merged = _as_built(merged, apart)
        if not reordered and not set(apart) & _CODED:
            # the earlier rows as they were: what was computed per row of them is kept
            grown = F.Grown(earlier=frame, table=merged)
    moved = replace(
        live,
        frames=replace(live.frames, judgements=merged, judgements_grown=grown),
        row_answer=row_answer,
        answered=answered,
        by_session=by_session,
        unreadable_live=frozenset(unreadable),
        skipped=frozenset((live.skipped - dropped) | set(skipped)),
        n_new=len(added),
        n_dropped=len(dropped),
        unkept=live.unkept + len(added) + len(dropped),
        tail=tail,
    )
    return moved, anchors_moved


def _changed_ids(
    live: LiveFrames, db: StudyDB, after: tuple[list[AddedRow], LogTail] | str | None
) -> tuple[set[int], list[int], LogTail, bool]:
    """The answers read before that are no longer current (superseded), the current live
    answers not read yet (ascending), the log's tail, and whether an answer outside live work
    (an anchor's, a calibration's) may have been added: from the rows added to the log since
    `live.tail` (`after`, rows_after's) when the log up to it is unchanged, else by comparing
    every current id."""
    answered, bad, skipped = live.answered, live.unreadable_live, live.skipped

    def known(i: int) -> bool:
        return i in answered or i in bad or i in skipped

    if isinstance(after, tuple):
        rows, tail = after
        gone = {r.supersedes for r in rows if r.supersedes is not None}
        dropped = {i for i in gone if known(i)}
        added = [
            r.id
            for r in rows
            if r.context == "live" and not r.by_operator and r.id not in gone and not known(r.id)
        ]
        # a correction keeps its answer's context: these rows say every context that moved
        return dropped, added, tail, any(r.context != "live" for r in rows)
    tail = tail_of(db)  # before the ids, as read_live does
    current = R.current_judgement_ids(db, ("live",))
    now = set(current)
    dropped = {i for i in answered.keys() | bad | skipped if i not in now}
    return dropped, [i for i in current if not known(i)], tail, True


def _by_session(live: LiveFrames) -> Mapping[int, tuple[int, ...]]:
    """`live.answered`'s answers by session (kept, else found from it)."""
    if live.by_session is not None:
        return live.by_session
    found: dict[int, list[int]] = {}
    for i, sess in live.answered.items():
        if sess is not None:
            found.setdefault(sess, []).append(i)
    return {sess: tuple(ids) for sess, ids in found.items()}


def _renumber(
    frame: pd.DataFrame,
    row_answer: np.ndarray,
    by_session: Mapping[int, tuple[int, ...]],
    touched: set[int],
) -> pd.DataFrame:
    """Each answer's place in its session, for the sessions an added or superseded answer
    belongs to (the place counts the session's current live answers in id order, as a full
    read does; `by_session`: the current live answers of each session)."""
    place = {i: n for sess in touched for n, i in enumerate(sorted(by_session.get(sess, ())))}
    sessions = frame["session_id"]
    if isinstance(sessions.dtype, np.dtype) and sessions.dtype.kind in "iuf":
        # a few sessions against a million numbers: compared, not hashed
        touched_ids = np.fromiter(touched, dtype=np.int64, count=len(touched))
        mask = np.isin(sessions.to_numpy(), touched_ids)
    else:
        mask = sessions.isin(touched).to_numpy()
    if not mask.any():
        return frame
    places = [place[i] for i in row_answer[mask]]
    column = frame["position"]
    if np.array_equal(column.to_numpy()[mask], np.asarray(places, dtype=column.dtype)):
        return frame  # answers added at the end of their sessions: every place as it was
    frame = frame.copy(deep=False)  # copy on write: only the new column is new
    column = frame["position"]
    # the places are whole numbers: a numeric column keeps its type (a gap elsewhere keeps it
    # float); any other column is typed again from its values
    numeric = column.dtype.kind in "if"
    pos = np.array(column.to_numpy() if numeric else column.to_numpy(dtype=object), copy=True)
    pos[mask] = places
    frame["position"] = pos
    return frame


def _typed_apart(kept: np.dtype, added: np.dtype) -> bool:
    """Whether a column whose kept rows are typed `kept` and whose added rows `added` is typed
    otherwise by a full read than by their concatenation. Ints beside floats are floats either
    way (ints with a gap are floats: a concatenation and a read alike), so only other pairs
    are typed again, at a million rows a column."""
    if kept == added:
        return False
    return not ({kept.kind, added.kind} == {"i", "f"} and np.float64 in (kept, added))


def _as_built(frame: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """The dtypes `pd.DataFrame(rows)` infers for these values (a concatenation keeps the
    parts' dtypes: an int column stays float once it held a gap, even after the gap went), in
    `columns` (None: every column)."""
    if columns == []:
        return frame
    out = {}
    for c in frame.columns:
        col = frame[c]
        if columns is not None and c not in columns:
            out[c] = col  # as it is, dtype and all
        elif col.dtype == object or col.dtype.kind in "if":
            (arr,) = convert_object_array([col.to_numpy(dtype=object)], dtype=None)
            out[c] = arr
        else:
            out[c] = col.to_numpy()
    return pd.DataFrame(out, columns=frame.columns)
