"""Background work for the UI: one database worker thread and an image decoder pool.

The UI thread only paints. Everything that touches the study database runs on
ONE background thread, in submission order, so a submit always commits before
the next item is fetched; decoded images come from a small pool of decoder
threads so the next item's pictures are ready before it is shown.

Public API (stable; other views build on it)
--------------------------------------------
``DbWorker(parent: QObject | None = None)``
    ``.submit(fn, *args, on_done=None, on_error=None, **kwargs) -> int``
        Queue ``fn(*args, **kwargs)`` to run on the worker thread (FIFO).
        ``on_done(result)`` / ``on_error(exc)`` are called later on the UI
        thread. Returns a job id. An error without ``on_error`` is re-emitted
        through the ``failed`` signal only.
    ``.call(fn, *args, timeout=10.0, **kwargs) -> Any``
        Run on the worker and wait (spinning the Qt event loop); re-raises the
        job's exception. For setup code and tests, never for key handlers.
    ``.wait_idle(timeout=10.0) -> bool``  all queued jobs finished (spins events).
    ``.busy -> bool``                    jobs queued or running.
    ``.stop(timeout=5.0) -> None``       finish the running job, drop the rest,
                                          join the thread (idempotent).
    signals ``finished(int job_id, object result)``, ``failed(int job_id, object exc)``,
    ``idle()`` (queue drained).

``ImagePrefetcher(loader: Callable[[str], bytes], *, max_threads=2, capacity=24, parent=None)``
    Decodes images (keyed by media SHA-256) into ``QImage`` off the UI thread.
    ``.prefetch(keys: Iterable[str]) -> None``  start decoding what is not cached yet.
    ``.get(key) -> QImage | None``              cached decoded image (never blocks).
    ``.image(key, timeout=5.0) -> QImage``      cached or decoded now (waits; raises on a bad image).
    ``.contains(key) -> bool``; ``.clear()``; ``.stop()`` (waits for the pool).
    signals ``ready(str key, QImage image)``, ``failed(str key, str message)``.

Both objects must be stopped on close (``stop_all()`` stops every live one);
tests assert that no worker thread is left running.
"""

from __future__ import annotations

import io
import itertools
import queue
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from PIL import Image
from PySide6.QtCore import (
    QCoreApplication,
    QEventLoop,
    QObject,
    QRunnable,
    QThread,
    QThreadPool,
    Signal,
)
from PySide6.QtGui import QImage

__all__ = ["DbWorker", "ImagePrefetcher", "decode_image", "live_workers", "stop_all"]

_LIVE: weakref.WeakSet = weakref.WeakSet()
_STOP = object()


def _spin(predicate: Callable[[], bool], timeout: float) -> bool:
    """Process Qt events until predicate() is true or the timeout passes."""
    deadline = time.monotonic() + timeout
    app = QCoreApplication.instance()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        if app is not None:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
        else:  # pragma: no cover - no Qt app: nothing to deliver
            time.sleep(0.002)
    return True


class _Thread(QThread):
    """The one database thread: runs queued callables in order."""

    done = Signal(int, object)
    error = Signal(int, object)

    def __init__(self, jobs: queue.Queue) -> None:
        super().__init__()
        self._jobs = jobs
        self.setObjectName("annotator-db-worker")

    def run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is _STOP:
                return
            job_id, fn, args, kwargs = item
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the UI
                self.error.emit(job_id, exc)
            else:
                self.done.emit(job_id, result)


class DbWorker(QObject):
    """ONE background thread for all database work; results come back by signal."""

    finished = Signal(int, object)
    failed = Signal(int, object)
    idle = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: queue.Queue = queue.Queue()
        self._ids = itertools.count(1)
        self._callbacks: dict[int, tuple[Callable | None, Callable | None]] = {}
        self._pending = 0
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = _Thread(self._jobs)
        # Queued: the thread emits, this object (UI thread) receives.
        self._thread.done.connect(self._on_done)
        self._thread.error.connect(self._on_error)
        self._thread.start()
        _LIVE.add(self)

    # -- queueing ------------------------------------------------------------------
    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        **kwargs: Any,
    ) -> int:
        if self._stopped:
            raise RuntimeError("the database worker is stopped")
        job_id = next(self._ids)
        with self._lock:
            self._callbacks[job_id] = (on_done, on_error)
            self._pending += 1
        self._jobs.put((job_id, fn, args, kwargs))
        return job_id

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float = 10.0, **kwargs: Any) -> Any:
        box: dict[str, Any] = {}
        self.submit(fn, *args, on_done=lambda r: box.setdefault("r", r),
                    on_error=lambda e: box.setdefault("e", e), **kwargs)
        if not _spin(lambda: "r" in box or "e" in box, timeout):
            raise TimeoutError(f"worker job did not finish within {timeout} s")
        if "e" in box:
            raise box["e"]
        return box["r"]

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def wait_idle(self, timeout: float = 10.0) -> bool:
        return _spin(lambda: self._pending == 0, timeout)

    # -- results (UI thread) -------------------------------------------------------
    def _finish(self, job_id: int) -> tuple[Callable | None, Callable | None]:
        with self._lock:
            cbs = self._callbacks.pop(job_id, (None, None))
            self._pending -= 1
        return cbs

    def _on_done(self, job_id: int, result: object) -> None:
        on_done, _ = self._finish(job_id)
        try:
            if on_done is not None:
                on_done(result)
            self.finished.emit(job_id, result)
        finally:
            if self._pending == 0:
                self.idle.emit()

    def _on_error(self, job_id: int, exc: object) -> None:
        _, on_error = self._finish(job_id)
        try:
            if on_error is not None:
                on_error(exc)
            self.failed.emit(job_id, exc)
        finally:
            if self._pending == 0:
                self.idle.emit()

    # -- shutdown ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread.isRunning()

    def stop(self, timeout: float = 5.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        # Drop what has not started: a closing window must not run stale work.
        try:
            while True:
                self._jobs.get_nowait()
        except queue.Empty:
            pass
        self._jobs.put(_STOP)
        self._thread.wait(int(timeout * 1000))
        with self._lock:
            self._callbacks.clear()
            self._pending = 0
        _LIVE.discard(self)


# -- images ------------------------------------------------------------------------
def decode_image(data: bytes) -> QImage:
    """PNG/JPEG bytes -> a QImage in the format the raster painter draws fastest.

    Decoded with Pillow, not QImage.loadFromData: Qt's image reader takes the
    global plugin-factory lock, and from a pool thread that lock can meet the UI
    thread (which holds it while calling back into Python for an event) and
    deadlock on the GIL. Building a QImage over raw pixels touches no plugin.
    """
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            alpha = im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info
            pix = im.convert("RGBA" if alpha else "RGB")
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"image data could not be decoded ({exc})") from None
    raw = pix.tobytes()
    fmt = QImage.Format.Format_RGBA8888 if alpha else QImage.Format.Format_RGB888
    img = QImage(raw, pix.width, pix.height, pix.width * len(pix.mode), fmt)
    target = QImage.Format.Format_ARGB32_Premultiplied if alpha else QImage.Format.Format_RGB32
    return img.convertToFormat(target)  # a deep copy: it no longer points into `raw`


