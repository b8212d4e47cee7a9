"""Media kept inside the database (`media_blobs`): for rater packages (one file to carry)
and studies on a server. The same interface as the folder store in ingest/media.py."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session as OrmSession

from ..domain.errors import DamagedStudy
from .db import StudyDB
from .models_team import MediaBlob


class BlobStore:
    in_database = True

    def __init__(self, db: StudyDB) -> None:
        self.db = db

    def put(self, img, tx: OrmSession | None = None) -> bool:  # noqa: ANN001 - any object with .sha256 and .png
        """Store the bytes under their SHA-256, inside `tx` when given (an import's transaction)."""
        if tx is None:
            with self.db.write() as s:
                return self.put(img, s)
        if tx.get(MediaBlob, img.sha256) is not None:
            return False
        tx.add(MediaBlob(sha256=img.sha256, data=img.png))
        return True

    def has(self, sha256: str) -> bool:
        with self.db.read() as s:
            return s.scalar(select(MediaBlob.sha256).where(MediaBlob.sha256 == sha256)) is not None

    def read(self, sha256: str) -> bytes:
        with self.db.read() as s:
            if _text_blobs(s, MediaBlob.sha256 == sha256):
                raise _stored_as_text(sha256, self.db.where)
            data = s.scalar(select(MediaBlob.data).where(MediaBlob.sha256 == sha256))
        if data is None:
            raise FileNotFoundError(f"media {sha256[:12]}… is not in this study")
        return bytes(data)

    def remove(self, sha256: str, tx: OrmSession | None = None) -> None:
        if tx is None:
            with self.db.write() as s:
                return self.remove(sha256, s)
        tx.execute(delete(MediaBlob).where(MediaBlob.sha256 == sha256))
        return None


def media_keys(db: StudyDB) -> list[str]:
    """The SHA-256 of every image the study knows."""
    from .models import Media

    with db.read() as s:
        return list(s.scalars(select(Media.sha256)))


def mismatched_blobs(db: StudyDB, name: Callable[[bytes], str]) -> list[str]:
    """Keys of the blobs whose bytes do not have the name `name` gives them."""
    with db.read() as s:
        q = select(MediaBlob.sha256, MediaBlob.data)
        if s.get_bind().dialect.name == "sqlite":  # text blobs are verify_blobs' to name
            q = q.where(func.typeof(MediaBlob.data) == "blob")
        return [sha for sha, data in s.execute(q).yield_per(64) if name(bytes(data)) != sha]


def _text_blobs(s: OrmSession, *where) -> list[str]:  # noqa: ANN002 - SQL conditions
    """Keys of blobs stored as TEXT: SQLite keeps any type in a BLOB column, a hand-edited
    file can hold one, and reading it fails (invalid UTF-8) or yields a str, not bytes."""
    if s.get_bind().dialect.name != "sqlite":
        return []  # bytea holds bytes only
    q = select(MediaBlob.sha256).where(func.typeof(MediaBlob.data) != "blob", *where).limit(1)
    return list(s.scalars(q))


def _stored_as_text(sha256: str, where: str) -> DamagedStudy:
    return DamagedStudy(
        f"media blob {sha256[:12]}… is stored as text, not bytes: the file was altered; "
        "ask the rater for an untouched copy",
        source=where,
    )


def verify_blobs(db: StudyDB, where: str, name: Callable[[bytes], str] | None = None) -> int:
    """Re-hash every blob against its key; a mismatch is tampering (or damage). Returns the count.
    `name`: the key the bytes must have (a rater package names its images its own way:
    package_export.blob_name); by default their SHA-256."""
    name = name or (lambda data: hashlib.sha256(data).hexdigest())
    n = 0
    with db.read() as s:
        for sha in _text_blobs(s):
            raise _stored_as_text(sha, where)
        for sha, data in s.execute(select(MediaBlob.sha256, MediaBlob.data)).yield_per(64):
            if name(bytes(data)) != sha:
                raise DamagedStudy(
                    f"media blob {sha[:12]}… does not match its hash: the file was altered; "
                    "ask the rater for an untouched copy",
                    source=where,
                )
            n += 1
    return n
