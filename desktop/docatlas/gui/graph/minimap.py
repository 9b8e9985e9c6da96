"""An overview of the whole graph in a corner, with the window's part framed; click or drag to go there.

Shown only when the graph is larger than the view (the explorer decides); a big graph's
overview is drawn from its community discs, so it costs as little as a small graph's."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen, QTransform
from PySide6.QtWidgets import QWidget

from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.scene import Scene
from docatlas.gui.jobs.graph import overview_job
from docatlas.gui.tasks import TaskRunner

SIZE = QSize(220, 160)


class Minimap(QWidget):
    """Draws the whole scene small (rendered off the GUI thread) and the canvas's view on it."""

    ready = Signal()

    def __init__(self, canvas: GraphCanvas, tasks: TaskRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.canvas = canvas
        self.setFixedSize(SIZE)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._image: QImage | None = None
        self._transform = QTransform()
        self.tasks = tasks
        self.key = ("minimap", object())  # latest-only: only the newest scene is drawn
        self._closed = False
        canvas.viewChanged.connect(self.update)

    def _fit(self, bounds: QRectF) -> QTransform:
        rect = bounds if not bounds.isEmpty() else bounds.adjusted(-50, -50, 50, 50)
        scale = 0.9 * min(SIZE.width() / rect.width(), SIZE.height() / rect.height())
        t = QTransform()
        t.translate(SIZE.width() / 2, SIZE.height() / 2)
        t.scale(scale, scale)
        t.translate(-rect.center().x(), -rect.center().y())
        return t

    def set_scene(self, scene: Scene | None) -> None:
        """Draw this scene (in the background)."""
        if scene is None:
            return
        transform = self._fit(scene.bounds)
        self._transform = transform  # clicks map to the new scene at once
        ratio = self.devicePixelRatioF()
        if not self._closed:
            self.tasks.run("Drawing the overview", overview_job(scene, SIZE, transform, ratio), key=self.key,
                           on_success=self._rendered)

    def _rendered(self, image: QImage) -> None:
        if self._closed:
            return
        self._image = image
        self.update()
        self.ready.emit()

    def paintEvent(self, event: QPaintEvent) -> None:
        """The overview, a frame, and the view's rectangle."""
        painter = QPainter(self)
        theme = self.canvas.theme
        painter.fillRect(self.rect(), QColor(theme.background))
        if self._image is not None:
            painter.drawImage(QPointF(0, 0), self._image)
        painter.setPen(QPen(QColor(theme.frame), 1))
        painter.drawRect(QRectF(0.5, 0.5, SIZE.width() - 1, SIZE.height() - 1))
        if self.canvas.active_scene is not None:
            painter.setPen(QPen(QColor(theme.selection), 1.5))
            painter.drawRect(self._transform.mapRect(self.canvas.visible_rect()).intersected(
                QRectF(1, 1, SIZE.width() - 2, SIZE.height() - 2)))
        painter.end()

    def _go(self, position: QPointF) -> None:
        target = self._transform.inverted()[0].map(position)
        self.canvas.set_view(target, self.canvas.scale)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Centre the view where clicked."""
        self._go(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Drag the view around."""
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Stop rendering, and deliver nothing more."""
        self._closed = True
        return self.tasks.stop([self.key], timeout_ms)
