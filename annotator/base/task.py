"""Long work's progress and cancellation: one state object shared by the caller and the worker.

Orange's pattern: every long-work function (the judge runs, the demo's build, the reports and
exports, `study copy`, the dashboard's computation) takes one optional `task: TaskState`, reports
to it and stops at its next report once the caller cancelled it. The caller decides what a report
becomes through the `report(fraction, message)` it gives the state: the CLI prints lines, the app
emits a Qt signal (ui/worker.py). The work reports in three ways, all through `report`:

- `step(fraction, message)`: a share of the whole done (the dashboard's computation);
- `say(message)`: a stage's line, with no fraction (the report's stages, `study copy`'s tables);
- `count(done, total, what)`: units of `what` done, with their fraction (the judge's calls, the
  demo's stages).

Each of them raises `Cancelled` once the state is cancelled; work that must stop more gently
(the judge run still records what is in flight) catches it, and a wait between tries waits on
`event` so a cancel cuts it short.

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
        """A stage's line: no fraction, so a progress bar stays where it is."""
        self.step(None, message)

    def count(self, done: int, total: int, what: str) -> None:
        """`done` of `total` units of `what`, as "what done/total" (none to do is all done)."""
        self.step(done / total if total else 1.0, f"{what} {done}/{total}")
