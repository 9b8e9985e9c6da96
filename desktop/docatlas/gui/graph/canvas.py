"""The painted graph: pan, zoom (wheel, pinch, keys), pick nodes and edges, labels by zoom.

A frame shows the last rendered image of the scene (see `render`) under the current view
transform, then draws the live overlays: selection rings and the labels that fit. When
the view settles, or the scene changes, a fresh image is asked for; it covers a margin
around the window so that panning shows drawn graph, not blank space.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGestureEvent, QPinchGesture, QWidget

from docatlas.gui.graph import labels
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.palette import BACKGROUND, EDGE_HIGHLIGHT, SELECTION, TEXT
from docatlas.gui.graph.query import Look
from docatlas.gui.graph.render import Rendered
from docatlas.gui.graph.renderer import Renderer
from docatlas.gui.graph.scene import Scene
from docatlas.gui.tasks import TaskRunner

MARGIN = 0.25  # rendered beyond each side of the window, as a fraction of its size
SETTLE_MS = 60
MIN_SCALE, MAX_SCALE = 1e-4, 40.0
PICK_PX = 4.0
LABEL_LIMIT = 160
SELECTION_EDGES = 3000  # edges of the selection drawn highlighted, at most


class GraphCanvas(QWidget):
    """Shows a `Scene`; reports clicks by node or edge index."""

    nodeClicked = Signal(int, bool)  # node, additive (Ctrl/Shift held)
    nodeDoubleClicked = Signal(int)
    edgeClicked = Signal(int)
    backgroundClicked = Signal()
    viewChanged = Signal()
    imageReady = Signal()  # a freshly rendered image is on screen

    def __init__(self, tasks: TaskRunner | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.model: GraphModel | None = None
        self.scene: Scene | None = None
        self.look: Look | None = None
        self.selection: list[int] = []
        self.hovered: int | None = None
        self.show_labels = True
        self._scale, self._centre = 1.0, QPointF()
        self._image: Rendered | None = None
        self._wanted = 0  # the latest render request
        self._press: QPointF | None = None
        self._dragged = False
        self._label_order = np.zeros(0, np.int64)
        self._widths: dict[int, float] = {}
        self._font = QFont(self.font())
        self._font.setPixelSize(12)
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        self._metrics = QFontMetricsF(self._font)
        self.renderer = Renderer(tasks if tasks is not None else TaskRunner(self), self)
        self.renderer.rendered.connect(self._on_rendered)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS, timeout=self._request_render)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.grabGesture(Qt.GestureType.PinchGesture)
        self.setMinimumSize(200, 150)

    # -- content ---------------------------------------------------------------------------

    def set_scene(self, model: GraphModel, scene: Scene, look: Look, fit: bool = False) -> None:
        """Show a new scene (the view stays unless `fit`)."""
        if self.model is not model:
            self._widths = {}
        self.model, self.scene, self.look = model, scene, look
        order = np.nonzero(look.shown)[0]
        order = order[np.lexsort((order, look.dimmed[order], -model.degree[order]))]
        self._label_order = order
        self.selection = [i for i in self.selection if i < model.size]
        if fit:
            self.fit()
        self._request_render()
        self.update()

    # -- the view --------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        """Pixels per scene unit."""
        return self._scale

    def view_transform(self) -> QTransform:
        """Scene units to widget pixels."""
        t = QTransform()
        t.translate(self.width() / 2, self.height() / 2)
        t.scale(self._scale, self._scale)
        t.translate(-self._centre.x(), -self._centre.y())
        return t

    def visible_rect(self) -> QRectF:
        """The part of the scene in the window."""
        w, h = self.width() / self._scale, self.height() / self._scale
        return QRectF(self._centre.x() - w / 2, self._centre.y() - h / 2, w, h)

    def set_view(self, centre: QPointF, scale: float) -> None:
        """Look at `centre` with `scale` pixels per scene unit."""
        self._centre = QPointF(centre)
        self._scale = float(min(max(scale, MIN_SCALE), MAX_SCALE))
        self._view_moved()

    def fit(self, rect: QRectF | None = None) -> None:
        """Show `rect` (the whole scene by default) in the window."""
        rect = rect if rect is not None else self.scene.bounds if self.scene is not None else QRectF()
        if rect.isEmpty():
            rect = rect.adjusted(-50, -50, 50, 50)
        self.set_view(rect.center(), 0.92 * min(self.width() / rect.width(), self.height() / rect.height()))

    def centre_on(self, node: int, min_scale: float = 0.0) -> None:
        """Bring a node to the middle, zooming in to at least `min_scale`."""
        x, y = self.model.xy[node]
        self.set_view(QPointF(x, y), max(self._scale, min_scale))

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom by `factor`, keeping the scene point under `anchor` (widget pixels) in place."""
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
        before = self.view_transform().inverted()[0].map(anchor)
        self._scale = float(min(max(self._scale * factor, MIN_SCALE), MAX_SCALE))
        after = self.view_transform().inverted()[0].map(anchor)
        self._centre += before - after
        self._view_moved()

    def pan_by(self, dx: float, dy: float) -> None:
        """Move the view by pixels."""
        self._centre -= QPointF(dx / self._scale, dy / self._scale)
        self._view_moved()

    def _view_moved(self) -> None:
        self._settle.start()
        self.update()
        self.viewChanged.emit()

    # -- rendering -------------------------------------------------------------------------

    def _image_fits(self) -> bool:
        image = self._image
        if image is None or self.scene is None or image.generation != self.scene.generation:
            return False
        if abs(image.transform.m11() / self._scale - 1.0) > 1e-9:
            return False
        ratio = image.image.devicePixelRatio()
        area = QRectF(0, 0, image.image.width() / ratio, image.image.height() / ratio)
        covered = image.transform.inverted()[0].mapRect(area)
        return covered.contains(self.visible_rect())

    @Slot()
    def _request_render(self) -> None:
        if self.scene is None or self._image_fits() or self.width() < 1:
            return
        mx, my = round(self.width() * MARGIN), round(self.height() * MARGIN)
        transform = self.view_transform() * QTransform.fromTranslate(mx, my)
        size = QSize(self.width() + 2 * mx, self.height() + 2 * my)
        self._wanted = self.renderer.request(self.scene, size, transform, self.devicePixelRatioF())

    @Slot(object)
    def _on_rendered(self, result: Rendered) -> None:
        if self.scene is None or result.generation < (self._image.generation if self._image else -1):
            return
        self._image = result
        self.update()
        if result.request == self._wanted:
            self.imageReady.emit()
        if not self._image_fits():
            self._settle.start()

    @property
    def settled(self) -> bool:
        """True when the image on screen is the one the current view and scene need."""
        return self._image_fits() and not self.renderer.busy

    # -- painting --------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """One blit of the rendered image, then selection rings and labels."""
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(BACKGROUND))
        view = self.view_transform()
        if self._image is not None:
            painter.setTransform(self._image.transform.inverted()[0] * view)
            painter.drawImage(QPointF(0, 0), self._image.image)
            painter.resetTransform()
        self.paint_overlay(painter)
        painter.end()

    def paint_overlay(self, painter: QPainter) -> None:
        """The live layer: the selection's edges and rings, and the labels that fit."""
        if self.model is None or self.look is None:
            return
        model = self.model
        half = np.array([self.width() / 2, self.height() / 2])
        centre = np.array([self._centre.x(), self._centre.y()])
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(QColor(0, 0, 0, 0))
        if self.selection:
            edges = np.unique(np.concatenate([model.edges_of(i) for i in self.selection]))[:SELECTION_EDGES]
            ends = np.column_stack((model.xy[model.sources[edges]], model.xy[model.targets[edges]]))
            ends = (ends - np.tile(centre, 2)) * self._scale + np.tile(half, 2)
            painter.setPen(QPen(QColor(EDGE_HIGHLIGHT), 1.5))
            painter.drawLines([QLineF(*row) for row in ends.tolist()])
        for node, width in [(i, 2.5) for i in self.selection] + ([(self.hovered, 1.5)] if self.hovered is not None
                                                                   else []):
            x, y = (model.xy[node] - centre) * self._scale + half
            r = model.radius[node] * self._scale + 3
            painter.setPen(QPen(QColor(SELECTION), width))
            painter.drawEllipse(QPointF(x, y), r, r)
        if self.show_labels:
            self._paint_labels(painter, half, centre)

    def _paint_labels(self, painter: QPainter, half: np.ndarray, centre: np.ndarray) -> None:
        model = self.model
        forced = list(dict.fromkeys(self.selection + ([self.hovered] if self.hovered is not None else [])))
        order = self._label_order
        screen = (model.xy[order] - centre) * self._scale + half
        inside = ((screen[:, 0] > -50) & (screen[:, 0] < self.width()) & (screen[:, 1] > -20)
                  & (screen[:, 1] < self.height() + 20))
        candidates = np.concatenate((np.array(forced, np.int64), order[inside][:LABEL_LIMIT * 4]))
        points = (model.xy[candidates] - centre) * self._scale + half
        radius = model.radius[candidates] * self._scale
        height = self._metrics.height()

        def width(i: int) -> float:
            node = int(candidates[i])
            if node not in self._widths:
                self._widths[node] = self._metrics.horizontalAdvance(model.names[node])
            return self._widths[node]

        placed = labels.place(points, radius, width, height, (self.width(), self.height()), LABEL_LIMIT, len(forced))
        painter.setPen(Qt.PenStyle.NoPen)
        halo = QColor(BACKGROUND)
        halo.setAlpha(215)
        for i, left, top in placed:
            painter.fillRect(QRectF(left - 2, top, width(i) + 4, height), halo)
        painter.setPen(QColor(TEXT))
        ascent = self._metrics.ascent()
        for i, left, top in placed:
            painter.setFont(self._bold if i < len(forced) else self._font)
            painter.drawText(QPointF(left, top + ascent), model.names[int(candidates[i])])

    # -- picking ---------------------------------------------------------------------------

    def node_at(self, pos: QPointF) -> int | None:
        """The shown node under a widget position."""
        if self.model is None or self.look is None:
            return None
        p = self.view_transform().inverted()[0].map(QPointF(pos))
        d = np.hypot(self.model.xy[:, 0] - p.x(), self.model.xy[:, 1] - p.y())
        d = np.where(self.look.shown, d - self.model.radius - PICK_PX / self._scale, np.inf)
        best = int(np.argmin(d)) if len(d) else -1
        return best if best >= 0 and d[best] <= 0 else None

    def edge_at(self, pos: QPointF) -> int | None:
        """The shown edge passing under a widget position."""
        if self.model is None or self.look is None or len(self.model.sources) == 0:
            return None
        p = self.view_transform().inverted()[0].map(QPointF(pos))
        a, b = self.model.xy[self.model.sources], self.model.xy[self.model.targets]
        ab = b - a
        t = np.clip(((p.x() - a[:, 0]) * ab[:, 0] + (p.y() - a[:, 1]) * ab[:, 1])
                    / np.maximum((ab * ab).sum(axis=1), 1e-12), 0, 1)
        d = np.hypot(a[:, 0] + t * ab[:, 0] - p.x(), a[:, 1] + t * ab[:, 1] - p.y())
        shown = self.look.shown[self.model.sources] & self.look.shown[self.model.targets]
        d = np.where(shown, d, np.inf)
        best = int(np.argmin(d))
        return best if d[best] <= PICK_PX / self._scale else None

    # -- input -----------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Start a drag (pan) or a click."""
        if event.button() == Qt.MouseButton.LeftButton:
            self._press, self._dragged = event.position(), False

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Pan while dragging; otherwise track the node under the pointer."""
        if self._press is not None:
            delta = event.position() - self._press
            if self._dragged or abs(delta.x()) + abs(delta.y()) > 3:
                self._dragged = True
                self._press = event.position()
                self.pan_by(delta.x(), delta.y())
            return
        hovered = self.node_at(event.position())
        if hovered != self.hovered:
            self.hovered = hovered
            self.setToolTip(self.model.names[hovered] if hovered is not None else "")
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click without a drag selects what is under the pointer."""
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return
        self._press = None
        if self._dragged:
            return
        additive = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier))
        node = self.node_at(event.position())
        if node is not None:
            self.nodeClicked.emit(node, additive)
            return
        edge = self.edge_at(event.position())
        if edge is not None:
            self.edgeClicked.emit(edge)
        else:
            self.backgroundClicked.emit()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        """Double-click a node to zoom to it; elsewhere to zoom in."""
        node = self.node_at(event.position())
        if node is not None:
            self.nodeDoubleClicked.emit(node)
        else:
            self.zoom_by(2.0, event.position())

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Wheel zooms at the pointer; a touchpad's two-finger scroll pans (with Ctrl, zooms)."""
        pixels = event.pixelDelta()
        if not pixels.isNull() and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.pan_by(pixels.x(), pixels.y())
        else:
            steps = event.angleDelta().y() / 120.0
            self.zoom_by(1.25 ** steps, event.position())
        event.accept()

    def event(self, event: QEvent) -> bool:
        """Pinch gestures: touch screens (QPinchGesture) and touchpads (native zoom)."""
        if event.type() == QEvent.Type.Gesture and isinstance(event, QGestureEvent):
            pinch = event.gesture(Qt.GestureType.PinchGesture)
            if isinstance(pinch, QPinchGesture):
                self.zoom_by(pinch.scaleFactor(), self.mapFromGlobal(pinch.centerPoint().toPoint()).toPointF())
                return True
        if event.type() == QEvent.Type.NativeGesture and event.gestureType() == Qt.NativeGestureType.ZoomNativeGesture:
            self.zoom_by(1.0 + event.value(), event.position())
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """+/- zoom, arrows pan, 0 fits the whole graph."""
        key = event.key()
        steps = {Qt.Key.Key_Left: (60, 0), Qt.Key.Key_Right: (-60, 0),
                 Qt.Key.Key_Up: (0, 60), Qt.Key.Key_Down: (0, -60)}
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(0.8)
        elif key == Qt.Key.Key_0:
            self.fit()
        elif key in steps:
            self.pan_by(*steps[key])
        else:
            super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the centre; ask for an image of the new size."""
        super().resizeEvent(event)
        self._settle.start()

    def shutdown(self) -> bool:
        """Stop rendering (before the widget goes away)."""
        self._settle.stop()
        return self.renderer.shutdown()
