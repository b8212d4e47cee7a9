"""StudyDB: the engine of one study plus the settings table.

All writes go through `write()`, one short transaction each (taking the write
lock at BEGIN), so that every submitted answer is one durable commit and
nothing is left half-written. Faults of the database (a full disk, a lock held
too long, a damaged or read-only file) leave as one-line study errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ..domain.errors import InputError
from . import settings
from .engine import open_database, writer
from .faults import study_faults
from .models import Setting
from .server import is_server, open_server, shown


class StudyDB:
    """A study's database: a SQLite file (a study folder's, or a rater package) or a server URL."""

    def __init__(self, location: Path | str, *, create: bool = False, mode: str = "write") -> None:
        self.mode = mode
        if is_server(location):
            self.path = None
            self.where = shown(str(location))
            self.engine = open_server(str(location), create=create, mode=mode)
        else:
            self.path = Path(location)
            self.where = str(self.path)
            # SQLite would block on a pipe; a folder has its own line where the engine opens it
            if self.path.exists() and not self.path.is_file() and not self.path.is_dir():
                raise InputError(
                    "is not a study file (a pipe or a device): give a study folder or an .annot "
                    "file",
                    source=self.where,
                )
            self.engine = open_database(self.path, create=create, mode=mode)
        self._readers = sessionmaker(self.engine, expire_on_commit=False)
        self._writers = sessionmaker(writer(self.engine), expire_on_commit=False)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back whole on any error."""
        with study_faults(self.where), self._writers() as s, s.begin():
            yield s

    @contextmanager
    def read(self) -> Iterator[Session]:
        with study_faults(self.where), self._readers() as s:
            yield s

    def close(self) -> None:
        self.engine.dispose()

    # -- settings ---------------------------------------------------------------
    def get_setting(self, key: str, default: Any = None) -> Any:
        with self.read() as s:
            row = s.get(Setting, key)
            return default if row is None else json.loads(row.value)

    def set_setting(self, key: str, value: Any) -> None:
        with self.write() as s:
            settings.put(s, key, value)

    def all_settings(self) -> dict[str, Any]:
        with self.read() as s:
            return {r.key: json.loads(r.value) for r in s.scalars(select(Setting))}
