"""Long-format CSV files (docs/design.md 5.3): ratings, judge scores, pair votes.
Tested in tests/unit/test_ingest_bad_input.py and tests/unit/test_real_data.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..domain import clock
from ..domain.answers import missing_metrics
from ..domain.errors import InputError
from ..domain.rubric import Metric, Rubric, parse_value
from ..domain.text import check_name, check_text, person_name, unguard_cell
from .readers import read_bytes

CHOICES = ("left", "right", "both", "neither")
# A reason may be long (pasted notes), but a cell is read into memory whole: 1 MiB
# bounds it (Python's csv default, 128 KiB, refused real reasons).
MAX_CELL = 1 << 20
_TRUE = {"1", "true", "yes", "y"}


def read_csv(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    src = str(path)
    raw = read_bytes(path, src)  # read once: one line for a missing file, a pipe, a bad path
    try:
        fh = io.StringIO(raw.decode("utf-8-sig"), newline="")
    except UnicodeDecodeError:
        raise InputError("file is not UTF-8 text; save it as UTF-8", source=src) from None
    csv.field_size_limit(MAX_CELL)
    with fh:
        reader = csv.DictReader(fh)
        try:
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(
                    f"missing column '{missing[0]}' (header: {','.join(header)})",
                    source=src,
                    line=1,
                    field=missing[0],
                )
            for row in reader:
                if None in row:
                    raise InputError(
                        "row has more cells than the header", source=src, line=reader.line_num
                    )
                # The formula guard our exports add ("'=x", domain.text.guard_cell) is not
                # part of the value: removed here, so an export reads back as it was.
                yield (
                    reader.line_num,
                    {k: unguard_cell(v) if isinstance(v, str) else v for k, v in row.items()},
                )
        except UnicodeDecodeError:
            raise InputError("file is not UTF-8 text; save it as UTF-8", source=src) from None
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise InputError(
                    f"a cell is longer than {MAX_CELL // 1024} KiB; shorten it",
                    source=src,
                    line=reader.line_num + 1,
                ) from None
            raise InputError(f"not valid CSV ({exc})", source=src, line=reader.line_num) from None


def _time(raw: str | None, src: str, line: int) -> datetime | None:
    if not raw:
        return None
    try:
        t = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"created_at '{raw}' is not an ISO 8601 time", source=src, line=line, field="created_at"
        ) from None
    try:
        t = t.replace(tzinfo=None) if t.tzinfo is None else t.astimezone().replace(tzinfo=None)
    except OverflowError:  # 0001-01-01T00:00+01:00 has no time before it to convert to
        raise InputError(
            f"created_at '{raw}' falls outside the years 1 to 9999 once converted",
            source=src,
            line=line,
            field="created_at",
        ) from None
    if (why := clock.out_of_range(t)) is not None:  # the rule of every stored answer's time
        raise InputError(
            f"created_at {why}; fix the time", source=src, line=line, field="created_at"
        )
    return t


def _metric(rubric: Rubric, key: str, src: str, line: int) -> Metric:
    if not rubric.has(key):
        raise InputError(
            f"unknown metric '{key}' for rubric '{rubric.id}'",
            source=src,
            line=line,
            field="metric",
        )
    return rubric.metric(key)


def _item(item_id: str, known: set[str], src: str, line: int, fld: str = "item_id") -> str:
    item_id = item_id.strip()
    if item_id not in known:
        raise InputError(
            f"unknown item_id '{item_id}'; import the items first", source=src, line=line, field=fld
        )
    return item_id


def _name(raw: str | None, col: str, src: str, line: int) -> str:
    name = (raw or "").strip()
    if not name:
        raise InputError(f"empty '{col}'", source=src, line=line, field=col)
    return check_name(name, f"'{col}'", source=src, line=line, field=col)


@dataclass
class RatingGroup:
    item_id: str
    rater: str
    answers: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    created_at: datetime | None = None
    session: str | None = None


def _once(seen: dict[Any, int], key: Any, said: str, src: str, line: int, fld: str) -> None:
    """A table holds each of its answers once (a rater's value of a metric on an item, a vote
    on a pair): a second row would silently replace the first, so it is refused, naming both
    lines. `said` is the message's start ("rater 'ana' rated 'm' of 'i'")."""
    if key in seen:
        raise InputError(
            f"{said} twice (first on line {seen[key]})", source=src, line=line, field=fld
        )
    seen[key] = line


def parse_ratings(path: str | Path, rubric: Rubric, known: set[str]) -> list[RatingGroup]:
    """One judgement per (item, rater): its metric rows gathered together.

    A judgement must answer every required metric, as in the app, unless one of
    its rows says `partial` = yes (an optional column): a half judgement is
    otherwise a data error that would pass silently into agreement.
    """
    p = Path(path)
    src = str(p)
    groups: dict[tuple[str, str], RatingGroup] = {}
    seen: dict[tuple[str, str, str], int] = {}
    first_line: dict[tuple[str, str], int] = {}
    partial: set[tuple[str, str]] = set()
    for n, row in read_csv(p, ("item_id", "rater", "metric", "value")):
        item = _item(row["item_id"], known, src, n)
        rater = person_name(
            _name(row["rater"], "rater", src, n), "'rater'", source=src, line=n, field="rater"
        )
        metric = _metric(rubric, row["metric"].strip(), src, n)
        said = f"rater '{rater}' rated '{metric.key}' of '{item}'"
        _once(seen, (item, rater, metric.key), said, src, n, "metric")
        g = groups.setdefault((item, rater), RatingGroup(item, rater))
        first_line.setdefault((item, rater), n)
        if (row.get("partial") or "").strip().lower() in _TRUE:
            partial.add((item, rater))
        value = parse_value(metric, row["value"], source=src, line=n)
        if not metric.judgeable:
            value = check_text(value, "the reason", source=src, line=n, field="value")
            g.reason = value
        g.answers[metric.key] = value
        g.created_at = _time(row.get("created_at"), src, n) or g.created_at
        g.session = (row.get("session") or "").strip() or g.session
    for group_key, g in groups.items():
        if group_key in partial:
            continue
        missing = missing_metrics(rubric, g.answers)
        if missing:
            raise InputError(
                f"rater '{g.rater}' on '{g.item_id}' answers {len(g.answers)} metric(s) but not the required "
                f"{', '.join(missing)}; add those rows, or mark the judgement partial (column 'partial' = yes)",
                source=src,
                line=first_line[group_key],
                field="metric",
            )
    return list(groups.values())


