"""An answer keeps its id until it is stored: re-sending after a failure stores it once.

The app cannot know whether a write whose connection dropped was committed. So
each answer gets its UUID when it is first submitted and keeps it across
retries (same item, same answers); the store returns the stored row when it
sees the id again. Nothing is dropped, nothing doubled.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from ..domain.ids import uuid7

T = TypeVar("T")


class ResendIds:
    def __init__(self) -> None:
        self._pending: dict[str, str] = {}
        self.in_doubt: str | None = None  # the id of the last write that failed (maybe stored)

    def send(self, key: tuple[Any, ...], write: Callable[[str], T], uid: str | None = None) -> T:
        """Run `write(uuid)`; the uuid is reused for the same `key` until a write succeeds
        (`uid`: the id the answer already had, e.g. on the server before the app went offline)."""
        k = json.dumps(key, sort_keys=True, default=str)
        uid = self._pending.setdefault(k, uid or uuid7())
        self.in_doubt = uid
        out = write(uid)
        self._pending.pop(k, None)
        self.in_doubt = None
        return out

    @property
    def waiting(self) -> int:
        return len(self._pending)
