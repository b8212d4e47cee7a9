"""What was last computed from a table, kept for the next reader of that table (or of one that
grew from it), by weak reference: it goes when the table goes.

The frames are never changed in place, so a table's identity names its content: a value
computed from it stands as long as it lives. One value a slot, replaced whole (another thread
may read it meanwhile). Read by row_codes.py (a table's codes), first_rows.py (its
judgements' first rows) and answers.py (a coded table's rows by metric).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from typing import Any

import pandas as pd


class LastTable:
    """One (table, what it was made with, value) a slot, the table held weakly."""

    def __init__(self) -> None:
        self._slots: dict[Hashable, tuple[weakref.ref[pd.DataFrame], Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, slot: Hashable) -> tuple[pd.DataFrame, Any, Any] | None:
        """The slot's table, what its value was made with, and the value; None when the slot
        is empty or its table is gone."""
        last = self._slots.get(slot)
        if last is None:
            return None
        table = last[0]()
        return None if table is None else (table, last[1], last[2])

    def put(self, slot: Hashable, table: pd.DataFrame, made_with: Any, value: Any) -> None:
        with self._lock:
            self._slots[slot] = (
                weakref.ref(table, lambda ref: self._forget(slot, ref)),
                made_with,
                value,
            )

    def _forget(self, slot: Hashable, ref: weakref.ref[pd.DataFrame]) -> None:
        """A table gone: its value goes with it (a table's codes are as large as the table)."""
        with self._lock:
            if slot in self._slots and self._slots[slot][0] is ref:
                del self._slots[slot]


__all__ = ["LastTable"]
