"""The canvas's input: picking nodes, edges and community discs; mouse, wheel, pinch, keys, context menus.

A mixin of `GraphCanvas` (which has the view, the model and the signals it uses), so
the widget's file stays about drawing. Dragging a node moves it live and, on release,
`nodeMoved` asks the explorer to pin it; dragging the background pans.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QContextMenuEvent, QKeyEvent, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QGestureEvent, QPinchGesture

from docatlas.gui.graph.plain import plain_tooltip

PICK_PX = 4.0


class CanvasInput:
    """Picking and input handlers for `GraphCanvas` (a QWidget with a view and a model)."""

    # -- picking ---------------------------------------------------------------------------

    def scene_point(self, pos: QPointF) -> QPointF:
        """The scene point under a widget position."""
        return self.view_transform().inverted()[0].map(QPointF(pos))

    def node_at(self, pos: QPointF) -> int | None:
        """The shown node under a widget position (None while communities are drawn)."""
        if self.model is None or self.look is None or self.collapsed or self.model.size == 0:
            return None
        p = self.scene_point(pos)
        d = np.hypot(self.model.xy[:, 0] - p.x(), self.model.xy[:, 1] - p.y())
        d = np.where(self.look.shown, d - self.look.radius - PICK_PX / self._scale, np.inf)
        best = int(np.argmin(d))
        return best if d[best] <= 0 else None

    def disc_at(self, pos: QPointF) -> int | None:
        """The community disc under a widget position (only while communities are drawn)."""
        if not self.collapsed:
            return None
        p = self.scene_point(pos)
        return self.overview.disc_at((p.x(), p.y()), PICK_PX / self._scale)

    def edge_at(self, pos: QPointF) -> int | None:
        """The shown edge passing under a widget position."""
        if self.model is None or self.look is None or len(self.model.sources) == 0 or self.collapsed:
            return None
        p = self.scene_point(pos)
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
        """Start a drag: of a node (to move and pin it) or of the view (to pan)."""
        if event.button() == Qt.MouseButton.LeftButton:
            self._press, self._dragged = event.position(), False
            self._grabbed = self.node_at(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Move the grabbed node, or pan; otherwise track the node under the pointer."""
        if self._press is not None:
            delta = event.position() - self._press
            if self._dragged or abs(delta.x()) + abs(delta.y()) > 3:
                self._dragged = True
                if self._grabbed is not None:
                    self.dragging, self.hovered = self._grabbed, None
                    p = self.scene_point(event.position())
                    self.model.xy[self._grabbed] = (p.x(), p.y())
                    self.update()
                else:
                    self._press = event.position()
                    self.pan_by(delta.x(), delta.y())
            return
        self._hover(event.position())

    def _hover(self, pos: QPointF) -> None:
        hovered = self.node_at(pos)
        if hovered != self.hovered:
            self.hovered = hovered
            self.setToolTip(plain_tooltip(self.model.names[hovered]) if hovered is not None else "")
            self.update()
        if hovered is None and self.collapsed:
            disc = self.disc_at(pos)
            self.setToolTip(plain_tooltip(f"{self.overview.labels[disc]} and others: {self.overview.members[disc]:,} "
                                          "entities (double-click to open)") if disc is not None else "")

    def leaveEvent(self, event: QEvent) -> None:
        """Nothing is hovered once the pointer leaves."""
        super().leaveEvent(event)
        if self.hovered is not None:
            self.hovered = None
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click without a drag selects what is under the pointer; a dragged node is pinned."""
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return
        self._press = None
        if self._dragged:
            if self.dragging is not None:
                node, self.dragging = self.dragging, None
                self.hovered = node
                self.nodeMoved.emit(node)
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
        """Double-click a node to open it, a community to expand it; elsewhere to zoom in."""
        disc = self.disc_at(event.position())
        if disc is not None:
            self.open_community(disc)
            return
        node = self.node_at(event.position())
        if node is not None:
            self.nodeDoubleClicked.emit(node)
        else:
            self.zoom_by(2.0, event.position())

    def open_community(self, disc: int) -> None:
        """Zoom to a community's members (far enough in that they are drawn one by one)."""
        box = self.overview.boxes[disc]
        self.fit(box)
        if self.collapsed:
            self.set_view(box.center(), self.detail_scale() * 1.05)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """Ask for the menu of the node or edge under the pointer."""
        pos = QPointF(event.pos())
        node = self.node_at(pos)
        if node is not None:
            self.contextRequested.emit("node", node, event.globalPos())
            return
        edge = self.edge_at(pos)
        if edge is not None:
            self.contextRequested.emit("edge", edge, event.globalPos())

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
        return super().event(event)  # type: ignore[misc]

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

