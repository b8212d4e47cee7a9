"""Globally unique ids for answer rows: UUIDv7 (RFC 9562), minted where the row is made.

Time-ordered, so rows sort by when they were made across machines, and random
enough (74 bits) that a rater's laptop and the lead's study never mint the same
id: merge identifies a row by this id alone.
"""

from __future__ import annotations

import secrets
import time
import uuid


def uuid7(unix_ms: int | None = None) -> str:
    ms = (time.time_ns() // 1_000_000 if unix_ms is None else unix_ms) & ((1 << 48) - 1)
    rand_a, rand_b = secrets.randbits(12), secrets.randbits(62)
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def uuid7_time_ms(text: str) -> int:
    """The millisecond timestamp inside a UUIDv7."""
    return uuid.UUID(text).int >> 80
