"""Painting a `Scene`, and rendering it to images (on a worker thread: see `renderer`).

The canvas never draws the graph itself while the user pans or zooms: it shows the last
image rendered here, moved and scaled, and asks for a fresh one when the view settles.
So a frame costs one image blit whatever the graph's size, and the full drawing happens
off the GUI thread. PySide holds the GIL for the whole of every draw call, so a render
running while the user moves the view would make the frames wait: a render is therefore
*interruptible*. It checks `stale()` before each batch (a few hundred items, about a
millisecond) and stops at once, returning nothing, when the canvas has moved on
(`Renderer.abandon`). Edges are drawn with `drawPath` and the pen set on the painter,
not `strokePath`: Qt's raster engine takes its fast cosmetic-line path only for the
painter's own pen (about three times faster for 1-pixel edges). Painting a QImage
outside the GUI thread is allowed by Qt; no widget is touched here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QTransform

from docatlas.gui.graph.scene import Scene

ANTIALIAS_EDGES_BELOW = 6000  # visible edges
ANTIALIAS_NODES_BELOW = 4000  # visible nodes


def never() -> bool:
    """A render that is never abandoned (exports, the minimap)."""
    return False


def paint_scene(painter: QPainter, scene: Scene, visible: QRectF, stale: Callable[[], bool] = never) -> int | None:
    """Draw the batches that meet `visible` (scene units) with the painter's transform.

    Returns how many batches were drawn, or None when `stale()` turned true before the last
    one (the render was abandoned part-way)."""
    shown = [b for b in scene.batches if b.bounds.intersects(visible) or b.bounds.isEmpty()]
    edges = sum(b.count for b in shown if b.is_edge)
    nodes = sum(b.count for b in shown if not b.is_edge)
    edge_antialias = edges < ANTIALIAS_EDGES_BELOW
    node_antialias = nodes < ANTIALIAS_NODES_BELOW
    pen = QPen()
    pen.setCosmetic(True)
    pen.setWidthF(1.0)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for batch in shown:
        if stale():
            return None
        if batch.is_edge:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, edge_antialias)
            pen.setColor(batch.colour)
            pen.setWidthF(batch.width)
            pen.setStyle(Qt.PenStyle.DashLine if batch.dashed else Qt.PenStyle.SolidLine)
            painter.setPen(pen)
            painter.drawPath(batch.path)
        else:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, batch.big or node_antialias)
            painter.fillPath(batch.path, batch.colour)
    return len(shown)


@dataclass(frozen=True)
class Rendered:
    """An image of the scene and the scene-to-image transform it was drawn with."""

    image: QImage
    transform: QTransform
    generation: int
    request: int
    source: object = None  # the Scene drawn


def render_image(scene: Scene, size: QSize, transform: QTransform, ratio: float = 1.0,
                 stale: Callable[[], bool] = never) -> QImage | None:
    """The scene drawn into a new image of `size` logical pixels (None if abandoned: see `paint_scene`)."""
    image = QImage(max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio)),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    image.fill(QColor(scene.background))
    painter = QPainter(image)
    painter.setTransform(transform)
    inverse, _ = transform.inverted()
    drawn = paint_scene(painter, scene, inverse.mapRect(QRectF(0, 0, size.width(), size.height())), stale)
    painter.end()
    return image if drawn is not None else None
