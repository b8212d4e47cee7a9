"""Work run on a thread of its own while the caller goes on: the second core for a live
estimate, whose sections read the same coded answers and write nothing another reads.

    with Beside(on) as beside:
        later = beside.run(fn, *args)  # started at once when `on`
        ...                            # the caller's own work meanwhile
        value = later()                # fn's result (or its exception), waited for

Off, `later()` calls `fn(*args)` in line. Leaving the block waits for the thread, so none
outlives it, whatever the caller's work raised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Later(Generic[T]):
    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...], on: bool) -> None:
        self._fn, self._args = fn, args
        self._value: T | None = None
        self._error: BaseException | None = None
        self.thread: threading.Thread | None = None
        if on:
            self.thread = threading.Thread(target=self._run, name="beside", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn(*self._args)
        except BaseException as e:  # handed to the caller, as a call in line raises it
            self._error = e

    def __call__(self) -> T:
        if self.thread is None:
            return self._fn(*self._args)
        self.thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Beside:
    """Runs work beside the caller (`on`), or in line when its result is asked for."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self._started: list[_Later[Any]] = []

    def run(self, fn: Callable[..., T], *args: Any) -> Callable[[], T]:
        later = _Later(fn, args, self.on)
        self._started.append(later)
        return later

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, *_exc: object) -> None:
        for later in self._started:
            if later.thread is not None:
                later.thread.join()


__all__ = ["Beside"]
