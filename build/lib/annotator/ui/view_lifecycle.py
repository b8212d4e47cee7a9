"""What the pair and calibration views share about their life: an answer-state
guard (`_busy`), a private image prefetcher, worker jobs whose results are
dropped once the view is gone, and an idempotent stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import shiboken6


def alive(obj: object) -> bool:
    """False once Qt has deleted the C++ side (a result may arrive after the view is gone)."""
    return shiboken6.isValid(obj)


class PrefetchingView:
    """Mixin for a QWidget view that owns `self._prefetcher` and a `_busy` flag.

    List it before QWidget in the bases so its Qt overrides run first and then
    hand on to QWidget's through super().
    """

    _busy: bool = True
    _stopped: bool = False
    _prefetcher: Any = None

    def _submit(self, fn: Callable[..., Any], on_done: Callable[[Any], None], *args: Any) -> None:
        """Run `fn` on the database worker; its result reaches `on_done` only while the view lives."""

        def done(result: Any) -> None:
            if not self._stopped and alive(self):
                on_done(result)

        def error(exc: BaseException) -> None:
            if not self._stopped and alive(self):
                self._on_error(exc)  # type: ignore[attr-defined]

        self.worker.submit(fn, *args, on_done=done, on_error=error)  # type: ignore[attr-defined]

    def is_busy(self) -> bool:
        return self._busy

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._prefetcher is not None:
            self._prefetcher.stop()

    def shutdown(self) -> None:
        """What the main window calls before dropping the view (same as stop())."""
        self.stop()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.stop()
        super().closeEvent(event)  # type: ignore[misc]

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)  # type: ignore[misc]
        self.setFocus()  # type: ignore[attr-defined]
