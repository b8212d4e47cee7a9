"""The app's own preferences (not the study's): recent studies, key overrides,
window geometry, the last rater per study.

Stored with QSettings. Tests (and anyone who wants a portable profile) point it
at an INI file with the ANNOTATOR_SETTINGS environment variable or the `path`
argument, so nothing leaks into the user's real profile. Key overrides live in
a file a person edits, ``keys.toml`` beside the settings file (docs/raters.md "Keys"),
written atomically (a temp file renamed over it) when the app changes it.

Public API: ``AppSettings(path: str | Path | None = None)`` with
``recent_studies() -> list[Path | str]`` (a server study is its URL without a password),
``add_recent_study(location)``, ``remove_recent_study(location)``, ``language() -> str``
("" follows the system), ``set_language(lang)``,
``key_overrides() -> dict[str, list[str]]``, ``key_overrides_checked() -> (dict, problems)``,
``set_key_override(action, sequences | None)``, ``keys_path``,
``geometry(name) -> bytes | None``, ``set_geometry(name, data)``,
``last_rater(study) -> str | None``, ``set_last_rater(study, name)``, ``last_lead(study)``,
``set_last_lead(study, lead=True)`` (the lead's mode was the last: reopen in it),
``value(key, default=None)``, ``set_value(key, value)``, ``sync()``, ``path``,
``problems() -> list[str]``, ``problem_line() -> str | None``.

A settings file is a person's to edit (docs/raters.md "Keys"), so nothing in it may stop the app: a
value of the wrong shape (``recent_studies="5"``), one that is not JSON, or one nested past
any use is ignored, the default used, and named in ONE line at start-up (``problem_line``).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from ..base.atomic import atomic_write_text
from ..base.files import NotRegular, TooLarge, read_regular, size_text
from ..base.location import StudyLocation, as_location

ENV_VAR = "ANNOTATOR_SETTINGS"
MAX_RECENT = 10
_ABSENT = object()


def _list_of_text(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _text_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


# The keys the app reads, the shape each must have, and what the shape is called in the line.
_SHAPES: dict[str, tuple[Any, str]] = {
    "recent_studies": (_list_of_text, "a list of study locations"),
    "language": (lambda v: isinstance(v, str), "a language code"),
    "last_rater": (_text_map, "a table of study -> rater name"),
    "last_lead": (
        lambda v: isinstance(v, dict) and all(isinstance(x, bool) for x in v.values()),
        "a table of study -> true or false",
    ),
    "dashboard_n_boot": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "a positive whole number",
    ),
    "dashboard_live": (lambda v: isinstance(v, bool), "true or false"),
    "adjudicator": (lambda v: v is None or isinstance(v, str), "a name"),
}


def location_key(location: str | Path) -> str:
    """How a study is remembered: a resolved path, or a server URL as given (never with a
    password: the caller passes ``snapshot.where``, and a password is cut here as well)."""
    return StudyLocation.parse(location).key


class AppSettings:
    def __init__(self, path: str | Path | None = None) -> None:
        path = path if path is not None else os.environ.get(ENV_VAR)
        if path:
            self._q = QSettings(str(path), QSettings.Format.IniFormat)
        else:
            self._q = QSettings(
                QSettings.Format.IniFormat, QSettings.Scope.UserScope, "annotator", "annotator"
            )
        self._ignored: dict[str, str] = {}  # key -> why, for the start-up line
        for key in _SHAPES:
            self.value(key)  # records a value of the wrong shape now, not when a view reads it

    @property
    def path(self) -> Path:
        return Path(self._q.fileName())

    @property
    def qsettings(self) -> QSettings:
        return self._q

    # -- generic (JSON-encoded so types survive the INI round trip) ----------------
    def value(self, key: str, default: Any = None) -> Any:
        """The stored value, or `default` when there is none or it is unreadable or of the wrong
        shape for a key the app reads (then noted for ``problem_line``)."""
        raw = self._q.value(key)
        if raw is None:
            return default
        try:
            got = json.loads(raw) if isinstance(raw, str) else _ABSENT
        except (ValueError, RecursionError):  # not JSON; nested past Python's recursion limit
            got = _ABSENT
        if got is _ABSENT:
            self._ignored.setdefault(key, "not readable as a value")
            return default
        shape = _SHAPES.get(key)
        if shape is not None and not shape[0](got):
            self._ignored.setdefault(key, f"not {shape[1]}")
            return default
        return got

    def problems(self) -> list[str]:
        """What the settings file holds that the app ignored (one phrase each)."""
        return [f"{k} ({why})" for k, why in self._ignored.items()]

    def problem_line(self) -> str | None:
        """The ignored settings in one line for the start-up report, or None."""
        if not self._ignored:
            return None
        return f"settings in {self.path}: ignored, defaults used: " + ", ".join(self.problems())

    def set_value(self, key: str, value: Any) -> None:
        self._q.setValue(key, json.dumps(value))
        self._q.sync()

    def sync(self) -> None:
        self._q.sync()

    # -- recent studies ------------------------------------------------------------
    def recent_studies(self) -> list[Path | str]:
        return [as_location(p) for p in self.value("recent_studies", [])]

    def add_recent_study(self, location: str | Path) -> None:
        p = location_key(location)
        recent = [str(x) for x in self.recent_studies() if str(x) != p]
        self.set_value("recent_studies", [p, *recent][:MAX_RECENT])

    def remove_recent_study(self, location: str | Path) -> None:
        p = location_key(location)
        self.set_value("recent_studies", [str(x) for x in self.recent_studies() if str(x) != p])

    # -- language ------------------------------------------------------------------
    def language(self) -> str:
        """The language chosen in the app ("" or "system": the system locale's)."""
        v = self.value("language", "")
        return v if isinstance(v, str) else ""

    def set_language(self, lang: str) -> None:
        self.set_value("language", lang)

    # -- keys ----------------------------------------------------------------------
    @property
    def keys_path(self) -> Path:
        return self.path.with_name("keys.toml")

    def key_overrides_checked(self) -> tuple[dict[str, list[str]], list[str]]:
        """The overrides in keys.toml and what is wrong with the file (one phrase each)."""
        p = self.keys_path
        if not p.exists():
            return {}, []
        try:
            # one regular file of a few KiB: a pipe or a device named keys.toml never blocks
            raw = tomllib.loads(read_regular(p, 1 << 20).decode("utf-8-sig"))
        except NotRegular:
            return {}, [f"{p.name} is not a regular file (a pipe or a device): it is ignored"]
        except TooLarge as exc:
            return {}, [f"{p.name} is {size_text(exc.size)}, more than a keys file holds"]
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return {}, [f"{p.name} cannot be read ({' '.join(str(exc).split())})"]
        except RecursionError:  # tomllib recurses into nested arrays and inline tables
            return {}, [f"{p.name} cannot be read (nested too deep)"]
        table = raw.get("keys", raw)
        if not isinstance(table, dict):  # keys = ['Y'] or keys = 'Y': not a table of actions
            return {}, ["'keys' must be a table of action = [keys] (the file is ignored)"]
        out: dict[str, list[str]] = {}
        problems: list[str] = []
        for k, v in table.items():
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                problems.append(f"'{k}' must be a list of keys")
                continue
            out[str(k)] = list(v)
        return out, problems

    def key_overrides(self) -> dict[str, list[str]]:
        return self.key_overrides_checked()[0]

    def set_key_override(self, action: str, sequences: list[str] | None) -> None:
        """Bind `action` to `sequences` (an empty list unbinds it; None restores the default)."""
        current = self.key_overrides()
        if sequences is None:
            current.pop(action, None)
        else:
            current[action] = list(sequences)
        lines = ["# annotator key overrides: action = [keys] (see docs/raters.md, Keys)", "[keys]"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in sorted(current.items())]
        atomic_write_text(self.keys_path, "\n".join(lines) + "\n")

    # -- windows -------------------------------------------------------------------
    def geometry(self, name: str) -> bytes | None:
        raw = self._q.value(f"geometry/{name}")
        if isinstance(raw, QByteArray) and not raw.isEmpty():
            return bytes(raw.data())
        return None

    def set_geometry(self, name: str, data: bytes | QByteArray) -> None:
        self._q.setValue(f"geometry/{name}", QByteArray(data))
        self._q.sync()

    # -- raters --------------------------------------------------------------------
    def last_rater(self, study: str | Path) -> str | None:
        return self.value("last_rater", {}).get(location_key(study))  # a text map (_SHAPES)

    def set_last_rater(self, study: str | Path, name: str) -> None:
        data = self.value("last_rater", {})
        data[location_key(study)] = name
        self.set_value("last_rater", data)
        self.set_last_lead(study, False)

    def last_lead(self, study: str | Path) -> bool:
        """The last session in this study ended in the study lead's mode (no rater chosen)."""
        return bool(self.value("last_lead", {}).get(location_key(study)))

    def set_last_lead(self, study: str | Path, lead: bool = True) -> None:
        data = self.value("last_lead", {})
        if not isinstance(data, dict):
            data = {}
        if lead:
            data[location_key(study)] = True
        else:
            data.pop(location_key(study), None)
        self.set_value("last_lead", data)
