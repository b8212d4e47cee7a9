"""The offline outbox of a rater connected to a server study.

On connect, the rater's assigned work is exported to a local package (the same
file format raters carry offline). When the network goes, the app keeps the
rater working in that package; every answer given there is durable locally and
waits to sync. `sync()` pushes new rows through the package merge (by UUID:
idempotent, so a sync cut halfway is simply run again).

The package follows the server while the rater works there: after each answer
stored on the server, `refresh()` adds the rater's new rows to it (same UUIDs),
so offline it serves only what is still to do and a sync never re-sends an
answer the server holds.
"""

from __future__ import annotations

import json
from pathlib import Path

from platformdirs import user_data_dir

from ..base.location import PACKAGE_SUFFIX
from ..store import package_export, package_merge
from ..store.db import StudyDB
from .packages import export_package, merge_package
from .study import Study


def outbox_folder() -> Path:
    return Path(user_data_dir("annotator", appauthor=False)) / "outbox"


class Outbox:
    def __init__(self, server: Study, rater: str, folder: Path | None = None) -> None:
        self.server, self.rater = server, rater
        sid = server.setting("study_id") or "study"
        self.path = (folder or outbox_folder()) / f"{sid}-{rater}{PACKAGE_SUFFIX}"
        # the study's item number -> the package's (an answer in doubt goes to the same item)
        self.local_items: dict[int, int] = {}

    def prepare(self) -> Path:
        """A fresh local package of the rater's work; unsynced answers in an older one go up first."""
        if self.path.exists():
            self.sync()
        self.local_items = export_package(self.server, self.rater, self.path).local_items
        return self.path

    def refresh(self) -> Path:
        """The package brought up to the server's state of the rater's work (their answers given
        on the server since it was made, with their UUIDs); made again when it no longer matches
        row for row (new items assigned, or answers of its own not synced yet: those go up first)."""
        if self.path.exists():
            local = StudyDB(self.path)
            try:
                m = package_export.manifest(local)
                content = package_export.read_content(
                    self.server.db, self.rater, m["id"] if m else "", record=False
                )
                fresh = m is not None and package_export.refresh_answers(local, content)
            finally:
                local.close()
            if fresh:
                self.local_items = content.local_items
                return self.path
        return self.prepare()

    def _uuids(self, db: StudyDB) -> set[str]:
        rows = package_merge.read_rows(db)
        return {x["uuid"] for x in rows.judgements + rows.votes + rows.calibrations}

    def pending(self) -> int:
        """Answers (judgements, votes, calibrations) in the local package the server does not hold."""
        if not self.path.exists():
            return 0
        local = StudyDB(self.path, mode="read")
        try:
            mine = self._uuids(local)
        finally:
            local.close()
        return len(mine - package_merge.known_uuids(self.server.db, mine))

    def sync(self) -> package_merge.MergeResult | None:
        """Push what the local package holds that the server does not (raises a one-line study
        error while the server is unreachable: run it again later)."""
        if not self.path.exists():
            return None
        return merge_package(self.server, self.path)

    def state(self) -> str:
        return json.dumps({"package": str(self.path), "pending": self.pending()})
