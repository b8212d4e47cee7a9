"""Long work's state (annotator/base/task.py): one object reports progress in each shape callers
use and stops the work at its next step once cancelled."""

from __future__ import annotations

import threading

import pytest

from annotator.base.task import Cancelled, TaskState
from annotator.services import dashboard


def test_one_state_speaks_every_progress_shape_and_stops_when_cancelled():
    seen: list[tuple[float | None, str]] = []
    state = TaskState(lambda f, m: seen.append((f, m)))
    state.step(0.5, "half")
    state.say("reading the study")  # annotator report's shape
    state.count(3, 12)  # the judge runner's and the demo's shape
    state.count(0, 0)
    assert seen == [(0.5, "half"), (None, "reading the study"), (0.25, "3 of 12"), (None, "0 of 0")]
    state.cancel()
    assert state.cancelled and state.event.is_set()
    with pytest.raises(Cancelled):
        state.say("never shown")
    assert len(seen) == 4


def test_a_worker_waiting_on_the_state_wakes_at_once_on_cancel():
    state = TaskState()
    woke = threading.Event()

    def backoff() -> None:  # as the judge runner waits between tries
        if state.event.wait(30):
            woke.set()

    t = threading.Thread(target=backoff)
    t.start()
    state.cancel()
    t.join(5)
    assert woke.is_set() and not t.is_alive()


def test_the_dashboard_uses_the_one_state():
    assert dashboard.TaskState is TaskState and dashboard.Cancelled is Cancelled
