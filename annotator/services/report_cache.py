"""The last report of a study kept on disk, valid while the study's data and the figures' code hold.

A report on a large study takes tens of seconds; `annotator report` run twice, or a second
export, on unchanged data should not pay that again. The cache is one JSON file per
(resamples, seed) in the study folder's `.cache/`, written atomically (`.tmp` + `os.replace`:
a crash leaves the old file or the new one, never half of one), and keyed by:

- the study's data version (store.changes.data_version: moves on every answer, score, vote,
  item, anchor, calibration, adjudication and setting), and
- the code version of the figures (a hash of the source of the statistics and the domain
  rules), so an upgrade that changes a number never serves the old one.

The cached dict is the report exactly as computed (JSON keeps every float digit), so a hit is
indistinguishable from a recomputation. Studies that are not folders (a server) and folders that
cannot be written are simply not cached.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_write_text
from ..base.task import TaskState
from ..domain.figures import as_dict
from ..stats.frames import StudyFrames
from ..store.changes import data_version
from .reporting import read_and_report, team_record
from .study import Study

CACHE_DIR = ".cache"
_FORMAT = 2  # 2: signed


@cache
def code_version() -> str:
    """A digest of the source of everything that decides a figure: the statistics, the domain
    rules, the store's readers and the services that build the frames and hold the settings'
    defaults (a changed default moves the figures of every study that never set it); the
    installed version where the source is not readable."""
    root = Path(__file__).resolve().parent.parent
    files = [
        f
        for sub in ("stats", "domain", "store", "services")
        for f in sorted((root / sub).glob("*.py"))
    ]
    h = hashlib.sha256(f"format {_FORMAT}".encode())
    try:
        for f in files:
            h.update(f"{f.parent.name}/{f.name}".encode() + b"\0" + f.read_bytes())
    except OSError:
        from importlib.metadata import PackageNotFoundError, version

        try:
            h.update(version("annotator").encode())
        except PackageNotFoundError:
            h.update(b"unknown")
    return h.hexdigest()[:16]


def cache_file(study: Study, n_boot: int, seed: int) -> Path | None:
    """Where the report of `study` with these resamples and seed is kept (None: not cached)."""
    if study.folder is None:
        return None
    return _file(Path(study.folder), n_boot, seed)


def _file(folder: Path, n_boot: int, seed: int) -> Path:
    return folder / CACHE_DIR / f"report-b{int(n_boot)}-s{int(seed)}.json"


def keep_report(
    folder: Path, *, n_boot: int, seed: int, data_version: str, report: dict[str, Any]
) -> None:
    """Keep a report computed elsewhere (the dashboard's) for the next reader; a folder that
    cannot be written, or a study that is not a folder, keeps nothing."""
    if not Path(folder).is_dir():
        return
    key = {"data_version": data_version, "code_version": code_version()}
    _write(_file(Path(folder), n_boot, seed), key, report)


def _signing_key() -> bytes | None:
    """This user's secret for the kept reports, made once in their data folder (None when it
    cannot be read or made: nothing is then kept or read). A kept report is published as it is,
    so one edited by hand, or copied in from elsewhere, must not pass for this code's figures."""
    from platformdirs import user_data_dir

    path = Path(user_data_dir("annotator", appauthor=False)) / "report-cache.key"
    try:
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
        key = path.read_bytes()
    except FileExistsError:
        key = path.read_bytes()  # another process made it meanwhile
    except OSError:
        return None
    return key if len(key) == 32 else None


