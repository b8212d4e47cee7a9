"""A study is a folder: `study.sqlite` + `media/` (+ `exports/`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..domain.errors import InputError
from ..domain.rubric import Rubric, parse_rubric
from ..domain.settings import DEFAULT_SETTINGS, RECORDS, SETTINGS, problem
from ..domain.text import check_visible
from ..ingest import anchors as anchor_ingest
from ..ingest import folder as folder_ingest
from ..ingest import harness as harness_ingest
from ..ingest import manifest as manifest_ingest
from ..ingest import tables
from ..ingest.manifest import ParsedItems
from ..ingest.media import MediaStore
from ..ingest.rubrics import load_rubric
from ..store import imports, items, people, settings
from ..store.blobs import BlobStore
from ..store.db import StudyDB
from ..store.faults import study_faults
from ..store.server import is_server, server_url, shown
from .resources import resolve_rubric, rubric_text

DB_NAME = "study.sqlite"


def _regrant_after_migration(study: Study) -> None:
    """A server study this open migrated: its rater roles get their grants again, as
    `annotator roles` would give them (new columns and tables have none)."""
    from ..store import roles
    from ..store.server import server_url
    from ..store.server_migrate import was_migrated

    if not was_migrated(study.db.engine):
        return
    raters = sorted(roles.logins_of(study.db))
    if raters:
        roles.apply_roles(study.db, server_url(str(study.location)).database or "", raters)


def check_key(key: str) -> None:
    """Refuse, in one line, a key that is not a setting a lead sets: annotator's own records
    (domain/settings.py RECORDS) are written by the command that does what they record."""
    if key in RECORDS:
        raise InputError(
            f"setting '{key}' is kept by annotator itself ({RECORDS[key]}); "
            f"known settings: {', '.join(sorted(SETTINGS))}",
            field=key,
        )
    if key not in SETTINGS:
        raise InputError(
            f"unknown setting '{key}'; known: {', '.join(sorted(SETTINGS))}", field=key
        )


def check_setting(key: str, value: Any) -> None:
    """Refuse, in one line naming the key, a value that does not fit the key's check in
    domain/settings.py SETTINGS, and a key that is not a setting a lead sets."""
    check_key(key)
    settings.to_json(value, key)  # NaN and infinities: refused before any shape check
    what = problem(key, value)
    if what is not None:
        raise InputError(f"setting '{key}' must be {what}", field=key)


class Study:
    """One study, wherever it lives: a folder (`study.sqlite` + `media/`), a rater package
    (one `.annot` file, media inside), or (later) a database server."""

    def __init__(self, location: Path | str, db: StudyDB, *, kind: str = "folder") -> None:
        self.kind = kind  # folder | package | server
        self.location = location if kind == "server" else Path(location)
        self.folder = self.location if kind == "folder" else None
        self.db = db
        self.media: MediaStore | BlobStore = (
            MediaStore(Path(location) / "media") if kind == "folder" else BlobStore(db)
        )
        self._rubric: Rubric | None = None

    @property
    def where(self) -> str:
        """The study's location as it may be shown and remembered (a server URL without its password)."""
        return self.db.where

    @property
    def is_package(self) -> bool:
        return self.kind == "package"

    def require_lead(self, action: str) -> None:
        """Lead work (imports of items and judge scores, assignment, reports...) is not in a package."""
        if self.is_package:
            raise InputError(
                f"{action} is the lead's work: not in a rater package; run it on the lead's study",
                source=str(self.location),
            )

    # -- lifecycle --------------------------------------------------------------
    @classmethod
    def create(cls, folder: str | Path, rubric_path: str | Path) -> Study:
        """A new study folder (or a study in an empty server database); if anything fails,
        nothing of it is left behind."""
        given = resolve_rubric(rubric_path)
        rubric = (
            load_rubric(given)
            if isinstance(given, Path)
            else parse_rubric(rubric_text(given), source=given)
        )
        if is_server(folder):
            check_visible(
                server_name(str(folder)), "the study's name (the database's)", field="STUDY"
            )
            return cls._create_on_server(str(folder), rubric)
        folder = Path(folder)
        # The folder's name is the study's name: visible text, as a name typed anywhere else.
        check_visible(folder.resolve().name, "the study's name (the folder's)", source=str(folder))
        for p in (folder, *folder.parents):
            if p.exists():
                if not p.is_dir():
                    raise InputError(
                        f"{p} is a file; choose a folder for the study", source=str(folder)
                    )
                break
        if (folder / DB_NAME).exists():
            raise InputError("a study already exists here", source=str(folder))
        made = [p for p in (folder, *folder.parents) if not p.exists()]
        db = None
        try:
            with study_faults(str(folder)):
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "media").mkdir(exist_ok=True)
            db = StudyDB(folder / DB_NAME, create=True)
            with db.write() as tx:
                people.add_rubric_version(tx, rubric)
                settings.write_defaults(tx, {**DEFAULT_SETTINGS, "name": folder.name})
            return cls(folder, db)
        except BaseException:
            if db is not None:
                db.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                (folder / (DB_NAME + suffix)).unlink(missing_ok=True)
            if (folder / "media").is_dir() and not any((folder / "media").iterdir()):
                (folder / "media").rmdir()
            for p in made:  # the folders we made, innermost first, if still empty
                if p.is_dir() and not any(p.iterdir()):
                    p.rmdir()
            raise

    @classmethod
    def _create_on_server(cls, url: str, rubric: Rubric) -> Study:
        db = StudyDB(url, create=True)
        try:
            with db.write() as tx:
                if people.active_rubric_or_none(tx) is not None:
                    raise InputError("this database already holds a study", source=db.where)
                people.add_rubric_version(tx, rubric)
                settings.write_defaults(tx, {**DEFAULT_SETTINGS, "name": server_name(url)})
        except BaseException:
            db.close()
            raise
        return cls(url, db, kind="server")

    @classmethod
    def open(cls, location: str | Path, *, mode: str = "write") -> Study:
        """Open a study folder or a rater package to work in ("write": checked, migrated after a
        backup) or only to read it."""
        if is_server(location):
            study = cls(str(location), StudyDB(str(location), mode=mode), kind="server")
            try:
                _regrant_after_migration(study)
            except BaseException:
                study.close()
                raise
            return study
        path = Path(location)
        if path.is_file() and path.name != DB_NAME:
            return cls(path, StudyDB(path, mode=mode), kind="package")
        folder = path.parent if path.name == DB_NAME and path.is_file() else path
        if not (folder / DB_NAME).exists():
            if not path.exists():
                raise InputError(
                    "not a study folder or package file (nothing at that path); create a study with "
                    "`annotator new`",
                    source=str(path),
                )
            raise InputError(
                "not a study folder (no study.sqlite); create one with `annotator new`",
                source=str(folder),
            )
        return cls(folder, StudyDB(folder / DB_NAME, mode=mode))

    def close(self) -> None:
        self.db.close()

    @property
    def name(self) -> str:
        if self.kind == "server":
            return self.db.get_setting("name", server_name(str(self.location)))
        assert isinstance(self.location, Path)  # every kind but a server's is a Path
        return self.db.get_setting(
            "name", self.location.stem if self.is_package else self.location.name
        )

    @property
    def rubric(self) -> Rubric:
        if self._rubric is None:
            self._rubric = people.active_rubric(self.db)
        return self._rubric

    def setting(self, key: str) -> Any:
        """`key`'s stored value, else (absent or null) its default in domain/settings.py."""
        value = self.db.get_setting(key)
        return DEFAULT_SETTINGS.get(key) if value is None else value

    def set_setting(self, key: str, value: Any) -> None:
        """Change a setting after checking it has the shape the study uses."""
        self.require_lead("changing settings")
        check_setting(key, value)
        self.db.set_setting(key, value)

    # -- imports (each lands whole or not at all) --------------------------------
    def _land(
        self,
        parsed: ParsedItems,
        *,
        anchors: tuple | None = None,
        judge_rows: list | None = None,
        judge_source: str = "",
        also: Callable[[Any], Any] | None = None,
    ) -> tuple[int, int]:
        """(new items, judge scores) of items, their media and (harness) judge scores landed in
        ONE transaction; `also(tx)` lands
        what else came with them (another tool's answers) in that same transaction.

        Media files are written first, outside the write lock (encoding and
        fsync are slow); inside the transaction every file is made sure to exist
        again (a failed import elsewhere may have removed one that was its own),
        and a failed import removes only the files that no committed row uses,
        decided while it holds the write lock.
        """
        existing = items.existing_items(self.db, [s.item_id for s in parsed.specs])
        for spec in parsed.specs:
            if spec.item_id in existing and existing[spec.item_id] != items.content_sha(spec):
                raise InputError(
                    f"item_id '{spec.item_id}' is already in the study with other content; give it a new item_id",
                    source=spec.source,
                    field="item_id",
                )
        images = list(parsed.images.values())
        written: list[str] = []
        try:
            for img in images:
                if not self.media.in_database and self.media.put(img):
                    written.append(img.sha256)
            clash = imports.DUPLICATE["judge"] if judge_rows else imports.DUPLICATE["items"]
            with (
                imports.refused_if_duplicate(clash, judge_source or parsed_source(parsed)),
                self.db.write() as tx,
            ):
                for img in images:
                    # files: a no-op unless another import's cleanup removed one meanwhile; blobs: written here
                    self.media.put(img, tx)
                imports.import_items(tx, parsed.specs, [i.row for i in images], anchors=anchors)
                # what the import added: an item already in the study, identical, is not new
                n = len({sp.item_id for sp in parsed.specs} - set(existing))
                m = (
                    imports.import_judge(tx, judge_rows, kind="harness", source=judge_source)
                    if judge_rows
                    else 0
                )
                if also is not None:
                    also(tx)
            return n, m
        except BaseException:
            self._remove_unreferenced(written)
            raise

    def _remove_unreferenced(self, shas: list[str]) -> None:
        if not shas:
            return
        try:
            with self.db.write() as tx:
                keep = imports.referenced_media(tx, shas)
                for sha in shas:
                    if sha not in keep:
                        self.media.remove(sha)
        except InputError:
            # the study is busy or the disk is gone: leave the files (unreferenced files are harmless)
            pass

    def import_items(self, path: str | Path) -> int:
        return self._land(manifest_ingest.parse_manifest(path))[0]

    def import_folder(self, path: str | Path) -> int:
        return self._land(folder_ingest.parse_folder(path))[0]

    def import_harness(self, results: str | Path, cases: str | Path) -> tuple[int, int]:
        parsed = harness_ingest.parse_harness(results, cases, self.rubric)
        return self._land(parsed.items, judge_rows=parsed.judge_rows, judge_source=str(results))

    def import_anchors(self, path: str | Path, name: str | None = None) -> int:
        a = anchor_ingest.parse_anchors(path, self.rubric, name=name)
        return self._land(a.items, anchors=(a.name, a.references, a.rationales))[0]

    def _only_own_rater(self, names: set[str], path: str | Path) -> None:
        """In a package, imported rows are the package's rater's own answers."""
        if not self.is_package:
            return
        own = {r.name for r in self.raters()}
        other = sorted(names - own)
        if other:
            raise InputError(
                f"this package is {', '.join(sorted(own))}'s: rows for '{other[0]}' cannot go into it",
                source=str(path),
                field="rater",
            )

    def import_ratings(self, path: str | Path) -> int:
        groups = tables.parse_ratings(path, self.rubric, imports.known_item_ids(self.db))
        self._only_own_rater({g.rater for g in groups}, path)
        with (
            imports.refused_if_duplicate(imports.DUPLICATE["ratings"], str(path)),
            self.db.write() as tx,
        ):
            return imports.import_ratings(tx, groups, self.rubric.version)

    def import_judge(
        self, path: str | Path, *, replace: bool = False, versions: dict[str, str] | None = None
    ) -> int:
        """Judge scores from a CSV; the number imported. `replace`: scores correcting an earlier
        import become each judge's new imported version, the earlier one kept (and nothing is
        added where the file equals it). `versions`, when given, receives {judge: the version
        its scores went in as}."""
        rows = tables.parse_judge(path, self.rubric, imports.known_item_ids(self.db))
        with (
            imports.refused_if_duplicate(imports.DUPLICATE["judge"], str(path)),
            self.db.write() as tx,
        ):
            return imports.import_judge(
                tx, rows, kind="import", source=str(path), replace=replace, versions=versions
            )

    def import_pairs(
        self, path: str | Path, *, judges: bool = False, anonymous: bool = False
    ) -> int:
        rows = tables.parse_pairs(
            path, imports.known_item_ids(self.db), judges=judges, anonymous=anonymous
        )
        self._only_own_rater({r.rater for r in rows}, path)
        with (
            imports.refused_if_duplicate(imports.DUPLICATE["pairs"], str(path)),
            self.db.write() as tx,
        ):
            return imports.import_pair_votes(tx, rows, judges=judges, source=str(path))

    # -- raters -------------------------------------------------------------------
    def add_rater(
        self,
        name: str,
        *,
        operator: bool = False,
        expertise: str | None = None,
        seed: int | None = None,
    ):
        self.require_lead("adding a rater")
        return people.add_rater(self.db, name, operator=operator, expertise=expertise, seed=seed)

    def raters(self):
        return people.raters(self.db)

    def views_of(self, item_ids: list[str]):
        """What a rater sees of these items (by item_id)."""
        return items.views_by_item_id(self.db, item_ids)

    def counts(self) -> dict[str, int]:
        from ..store.rows import study_counts

        return study_counts(self.db)


def parsed_source(parsed: ParsedItems) -> str:
    return next((sp.source for sp in parsed.specs if sp.source), "")


def server_name(url: str) -> str:
    """A server study's default name: its database's."""
    return server_url(url).database or "study"


def display_location(location: str | Path) -> str:
    """A study's location as it may be printed or remembered (a URL without its password)."""
    return shown(str(location)) if is_server(location) else str(location)
