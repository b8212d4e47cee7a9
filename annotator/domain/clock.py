"""When an answer can have been given: one rule for every path that stores a time (the app on a
server, package merge, imports): from 2000-01-01 to a day after now, in UTC. A day of slack
covers clocks a little off and time zones; a time outside is a clock that is wrong (a rater's
computer set years ahead) or a file that was edited, and is said as such in one line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["AHEAD", "EARLIEST", "out_of_range"]

EARLIEST = datetime(2000, 1, 1)
AHEAD = timedelta(days=1)


def out_of_range(t: datetime, now: datetime | None = None) -> str | None:
    """Why `t` (naive UTC, as stored) cannot be an answer's time, or None when it can."""
    now = now or datetime.now(UTC).replace(tzinfo=None)
    if t < EARLIEST:
        return f"{t.isoformat(sep=' ', timespec='seconds')} is before 2000"
    if t > now + AHEAD:
        return (
            f"{t.isoformat(sep=' ', timespec='seconds')} is more than a day after now (UTC "
            f"{now.isoformat(sep=' ', timespec='minutes')}): the clock of the computer it was "
            "given on is wrong"
        )
    return None
