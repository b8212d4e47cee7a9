"""The live dashboard's frames kept on disk as Parquet, so that the first live estimate after the
app starts reads only what changed since they were kept.

A full read decodes every answer's JSON in Python (a million answers: about 3 s); reading the
same frames back from Parquet's typed columns takes a fraction of that, and
`live_frames.refresh` then reads only the answers added or superseded since. The kept copy is a
starting point, never a result: the refresh compares it with the study (table marks, id sets)
exactly as it does the frames in memory, and whatever it cannot bring up to date in place (an
import of items, a changed setting or rubric) it reads whole. Only the live dashboard uses it;
published figures read the study (point 1).

Kept in the study folder's `.cache/frames/`: one Parquet file per table and a JSON description
written last and atomically (the tables of one keeping share a random token in their names, so
a crash mid-way leaves the previous description pointing at the previous, complete files). It is
ignored, and read again whole, when another code version kept it (the figures' code hash of
report_cache), when the database file is not the one it was kept from (a study copied or
restored from a backup: its ids may name other answers) or its newest kept answer is not in the
study as it was kept (a backup copied over the file), or when anything in it does not read back
as kept.

Answer values are Python objects of several types in one column (a scale's int, a choice's str,
tags as a tuple); Parquet holds one type per column, so such a column is kept as codes into its
distinct values, each written as tagged JSON that gives back the same type (1, True and 1.0 stay
apart).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..base.atomic import atomic_write_text
from ..domain.rubric import Rubric
from ..stats import frames as F
from ..store import rows as R
from ..store.db import StudyDB
from .live_frames import LiveFrames
from .report_cache import CACHE_DIR, code_version

FOLDER = "frames"
_DESCRIPTION = "frames.json"
_FORMAT = 1
_ROW_ANSWER = "__answer"  # the answer id of each judgements row (LiveFrames.row_answer)
# frames kept again once this many answers were read since the copy on disk (and at least this
# share of its rows): a long session keeps a recent copy without writing one per refresh
KEEP_AFTER_NEW = 1000
KEEP_AFTER_SHARE = 0.02


class NotKept(ValueError):
    """Frames that cannot be kept as they are, or kept frames that do not read back as kept."""


def _tag(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return ["b", v]
    if isinstance(v, int):
        return ["i", v]
    if isinstance(v, float):
        return ["f", repr(v)]  # repr gives back the same float, nan and inf included
    if isinstance(v, str):
        return ["s", v]
    if isinstance(v, tuple):
        return ["t", [_tag(x) for x in v]]
    if isinstance(v, list):
        return ["l", [_tag(x) for x in v]]
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return ["d", {k: _tag(x) for k, x in v.items()}]
    raise NotKept(f"a value of type {type(v).__name__}")


def _untag(t: Any) -> Any:
    if t is None:
        return None
    kind, v = t
    if kind == "b":
        return bool(v)
    if kind == "i":
        return int(v)
    if kind == "f":
        return float(v)
    if kind == "s":
        return str(v)
    if kind == "t":
        return tuple(_untag(x) for x in v)
    if kind == "l":
        return [_untag(x) for x in v]
    if kind == "d":
        return {k: _untag(x) for k, x in v.items()}
    raise NotKept(f"unknown value tag {kind!r}")


def _objects_out(col: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """An object column as codes into its distinct values (by type and value)."""
    index: dict[tuple[type, Any], int] = {}
    values: list[Any] = []
    codes = np.empty(len(col), dtype=np.int32)
    for n, v in enumerate(col.to_numpy(dtype=object)):
        key = (type(v), repr(v) if isinstance(v, float) else _hashable(v))
        code = index.get(key)
        if code is None:
            code = index[key] = len(values)
            values.append(_tag(v))
        codes[n] = code
    return codes, values


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return (type(v), tuple(_hashable(x) for x in v))
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, float):
        return (float, repr(v))  # one key for every nan, and -0.0 apart from 0.0
    return (type(v), v)


def _objects_in(codes: np.ndarray, values: list[Any], n: int) -> np.ndarray:
    table = np.empty(len(values), dtype=object)
    table[:] = [_untag(t) for t in values]  # slice assignment: tuples stay single elements
    if len(codes) != n or (n and (codes.min() < 0 or codes.max() >= len(values))):
        raise NotKept("value codes out of range")
    return table[codes]


def _file(folder: Path, token: str, table: str) -> Path:
    return folder / f"{token}-{table}.parquet"


def _db_identity(db_file: Path) -> list[int]:
    st = db_file.stat()
    return [st.st_dev, st.st_ino]


def keep(study_folder: Path, db_file: Path, live: LiveFrames) -> LiveFrames:
    """Write `live` into the study folder's cache; returns it marked as kept (or as it was when
    the folder cannot be written or a value cannot be kept: nothing is lost but time)."""
    folder = Path(study_folder) / CACHE_DIR / FOLDER
    token = secrets.token_hex(6)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        described = _write_tables(folder, token, live)
        description = {
            "format": _FORMAT,
            "code_version": code_version(),
            "database": _db_identity(Path(db_file)),
            "token": token,
            "marks": live.marks,
            "settings": live.frames.settings,
            "unreadable_live": sorted(live.unreadable_live),
            "unreadable_anchor": sorted(live.unreadable_anchor),
            "skipped": sorted(live.skipped),
            "tables": described,
        }
        atomic_write_text(folder / _DESCRIPTION, json.dumps(description))
    except Exception:  # noqa: BLE001 - a cache: not kept is only time lost, never an error
        _remove(folder, keep_token=None, only_token=token)
        return live
    _remove(folder, keep_token=token)
    return replace(live, unkept=0)


def _write_tables(folder: Path, token: str, live: LiveFrames) -> dict[str, Any]:
    described: dict[str, Any] = {}
    for name in F.TABLES:
        df: pd.DataFrame = getattr(live.frames, name)
        out: dict[str, Any] = {}
        objects: dict[str, list[Any]] = {}
        for c in df.columns:
            if df[c].dtype == object:
                out[c], objects[c] = _objects_out(df[c])
            else:
                out[c] = df[c]
        if name == "judgements":
            out[_ROW_ANSWER] = live.row_answer
        frame = pd.DataFrame(out, columns=list(out))
        pq.write_table(
            pa.Table.from_pandas(frame, preserve_index=False), _file(folder, token, name)
        )
        described[name] = {
            "rows": len(df),
            "columns": list(df.columns),
            "dtypes": [str(t) for t in df.dtypes],
            "objects": objects,
        }
    answered = pd.DataFrame(
        {
            "id": np.fromiter(live.answered.keys(), dtype=np.int64, count=len(live.answered)),
            "session": pd.array(list(live.answered.values()), dtype="Int64"),
        }
    )
    pq.write_table(
        pa.Table.from_pandas(answered, preserve_index=False), _file(folder, token, "answered")
    )
    return described


def _remove(folder: Path, *, keep_token: str | None, only_token: str | None = None) -> None:
    """Earlier keepings' files (or one failed keeping's)."""
    try:
        for f in folder.glob("*.parquet"):
            token = f.name.split("-", 1)[0]
            if (only_token is not None and token == only_token) or (
                only_token is None and token != keep_token
            ):
                f.unlink(missing_ok=True)
    except OSError:
        pass


def load(
    study_folder: Path,
    db_file: Path,
    db: StudyDB,
    rubric: Rubric,
    study_name: str,
) -> LiveFrames | None:
    """The frames kept for this study by this code, as they were kept (to be brought up to date
    by `live_frames.refresh`); None when there are none or they cannot be trusted."""
    folder = Path(study_folder) / CACHE_DIR / FOLDER
    try:
        description = json.loads((folder / _DESCRIPTION).read_text(encoding="utf-8"))
        if (
            description.get("format") != _FORMAT
            or description.get("code_version") != code_version()
            or description.get("database") != _db_identity(Path(db_file))
        ):
            return None
        return _read(folder, description, db, rubric, study_name)
    except Exception:  # noqa: BLE001 - a cache: whatever does not read back, the study is read whole
        return None


def _read(
    folder: Path, description: dict[str, Any], db: StudyDB, rubric: Rubric, study_name: str
) -> LiveFrames:
    token = str(description["token"])
    tables: dict[str, pd.DataFrame] = {}
    row_answer = np.zeros(0, dtype=np.int64)
    for name in F.TABLES:
        spec = description["tables"][name]
        read = pq.read_table(_file(folder, token, name)).to_pandas()
        n = int(spec["rows"])
        cols: dict[str, Any] = {}
        for c in spec["columns"]:
            if c in spec["objects"]:
                codes = read[c].to_numpy(dtype=np.int64)
                cols[c] = _objects_in(codes, spec["objects"][c], n)
            else:
                cols[c] = read[c]  # Parquet gives the dtype back; checked below
        df = pd.DataFrame(cols, columns=spec["columns"])
        if len(df) != n or [str(t) for t in df.dtypes] != spec["dtypes"]:
            raise NotKept(f"{name} does not read back as kept")
        if name == "judgements":
            row_answer = read[_ROW_ANSWER].to_numpy(dtype=np.int64)
        tables[name] = df
    _same_answers(db, tables["judgements"], row_answer)
    answered_frame = pq.read_table(_file(folder, token, "answered")).to_pandas()
    sessions = answered_frame["session"].astype("Int64").to_numpy(dtype=object, na_value=None)
    answered = dict(
        zip(
            answered_frame["id"].to_numpy(dtype=np.int64).tolist(),
            [None if v is None else int(v) for v in sessions],
            strict=True,
        )
    )
    unreadable_live = frozenset(int(i) for i in description["unreadable_live"])
    unreadable_anchor = frozenset(int(i) for i in description["unreadable_anchor"])
    frames = F.StudyFrames(
        study=study_name,
        rubric=rubric,
        settings=dict(description["settings"]),
        unreadable=sorted(unreadable_live | unreadable_anchor),
        **tables,
    )
    return LiveFrames(
        frames=frames,
        marks={str(k): str(v) for k, v in description["marks"].items()},
        by_pk={r.pk: r for r in R.items(db)},
        row_answer=row_answer,
        answered=answered,
        unreadable_live=unreadable_live,
        unreadable_anchor=unreadable_anchor,
        skipped=frozenset(int(i) for i in description["skipped"]),
        how="kept",
        unkept=0,
    )


def _same_answers(db: StudyDB, judgements: pd.DataFrame, row_answer: np.ndarray) -> None:
    """Raise NotKept unless the newest answer kept is still in the study as it was kept. A
    backup copied over the study file keeps the file's identity, and the answers given after it
    may take ids the kept frames give to other answers: the newest one then differs in time."""
    if not len(row_answer):
        return
    at = int(np.argmax(row_answer))
    stored = R.judgements_by_id(db, [int(row_answer[at])], unreadable=[])
    kept = judgements.iloc[at]
    if len(stored) != 1 or (stored[0].rater, pd.Timestamp(stored[0].created_at)) != (
        kept["rater"],
        pd.Timestamp(kept["created_at"]),
    ):
        raise NotKept("the study's answers are not the ones kept")


def due(live: LiveFrames) -> bool:
    """Whether `live` should be kept (again): enough answers read since the copy on disk (a
    full read counts every answer; a small study, quick to read whole, is never kept)."""
    rows = len(live.frames.judgements)
    return live.unkept >= max(KEEP_AFTER_NEW, KEEP_AFTER_SHARE * rows)
