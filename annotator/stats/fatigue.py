"""Each rater's agreement by place in the session: do they agree less as a session goes on?

Pools every metric but the verdict: each answer compared with the leave-one-out consensus
(raters.py) meets its judgement's place in the session, ordered by position (else by time):
the early and the late half, the four quarters, and `change` = late - early, negative when a
rater agrees less as the session goes on. Intervals resample items. Only the app's sessions
record an order: ratings imported from a file have none, and get a note instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import ItemBootstrap, Pending, Replicates, sliced_point, undefined
from .distinct import distinct, distinct_counts, run_starts
from .first_rows import first_rows
from .frames import StudyFrames
from .row_codes import codes_kept, index_positions

_NO_PLACE = ["rel", "session"]


def _positions(frames: StudyFrames) -> pd.DataFrame:
    """Relative place of each (rater, item) judgement in its session, 0 <= rel < 1, and its
    session's code, indexed by the judgement's first row in frames.judgements (its label)."""
    j = frames.judgements
    in_session = j["session_id"].notna() if len(j) else pd.Series(dtype=bool)
    # no session at all (ratings imported from a file): nothing below would survive the filter
    if not in_session.any():
        return pd.DataFrame(columns=_NO_PLACE)
    if in_session.sum() * 2 < len(j):
        # only a (rater, item) with a row in a session can keep its first row below: look for
        # first rows among the rows of those raters and items only (a study imported from a
        # file, then rated in the app, drops most rows here before the costly deduplication)
        s = j[in_session]
        j = j[j["rater"].isin(s["rater"].unique())]
        j = j[j["item_id"].isin(s["item_id"].unique())]
        in_session = j["session_id"].notna()
    # drop_duplicates(["rater", "item_id"])'s rows, found once for the tiles and raters too,
    # filtered as positions: no text column is taken (a copy of 100,000 ids a column)
    rows = first_rows(j, ("rater", "item_id"))
    # order is real only inside a session the app recorded: ratings imported from a file
    # without sessions carry the import's time, not the order they were made in
    rows = rows[in_session.to_numpy()[rows]]
    if not len(rows):
        return pd.DataFrame(columns=_NO_PLACE)
    place = j["position"]
    if place.dtype.kind in "iuf":  # numbers already (the app's column): read, not parsed
        order = place.to_numpy()[rows].astype(float)
    else:
        order = pd.to_numeric(place.iloc[rows], errors="coerce").to_numpy(float)
    if np.isnan(order).all():
        t = pd.to_datetime(j["created_at"].iloc[rows], errors="coerce", utc=True)
        if t.isna().all():
            return pd.DataFrame(columns=_NO_PLACE)
        order = t.astype("int64").where(t.notna()).to_numpy(float)
    # a judgement's rank in its (rater, session) by order, ties in table order (a groupby's
    # rank(method="first") - 1), over the two columns' codes: the groupby hashed the session
    # ids as Python objects, half of this function at a million judgements; a missing rater
    # is left out, as a groupby leaves a missing key out
    keep = ~np.isnan(order) & j["rater"].notna().to_numpy()[rows]
    rows, order = rows[keep], order[keep]
    if not len(rows):
        return pd.DataFrame(columns=_NO_PLACE)
    # a session's code only groups and counts its judgements: numbered by counting where the
    # ids are whole numbers (the app's), not by hashing them
    sid = j["session_id"]
    if sid.dtype.kind in "iu":
        session = distinct(sid.to_numpy()[rows])[1].astype(np.int64, copy=False)
    else:
        session = pd.factorize(sid.iloc[rows])[0].astype(np.int64)
    group = _rater_codes(frames, j, rows) * (int(session.max()) + 1) + session
    n = len(rows)
    span = int(order.max()) + 1
    # whole places (compared with their integers, in range: a cast, not a remainder per place)
    whole = order.min() >= 0 and (int(group.max()) + 1) * span < 2**62
    places = order.astype(np.int64) if whole else None
    if places is not None and (places == order).all():
        # one key, sorted stably (ties stay in table order), as the lexsort orders them; the
        # rows come mostly in session order, which a stable sort is quick on
        by = np.argsort(group * span + places, kind="stable")
    else:
        by = np.lexsort((np.arange(n), order, group))
    # each judgement's place in its group: its place in the sorted rows less its group's first
    first = np.flatnonzero(run_starts(group[by]))
    rank = np.empty(n)
    rank[by] = np.arange(n) - np.repeat(first, np.diff(first, append=n))
    return pd.DataFrame(
        {
            "rel": rank / np.bincount(group)[group],
            "session": session,  # a session's code: its judgements are counted, never named
        },
        index=j.index[rows],
    )


# answers counted at once by the fatigue figures' counts (a batch's keys and weights: 64 MB)
_BATCH = 2**22


def _batches(
    pooled: list[tuple[np.ndarray, np.ndarray, np.ndarray]], most: int
) -> list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """`pooled`'s metrics in order, in runs of at most `most` answers (a metric with more
    alone)."""
    out: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = []
    size = most
    for one in pooled:
        if size + len(one[0]) > most:
            out.append([])
            size = 0
        out[-1].append(one)
        size += len(one[0])
    return out


def _rater_codes(frames: StudyFrames, j: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """A code per rater of `j`'s `rows` (positions; none missing), the same for the same rater:
    from the codes the answers were coded with where they are kept for the whole table (a live
    refresh), else by factorizing the names."""
    rc = codes_kept(frames.judgements, "rater") if j is frames.judgements else None
    if rc is not None and len(rc.who_codes) == len(j):
        return pd.factorize(rc.who_codes[rows])[0].astype(np.int64)
    return pd.factorize(j["rater"].iloc[rows])[0].astype(np.int64)


def fatigue_figures(
    plan: ItemBootstrap,
    frames: StudyFrames,
    items: pd.DataFrame,
    out: dict[str, Any],
    raters: list[str],
    pooled: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    min_count: int,
) -> None:
    """`pooled`: per metric the (item idx, rater index, agrees: 1 or 0) of every answer
    compared with a leave-one-out consensus. Answers meet their place in the session through
    one integer key per (item, rater), never a merge on strings: a million answers stay a few
    arrays."""
    note = (
        "agreement with the leave-one-out consensus by place in the session: early = first "
        "half, late = second half; change = late - early"
    )
    pos = _positions(frames)
    for r in raters:
        out[r]["fatigue"] = {"note": "no answers compared with a consensus of others"}
    if not pooled:
        return
    if not len(pos):
        for r in raters:
            out[r]["fatigue"] = {
                "note": "no session order recorded (ratings imported from a file have none)"
            }
        return
    R = len(raters)
    p_idx, p_rid = _item_and_rater(frames.judgements, pos, items, raters)
    rel = pd.to_numeric(pos["rel"], errors="coerce").to_numpy(float)
    ok = (p_idx >= 0) & (p_rid >= 0) & ~np.isnan(rel)
    p_key = p_idx[ok].astype(np.int64) * R + p_rid[ok]
    p_rel, p_sess = rel[ok], pos["session"].to_numpy(np.int64)[ok]
    if not len(p_key):
        return
    # a live estimate's sums by key are whole numbers, the same in any order of the
    # judgements; the binary search and a resampled block's rows take them sorted
    n_keys = len(items) * R
    by_key = _by_key(p_key, n_keys)
    if plan.n_boot or not by_key:
        order = np.argsort(p_key, kind="stable")
        p_key, p_rel, p_sess = p_key[order], p_rel[order], p_sess[order]
    # Added up per positioned judgement (item, rater). A judgement's half and quarter are its
    # own, the same for every metric, so only its answers compared (n) and agreeing (agree) are
    # counted per metric, into two columns; the weights are 0 or 1, so every sum is a whole
    # number and exact in any order. Bounded by the judgements, not by items x raters, and no
    # array of every answer of every metric at once.
    P = len(p_key)
    p_late = (p_rel >= 0.5).astype(np.int64)
    p_quarter = np.minimum((p_rel * 4).astype(np.int64), 3)
    S = int(p_sess.max()) + 1
    if by_key:
        # counted per (item, rater) key, then read at the judgements' (distinct) keys once,
        # not looked up metric by metric (keys are below len(items) * R: idx rows of `items`);
        # an answer without a place in a session (an imported one) is counted and never read
        # several metrics to a count: each count makes (and faults in) an array of every key,
        # 4 MB at a million judgements, so the fewer counts the better
        # an answer agrees or not (0 or 1): one count of (key, agrees) cells gives both sums
        cells = np.zeros(2 * n_keys, dtype=np.int64)
        for part in _batches(pooled, _BATCH):
            cell = np.concatenate([(idx * R + rid) * 2 + (ag != 0) for idx, rid, ag in part])
            cells += np.bincount(cell, minlength=2 * n_keys)
        at = 2 * p_key
        agreeing = cells[at + 1]
        n_of, agree_of = (cells[at] + agreeing).astype(float), agreeing.astype(float)
    else:
        n_of, agree_of = np.zeros(P), np.zeros(P)
        for idx, rid, ag in pooled:
            key = idx * R + rid
            at = np.minimum(np.searchsorted(p_key, key), len(p_key) - 1)
            hit = p_key[at] == key
            if not hit.all():  # answers without a place in a session (imported ones)
                at, ag = at[hit], ag[hit]
            n_of += np.bincount(at, minlength=P)
            agree_of += np.bincount(at, weights=ag, minlength=P)
    # A judgement's rater, half, quarter and session are the same for each of its answers: the
    # per-rater counts follow from its answers compared, once (whole numbers, exact), and its
    # sessions are those of its judgements with an answer compared.
    j_item, j_rid = np.divmod(p_key, R)
    n_half = _counted(j_rid * 2 + p_late, n_of, 2 * R).reshape(R, 2)
    n_q = _counted(j_rid * 4 + p_quarter, n_of, 4 * R).reshape(R, 4)
    compared = n_of > 0
    n_answers = n_half.sum(axis=1)
    if not n_answers.any():
        return
    # each rater's distinct sessions, counted over the (rater, session) codes' small range
    sessions = distinct_counts(j_rid[compared] * S + p_sess[compared])[0]
    n_sessions = np.bincount(sessions // S, minlength=R)
    if plan.n_boot:
        reps = _resampled(plan, p_late, p_quarter, n_of, agree_of, j_item, j_rid, R)
    else:  # a live estimate: each rater's 12 sums alone (whole numbers: add_sliced's, exactly)
        half, fourth = j_rid * 12 + 2 * p_late, j_rid * 12 + 4 + 2 * p_quarter
        flat = np.zeros(R * 12)
        for col, w in ((half, n_of), (half + 1, agree_of), (fourth, n_of), (fourth + 1, agree_of)):
            flat += np.bincount(col, weights=w, minlength=R * 12)  # each cell from one of them
        sums = flat.reshape(R, 12)
        reps = sliced_point(sums, np.asarray(sums.any(axis=1)), _shares)
    for i, r in enumerate(raters):
        if not n_answers[i]:
            continue

        def fig(n: int, col: int, _i: int = i) -> Any:
            if n < min_count:
                return undefined(int(n), f"fewer than {min_count} answers: a share is not shown")
            return Pending(reps, int(n), col=_i * 7 + col)

        out[r]["fatigue"] = {
            "early": fig(n_half[i, 0], 0),
            "late": fig(n_half[i, 1], 1),
            "change": fig(min(n_half[i]), 2),
            "by_position_quarter": [fig(n_q[i, q], 3 + q) for q in range(4)],
            "n_answers": int(n_answers[i]),
            "n_sessions": int(n_sessions[i]),
            "note": note,
        }


def _item_and_rater(
    j: pd.DataFrame, pos: pd.DataFrame, items: pd.DataFrame, raters: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each positioned judgement's row in `items` and place in `raters` (-1: none). From the
    codes the raters' answers were coded with when they are kept for this table (a live
    refresh: row_codes.codes_kept; its rows are `pos`'s index), else by looking the ids up
    (200,000 of them: 10-15 ms of a refresh)."""
    rc = codes_kept(j, "rater")
    ids, names = pd.Index(items["item_id"]), pd.Index(raters)
    if (
        rc is not None
        and isinstance(j.index, pd.RangeIndex)
        and j.index.start == 0
        and j.index.step == 1
        and rc.item_index.equals(ids)
    ):
        rows = pos.index.to_numpy()
        to_rater = names.get_indexer(rc.who_names)
        who = rc.who_codes[rows]
        p_rid = np.where(who >= 0, to_rater[np.maximum(who, 0)], -1) if len(to_rater) else who
        return rc.item_pos[rows], p_rid
    return (
        index_positions(ids, j["item_id"].loc[pos.index]),
        index_positions(names, j["rater"].loc[pos.index].astype(str)),
    )


