"""What the pair and calibration views share about their life: an answer-state
guard (`_busy`), a private image prefetcher, and an idempotent stop."""

from __future__ import annotations

from typing import Any


class PrefetchingView:
    """Mixin for a QWidget view that owns `self._prefetcher` and a `_busy` flag.

    List it before QWidget in the bases so its Qt overrides run first and then
    hand on to QWidget's through super().
    """

    _busy: bool = True
    _stopped: bool = False
    _prefetcher: Any = None

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
