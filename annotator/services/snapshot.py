"""A plain snapshot of an open study for the UI thread.

The UI thread never holds a `Study` (its properties run queries: `Study.name`
reads the settings table). The database worker opens the study, keeps it, and
hands the views this frozen record: what they show (name, rubric, settings,
raters, where it is and what kind it is) and a media loader (a folder study reads
content-addressed files; a package or a server reads blobs on its own connection,
so it is safe from the decoder threads).

Rubric texts: a rubric may carry per-language texts (contract 5.1). A study made
before its rubric file had them stored none; when the shipped rubric of the same
id has the same version (translations are not part of it), its texts are used.

Public API: ``StudySnapshot`` (``folder``, ``name``, ``rubric``, ``settings``,
``raters``, ``media``, ``kind`` (folder | package | server), ``where`` (what may be
shown and remembered: a server URL without its password); ``.setting(key)``,
``.rater(name)``, ``.is_operator(name)``, ``.is_package``, ``.is_server``,
``.rubric_in(lang)``, ``.visible_raters()``), ``snapshot_of(study)``,
``open_study(path)`` and ``create_study(folder, rubric)`` (each ``-> (Study,
StudySnapshot)``, to be run on the database worker).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..domain.errors import InputError
from ..domain.records import RaterInfo
from ..domain.rubric import Rubric, parse_rubric
from ..store.faults import (
    ConnectionLost,  # re-exported: the UI reacts to it without importing store
)
from .resources import shipped_rubric
from .study import DEFAULT_SETTINGS, Study

__all__ = [
    "ConnectionLost",
    "StudySnapshot",
    "create_study",
    "open_study",
    "snapshot_of",
    "with_shipped_texts",
]


@dataclass(frozen=True)
class StudySnapshot:
    folder: Path | None
    name: str
    rubric: Rubric
    settings: Mapping[str, Any]
    raters: tuple[RaterInfo, ...]
    media: Callable[[str], bytes]  # sha256 -> bytes; never the worker's session
    kind: str = "folder"
    where: str = ""

    def setting(self, key: str) -> Any:
        return self.settings.get(key, DEFAULT_SETTINGS.get(key))

    def rater(self, name: str) -> RaterInfo | None:
        return next((r for r in self.raters if r.name == name), None)

    def is_operator(self, name: str) -> bool:
        r = self.rater(name)
        return r is not None and r.is_operator

    @property
    def is_package(self) -> bool:
        return self.kind == "package"

    @property
    def is_server(self) -> bool:
        return self.kind == "server"

    def visible_raters(self) -> tuple[RaterInfo, ...]:
        """The raters a rater may pick from: never an operator (staff accounts are the lead's)."""
        return tuple(r for r in self.raters if not r.is_operator)

    def rubric_in(self, lang: str) -> Rubric:
        """The rubric with its texts in `lang` where it has them (same version, same meaning)."""
        return self.rubric.localized(lang)

    def with_raters(self, raters: tuple[RaterInfo, ...]) -> StudySnapshot:
        return replace(self, raters=tuple(raters))


def with_shipped_texts(rubric: Rubric) -> Rubric:
    """The study's rubric, with the shipped file's translations when it stored none and the
    shipped file of its id is the same version."""
    if rubric.languages():
        return rubric
    text = shipped_rubric(rubric.id)
    if text is None:
        return rubric
    try:
        shipped = parse_rubric(text, source=rubric.id)
    except InputError:
        return rubric
    return rubric.with_texts(shipped.texts()) if shipped.version == rubric.version else rubric


def snapshot_of(study: Study) -> StudySnapshot:
    """Read everything the UI shows about a study once (database worker)."""
    settings = {**DEFAULT_SETTINGS, **study.db.all_settings()}
    where = str(study.where)
    default_name = (
        Path(study.folder).name
        if study.folder is not None
        else (Path(str(study.location)).stem if study.is_package else study.name)
    )
    return StudySnapshot(
        folder=Path(study.folder) if study.folder is not None else None,
        name=str(settings.get("name") or default_name),
        rubric=with_shipped_texts(study.rubric),
        settings=MappingProxyType(settings),
        raters=tuple(study.raters()),
        media=study.media.read,
        kind=study.kind,
        where=where,
    )


def open_study(path: str | Path) -> tuple[Study, StudySnapshot]:
    study = Study.open(path)
    try:
        return study, snapshot_of(study)
    except BaseException:
        study.close()
        raise


def create_study(folder: str | Path, rubric: str | Path) -> tuple[Study, StudySnapshot]:
    study = Study.create(folder, rubric)
    try:
        return study, snapshot_of(study)
    except BaseException:
        study.close()
        raise