@dataclass(frozen=True)
class JudgeRow:
    item_id: str
    judge: str
    metric: str
    value: Any
    reason: str | None
    confidence: float | None = None  # the judge's probability that its answer is right


def parse_confidence(raw: str | None, src: str, line: int) -> float | None:
    """The optional `confidence` column: empty, or a probability from 0 to 1."""
    s = (raw or "").strip()
    if not s:
        return None
    try:
        c = float(s)
    except ValueError:
        c = float("nan")
    if not 0.0 <= c <= 1.0:  # NaN fails too
        raise InputError(
            f"confidence '{s}' is not a probability from 0 to 1 (leave it empty for none)",
            source=src,
            line=line,
            field="confidence",
        )
    return c


def parse_judge_value(metric: Metric, raw: str, src: str, line: int | None) -> Any:
    """A judge's cell: the raters' rule, unless the metric declares the judge's own scale
    (`KindSpec.parse_judge_value`)."""
    return metric.spec.parse_judge_value(metric, raw, source=src, line=line)


def parse_judge(path: str | Path, rubric: Rubric, known: set[str]) -> list[JudgeRow]:
    p = Path(path)
    src = str(p)
    out: list[JudgeRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for n, row in read_csv(p, ("item_id", "judge", "metric", "value")):
        item = _item(row["item_id"], known, src, n)
        judge = _name(row["judge"], "judge", src, n)
        metric = _metric(rubric, row["metric"].strip(), src, n)
        said = f"judge '{judge}' scored '{metric.key}' of '{item}'"
        _once(seen, (item, judge, metric.key), said, src, n, "metric")
        value = parse_judge_value(metric, row["value"], src, n)
        reason = (
            check_text(row.get("reason") or "", "the reason", source=src, line=n, field="reason")
            or None
        )
        confidence = parse_confidence(row.get("confidence"), src, n)
        out.append(JudgeRow(item, judge, metric.key, value, reason, confidence))
    return out


@dataclass(frozen=True)
class VoteRow:
    pair_id: str
    item_left: str
    item_right: str
    rater: str
    choice: str
    created_at: datetime | None
    line: int


def parse_pairs(
    path: str | Path, known: set[str], *, judges: bool = False, anonymous: bool = False
) -> list[VoteRow]:
    """Pair votes; a rater votes on a pair of items once, a judge once per order shown (A|B and
    B|A). `anonymous`: the file's rater column names no one (one voter string on every vote):
    each vote becomes its own rater, named by the file's content and the line, so the same file
    imported twice is still refused as already there."""
    p = Path(path)
    src = str(p)
    out: list[VoteRow] = []
    seen: dict[tuple[str, ...], int] = {}
    seen_items: dict[tuple[frozenset, str, str], int] = {}
    pair_items: dict[str, tuple[frozenset, int]] = {}
    for n, row in read_csv(p, ("pair_id", "item_left", "item_right", "rater", "choice")):
        pid = _name(row["pair_id"], "pair_id", src, n)
        left = _item(row["item_left"], known, src, n, "item_left")
        right = _item(row["item_right"], known, src, n, "item_right")
        if left == right:
            raise InputError(
                "item_left and item_right are the same item", source=src, line=n, field="item_right"
            )
        rater = person_name(
            _name(row["rater"], "rater", src, n), "'rater'", source=src, line=n, field="rater"
        )
        if anonymous:
            token = hashlib.sha256(f"{pid}\x1f{left}\x1f{right}\x1f{n}".encode()).hexdigest()
            rater = f"anonymous-{token[:12]}"
        choice = row["choice"].strip().lower()
        if choice not in CHOICES:
            raise InputError(
                f"choice '{row['choice']}' is not one of {', '.join(CHOICES)}",
                source=src,
                line=n,
                field="choice",
            )
        both = frozenset((left, right))
        if pid in pair_items and pair_items[pid][0] != both:
            raise InputError(
                f"pair '{pid}' names other items than on line {pair_items[pid][1]}",
                source=src,
                line=n,
                field="pair_id",
            )
        pair_items.setdefault(pid, (both, n))
        key = (pid, rater, left) if judges else (pid, rater)
        order = f" with '{left}' on the left" if judges else ""
        _once(seen, key, f"'{rater}' voted on pair '{pid}'{order}", src, n, "rater")
        same_items = (both, rater, left if judges else "")
        if same_items in seen_items:
            raise InputError(
                f"'{rater}' voted twice on the same two items (lines {seen_items[same_items]} and "
                f"{n}; the store keeps one vote per rater per pair of items): if the file's rater "
                "column names no one, import it with --anonymous (each vote its own rater)",
                source=src,
                line=n,
                field="rater",
            )
        seen_items[same_items] = n
        out.append(
            VoteRow(pid, left, right, rater, choice, _time(row.get("created_at"), src, n), n)
        )
    return out
