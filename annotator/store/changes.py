"""A cheap "data version" of a study: it changes whenever anything a report reads changes.

Answers, judge scores, votes, items, anchors and calibrations are append-only
logs with integer ids, so the largest id of each (one index lookup) moves on
every insert (on a server the row count too: ids there are handed out before
commit, so a lower id can commit after a higher one), and with it the newest row's
content (a restored backup followed by as many new rows); the few small tables that
are updated in place (settings, raters' operator flags, rubric versions) are
hashed whole. Used as the cache
key of the dashboard's report: reopening it on unchanged data costs this one
query, not a recomputation.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import inspect, text

from .db import StudyDB

# Append-only tables and what marks their state: the largest id (one index lookup) for the
# big logs; anchors (small, keyed by item) also by count. Checked only when present, so a
# table added by a later migration joins by being listed here.
LOGS = {
    "items": "max(id)",
    "judgements": "max(id)",
    "judge_scores": "max(id)",
    "pair_votes": "max(id)",
    "calibrations": "max(id)",
    "adjudications": "max(id)",
    "anchors": "count(*), max(item_pk)",
}
# Small tables updated in place: hashed whole.
SMALL = {
    "settings": "key, value",
    "raters": "name, is_operator",
    "rubric_versions": "version, is_active",
}


def data_version(db: StudyDB) -> str:
    """A short hex digest of the study's data state (same data, same digest)."""
    h = hashlib.sha256()
    for table, mark in table_marks(db).items():
        h.update(f"{table}={mark};".encode())
    return h.hexdigest()[:20]


def table_marks(db: StudyDB) -> dict[str, str]:
    """Each present table's mark (LOGS and SMALL), as text: a live refresh re-reads only the
    tables whose mark moved, and `data_version` is their digest."""
    out: dict[str, str] = {}
    with db.read() as s:
        conn = s.connection()
        # the engine's own catalogue (sqlite_master, or PostgreSQL's) through the inspector
        present = set(inspect(conn).get_table_names())
        # A server hands out ids before commit: a lower id can commit after a higher one and
        # leave max(id) where it was. The row count moves with every insert, in any order.
        # (SQLite has one writer at a time: its ids commit in order.)
        counted = conn.dialect.name != "sqlite"
        for table, marks in LOGS.items():
            if counted and marks == "max(id)":
                marks = f"count(*), {marks}"
            if table in present:
                mark = tuple(s.execute(text(f"SELECT {marks} FROM {table}")).one())
                if marks.endswith("max(id)"):
                    # and the newest row itself: a backup copied back, then as many new rows,
                    # brings the same largest id on other content (its answer id, time, values)
                    newest = s.execute(
                        text(f"SELECT * FROM {table} ORDER BY id DESC LIMIT 1")
                    ).first()
                    mark += (hashlib.sha256(repr(tuple(newest or ())).encode()).hexdigest(),)
                out[table] = str(mark)
        for table, cols in SMALL.items():
            if table in present:
                rows = s.execute(text(f"SELECT {cols} FROM {table} ORDER BY 1")).all()
                out[table] = repr([tuple(r) for r in rows])
    return out
