"""What a merge asks of every row of a rater package before it writes one: the same rules as an
answer given in the app, since a package is a file anyone can edit with sqlite3.

A package is a SQLite file: its columns hold whatever type was written into them, its timestamps
any text, its JSON anything. Each row is checked here, field by field, against the rubric of the
package and the shapes the app writes; the first bad one refuses the whole package in one line
naming the table, the row's id in the package and the field (`InputError`), and the merge's
transaction writes nothing.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session as OrmSession

from ..domain import clock
from ..domain.answers import check_stored
from ..domain.errors import InputError
from ..domain.pairs import CHOICES
from ..domain.rubric import Rubric
from ..domain.text import MAX_NAME, MAX_TEXT

CONTEXTS = ("live", "anchor", "calibration")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_INT_MAX = 2**31 - 1  # what PostgreSQL's integer holds: a bigger number would fail the server
# (table, its timestamp column) of every answer table a merge reads
TIMESTAMPS = (
    ("sessions", "started_at"),
    ("anchor_showings", "created_at"),
    ("judgements", "created_at"),
    ("pair_votes", "created_at"),
    ("calibrations", "created_at"),
)


def bad(table: str, row: Any, field: str, what: str) -> InputError:
    return InputError(
        f"{table} row {row}: {what}; the package was altered or damaged, and nothing was merged",
        field=field,
    )


def check_timestamps(s: OrmSession) -> None:
    """Read raw (the ORM's parser would crash on them): every timestamp is ISO text."""
    for table, col in TIMESTAMPS:
        for rid, raw in s.execute(text(f"SELECT id, {col} FROM {table}")):  # noqa: S608 - names are ours
            if not isinstance(raw, str) or len(raw) > 40:
                raise bad(table, rid, col, "the time is not a date and time")
            try:
                t = datetime.fromisoformat(raw)
            except ValueError:
                raise bad(table, rid, col, f"'{raw}' is not a date and time") from None
            t = t if t.tzinfo is None else t.astimezone(UTC).replace(tzinfo=None)
            if (why := clock.out_of_range(t)) is not None:
                raise InputError(
                    f"{table} row {rid}: {col} {why}; a study keeps no answer with such a time "
                    "(the team server refuses it too): ask the rater to set their computer's date "
                    "and time right (nothing was merged)",
                    field=col,
                )


def _uuid(table: str, rid: Any, field: str, v: Any, *, optional: bool = False) -> None:
    if v is None and optional:
        return
    if not isinstance(v, str) or not _UUID.match(v):
        raise bad(table, rid, field, "not an answer id (a UUID)")


def _int(table: str, rid: Any, field: str, v: Any, *, optional: bool = True, lo: int = -_INT_MAX):
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= _INT_MAX:
        raise bad(table, rid, field, f"{str(v)[:20]!r} is not a whole number in range")


def _str(table: str, rid: Any, field: str, v: Any, *, cap: int = MAX_NAME, optional=False):
    if v is None and optional:
        return
    if not isinstance(v, str) or len(v) > cap:
        n = len(v) if isinstance(v, (str, bytes)) else 0
        raise bad(table, rid, field, f"not a text of at most {cap} characters ({n})")


def _common(table: str, x: dict[str, Any]) -> None:
    """The fields every answer row has."""
    rid = x["id"]
    _uuid(table, rid, "uuid", x["uuid"])
    _int(table, rid, "queue_position", x.get("queue_position"))
    _int(table, rid, "time_ms", x.get("time_ms"), lo=0)
    _str(table, rid, "reason", x.get("reason"), cap=MAX_TEXT, optional=True)
    if "source" in x:
        _str(table, rid, "source", x["source"])


def check_rows(rows: Any, rubrics: dict[str, Rubric], version: str) -> None:
    """Every row of `rows` (a PackageRows) field by field; `rubrics`: the study's rubric of each
    version it knows; `version`: the package's (the one new answers must carry)."""
    for x in rows.sessions:
        _uuid("sessions", x["id"], "uuid", x["uuid"])
        _str("sessions", x["id"], "mode", x["mode"])
    for x in rows.showings:
        rid = x["id"]
        _uuid("anchor_showings", rid, "uuid", x["uuid"])
        for f in ("before_position", "seed"):
            _int("anchor_showings", rid, f, x[f], optional=False)
        _int("anchor_showings", rid, "anchor_set_version", x["anchor_set_version"])
        _str("anchor_showings", rid, "display_code", x["display_code"])
    for x in rows.judgements:
        rid = x["id"]
        _common("judgements", x)
        if x["context"] not in CONTEXTS:
            raise bad("judgements", rid, "context", f"not one of {', '.join(CONTEXTS)}")
        if (x["context"] == "anchor") != (x["showing"] is not None):
            raise bad("judgements", rid, "showing_pk", "an anchor answer names its showing")
        rubric = rubrics.get(x["rubric_version"]) if isinstance(x["rubric_version"], str) else None
        if rubric is None:
            raise bad("judgements", rid, "rubric_version", "not a rubric version of the study")
        if not isinstance(x["answers"], str) or len(x["answers"]) > 8 * MAX_TEXT:
            raise bad("judgements", rid, "answers", "not JSON text")
        try:
            decoded = json.loads(x["answers"])
        except (ValueError, RecursionError):
            raise bad("judgements", rid, "answers", "not valid JSON") from None
        try:
            check_stored(rubric, decoded)
        except InputError as exc:
            raise bad("judgements", rid, exc.field or "answers", exc.message) from None
    for x in rows.votes:
        rid = x["id"]
        _common("pair_votes", x)
        _int("pair_votes", rid, "side_seed", x["side_seed"])
        if x["choice"] not in CHOICES:
            raise bad("pair_votes", rid, "choice", f"not one of {', '.join(CHOICES)}")
    for x in rows.calibrations:
        rid = x["id"]
        _uuid("calibrations", rid, "uuid", x["uuid"])
        _str("calibrations", rid, "anchor_set", x["anchor_set"])
        _int("calibrations", rid, "anchor_set_version", x["anchor_set_version"])
        if x["rubric_version"] not in rubrics:
            raise bad("calibrations", rid, "rubric_version", "not a rubric version of the study")
    _check_chains("judgements", rows.judgements)
    _check_chains("pair_votes", rows.votes)


def _check_chains(table: str, rows: list[dict[str, Any]]) -> None:
    """Each answer id once, and no correction chain that goes round in a circle: depths walked
    set-wise, one pass per level (never a walk per row). A chain may be as long as the rater made
    it: the app sets no limit on corrections, and merge inserts a chain a level at a time (3,000
    corrections of one answer merge in about 4 s), so a long chain is never called altered."""
    by_uuid = {x["uuid"]: x for x in rows}
    if len(by_uuid) != len(rows):
        seen: set[str] = set()
        for x in rows:
            if x["uuid"] in seen:
                raise bad(table, x["id"], "uuid", "the package holds this answer id twice")
            seen.add(x["uuid"])
    level = {u for u, x in by_uuid.items() if x["supersedes"] not in by_uuid}
    placed = set(level)
    children: dict[str, list[str]] = {}
    for u, x in by_uuid.items():
        if x["supersedes"] in by_uuid:
            children.setdefault(x["supersedes"], []).append(u)
    while level:
        level = {c for u in level for c in children.get(u, ())}
        placed |= level
    if len(placed) != len(by_uuid):
        x = by_uuid[next(u for u in by_uuid if u not in placed)]
        raise bad(table, x["id"], "supersedes", "its corrections go round in a circle")
