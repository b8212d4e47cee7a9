"""`annotator study copy SRC DEST`: a study moved between a folder and a server (and back)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.task import TaskState
from ..domain.errors import InputError
from ..store.copy import copy_rows, holds_study, put_blob
from ..store.db import StudyDB
from ..store.server import is_server
from .study import DB_NAME, Study


class _Png:
    """What the folder media store takes: bytes under their SHA-256."""

    def __init__(self, sha256: str, png: bytes) -> None:
        self.sha256, self.png = sha256, png


def copy_study(
    src: str | Path, dest: str | Path, *, task: TaskState | None = None
) -> dict[str, int]:
    """Copy everything of the study at `src` into a new study at `dest` (a folder that does not exist
    yet, or an empty server database), saying each table to `task`. The copy lands whole or not
    at all (a cancel of `task` included)."""
    source = Study.open(src, mode="read")
    if source.is_package:
        source.close()
        raise InputError(
            "a rater package is merged into its study, not copied (`annotator package merge`)",
            source=str(src),
        )
    try:
        if is_server(dest):
            target = StudyDB(str(dest), create=True)
            write_media: Callable[[str, bytes, Any], None] = put_blob  # sha, bytes, transaction
            made: Path | None = None
        else:
            made = Path(dest)
            if made.exists() and (not made.is_dir() or any(made.iterdir())):
                raise InputError(
                    "the destination exists and is not empty; copy into a new folder",
                    source=str(dest),
                )
            made.mkdir(parents=True, exist_ok=True)
            (made / "media").mkdir()
            target = StudyDB(made / DB_NAME, create=True)
            folder_store = Study(made, target).media

            def write_media(sha: str, data: bytes, _tx: object) -> None:
                if hashlib.sha256(data).hexdigest() != sha:
                    raise InputError(
                        f"media {sha[:12]}… in the source does not match its hash; not copied",
                        source=str(src),
                    )
                folder_store.put(_Png(sha, data))

        try:
            if holds_study(target):
                raise InputError(
                    "the destination database already holds a study", source=target.where
                )
            return copy_rows(
                source.db,
                target,
                read_media=source.media.read,
                write_media=write_media,
                task=task,
            )
        except BaseException:
            target.close()
            if made is not None:
                import shutil

                shutil.rmtree(made, ignore_errors=True)
            raise
        finally:
            target.close()
    finally:
        source.close()
