"""A zoomable, pannable image viewer and a group that keeps several in step.

Public API (stable; other views build on it)
--------------------------------------------
``ImageView(parent: QWidget | None = None, keymap: Keymap | None = None)`` - a ``QGraphicsView``.
    ``.set_image(image: QImage | None, *, overlay: QImage | None = None) -> None``
        Show a decoded image (fit to the window); ``None`` clears it. An edit
        mask's overlay (``decode.overlay_image``, computed off the UI thread) is
        stretched over the picture when visible.
    ``.image() -> QImage | None``; ``.set_overlay(overlay: QImage | None)``; ``.has_mask -> bool``
    ``.set_mask_visible(on: bool)``; ``.mask_visible() -> bool``; ``.toggle_mask() -> bool``
    ``.fit()`` fit to window (the default; kept on resize until the user zooms)
    ``.actual_size()`` 100 %; ``.zoom_in()`` / ``.zoom_out()`` (x1.25 steps);
    ``.set_zoom(scale: float)`` (1.0 = one image pixel per screen pixel)
    ``.zoom() -> float``; ``.is_fit() -> bool``
    ``.view_state() -> ViewState``; ``.apply_view_state(state: ViewState)``
    Mouse: wheel zooms about the cursor, drag pans. Keys when the view has
    focus come from the keymap's ``image`` context (+ / = zoom in, - zoom out,
    0 fit, 1 100 %, M mask by default).
    Signals: ``zoomChanged(float)``, ``viewChanged()`` (zoom or pan moved),
    ``painted()`` (after each paint of the viewport; used to time latency).

``SyncGroup(views: Iterable[ImageView] = (), parent: QObject | None = None)``
    Keeps zoom and pan of its views in step, in image-normalised coordinates,
    so an input and an output of different pixel sizes show the same region.
    ``.add(view)``; ``.remove(view)``; ``.views() -> list[ImageView]``; ``.clear()``
    ``.fit()``; ``.actual_size()``; ``.zoom_in()``; ``.zoom_out()`` (all views)
    ``.set_mask_visible(on: bool)``; ``.toggle_mask() -> bool`` (all views with a mask)

``ViewState(fit: bool, relative_zoom: float, cx: float, cy: float)`` - zoom
relative to the fit scale and the view centre as a fraction of the image.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QPainter, QPalette
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsScene, QGraphicsView, QWidget

from .keyed import KeyedWidget
from .keymap import Keymap

__all__ = ["ImageView", "SyncGroup", "ViewState"]

ZOOM_STEP = 1.25
MIN_ZOOM = 0.02
MAX_ZOOM = 32.0


@dataclass(frozen=True)
class ViewState:
    fit: bool
    relative_zoom: float  # zoom / fit zoom
    cx: float  # view centre as a fraction of the image width
    cy: float


class _ImageItem(QGraphicsItem):
    """Draws a QImage directly (no QPixmap conversion on the UI thread), stretched over `rect`."""

    def __init__(self) -> None:
        super().__init__()
        self._image: QImage | None = None
        self._rect = QRectF()

    def set_image(self, image: QImage | None, rect: QRectF | None = None) -> None:
        self.prepareGeometryChange()
        self._image = image
        if image is None:
            self._rect = QRectF()
        else:
            self._rect = (
                QRectF(rect) if rect is not None else QRectF(0, 0, image.width(), image.height())
            )
        self.update()

    def image(self) -> QImage | None:
        return self._image

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ANN001
        if self._image is None:
            return
        # Smooth when shrinking (readable detail); crisp pixels when enlarging.
        scale = painter.worldTransform().m11()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, scale < 1.0)
        exposed = option.exposedRect.intersected(self._rect)
        if exposed.isEmpty():
            return
        sx = self._image.width() / self._rect.width()
        sy = self._image.height() / self._rect.height()
        source = QRectF(
            exposed.x() * sx, exposed.y() * sy, exposed.width() * sx, exposed.height() * sy
        )
        painter.drawImage(exposed, self._image, source)


class ImageView(KeyedWidget, QGraphicsView):
    key_contexts = ("image",)

    zoomChanged = Signal(float)  # noqa: N815 - Qt signal naming
    viewChanged = Signal()  # noqa: N815
    painted = Signal()

    def __init__(self, parent: QWidget | None = None, keymap: Keymap | None = None) -> None:
        super().__init__(parent)
        self.keymap = keymap or Keymap()
        self._scene = QGraphicsScene(self)
        self.setScene(self._scene)
        self._item = _ImageItem()
        self._mask_item = _ImageItem()
        self._mask_item.setZValue(1)
        self._scene.addItem(self._item)
        self._scene.addItem(self._mask_item)
        self._overlay: QImage | None = None
        self._mask_visible = True
        self._fit = True
        self._quiet = 0  # >0 while applying a state: no viewChanged echo
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setBackgroundRole(QPalette.ColorRole.Window)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.horizontalScrollBar().valueChanged.connect(self._moved)
        self.verticalScrollBar().valueChanged.connect(self._moved)

    # -- content -------------------------------------------------------------------
    def set_image(self, image: QImage | None, *, overlay: QImage | None = None) -> None:
        self._item.set_image(image)
        self.set_overlay(overlay)
        rect = QRectF(0, 0, image.width(), image.height()) if image is not None else QRectF()
        self._scene.setSceneRect(rect)
        self._fit = True
        self._apply_fit()

    def image(self) -> QImage | None:
        return self._item.image()

    def set_overlay(self, overlay: QImage | None) -> None:
        """The mask's overlay, stretched over the picture (the mask may have another pixel size)."""
        img = self._item.image()
        self._overlay = overlay if img is not None else None
        rect = QRectF(0, 0, img.width(), img.height()) if img is not None else None
        self._mask_item.set_image(self._overlay, rect)
        self._mask_item.setVisible(self._mask_visible and self._overlay is not None)

    @property
    def has_mask(self) -> bool:
        return self._overlay is not None

    def mask_visible(self) -> bool:
        return self._mask_visible

    def set_mask_visible(self, on: bool) -> None:
        self._mask_visible = bool(on)
        self._mask_item.setVisible(self._mask_visible and self._overlay is not None)

    def toggle_mask(self) -> bool:
        self.set_mask_visible(not self._mask_visible)
        return self._mask_visible

    # -- zoom ----------------------------------------------------------------------
    def zoom(self) -> float:
        return self.transform().m11()

    def is_fit(self) -> bool:
        return self._fit

    def _fit_scale(self) -> float:
        rect = self._scene.sceneRect()
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return 1.0
        return max(MIN_ZOOM, min(vp.width() / rect.width(), vp.height() / rect.height()))

    def _apply_fit(self) -> None:
        self._set_scale(self._fit_scale())
        self.centerOn(self._scene.sceneRect().center())
        self._emit()

    def _set_scale(self, scale: float) -> None:
        scale = max(MIN_ZOOM, min(MAX_ZOOM, scale))
        self._quiet += 1
        try:
            self.resetTransform()
            self.scale(scale, scale)
        finally:
            self._quiet -= 1

    def fit(self) -> None:
        self._fit = True
        self._apply_fit()

    def set_zoom(self, scale: float) -> None:
        self._fit = False
        self._set_scale(scale)
        self._emit()

    def actual_size(self) -> None:
        self.set_zoom(1.0)

    def zoom_in(self) -> None:
        self.set_zoom(self.zoom() * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom() / ZOOM_STEP)

    # -- state for SyncGroup -------------------------------------------------------
    def view_state(self) -> ViewState:
        rect = self._scene.sceneRect()
        c = self.mapToScene(self.viewport().rect().center())
        w, h = max(rect.width(), 1.0), max(rect.height(), 1.0)
        return ViewState(self._fit, self.zoom() / self._fit_scale(), c.x() / w, c.y() / h)

    def apply_view_state(self, state: ViewState) -> None:
        self._quiet += 1
        try:
            self._fit = state.fit
            if state.fit:
                self._set_scale(self._fit_scale())
                self.centerOn(self._scene.sceneRect().center())
            else:
                self._set_scale(self._fit_scale() * state.relative_zoom)
                rect = self._scene.sceneRect()
                self.centerOn(QPointF(state.cx * rect.width(), state.cy * rect.height()))
        finally:
            self._quiet -= 1
        self.zoomChanged.emit(self.zoom())

    # -- events --------------------------------------------------------------------
    def _moved(self, *_: object) -> None:
        if not self._quiet:
            self.viewChanged.emit()

    def _emit(self) -> None:
        self.zoomChanged.emit(self.zoom())
        if not self._quiet:
            self.viewChanged.emit()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        if self._fit:
            self._quiet += 1
            try:
                self._apply_fit()
            finally:
                self._quiet -= 1

    def wheelEvent(self, event) -> None:  # noqa: N802, ANN001
        steps = event.angleDelta().y() / 120.0
        if not steps or self._item.image() is None:
            return
        self.set_zoom(self.zoom() * (ZOOM_STEP**steps))
        event.accept()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802, ANN001
        super().mouseMoveEvent(event)
        if event.buttons() & Qt.MouseButton.LeftButton and self._fit:
            # A drag pans; the view stops following window resizes from here on.
            self._fit = False

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        return {
            "image_zoom_in": self.zoom_in,
            "image_zoom_out": self.zoom_out,
            "image_fit": self.fit,
            "image_actual": self.actual_size,
            "image_mask": self.toggle_mask,
        }

    def paintEvent(self, event) -> None:  # noqa: N802, ANN001
        super().paintEvent(event)
        self.painted.emit()


