"""Where a study lives, as a user writes it: a folder, a rater package file, or a server URL.

Five modules used to parse this for themselves (the URL schemes, the package suffix) and two cut
passwords out of URLs their own way; this is the one parse and the one cut. A password never
belongs in a URL annotator is given (libpq takes it from PGPASSWORD or ~/.pgpass), but a user may
paste one: `without_password` is what every shown, logged or remembered location goes through.
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
