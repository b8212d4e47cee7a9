"""Background threads for the UI: ONE database worker and ONE compute worker.

The UI thread only paints. Everything that touches the study database runs on
the database worker, in submission order, so a submit always commits before
the next item is fetched; the open study lives there too (``open_study``), and
the UI thread only ever holds its plain snapshot. Long pure computations (the
dashboard's report) run on the compute worker, so no rater write queues
behind them, and can be cancelled.

Both are plain Python threads (daemon) that hand results back to the UI thread
through a queued Qt signal. A Python thread that outlives a timed-out ``stop()``
does no harm; a QThread destroyed while running aborts the process.

Public API
----------
``DbWorker(parent=None)``
    ``.submit(fn, *args, on_done=None, on_error=None, **kwargs) -> int``
        Queue ``fn(*args, **kwargs)`` (FIFO); ``on_done(result)`` / ``on_error(exc)``
        are called on the UI thread.
    ``.open_study(opener, *args, on_done=None, on_error=None) -> int``
        On the worker: close the study held there, ``study, snapshot = opener(*args)``,
        keep ``study`` on the worker and hand ``snapshot`` to ``on_done``.
    ``.run(fn, *args, on_done=None, on_error=None) -> int``  ``fn(study, *args)`` with the held study.
    ``.close_study(on_done=None) -> int``                    close the held study.
    ``.busy``; ``.running``; ``.stop(timeout=5.0)`` (drops queued jobs, closes the study, joins).
    signals ``finished(int job_id, object result)``, ``failed(int job_id, object exc)``, ``idle()``.
``ComputeWorker(parent=None)``: ``.submit(fn, *args, task=None, on_done=None, on_error=None)``
    runs ``fn(task, *args)``: the job's ``TaskState`` (base/task.py; a new one when none is
    given, a view's own to cancel it) reports as the signal ``progress(int job_id, object
    fraction, str message)``.
``call_blocking(worker, fn, *args, timeout=10.0)`` - for tests and scripts only,
    never from a key handler: spins the event loop until the job is done.
``live_workers()``, ``stop_all()``; ``decode.ImagePrefetcher`` is re-exported.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, Signal, SignalInstance

from ..base.task import TaskState
from ..domain.errors import InputError
from .decode import ImagePrefetcher, decode_image, overlay_key

__all__ = [
    "ComputeWorker",
    "DbWorker",
    "ImagePrefetcher",
    "call_blocking",
    "decode_image",
    "live_workers",
    "overlay_key",
    "stop_all",
]

_LIVE: weakref.WeakSet = weakref.WeakSet()
_STOP = object()


class _Relay(QObject):
    """Lives on the UI thread; the worker thread emits, the UI thread receives (queued)."""

    done = Signal(int, object)
    error = Signal(int, object)
    progress = Signal(int, object, str)


class _Worker(QObject):
    finished = Signal(int, object)
    failed = Signal(int, object)
    idle = Signal()
    progress = Signal(int, object, str)  # job id, fraction (or None), message

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: queue.Queue = queue.Queue()
        self._ids = itertools.count(1)
        self._callbacks: dict[int, tuple[Callable | None, Callable | None]] = {}
        self._pending = 0
        self._lock = threading.Lock()
        self._stopped = False
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.error.connect(self._on_error)
        self._relay.progress.connect(self.progress)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        _LIVE.add(self)

    # -- worker thread ---------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            item = self._jobs.get()
            if item is _STOP:
                self._at_exit()
                return
            job_id, fn, args, kwargs = item
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the UI
                self._relay.error.emit(job_id, exc)
            else:
                self._relay.done.emit(job_id, result)

    def _at_exit(self) -> None:
        """Runs on the worker thread as it stops."""

    # -- queueing --------------------------------------------------------------------
    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        **kwargs: Any,
    ) -> int:
        return self._put(next(self._ids), fn, args, kwargs, on_done, on_error)

    def _put(
        self,
        job_id: int,
        fn: Callable[..., Any],
        args: tuple,
        kwargs: dict,
        on_done: Callable[[Any], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> int:
        if self._stopped:
            raise RuntimeError("the worker is stopped")
        with self._lock:
            self._callbacks[job_id] = (on_done, on_error)
            self._pending += 1
        self._jobs.put((job_id, fn, args, kwargs))
        return job_id

    @property
    def busy(self) -> bool:
        return self._pending > 0

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    # -- results (UI thread) ---------------------------------------------------------
    def _finish(self, job_id: int) -> tuple[Callable | None, Callable | None]:
        with self._lock:
            if job_id not in self._callbacks:
                return None, None
            cbs = self._callbacks.pop(job_id)
            self._pending -= 1
        return cbs

    def _on_done(self, job_id: int, result: object) -> None:
        self._deliver(job_id, self._finish(job_id)[0], self.finished, result)

    def _on_error(self, job_id: int, exc: object) -> None:
        self._deliver(job_id, self._finish(job_id)[1], self.failed, exc)

    def _deliver(
        self, job_id: int, callback: Callable | None, signal: SignalInstance, outcome: object
    ) -> None:
        """A job's end, its result or its error alike: the caller's callback, then the signal,
        then `idle` once no job is left (even when the callback raised)."""
        try:
            if callback is not None:
                callback(outcome)
            signal.emit(job_id, outcome)
        finally:
            if self._pending == 0:
                self.idle.emit()

    # -- shutdown --------------------------------------------------------------------
    def stop(self, timeout: float = 5.0) -> None:
        """Drop what has not started, let the running job end, join (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        try:
            while True:
                self._jobs.get_nowait()  # a closing window must not run stale work
        except queue.Empty:
            pass
        self._jobs.put(_STOP)
        self._thread.join(timeout)
        with self._lock:
            self._callbacks.clear()
            self._pending = 0
        _LIVE.discard(self)


class DbWorker(_Worker):
    """ONE background thread for all database work; it holds the open study."""

    def __init__(self, parent: QObject | None = None) -> None:
        self._study: Any = None  # touched only on the worker thread
        super().__init__("annotator-db-worker", parent)

    def open_study(
        self,
        opener: Callable[..., tuple[Any, Any]],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> int:
        def job() -> Any:
            self._close_held()
            study, snapshot = opener(*args)
            self._study = study
            return snapshot

        return self.submit(job, on_done=on_done, on_error=on_error)

    def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> int:
        def job() -> Any:
            if self._study is None:
                raise InputError("no study is open")
            return fn(self._study, *args)

        return self.submit(job, on_done=on_done, on_error=on_error)

    def close_study(
        self,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> int:
        return self.submit(self._close_held, on_done=on_done, on_error=on_error)

    def _close_held(self) -> None:
        study, self._study = self._study, None
        if study is not None:
            study.close()

    def _at_exit(self) -> None:
        try:
            self._close_held()
        except Exception:  # noqa: BLE001 - closing at exit: nothing left to tell
            pass


class ComputeWorker(_Worker):
    """ONE thread for long pure computations (no database); jobs report progress."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__("annotator-compute-worker", parent)

    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        task: TaskState | None = None,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        **kwargs: Any,
    ) -> int:
        """Queue ``fn(task, *args, **kwargs)``; the task's reports are this job's ``progress``."""
        job_id = next(self._ids)
        relay = self._relay
        state = task or TaskState()

        def job() -> Any:
            # set as the job starts: a task shared by two queued jobs reports for the running one
            state.report = lambda fraction, message: relay.progress.emit(job_id, fraction, message)
            return fn(state, *args, **kwargs)

        return self._put(job_id, job, (), {}, on_done, on_error)


def call_blocking(
    worker: _Worker, fn: Callable[..., Any], *args: Any, timeout: float = 10.0, study: bool = False
) -> Any:
    """Run on the worker and wait, spinning Qt events (tests and scripts only).

    `study=True` runs ``fn(study, *args)`` with the study the DbWorker holds.
    """
    box: dict[str, Any] = {}
    submit = worker.run if study else worker.submit  # type: ignore[attr-defined]
    submit(
        fn,
        *args,
        on_done=lambda r: box.setdefault("r", r),
        on_error=lambda e: box.setdefault("e", e),
    )
    deadline = time.monotonic() + timeout
    app = QCoreApplication.instance()
    while "r" not in box and "e" not in box:
        if time.monotonic() > deadline:
            raise TimeoutError(f"worker job did not finish within {timeout} s")
        if app is not None:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
        else:  # pragma: no cover - no Qt app: nothing to deliver
            time.sleep(0.002)
    if "e" in box:
        raise box["e"]
    return box["r"]


def live_workers() -> list[QObject]:
    """Workers and prefetchers not yet stopped (tests fail on leaks)."""
    from .decode import live_prefetchers

    return [*list(_LIVE), *live_prefetchers()]


def stop_all() -> None:
    from .decode import live_prefetchers

    for w in [*list(_LIVE), *live_prefetchers()]:
        w.stop()
