"""Rater packages: export one rater's blinded work to a `.annot` file, and merge the
files raters send back into the lead's study (contract 5.6)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..base.atomic import atomic_path
from ..base.location import PACKAGE_SUFFIX
from ..base.scratch import scratch_dir
from ..domain.errors import DamagedStudy, InputError
from ..domain.ids import uuid7
from ..store import answers as answer_store
from ..store import package_export as export_store
from ..store import package_merge as merge_store
from ..store import pairs as pair_store
from ..store.blobs import media_keys, mismatched_blobs, verify_blobs
from ..store.db import StudyDB
from ..store.engine import SQLITE_HEADER, head_revision
from ..store.faults import study_faults
from .study import Study


@dataclass(frozen=True)
class Exported:
    path: Path
    rater: str
    counts: dict[str, int]
    n_bytes: int
    local_items: dict[int, int] = field(default_factory=dict)  # study item number -> package's


def _remove_db_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def export_package(study: Study, rater: str, out: str | Path) -> Exported:
    """Write `rater`'s package: their assigned items and every anchor (media inside), the rubric,
    their queue, pairs and settings, their own earlier answers, and nothing else.

    Built in a scratch database, then copied with VACUUM INTO so the file has no free pages
    that could hold anything; the images' bytes are then added to that copy, written once
    (`write_media`); replaced atomically at `out`.
    """
    study.require_lead("exporting a package")
    out = Path(out)
    if out.suffix != PACKAGE_SUFFIX:
        raise InputError(
            f"a rater package file ends in {PACKAGE_SUFFIX}", source=str(out), field="--out"
        )
    if out.is_dir():
        raise InputError(
            "--out is a folder; give the package file name", source=str(out), field="--out"
        )
    answer_store.ensure_queue(study.db, rater, study.rubric.version)
    if pair_store.has_pairs(study.db):
        pair_store.ensure_pair_queue(study.db, rater, int(study.setting("pair_raters_per_pair")))
    package_id = uuid7()
    content = export_store.read_content(study.db, rater, package_id)
    study_id = study.setting("study_id")
    scratch = out.with_name(f".{out.name}.{os.getpid()}.building")
    _remove_db_files(scratch)
    try:
        with study_faults(str(out)):
            out.parent.mkdir(parents=True, exist_ok=True)
        dest = StudyDB(scratch, create=True)
        try:
            export_store.write_content(
                dest,
                content,
                study_id=study_id,
                package_id=package_id,
                created_at=datetime.now(UTC).replace(tzinfo=None),
            )
        finally:
            dest.close()
        with study_faults(str(out)), atomic_path(out) as final_tmp:
            conn = sqlite3.connect(scratch)
            try:
                conn.execute("VACUUM INTO ?", (str(final_tmp),))
            finally:
                conn.close()
            export_store.write_media(final_tmp, content, study.media.read)
    finally:
        _remove_db_files(scratch)
    return Exported(out, rater, content.counts(), out.stat().st_size, content.local_items)


@contextmanager
def _snapshot(path: Path) -> Iterator[Path]:
    """The package as one file, in a private folder: its bytes and those of its `-wal` (answers
    the rater's app had not yet written into the file when it stopped), each read through one
    open file and checkpointed in the copy. Merge hashes and reads this copy only, so what is
    recorded as merged is exactly what was read, and nothing is created beside the rater's file.
    """
    where = str(path)
    scratch = scratch_dir("merge")
    try:
        copy = scratch / "package.annot"
        with study_faults(where):
            _copy_regular(path, copy, where)
            wal = Path(f"{path}-wal")
            if wal.is_file() and wal.stat().st_size:
                _copy_regular(wal, Path(f"{copy}-wal"), where)
        with study_faults(where):
            head = open(copy, "rb").read(len(SQLITE_HEADER))
        if head != SQLITE_HEADER:
            raise DamagedStudy(
                "not a rater package (no SQLite header): truncated or not an .annot file",
                source=where,
            )
        if Path(f"{copy}-wal").exists():
            try:
                conn = sqlite3.connect(copy)
                try:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    conn.close()
            except sqlite3.DatabaseError as exc:
                raise DamagedStudy(
                    f"the package is damaged or truncated ({exc}); ask the rater to send it again",
                    source=where,
                ) from None
        yield copy
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


NOT_A_FILE = "is not a file (a folder, a pipe or a device): give the .annot file the rater sent"


def _copy_regular(src: Path, dest: Path, where: str) -> None:
    """Copy `src` through one open file that is a regular file (a path swapped for a pipe after
    it was checked would block a plain open for ever)."""
    fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(NOT_A_FILE, source=where)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh, open(dest, "wb") as out:
            shutil.copyfileobj(fh, out, 1 << 20)
    finally:
        os.close(fd)


def _integrity(path: Path, where: str) -> None:
    """The whole file, page by page (a package travelled by mail or USB stick)."""
    with study_faults(where):
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
            # A row pointing at a row the file does not hold (an answer on a missing item):
            # sound pages, altered content; refused here before any row is read.
            dangling = (
                conn.execute("PRAGMA foreign_key_check").fetchone() if rows == ["ok"] else None
            )
            if dangling is not None:  # the column, so the line names the field as merge does
                table, fk = dangling[0], dangling[3]
                column = next(
                    (
                        r[3]
                        for r in conn.execute(
                            'PRAGMA foreign_key_list("' + table.replace('"', '""') + '")'
                        ).fetchall()
                        if r[0] == fk
                    ),
                    "?",
                )
                dangling = (*dangling[:3], column)
        except sqlite3.DatabaseError as exc:
            raise DamagedStudy(
                f"the package is damaged or truncated ({exc}); ask the rater to send it again",
                source=where,
            ) from None
        finally:
            conn.close()
    if rows != ["ok"]:
        raise DamagedStudy(
            f"the package is damaged or truncated ({rows[0][:80]}); ask the rater to send it again",
            source=where,
        )
    if dangling is not None:
        table, rowid, parent, column = dangling
        raise DamagedStudy(
            f"the package's {table} row {rowid}, field '{column}', points at a row of {parent} "
            "that the file does not hold: "
            "the file was altered; ask the rater for an untouched copy",
            source=where,
        )


def _reference_triggers() -> dict[str, str]:
    """name -> SQL of every trigger a package made by this annotator holds: a fresh study's
    (built once per process, in a scratch file)."""
    global _TRIGGERS
    if _TRIGGERS is None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            db = StudyDB(Path(tmp) / "reference.sqlite", create=True)
            db.close()
            _TRIGGERS = {
                n: sql for t, n, sql in _schema_of(Path(tmp) / "reference.sqlite") if t == "trigger"
            }
    return _TRIGGERS


_TRIGGERS: dict[str, str] | None = None


def _schema_of(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return [
            (t, n, sql or "")
            for t, n, sql in conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')"
            )
        ]
    finally:
        conn.close()


def _schema(path: Path, where: str) -> None:
    """A package holds no view (a merge would read it as if it were a table: a recursive one
    never ends), no virtual table and no trigger but annotator's own: one of them refuses it, in
    one line, before any of it is read."""
    with study_faults(where):
        got = _schema_of(path)
    triggers = _reference_triggers()
    for kind, name, sql in got:
        what = None
        if kind == "view":
            what = "a view"
        elif kind == "trigger" and triggers.get(name) != sql:
            what = "a trigger annotator does not make"
        elif kind == "table" and sql.lstrip()[:30].upper().startswith("CREATE VIRTUAL"):
            what = "a virtual table"
        if what is not None:
            raise InputError(
                f"the package defines {what} ('{name[:40]}'): the file was altered; nothing was "
                "read or merged",
                source=where,
                field="sqlite_master",
            )


def _blame_the_study_if_its_images_are(study: Study, pkg: StudyDB, where: str) -> None:
    """A package blob that does not match its name is the rater's doing, unless the study's own
    image it was exported from is damaged (a disk error): then say so, and blame no one's
    package. Raises that one line; returns when the study's images are sound."""
    bad = mismatched_blobs(pkg, export_store.blob_name(pkg))
    if not bad or study.media.in_database:
        return
    from_study = export_store.study_image_of(pkg, media_keys(study.db))
    damaged = []
    for key in bad:
        sha = from_study.get(key)
        if sha is None:
            continue
        try:
            study.media.read(sha)
        except DamagedStudy:
            damaged.append(sha)
    if damaged:
        raise DamagedStudy(
            f"{len(damaged)} of the study's own image files are damaged "
            f"(media/{damaged[0][:2]}/{damaged[0]}.png): the package carried them as they were "
            "exported, and was not altered; import those images again, then merge the package "
            "again",
            source=where,
        )


def merge_package(study: Study, path: str | Path) -> merge_store.MergeResult:
    """Verify one package against the study and merge it in one transaction; refuses with one
    line and writes nothing when the package is damaged, altered, or from another study."""
    study.require_lead("merging packages")
    p = Path(path)
    where = str(p)
    if not p.exists():
        raise InputError("no such package file", source=where)
    if not p.is_file():
        raise InputError(NOT_A_FILE, source=where)
    with _snapshot(p) as copy:
        try:
            return _merge_copy(study, copy, where)
        except InputError as exc:  # every refusal names the file (several may be merged at once)
            if exc.source is None:
                exc.source = where
                exc.args = (exc.one_line(),)
            raise


def _merge_copy(study: Study, p: Path, where: str) -> merge_store.MergeResult:
    """Merge the package's private copy `p` (`where`: the rater's file, for messages)."""
    with study_faults(where):
        package_sha = merge_store.sha256_file(p)
    earlier = merge_store.merged_before(study.db, package_sha)
    if earlier is not None:
        added = dict.fromkeys(merge_store.ADDED, 0)
        return merge_store.MergeResult(earlier, added, 0, [], already_merged=True)
    _integrity(p, where)
    _schema(p, where)
    pkg = StudyDB(p, mode="read")
    try:
        m = export_store.manifest(pkg)
        if m is None:
            raise InputError(
                "this is a study, not a rater package (no package manifest)", source=where
            )
        study_id, version = merge_store.study_identity(study.db)
        if m["study_id"] != study_id:
            raise InputError(
                "this package belongs to another study; merge it into the study it was exported from",
                source=where,
            )
        if m["rubric_version"] != version:
            raise InputError(
                f"this package was made under another rubric version ({m['rubric_version'][:12]}); "
                "merge it into the study while that rubric is active",
                source=where,
            )
        if m["schema_revision"] != head_revision():
            raise InputError(
                f"this package was written by another annotator version (schema {m['schema_revision']})",
                source=where,
            )
        try:
            verify_blobs(pkg, where, export_store.blob_name(pkg))
        except DamagedStudy:
            _blame_the_study_if_its_images_are(study, pkg, where)
            raise
        rows = merge_store.read_rows(pkg)
        if rows.rater != m["rater"]:
            raise InputError(
                "the package's rater does not match its manifest: the file was altered",
                source=where,
            )
    finally:
        pkg.close()
    try:
        return merge_store.merge_rows(
            study.db,
            rows,
            package_sha=package_sha,
            package_id=m["id"],
            version=version,
        )
    except InputError as exc:
        if exc.source is None:
            exc.source = where
            exc.args = (exc.one_line(),)
        raise