class SyncGroup(QObject):
    """Keeps zoom and pan of several ImageViews in step."""

    def __init__(self, views: Iterable[ImageView] = (), parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._views: list[ImageView] = []
        self._syncing = False
        for v in views:
            self.add(v)

    def add(self, view: ImageView) -> None:
        if view in self._views:
            return
        self._views.append(view)
        view.viewChanged.connect(self._on_changed)

    def remove(self, view: ImageView) -> None:
        if view in self._views:
            self._views.remove(view)
            try:
                view.viewChanged.disconnect(self._on_changed)
            except (RuntimeError, TypeError):  # already disconnected / deleted
                pass

    def clear(self) -> None:
        for v in list(self._views):
            self.remove(v)

    def views(self) -> list[ImageView]:
        return list(self._views)

    def _on_changed(self) -> None:
        if self._syncing:
            return
        source = self.sender()
        if not isinstance(source, ImageView):
            return
        self.sync_from(source)

    def sync_from(self, source: ImageView, *, keep_zoom: bool = False) -> None:
        """The others follow `source`'s zoom (relative to each one's fit) and centre; with
        `keep_zoom`, its centre only."""
        state = source.view_state()
        self._syncing = True
        try:
            for v in self._views:
                if v is not source:
                    own = replace(state, relative_zoom=v.view_state().relative_zoom)
                    v.apply_view_state(own if keep_zoom else state)
        finally:
            self._syncing = False

    def _all(self, name: str, *, keep_zoom: bool = False) -> None:
        self._syncing = True
        try:
            for v in self._views:
                getattr(v, name)()
        finally:
            self._syncing = False
        if self._views:
            self.sync_from(self._views[0], keep_zoom=keep_zoom)

    def fit(self) -> None:
        self._all("fit")

    def actual_size(self) -> None:
        # 100 % is each image's own pixels: following the first view's zoom relative to its fit
        # put a second image of another size (or a view a scroll bar had just narrowed) at 99.7 %
        self._all("actual_size", keep_zoom=True)

    def zoom_in(self) -> None:
        self._all("zoom_in")

    def zoom_out(self) -> None:
        self._all("zoom_out")

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        """The zoom keys' actions (keymap names), the one table every view with images adds to
        its own: label, pairwise, calibration and review."""
        return {
            "zoom_in": self.zoom_in,
            "zoom_out": self.zoom_out,
            "zoom_fit": self.fit,
            "zoom_actual": self.actual_size,
        }

    def set_mask_visible(self, on: bool) -> None:
        for v in self._views:
            v.set_mask_visible(on)

    def toggle_mask(self) -> bool:
        with_mask = [v for v in self._views if v.has_mask] or self._views
        on = not (with_mask[0].mask_visible() if with_mask else True)
        self.set_mask_visible(on)
        return on