def _shares(s: np.ndarray) -> np.ndarray:
    """Per rater (a row of 12 sums: n and agree of each half, then of each quarter) the shares
    early, late, change = late - early, and the four quarters."""
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = s[:, 1::2] / s[:, 0::2]  # early, late, q0..q3
    return np.column_stack([shares[:, 0], shares[:, 1], shares[:, 1] - shares[:, 0], shares[:, 2:]])


def _resampled(
    plan: ItemBootstrap,
    p_late: np.ndarray,
    p_quarter: np.ndarray,
    n_of: np.ndarray,
    agree_of: np.ndarray,
    j_item: np.ndarray,
    j_rid: np.ndarray,
    R: int,
) -> Replicates:
    """The shares as a sliced statistic of the items (a slice a rater): 12 columns per
    judgement, 2*half + {0: n, 1: agree}, then 4 + 2*quarter + {0, 1}."""
    P = len(n_of)
    table = np.zeros(P * 12)
    half, fourth = np.arange(P) * 12 + 2 * p_late, np.arange(P) * 12 + 4 + 2 * p_quarter
    table[half], table[half + 1] = n_of, agree_of
    table[fourth], table[fourth + 1] = n_of, agree_of
    cell = np.flatnonzero(table)
    judgement = cell // 12
    return plan.add_sliced(
        j_item[judgement], cell % 12, table[cell], 12, _shares, j_rid[judgement], R
    )


def _counted(key: np.ndarray, n: np.ndarray, size: int) -> np.ndarray:
    """The whole counts `n` summed by `key` in 0..size-1, as integers."""
    return np.bincount(key, weights=n, minlength=size).astype(np.int64)


def _by_key(p_key: np.ndarray, n_keys: int) -> bool:
    """Whether each metric's answers are counted in a table of every one of `n_keys` (item,
    rater) keys, read at the distinct `p_key`: where such a table is small beside the keys;
    else a binary search of the sorted `p_key` finds them. 200,000 random binary searches a
    metric were 0.3 s of a million-judgement study's raters' section, two counts a few ms."""
    return n_keys <= 8 * len(p_key) + (1 << 20)  # else sparse: few raters per item among many


__all__ = ["fatigue_figures"]
