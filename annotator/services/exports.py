"""Exports a team can take elsewhere: open tables (CSV / JSON Lines / Parquet). The two folder
layouts built on them are their own modules: the Hugging Face `datasets` layout with its
dataset card (services/export_hf.py) and Label Studio tasks (services/export_label_studio.py).

Every table is one `Table` entry in `TABLES` (its columns, typed, and how its rows are
read); the writers and the CLI read that registry (`EXPORT_KINDS`: the tables, then the two
folder layouts), so one more table is one more entry. The judgement and pair tables keep the
columns of the CSV contract (docs/design.md 5.3), so a CSV export is a ratings / pair votes
file that `annotator import ratings|pairs` reads back; JSON Lines and Parquet hold the
same table (Parquet typed: times as timestamps, counts as integers). Times are UTC.
What is exported is what the reports count: current answers (a correction replaces the
answer it supersedes), live items (anchors are calibration material), no operators.
Tested in tests/unit/test_interop_exports.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ..base.atomic import atomic_open
from ..domain.answers import missing_metrics
from ..domain.errors import InputError
from ..domain.rubric import format_value
from ..ingest.readers import read_jsonl
from ..ingest.tables import read_csv
from ..reports.csv_report import CSV_OPTIONS, neutralise_frame
from ..store import rows as R
from ..store.exports import ItemRecord, item_records, judgement_records, vote_records
from .frames import latest_versions
from .study import Study

FORMATS = ("csv", "jsonl", "parquet")


@dataclass(frozen=True)
class Table:
    name: str
    what: str
    columns: tuple[tuple[str, str], ...]  # (column, type): string | int64 | float64 | timestamp
    rows: Callable[[Study], list[dict[str, Any]]]

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def live_items(study: Study) -> dict[int, ItemRecord]:
    return {r.pk: r for r in item_records(study.db) if not r.is_anchor}


def is_partial(rubric: Any, j: Any) -> bool:
    """A judgement that skips a required metric (the ratings CSV's `partial` = yes)."""
    typed = {k: rubric.metric(k).spec.from_json(v) for k, v in j.answers.items() if rubric.has(k)}
    return bool(missing_metrics(rubric, typed))


def label_rows(study: Study) -> list[dict[str, Any]]:
    from .escalation import label_rows as rows

    return rows(study)


def gold_rows(study: Study) -> list[dict[str, Any]]:
    from .adjudication import gold_rows as rows

    return rows(study)


def _judgement_rows(study: Study) -> list[dict[str, Any]]:
    rubric = study.rubric
    items = live_items(study)
    out = []
    for j in judgement_records(study.db, rubric.version):
        it = items.get(j.item_pk)
        if it is None:
            continue
        partial = "yes" if is_partial(rubric, j) else None
        for m in rubric.metrics:
            if m.key in j.answers:
                out.append(
                    {
                        "item_id": it.item_id,
                        "rater": j.rater,
                        "metric": m.key,
                        "value": format_value(j.answers[m.key]),
                        "created_at": _iso(j.created_at),
                        "session": j.session,
                        "time_ms": j.time_ms,
                        "partial": partial,
                    }
                )
    return out


def _vote_rows(study: Study, judges: bool) -> list[dict[str, Any]]:
    items = {r.pk: r.item_id for r in item_records(study.db)}
    return [
        {
            "pair_id": v.pair_id,
            "item_left": items[v.item_left],
            "item_right": items[v.item_right],
            "rater": v.rater,
            "choice": v.choice,
            "created_at": _iso(v.created_at),
            "time_ms": v.time_ms,
        }
        for v in vote_records(study.db)
        if v.is_judge == judges
    ]


def _judge_score_rows(study: Study) -> list[dict[str, Any]]:
    """Each judge's latest version, the one the report reads: one row per judge x item x metric,
    so the file imports back as it is (`annotator judge compare` shows the earlier versions)."""
    items = live_items(study)
    scores = R.judge_scores(study.db)
    latest = latest_versions(scores)
    return [
        {
            "item_id": items[sc.item_pk].item_id,
            "judge": sc.judge,
            "metric": sc.metric,
            "value": format_value(sc.value),
            "reason": sc.reason,
            "confidence": sc.confidence,
        }
        for sc in scores
        if sc.item_pk in items and latest[sc.judge] == sc.version
    ]


def _item_rows(study: Study) -> list[dict[str, Any]]:
    return [
        {
            "item_id": r.item_id,
            "case_id": r.case_id,
            "generator": r.generator,
            "prompt": r.prompt,
            "criteria": r.criteria,
            "slice": r.slice,
            "seed": r.seed,
            "text": r.text,
            "task_type": r.task_type,
            "n_images": len(r.outputs),
        }
        for r in live_items(study).values()
    ]


_VOTE_COLUMNS = (
    ("pair_id", "string"),
    ("item_left", "string"),
    ("item_right", "string"),
    ("rater", "string"),
    ("choice", "string"),
    ("created_at", "timestamp"),
    ("time_ms", "int64"),
)
TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table(
            "judgements",
            "one row per rater x item x metric (the ratings CSV of contract 5.3)",
            (
                ("item_id", "string"),
                ("rater", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("created_at", "timestamp"),
                ("session", "string"),
                ("time_ms", "int64"),
                ("partial", "string"),
            ),
            _judgement_rows,
        ),
        Table(
            "pairs",
            "one row per rater x pair (the pair votes CSV of contract 5.3)",
            _VOTE_COLUMNS,
            lambda st: _vote_rows(st, False),
        ),
        Table(
            "judge-pairs",
            "the judges' pair votes (judge name in `rater`)",
            _VOTE_COLUMNS,
            lambda st: _vote_rows(st, True),
        ),
        Table(
            "judge-scores",
            "one row per judge x item x metric (the judge CSV of contract 5.3)",
            (
                ("item_id", "string"),
                ("judge", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("reason", "string"),
                ("confidence", "float64"),
            ),
            _judge_score_rows,
        ),
        Table(
            "gold",
            "one row per live item x metric: the final answer (adjudicated, else clear consensus, else "
            "unresolved), the raw answers and reasons, the judge's answer (the lead's view)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("source", "string"),
                ("n_raters", "int64"),
                ("answers", "string"),
                ("judge", "string"),
                ("adjudication_reason", "string"),
                ("adjudicated_by", "string"),
                ("category", "string"),
            ),
            lambda st: gold_rows(st),
        ),
        Table(
            "labels",
            "one row per live item x certified metric, then one per pair a judge or a human "
            "voted on (metric `pair_vote`, value the winning item or the tie, generator the "
            "winning one): the final label and its source (the judge's answer accepted under "
            "the guarantee named, the humans' as in the gold or their clear majority, or "
            "escalated to raters)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("source", "string"),
                ("judge", "string"),
                ("confidence", "float64"),
                ("threshold", "float64"),
                ("guarantee", "string"),
                ("mode", "string"),
                ("n_raters", "int64"),
                ("pair_id", "string"),
                ("item_a", "string"),
                ("item_b", "string"),
            ),
            lambda st: label_rows(st),
        ),
        Table(
            "items",
            "one row per live item (the lead's view: generators included)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("prompt", "string"),
                ("criteria", "string"),
                ("slice", "string"),
                ("seed", "int64"),
                ("text", "string"),
                ("task_type", "string"),
                ("n_images", "int64"),
            ),
            _item_rows,
        ),
    )
}