class _DecodeSignals(QObject):
    ready = Signal(str, QImage)
    failed = Signal(str, str)


class _DecodeJob(QRunnable):
    def __init__(self, key: str, loader: Callable[[str], bytes], signals: _DecodeSignals) -> None:
        super().__init__()
        self.key, self.loader, self.signals = key, loader, signals
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            img = decode_image(self.loader(self.key))
        except Exception as exc:  # noqa: BLE001 - reported to the UI as a message
            self.signals.failed.emit(self.key, f"{type(exc).__name__}: {exc}")
        else:
            self.signals.ready.emit(self.key, img)


class ImagePrefetcher(QObject):
    """Decode upcoming images into QImage off the UI thread; keep the last few."""

    ready = Signal(str, QImage)
    failed = Signal(str, str)

    def __init__(
        self,
        loader: Callable[[str], bytes],
        *,
        max_threads: int = 2,
        capacity: int = 24,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._loader = loader
        self._capacity = capacity
        self._cache: OrderedDict[str, QImage] = OrderedDict()
        self._inflight: set[str] = set()
        self._errors: dict[str, str] = {}
        self._pool = QThreadPool()
        self._pool.setMaxThreadCount(max(1, max_threads))
        self._signals = _DecodeSignals()
        self._signals.ready.connect(self._on_ready)
        self._signals.failed.connect(self._on_failed)
        self._stopped = False
        _LIVE.add(self)

    def prefetch(self, keys: Iterable[str]) -> None:
        if self._stopped:
            return
        for key in keys:
            if key in self._cache:
                self._cache.move_to_end(key)
                continue
            if key in self._inflight:
                continue
            self._inflight.add(key)
            self._errors.pop(key, None)
            self._pool.start(_DecodeJob(key, self._loader, self._signals))

    def contains(self, key: str) -> bool:
        return key in self._cache

    def get(self, key: str) -> QImage | None:
        img = self._cache.get(key)
        if img is not None:
            self._cache.move_to_end(key)
        return img

    def image(self, key: str, timeout: float = 5.0) -> QImage:
        """The decoded image, waiting for it (spinning events) if it is not ready."""
        if key not in self._cache:
            self.prefetch([key])
            _spin(lambda: key in self._cache or key in self._errors, timeout)
        if key in self._errors:
            raise ValueError(self._errors[key])
        img = self.get(key)
        if img is None:
            raise TimeoutError(f"image not decoded within {timeout} s")
        return img

    def clear(self) -> None:
        self._cache.clear()

    @property
    def pending(self) -> int:
        return len(self._inflight)

    def _on_ready(self, key: str, img: QImage) -> None:
        self._inflight.discard(key)
        if self._stopped:
            return
        self._cache[key] = img
        self._cache.move_to_end(key)
        while len(self._cache) > self._capacity:
            self._cache.popitem(last=False)
        self.ready.emit(key, img)

    def _on_failed(self, key: str, message: str) -> None:
        self._inflight.discard(key)
        self._errors[key] = message
        self.failed.emit(key, message)

    @property
    def running(self) -> bool:
        return self._pool.activeThreadCount() > 0

    def stop(self, timeout: float = 5.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._pool.clear()
        self._pool.waitForDone(int(timeout * 1000))
        self._cache.clear()
        _LIVE.discard(self)


def live_workers() -> list[QObject]:
    """Workers and prefetchers not yet stopped (tests fail on leaks)."""
    return list(_LIVE)


def stop_all() -> None:
    for w in list(_LIVE):
        w.stop()
