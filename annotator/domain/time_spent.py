"""The time a rater spent on an answer (`time_ms`): how long the item was on screen before the
answer was given. One cap and one rule for every path that stores one: the app, package merge,
the team server's trigger and the importers of other tools' files.

An answer is the rater's whatever the clock says: an item left open over a weekend is stored
with its time at the cap, never refused after the rater answered. The cap is one day; a stored
time equal to it is the flag "on screen for a day or more" (`at_cap`), which the report counts.
A negative time cannot come from a clock that only runs forward: it is damage, and refused.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import InputError

__all__ = ["MAX_TIME_MS", "at_cap", "capped", "from_seconds"]

MAX_TIME_MS = 86_400_000  # one day on one answer; the INTEGER column holds it on every server


def capped(ms: int | None) -> int | None:
    """`ms` as stored: at most MAX_TIME_MS (None stays None: no time was recorded)."""
    if ms is None:
        return None
    if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
        raise InputError(f"the time spent, {ms!r} ms, is not a whole number of ms from 0 up")
    return min(ms, MAX_TIME_MS)


def at_cap(ms: Any) -> bool:
    """Whether a stored time is the cap: the answer was given after a day or more on screen."""
    return isinstance(ms, int) and not isinstance(ms, bool) and ms >= MAX_TIME_MS


def from_seconds(raw: Any, where: str, what: str) -> int | None:
    """Another tool's time spent, in seconds (a number; empty for none) -> ms as stored, capped."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not raw >= 0:
        raise InputError(f"{what} must be a number of seconds from 0 up", source=where, field=what)
    if not math.isfinite(raw) or raw * 1000 >= MAX_TIME_MS:
        return MAX_TIME_MS
    return capped(int(round(raw * 1000)))