# What `annotator export KIND` takes: every table, then the layouts written by their own function.
CONTAINERS = ("label-studio", "hf")
EXPORT_KINDS: tuple[str, ...] = (*TABLES, *CONTAINERS)


# ---- the three containers -----------------------------------------------------------------------


def format_of(path: Path) -> str:
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(
            f"cannot tell the format from '{path.suffix or 'no suffix'}'; end the file name in "
            f"{', '.join('.' + f for f in FORMATS)}",
            source=str(path),
            field="--out",
        )
    return fmt


def write_rows(table: Table, rows: list[dict[str, Any]], path: Path) -> Path:
    """The table at `path` in the format its suffix names, written atomically."""
    fmt = format_of(path)
    if path.is_dir():
        raise InputError("this is a folder; give a file name", source=str(path), field="--out")
    if fmt == "jsonl":
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            for r in rows:
                fh.write(json.dumps({c: r.get(c) for c in table.names}, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        import pandas as pd

        df = pd.DataFrame(rows, columns=table.names)
        for col, typ in table.columns:
            if typ == "int64":
                df[col] = df[col].astype("Int64")
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            # a reason starting with "=" must not run as a spreadsheet formula, and one holding
            # a bare CR must not split its record (CSV_OPTIONS: CRLF, so CR is quoted)
            neutralise_frame(df).to_csv(fh, index=False, **CSV_OPTIONS)
    else:
        pq = _pyarrow("parquet")
        with atomic_open(path, "wb") as fh:
            pq.write_table(arrow_table(table, rows), fh)
    return path


def _pyarrow(part: str = "") -> Any:
    """pyarrow (a dependency; the raters' installer leaves it out): one line when it is missing."""
    import importlib

    try:
        return importlib.import_module("pyarrow" + (f".{part}" if part else ""))
    except ImportError:
        raise InputError(
            "Parquet needs pyarrow, which this installation does not have; export .csv or .jsonl, "
            "or `pip install pyarrow`",
            field="--out",
        ) from None


def arrow_table(table: Table, rows: list[dict[str, Any]]) -> Any:
    pa = _pyarrow()

    # every column typed from the registry, so one with no value in this study is still a typed
    # column (not arrow's `null`); times are UTC and say so (the store keeps naive UTC)
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    arrays = []
    for col, typ in table.columns:
        vals = [r.get(col) for r in rows]
        if typ == "timestamp":
            vals = [datetime.fromisoformat(v).replace(tzinfo=UTC) if v else None for v in vals]
        arrays.append(pa.array(vals, type=types[typ]))
    return pa.Table.from_arrays(arrays, schema=pa.schema([(c, types[t]) for c, t in table.columns]))


def read_rows(table: Table, path: Path) -> list[dict[str, Any]]:
    """A table written by `write_rows`, back as rows shaped like the ones written (for checks and
    round trips): times as ISO text, counts as int, missing as None."""
    fmt = format_of(path)
    if fmt == "jsonl":
        rows = [r for _, r in read_jsonl(path)]
    elif fmt == "csv":
        kinds = dict(table.columns)
        rows = []
        for _, raw in read_csv(path, tuple(table.names)):
            row: dict[str, Any] = {}
            for c in table.names:
                v = raw.get(c)
                # "" is an answer in `value` (no tag); elsewhere an empty cell is a missing one
                row[c] = (
                    # v is neither "" nor None here: `value`, the exception, is text
                    (
                        int(cast(str, v))
                        if kinds[c] == "int64"
                        else float(cast(str, v))
                        if kinds[c] == "float64"
                        else v
                    )
                    if v not in ("", None) or c == "value"
                    else None
                )
            rows.append(row)
    else:
        rows = _pyarrow("parquet").read_table(path).to_pylist()
        for r in rows:
            for c, typ in table.columns:
                if typ == "timestamp" and r.get(c) is not None:
                    t = r[c]
                    r[c] = (t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo else t).isoformat()
    return [{c: r.get(c) for c in table.names} for r in rows]


def export_table(study: Study, name: str, out: Path) -> tuple[Path, int]:
    study.require_lead("an export")
    table = TABLES[name]
    format_of(out)
    rows = table.rows(study)
    return write_rows(table, rows, out), len(rows)
