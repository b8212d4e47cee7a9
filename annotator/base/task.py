"""Long work's progress and cancellation: one state object shared by the caller and the worker.

Orange's pattern: long work is a function taking a state it reports to and that it checks for a
cancel between steps, run off the UI thread. Callers meet three shapes of progress, each kept
where it fits, and `TaskState` speaks all three so one state object can drive any of them:

- `step(fraction, message)`: a view with a progress bar (the dashboard's computation);
- `say(message)`: a command printing one line per stage (`annotator report`, `study copy`);
- `count(done, total)` with `event` to wait on: work over many units that waits between tries
  (the judge runner's calls and back-offs, the demo's builder).

Tested in tests/unit/test_task_state.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Cancelled", "TaskState"]


class Cancelled(Exception):
    """The computation was cancelled (a newer one replaced it, or the view closed)."""


class TaskState:
    """Progress and cancellation of one computation, shared by the caller and the worker."""

    def __init__(self, report: Callable[[float | None, str], None] | None = None) -> None:
        self.event = threading.Event()  # set on cancel: a worker may wait on it (a back-off)
        self.report = report or (lambda _f, _m: None)

    def cancel(self) -> None:
        self.event.set()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()

    def step(self, fraction: float | None, message: str) -> None:
        """Report progress; raise Cancelled if the caller gave up."""
        if self.event.is_set():
            raise Cancelled(message)
        self.report(fraction, message)

    def say(self, message: str) -> None:
        """A stage's line with no fraction (the shape `progress=` of the report commands takes)."""
        self.step(None, message)

    def count(self, done: int, total: int) -> None:
        """Units done of total (the shape of the judge runner's and the demo's `progress=`)."""
        self.step(done / total if total else None, f"{done} of {total}")
