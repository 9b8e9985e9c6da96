"""Exporting the current view as PNG (at twice the screen's resolution) or SVG: what the canvas shows,
labels included, in the current theme.

The shown graph (GraphML, GEXF) is written by `shown_export`, the whole graph (JSON, CSV) by
`gui.jobs.graph.export_job`."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.render import paint_scene

VIEW_FORMATS = ("png", "svg")
PNG_SCALE = 2.0  # exported pictures are sharper than the screen


def _paint_view(painter: QPainter, canvas: GraphCanvas) -> None:
    painter.fillRect(QRectF(0, 0, canvas.width(), canvas.height()), QColor(canvas.theme.background))
    scene = canvas.active_scene
    if scene is not None:
        painter.save()
        painter.setTransform(canvas.view_transform(), True)
        paint_scene(painter, scene, canvas.visible_rect())
        painter.restore()
    canvas.paint_overlay(painter)


def export_view(canvas: GraphCanvas, path: Path, fmt: str) -> Path:
    """Write what the canvas shows to `path` as PNG or SVG."""
    path = Path(path)
    size = QSize(canvas.width(), canvas.height())
    if fmt == "svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(size)
        generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
        generator.setTitle("DocAtlas graph")
        painter = QPainter(generator)
        _paint_view(painter, canvas)
        painter.end()
    elif fmt == "png":
        image = QImage(round(size.width() * PNG_SCALE), round(size.height() * PNG_SCALE),
                       QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(PNG_SCALE)
        painter = QPainter(image)
        _paint_view(painter, canvas)
        painter.end()
        if not image.save(str(path), "PNG"):
            raise OSError(f"Could not write {path}; choose another folder.")
    else:
        raise ValueError(f"Unknown view format {fmt!r}.")
    return path