def _mac(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def _write(path: Path, key: dict[str, str], report: dict[str, Any]) -> None:
    secret = _signing_key()
    if secret is None:
        return
    body = json.dumps({"key": key, "report": report})
    try:
        path.parent.mkdir(exist_ok=True)
        # the first line signs the rest: a report edited by hand is not read back
        atomic_write_text(path, _mac(secret, body) + "\n" + body)
    except OSError:
        pass  # a read-only study folder: the report is still right, only not kept


def _key(study: Study) -> dict[str, str]:
    return {"data_version": data_version(study.db), "code_version": code_version()}


@dataclass(frozen=True)
class KeptReport:
    """A report kept on disk, the data version it was computed on, and when it was kept."""

    report: dict[str, Any]
    data_version: str
    kept_at: datetime


def _read(path: Path | None) -> KeptReport | None:
    """The report kept in `path` by this code version; None when there is none, it is unreadable
    (half-written by an older version: it is then recomputed and replaced) or another code
    version kept it (its figures may differ from this code's)."""
    if path is None or not path.is_file():
        return None
    secret = _signing_key()
    if secret is None:
        return None
    try:
        mac, _, body = path.read_text(encoding="utf-8").partition("\n")
        if not hmac.compare_digest(mac, _mac(secret, body)):
            return None  # edited by hand, or kept by another user or machine
        stored = json.loads(body)
        kept_at = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict):
        return None
    key, report = as_dict(stored.get("key")), stored.get("report")
    if key.get("code_version") != code_version() or not isinstance(report, dict):
        return None
    return KeptReport(report, str(key.get("data_version")), kept_at)


def stored_report(study: Study, *, n_boot: int, seed: int) -> dict[str, Any] | None:
    """The report kept for exactly this study's data, this code, resamples and seed; None when
    there is none."""
    kept = _read(cache_file(study, n_boot, seed))
    return kept.report if kept is not None and kept.data_version == data_version(study.db) else None


def earlier_report(study: Study, *, n_boot: int, seed: int) -> KeptReport | None:
    """The last report kept for these resamples and seed by this code, whatever has changed in
    the study since: shown, marked as earlier, while the current one is computed."""
    return _read(cache_file(study, n_boot, seed))


def cached_study_report(
    study: Study, *, n_boot: int = 1000, seed: int = 0, task: TaskState | None = None
) -> tuple[dict[str, Any], bool]:
    """The study's report and whether it came from the cache (same data, same code)."""
    report, frames = cached_report_and_frames(study, n_boot=n_boot, seed=seed, task=task)
    return report, frames is None


def cached_report_and_frames(
    study: Study, *, n_boot: int = 1000, seed: int = 0, task: TaskState | None = None
) -> tuple[dict[str, Any], StudyFrames | None]:
    """The study's report, from the cache when its data and this code are unchanged (frames
    None: nothing was read), else read and computed (with the frames it was computed from)."""
    task = task or TaskState()
    kept = stored_report(study, n_boot=n_boot, seed=seed)
    if kept is not None:
        task.say("figures unchanged since the last report: read from the cache")
        # the team's record is read fresh, as the dashboard's team section is: a report kept by
        # the dashboard has none, and dealing work changes it without changing a figure
        return {**kept, **team_record(study)}, None
    path = cache_file(study, n_boot, seed)
    key = _key(study) if path is not None else None  # before reading: never newer than the data
    made = read_and_report(study, n_boot=n_boot, seed=seed, task=task)
    if path is not None and key is not None:
        _write(path, key, made.report)
    return made.report, made.frames


def last_report(study: Study) -> dict[str, Any] | None:
    """The newest report kept for the study by this code version, whatever the data since: for
    what only orders work (the review queue puts systematic findings first), never for a figure.
    None when no report was kept."""
    if study.folder is None:
        return None
    folder = Path(study.folder) / CACHE_DIR
    try:
        files = sorted(folder.glob("report-*.json"), key=lambda f: f.stat().st_mtime, reverse=True)
    except OSError:
        return None
    for f in files:
        kept = _read(f)
        if kept is not None:
            return kept.report
    return None


__all__ = [
    "CACHE_DIR",
    "cache_file",
    "cached_report_and_frames",
    "cached_study_report",
    "code_version",
    "earlier_report",
    "keep_report",
    "KeptReport",
    "last_report",
]
