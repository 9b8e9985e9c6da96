"""Painting a `Scene`, and rendering it to images (on a worker thread: see `renderer`).

The canvas never draws the graph itself while the user pans or zooms: it shows the last
image rendered here, moved and scaled, and asks for a fresh one when the view settles.
So a frame costs one image blit whatever the graph's size, and the full drawing (tens of
milliseconds at 10,000 nodes) happens off the GUI thread. Painting a QImage outside the
GUI thread is allowed by Qt; no widget is touched here.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QTransform

from docatlas.gui.graph.scene import Scene

ANTIALIAS_EDGES_BELOW = 6000  # visible edges
ANTIALIAS_NODES_BELOW = 4000  # visible nodes


def paint_scene(painter: QPainter, scene: Scene, visible: QRectF) -> None:
    """Draw the batches that meet `visible` (scene units) with the painter's transform."""
    shown = [b for b in scene.batches if b.bounds.intersects(visible) or b.bounds.isEmpty()]
    edges = sum(b.count for b in shown if b.is_edge)
    nodes = sum(b.count for b in shown if not b.is_edge)
    pen = QPen()
    pen.setCosmetic(True)
    pen.setWidthF(1.0)
    painter.setBrush(QColor(0, 0, 0, 0))
    for batch in shown:
        if batch.is_edge:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, edges < ANTIALIAS_EDGES_BELOW)
            pen.setColor(batch.colour)
            pen.setWidthF(batch.width)
            painter.strokePath(batch.path, pen)
        else:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, batch.big or nodes < ANTIALIAS_NODES_BELOW)
            painter.fillPath(batch.path, batch.colour)


@dataclass(frozen=True)
class Rendered:
    """An image of the scene and the scene-to-image transform it was drawn with."""

    image: QImage
    transform: QTransform
    generation: int
    request: int
    source: object = None  # the Scene drawn


def render_image(scene: Scene, size: QSize, transform: QTransform, ratio: float = 1.0) -> QImage:
    """The scene drawn into a new image of `size` logical pixels."""
    image = QImage(max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio)),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    image.fill(QColor(scene.background))
    painter = QPainter(image)
    painter.setTransform(transform)
    inverse, _ = transform.inverted()
    paint_scene(painter, scene, inverse.mapRect(QRectF(0, 0, size.width(), size.height())))
    painter.end()
    return image

