"""Work beside the caller: its result or its exception handed back, and no thread outliving
the block, whatever the caller's own work raised."""

from __future__ import annotations

import threading
import time

import pytest

from annotator.stats.beside import Beside


def _slow_square(x: int, seen: list[str]) -> int:
    time.sleep(0.05)
    seen.append(threading.current_thread().name)
    return x * x


@pytest.mark.parametrize("on", [True, False])
def test_the_result_is_the_calls_on_a_thread_of_its_own_or_in_line(on) -> None:
    seen: list[str] = []
    with Beside(on) as beside:
        later = beside.run(_slow_square, 7, seen)
        mine = threading.current_thread().name
        assert later() == 49
    assert seen == (["beside"] if on else [mine])


def _fails() -> None:
    raise KeyError("metric")


@pytest.mark.parametrize("on", [True, False])
def test_its_exception_reaches_the_caller(on) -> None:
    with Beside(on) as beside:
        later = beside.run(_fails)
        with pytest.raises(KeyError, match="metric"):
            later()


def test_no_thread_outlives_the_block_when_the_callers_work_raises() -> None:
    seen: list[str] = []
    before = set(threading.enumerate())
    with pytest.raises(ValueError), Beside(True) as beside:
        beside.run(_slow_square, 3, seen)
        raise ValueError("the caller's own work")
    assert seen == ["beside"]  # it ran to its end before the block was left
    assert set(threading.enumerate()) == before
