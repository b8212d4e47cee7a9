"""A plain snapshot of an open study for the UI thread.

The UI thread never holds a `Study` (its properties run queries: `Study.name`
reads the settings table). The database worker opens the study, keeps it, and
hands the views this frozen record: what they show (name, rubric, settings,
raters) and a media loader that only reads content-addressed files (safe from
the decoder threads).

Public API: ``StudySnapshot`` (``folder``, ``name``, ``rubric``, ``settings``,
``raters``, ``media``; ``.setting(key)``, ``.rater(name)``, ``.is_operator(name)``),
``snapshot_of(study)``, ``open_study(path)`` and ``create_study(folder, rubric)``
(each ``-> (Study, StudySnapshot)``, to be run on the database worker).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..domain.records import RaterInfo
from ..domain.rubric import Rubric
from .study import DEFAULT_SETTINGS, Study


@dataclass(frozen=True)
class StudySnapshot:
    folder: Path
    name: str
    rubric: Rubric
    settings: Mapping[str, Any]
    raters: tuple[RaterInfo, ...]
    media: Callable[[str], bytes]  # sha256 -> bytes; reads a file, touches no database

    def setting(self, key: str) -> Any:
        return self.settings.get(key, DEFAULT_SETTINGS.get(key))

    def rater(self, name: str) -> RaterInfo | None:
        return next((r for r in self.raters if r.name == name), None)

    def is_operator(self, name: str) -> bool:
        r = self.rater(name)
        return r is not None and r.is_operator

    def with_raters(self, raters: tuple[RaterInfo, ...]) -> StudySnapshot:
        return replace(self, raters=tuple(raters))


def snapshot_of(study: Study) -> StudySnapshot:
    """Read everything the UI shows about a study once (database worker)."""
    settings = {**DEFAULT_SETTINGS, **study.db.all_settings()}
    return StudySnapshot(
        folder=Path(study.folder), name=str(settings.get("name") or Path(study.folder).name),
        rubric=study.rubric, settings=MappingProxyType(settings), raters=tuple(study.raters()),
        media=study.media.read,
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
