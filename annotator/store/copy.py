"""Copy a whole study between engines (a folder's SQLite file <-> a server database),
row for row with the same ids, media included, so every figure comes out the same."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Integer, delete, insert, select, text

from ..base.task import TaskState
from .db import StudyDB
from .models import Base, Media
from .models_team import MediaBlob

_BATCH = 2000
_SKIP = {"alembic_version", "media_blobs"}


def tables_in_order() -> list:
    """Every table, referenced before referencing (self-references: rows go in id order)."""
    return [t for t in Base.metadata.sorted_tables if t.name not in _SKIP]


def copy_rows(
    src: StudyDB,
    dest: StudyDB,
    *,
    read_media: Callable[[str], bytes],
    write_media: Callable[[str, bytes, object], None],
    task: TaskState | None = None,
) -> dict[str, int]:
    """Every row of `src` into the empty study `dest` in one transaction; returns rows per table."""
    say = (task or TaskState()).say
    counts: dict[str, int] = {}
    with src.read() as s, dest.write() as d:
        for table in tables_in_order():
            d.execute(
                delete(table)
            )  # the fresh study's own defaults (its new study id...) give way
        for table in tables_in_order():
            say(f"copying {table.name}")
            key = [c for c in table.primary_key.columns]
            n = 0
            result = s.execute(select(table).order_by(*key)).yield_per(_BATCH)
            for part in result.partitions(_BATCH):
                rows = [dict(r._mapping) for r in part]
                d.execute(insert(table), rows)
                n += len(rows)
            counts[table.name] = n
        say("copying media")
        for sha in s.scalars(select(Media.sha256).order_by(Media.sha256)):
            write_media(sha, read_media(sha), d)
        if d.get_bind().dialect.name == "postgresql":
            for table in tables_in_order():
                pk = list(table.primary_key.columns)
                if (
                    len(pk) == 1
                    and isinstance(pk[0].type, Integer)
                    and pk[0].autoincrement is not False
                ):
                    d.execute(
                        text(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', '{pk[0].name}'), "
                            f"COALESCE(MAX({pk[0].name}), 1), MAX({pk[0].name}) IS NOT NULL) "
                            f"FROM {table.name}"
                        )
                    )
    return counts


def put_blob(sha: str, data: bytes, tx) -> None:  # noqa: ANN001 - the destination's session
    tx.add(MediaBlob(sha256=sha, data=data))


def holds_study(db: StudyDB) -> bool:
    from .models import RubricVersion

    with db.read() as s:
        return s.scalar(select(RubricVersion.version).limit(1)) is not None
