"""The cycle collector held off during a live refresh (services/memory.collection_paused): no
collection starts inside one, whatever the collector's thresholds, and the collector runs again
after it, also when two workers hold pauses at once or the block raises; what the block made is
then in the oldest generation, not walked by a young pass, and a cycle among it is still freed."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from conftest import answer_as, copy_study

from annotator.services import dashboard_live as DL
from annotator.services.memory import collection_paused
from annotator.services.study import Study
from annotator.stats.report_model import build_report


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Each collection's generation as it starts, with the collector made to run at every
    allocation (a pause that lets one allocation through is seen at once)."""
    started: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    gc.enable()
    gc.callbacks.append(note)
    gc.set_threshold(1, 1, 1)
    try:
        yield started
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(note)
        if not enabled:
            gc.disable()


def test_nothing_is_collected_inside_and_the_collector_runs_after(collections):
    with collection_paused():
        collections.clear()  # those of the test's own setting up
        assert not gc.isenabled()
        garbage = [[i] for i in range(10_000)]
        del garbage
        assert collections == []
    assert gc.isenabled()
    _ = [[i] for i in range(100)]
    assert collections  # the collector runs again


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_what_the_block_made_is_old_and_its_cycles_are_still_freed():
    """The block's survivors skip the young pass the collector would make over them (moved to
    the oldest generation whole); a cycle made inside and dropped is freed by a full pass."""
    freed = threading.Event()
    with collection_paused():
        kept = [[i] for i in range(1_000)]
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        weakref.finalize(a, freed.set)
        del a, b
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept) in oldest and all(id(x) in oldest for x in kept)
    assert not gc.get_freeze_count()  # nothing left frozen for good
    assert not freed.is_set()
    gc.collect()
    assert freed.is_set()


def test_two_pauses_at_once_end_with_the_last(collections):
    """The database and the compute workers each hold one: the first to end leaves the
    collector off for the other."""
    first_in, second_out = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with collection_paused():
            first_in.set()
            second_out.wait(5)
        seen.append(gc.isenabled())

    with collection_paused():
        collections.clear()
        worker = threading.Thread(target=other)
        worker.start()
        assert first_in.wait(5)
    assert not gc.isenabled()  # the other worker still holds its pause
    assert collections == []  # none while either held one
    second_out.set()
    worker.join(5)
    assert seen == [True] and gc.isenabled()


def test_a_raising_block_ends_its_pause_and_an_off_collector_stays_off(collections):
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("a refresh that failed")
    assert gc.isenabled()
    gc.disable()  # the caller's own choice
    with collection_paused():
        pass
    assert not gc.isenabled()
    gc.enable()


def test_a_live_refresh_runs_no_collection(demo_study_dir, tmp_path, collections):
    """The dashboard's live refresh on the demo after a new rater's answers: no collection
    starts while the new answers are read or the estimate computed (a collection that starts
    with one of their frames on the stack); the estimate is the one computed with the collector
    on (its figures do not depend on when memory is reclaimed)."""
    refresh = {DL._read_inputs.__code__, DL._compute_live.__code__}
    inside: list[str] = []

    def note(phase: str, info: dict) -> None:
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            if frame.f_code in refresh:
                inside.append(frame.f_code.co_name)
                return
            frame = frame.f_back

    st = Study.open(copy_study(demo_study_dir, tmp_path / "demo"))
    gc.callbacks.append(note)
    try:
        at = datetime.now(UTC)
        first = DL.read_live_inputs(st, None, {}, at, n_boot=10, seed=0)
        assert "_read_inputs" in inside  # the first read, of every answer, is not held
        gc.set_threshold(700, 10, 10)
        exact = build_report(first.frames.frames, n_boot=10)
        assert answer_as(st, "zed", 5) == 5
        inside.clear()
        gc.set_threshold(1, 1, 1)
        live = DL.read_live_inputs(st, first.frames, exact, at, n_boot=10, seed=0)
        model = DL.compute_live(live)
        assert inside == [] and collections  # the collector ran between and after them
        assert live.frames.how == "delta" and live.frames.n_new == 5
        gc.set_threshold(700, 10, 10)  # Python's own: the figures afresh in a few seconds
        again = DL._compute_live(live, None)  # the same, the collector on
        assert "_compute_live" in inside
        assert model.report == again.report
    finally:
        gc.callbacks.remove(note)
        st.close()
