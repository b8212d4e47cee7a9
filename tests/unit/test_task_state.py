"""Long work's state (annotator/base/task.py): every long-work function reports to one object,
whose one report(fraction, message) the caller chose, and stops at its next report once
cancelled."""

from __future__ import annotations

import threading

import pytest

from annotator.base.task import Cancelled, TaskState
from annotator.services import dashboard


def test_every_way_of_reporting_reaches_the_one_report_and_stops_when_cancelled():
    seen: list[tuple[float | None, str]] = []
    state = TaskState(lambda f, m: seen.append((f, m)))
    state.step(0.5, "half")  # the dashboard's computation
    state.say("reading the study")  # a report's stage line: no fraction
    state.count(3, 12, "judged")  # the judge's calls, the demo's stages
    state.count(0, 0, "mockups")  # nothing to do is all done
    assert seen == [
        (0.5, "half"),
        (None, "reading the study"),
        (0.25, "judged 3/12"),
        (1.0, "mockups 0/0"),
    ]
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


def test_every_long_work_function_takes_the_one_state():
    import inspect

    from annotator.demo.scenario import write_demo_inputs
    from annotator.judge.pairs import run_pair_judge
    from annotator.judge.runner import run_judge
    from annotator.judge.simulated import run_simulated
    from annotator.services import dashboard_live, demo, judging, report_cache, reporting
    from annotator.services.copying import copy_study
    from annotator.services.export_hf import export_hf
    from annotator.store.copy import copy_rows

    long_work = [
        run_judge,
        run_pair_judge,
        run_simulated,
        judging.judge_study,
        judging.judge_pairs,
        judging.judge_study_at,
        demo.build_demo,
        write_demo_inputs,
        reporting.study_report,
        reporting.read_and_report,
        reporting.build_study_report,
        reporting.write_reports,
        report_cache.cached_study_report,
        report_cache.cached_report_and_frames,
        export_hf,
        copy_study,
        copy_rows,
        dashboard.compute,
        dashboard_live.compute_live,
    ]
    for fn in long_work:
        params = inspect.signature(fn).parameters
        assert "task" in params and params["task"].default is None, fn.__qualname__
        assert not {"progress", "cancel", "say", "state"} & set(params), fn.__qualname__
