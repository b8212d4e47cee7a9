"""Image decoding off the UI thread: pictures and edit-mask overlays.

``ImagePrefetcher(loader, *, max_threads=2, capacity=12, max_bytes=MAX_BYTES, parent=None)``
decodes media (keyed by SHA-256) into ``QImage`` in a small thread pool and keeps the
last few: at most `capacity` pictures and `max_bytes` of pixels, but always the last
``KEEP_AT_LEAST`` (the item on screen and the look-ahead). A key ``overlay_key(sha)`` asks for the *overlay* of a mask instead:
the outline and faint tint that the image view draws over an editing case,
computed in the decode job (numpy erosion) so the UI thread only paints it.

    ``.prefetch(keys)``; ``.get(key) -> QImage | None`` (never blocks);
    ``.contains(key)``; ``.error(key) -> str | None``; ``.clear()``; ``.stop()``;
    ``.pending``; signals ``ready(str key, QImage image)``, ``failed(str key, str message)``.

``decode_image(data) -> QImage`` and ``overlay_image(data) -> QImage`` are
thread-safe: Pillow decodes and a QImage is built over raw pixels. Qt's own
reader (``QImage.loadFromData``) takes the global plugin-factory lock, which
from a pool thread can meet the UI thread holding it while it calls back into
Python and deadlock on the GIL.
"""

from __future__ import annotations

import io
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from PIL import Image
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QImage

__all__ = ["ImagePrefetcher", "decode_image", "live_prefetchers", "overlay_image", "overlay_key"]

OVERLAY = "overlay:"
MASK_RGB = (0, 150, 255)
MASK_ALPHA = 0.08  # the tint inside the mask; the outline is near opaque
OUTLINE_ALPHA = 235
_LIVE: weakref.WeakSet = weakref.WeakSet()
# The decoded pictures kept: a 2048 px output is 16 MB of pixels, and 24 of them kept were the
# +190 MB a rater's app grew by in its first 20 items. The item on screen, the
# three decoded ahead and one or two back (Ctrl+Z) fit these bounds.
CAPACITY = 12
MAX_BYTES = 96 << 20
KEEP_AT_LEAST = 4


def overlay_key(sha: str) -> str:
    """The prefetch key of a mask's overlay (the mask itself is never shown)."""
    return OVERLAY + sha


def decode_image(data: bytes) -> QImage:
    """PNG/JPEG bytes -> a QImage in the format the raster painter draws fastest."""
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


def _erode(inside: Any, t: int) -> Any:
    """Binary erosion by a (2t+1)-square, one axis after the other (outside the image is outside)."""
    import numpy as np

    out = inside
    for axis in (0, 1):
        n = out.shape[axis]
        pad = [(t, t) if ax == axis else (0, 0) for ax in range(2)]
        padded = np.pad(out, pad, constant_values=False)
        acc = out.copy()
        for d in range(-t, t + 1):
            if d:
                acc &= padded[
                    (slice(t + d, t + d + n), slice(None))
                    if axis == 0
                    else (slice(None), slice(t + d, t + d + n))
                ]
        out = acc
    return out


def overlay_image(data: bytes) -> QImage:
    """A grey mask (white = edited region) -> an outline plus a faint tint inside, premultiplied.

    The inside stays nearly clear so the colours being judged are not changed;
    the outline says exactly where the edit was allowed. The overlay has the
    mask's own size; the view stretches it over the picture.
    """
    import numpy as np  # here, on a decoder thread: the UI thread never pays for the import

    try:
        with Image.open(io.BytesIO(data)) as im:
            grey = np.asarray(im.convert("L"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"mask could not be decoded ({exc})") from None
    h, w = grey.shape
    inside = grey > 127
    edge = inside & ~_erode(inside, max(2, min(w, h) // 160))
    alpha = np.zeros((h, w), dtype=np.uint16)
    alpha[inside] = int(255 * MASK_ALPHA)
    alpha[edge] = OUTLINE_ALPHA
    rgba = np.empty((h, w, 4), dtype=np.uint8)
    for i, c in enumerate(MASK_RGB):
        rgba[..., i] = alpha * c // 255
    rgba[..., 3] = alpha
    img = QImage(rgba.data, w, h, w * 4, QImage.Format.Format_RGBA8888_Premultiplied)
    return img.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)  # a deep copy


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
            if self.key.startswith(OVERLAY):
                img = overlay_image(self.loader(self.key[len(OVERLAY) :]))
            else:
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
        capacity: int = CAPACITY,
        max_bytes: int = MAX_BYTES,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._loader = loader
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._bytes = 0
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

    def error(self, key: str) -> str | None:
        return self._errors.get(key)

    def clear(self) -> None:
        self._cache.clear()
        self._bytes = 0

    @property
    def cached_bytes(self) -> int:
        """The pixels kept, in bytes."""
        return self._bytes

    @property
    def pending(self) -> int:
        return len(self._inflight)

    def _on_ready(self, key: str, img: QImage) -> None:
        self._inflight.discard(key)
        if self._stopped:
            return
        old = self._cache.pop(key, None)
        if old is not None:
            self._bytes -= old.sizeInBytes()
        self._cache[key] = img
        self._bytes += img.sizeInBytes()
        while len(self._cache) > self._capacity or (
            self._bytes > self._max_bytes and len(self._cache) > KEEP_AT_LEAST
        ):
            _, dropped = self._cache.popitem(last=False)
            self._bytes -= dropped.sizeInBytes()
        self.ready.emit(key, img)

    def _on_failed(self, key: str, message: str) -> None:
        self._inflight.discard(key)
        if self._stopped:
            return
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
        self.clear()
        _LIVE.discard(self)


def live_prefetchers() -> list[ImagePrefetcher]:
    return list(_LIVE)
