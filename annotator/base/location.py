"""Where a study lives, as a user writes it: a folder, a rater package file, or a server URL.

The one home of the URL schemes (`SERVER_SCHEMES`), the package suffix and the password cut
(`without_password`). A password never belongs in a URL annotator is given (libpq takes it from
PGPASSWORD or ~/.pgpass), but a user may paste one, so every shown, logged or remembered location
goes through `without_password`: `StudyLocation.shown` and `.key` here, `store/server.shown`
(a parsed URL, its driver name dropped) and `services/study.display_location` (either kind).
`StudyLocation.parse` tells a package by its suffix, for what the app remembers and offers;
`Study.open` decides by what is on disk instead (any file but a study's database opens as a
package, so a renamed package still opens). `store/server.is_server` and `ui/main_window.is_url`
are `is_server_url` under the names their callers read.
Tested in tests/unit/test_location.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PACKAGE_SUFFIX",
    "SERVER_SCHEMES",
    "StudyLocation",
    "as_location",
    "is_server_url",
    "without_password",
]

SERVER_SCHEMES = ("postgresql://", "postgresql+psycopg://", "postgres://")
PACKAGE_SUFFIX = ".annot"


def is_server_url(location: object) -> bool:
    """Whether `location` names a study on a database server (a URL, not a path)."""
    return isinstance(location, str) and location.startswith(SERVER_SCHEMES)


def without_password(url: str) -> str:
    """`url` with any password in its user part removed (`user:secret@host` -> `user@host`)."""
    if not is_server_url(url):
        return url
    scheme, _, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if at and ":" in creds:
        creds = creds.split(":", 1)[0]
    return f"{scheme}://{creds}{at}{host}"


def as_location(location: str | Path) -> str | Path:
    """A server URL stays text; anything else is a path."""
    return str(location) if is_server_url(str(location)) else Path(location)


@dataclass(frozen=True)
class StudyLocation:
    """A parsed study location: its kind (folder | package | server) and its value."""

    kind: str
    value: str | Path

    @classmethod
    def parse(cls, location: str | Path) -> StudyLocation:
        loc = as_location(location)
        if isinstance(loc, str):
            return cls("server", loc)
        return cls("package" if loc.suffix == PACKAGE_SUFFIX else "folder", loc)

    @property
    def shown(self) -> str:
        """As it may be printed or logged: a URL without its password, a path as given."""
        return without_password(self.value) if isinstance(self.value, str) else str(self.value)

    @property
    def key(self) -> str:
        """As it is remembered (recent studies, last rater): a resolved path, or the URL without
        its password."""
        if isinstance(self.value, str):
            return without_password(self.value)
        return str(self.value.resolve())
