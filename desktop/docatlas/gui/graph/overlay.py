"""The canvas's live layer, drawn each frame over the rendered image: hover, selection, labels.

- Hovering a node veils everything else in the background colour and draws the node, its
  edges and its neighbours again on top, so they stand out and the rest is dimmed.
- The selection's edges, and a selected edge (thick, with both ends ringed), are drawn
  first and their end nodes again over them: edges stay beneath nodes.
- Labels are chosen by importance (the size metric), placed so none overlaps another
  (`labels.place`), and fade in as the zoom makes their node big enough.
- When the canvas shows communities (`GraphCanvas.collapsed`), the discs are labelled by
  their top entities instead.
Text is drawn from plain `QStaticText`s laid out once (`label_texts`), never as markup.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from docatlas.gui.graph import labels
from docatlas.gui.graph.label_texts import LabelTexts
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.overview import Overview
from docatlas.gui.graph.query import Look


class GraphCanvas(Protocol):
    """What the live layer reads of the canvas (`canvas.GraphCanvas`), so neither imports the other."""

    model: GraphModel | None
    look: Look | None
    overview: Overview | None
    selection: list[int]
    selected_edge: int | None
    hovered: int | None
    dragging: int | None
    show_labels: bool
    label_order: np.ndarray
    label_index: labels.LabelIndex
    texts: LabelTexts

    @property
    def collapsed(self) -> bool:
        """True while communities are drawn."""

    @property
    def scale(self) -> float:
        """Pixels per scene unit."""

    def centre_point(self) -> np.ndarray:
        """The scene point in the middle."""

    def visible_rect(self) -> QRectF:
        """The part of the scene in view."""

    def width(self) -> int:
        """Widget width."""

    def height(self) -> int:
        """Widget height."""

LABEL_LIMIT = 160
LIVE_EDGES = 3000  # edges of the hovered or selected nodes drawn live, at most
VEIL_ALPHA = 185  # how much the rest is dimmed while a node is hovered
FADE_PX = 3.0  # a label fades in over this many pixels of node radius beyond the minimum


def _screen(canvas: GraphCanvas, xy: np.ndarray) -> np.ndarray:
    centre = canvas.centre_point()
    return (xy - centre) * canvas.scale + np.array([canvas.width() / 2, canvas.height() / 2])


def _colour(canvas: GraphCanvas, node: int) -> QColor:
    look = canvas.look
    return QColor(look.colours[int(look.colour_class[node])])


def _edges(painter: QPainter, canvas: GraphCanvas, edges: np.ndarray, colour: str, width: float) -> None:
    model = canvas.model
    if len(edges) == 0:
        return
    ends = np.column_stack((_screen(canvas, model.xy[model.sources[edges]]),
                            _screen(canvas, model.xy[model.targets[edges]])))
    painter.setPen(QPen(QColor(colour), width))
    painter.drawLines([QLineF(*row) for row in ends.tolist()])


def _nodes(painter: QPainter, canvas: GraphCanvas, nodes: list[int], ring: str | None = None,
           ring_width: float = 2.0) -> None:
    """Fill nodes in their colours (over the edges just drawn), optionally ringed."""
    if not nodes:
        return
    points = _screen(canvas, canvas.model.xy[nodes])
    radii = canvas.look.radius[nodes] * canvas.scale
    for node, (x, y), r in zip(nodes, points.tolist(), radii.tolist()):
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_colour(canvas, node))
        painter.drawEllipse(QPointF(x, y), max(r, 2.0), max(r, 2.0))
        if ring is not None:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor(ring), ring_width))
            painter.drawEllipse(QPointF(x, y), max(r, 2.0) + 3, max(r, 2.0) + 3)


def paint(painter: QPainter, canvas: GraphCanvas) -> None:
    """Everything live, in order: veil and hover, selection, selected edge, labels."""
    if canvas.model is None or canvas.look is None:
        return
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    theme = canvas.look.theme
    if canvas.collapsed:
        if canvas.show_labels:
            _disc_labels(painter, canvas)
        return
    model = canvas.model
    focus = canvas.hovered if canvas.hovered is not None else canvas.dragging
    if focus is not None:
        veil = QColor(theme.background)
        veil.setAlpha(VEIL_ALPHA)
        painter.fillRect(QRectF(0, 0, canvas.width(), canvas.height()), veil)
        edges = model.edges_of(focus)[:LIVE_EDGES]
        _edges(painter, canvas, edges, theme.edge_highlight, 1.5)
        near = [int(i) for i in model.neighbours_of(focus)[:LIVE_EDGES] if canvas.look.shown[i]]
        _nodes(painter, canvas, near)
    if canvas.selection:
        edges = np.unique(np.concatenate([model.edges_of(i) for i in canvas.selection]))[:LIVE_EDGES]
        _edges(painter, canvas, edges, theme.edge_highlight, 1.5)
        ends = np.unique(np.concatenate((model.sources[edges], model.targets[edges]))).tolist() if len(edges) else []
        _nodes(painter, canvas, [int(i) for i in ends if canvas.look.shown[i]])
        _nodes(painter, canvas, list(canvas.selection), theme.selection, 2.5)
    if canvas.selected_edge is not None:
        edge = canvas.selected_edge
        _edges(painter, canvas, np.array([edge]), theme.selection, 3.0)
        _nodes(painter, canvas, [int(model.sources[edge]), int(model.targets[edge])], theme.selection, 2.5)
    if focus is not None:
        _nodes(painter, canvas, [focus], theme.selection, 1.5)
    if canvas.show_labels:
        _node_labels(painter, canvas)


def _label_font(painter: QPainter, canvas: GraphCanvas, bold: bool, current: list[bool | None]) -> None:
    """Set the label font when it changes (`current` holds the one set)."""
    if current[0] is not bold:
        painter.setFont(canvas.texts.bold if bold else canvas.texts.font)
        current[0] = bold


def _node_labels(painter: QPainter, canvas: GraphCanvas) -> None:
    model, look, texts = canvas.model, canvas.look, canvas.texts
    focus = canvas.hovered if canvas.hovered is not None else canvas.dragging
    forced = list(canvas.selection) + ([focus] if focus is not None else [])
    if canvas.selected_edge is not None:
        forced += [int(model.sources[canvas.selected_edge]), int(model.targets[canvas.selected_edge])]
    forced = list(dict.fromkeys(forced))
    view = canvas.visible_rect()
    pad = 50 / canvas.scale
    in_view = canvas.label_index.candidates(view.left() - pad, view.top() - pad, view.right(), view.bottom() + pad,
                                            LABEL_LIMIT * 4)
    near = model.neighbours_of(focus)[:LABEL_LIMIT].astype(np.int64) if focus is not None else np.zeros(0, np.int64)
    candidates = np.concatenate((np.array(forced, np.int64), near, in_view))
    points = _screen(canvas, model.xy[candidates])
    radius = look.radius[candidates] * canvas.scale
    nodes = candidates.tolist()
    height = texts.metrics.height()
    placed = labels.place(points, radius, lambda i: texts.width(nodes[i]), height, (canvas.width(), canvas.height()),
                          LABEL_LIMIT, len(forced))
    if not placed:
        return
    chosen = np.array([i for i, _, _ in placed])
    fades = np.where(chosen < len(forced), 1.0, np.clip((radius[chosen] - labels.MIN_RADIUS_PX) / FADE_PX, 0.5, 1.0))
    halo = QColor(look.theme.background)
    text = QColor(look.theme.text)
    font: list[bool | None] = [None]
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # halos on whole pixels
    for (i, left, top), fade in zip(placed, fades.tolist()):
        x, y = round(left), round(top)
        bold = i < len(forced)
        halo.setAlpha(round(215 * fade))
        text.setAlpha(round(255 * fade))
        painter.fillRect(QRectF(x - 2, y, texts.width(nodes[i]) + 4, height), halo)
        painter.setPen(text)
        _label_font(painter, canvas, bold, font)
        painter.drawStaticText(x, y, texts.static(nodes[i], bold))


def _disc_labels(painter: QPainter, canvas: GraphCanvas) -> None:
    """Each community disc named by its top entities, biggest first, none overlapping."""
    overview, texts = canvas.overview, canvas.texts
    texts.use_overview(overview)
    order = np.array(texts.disc_order, np.int64)
    points = _screen(canvas, overview.centres[order])
    radius = overview.radius[order] * canvas.scale
    width = texts.disc_widths
    height = texts.metrics.height()
    placed = labels.place(points, np.maximum(radius, labels.MIN_RADIUS_PX), lambda i: width[i], height,
                          (canvas.width(), canvas.height()), LABEL_LIMIT)
    halo = QColor(canvas.look.theme.background)
    halo.setAlpha(215)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # halos on whole pixels
    painter.setFont(texts.font)
    painter.setPen(QColor(canvas.look.theme.text))
    for i, left, top in placed:
        x, y = round(left), round(top)
        painter.fillRect(QRectF(x - 2, y, width[i] + 4, height), halo)
        painter.drawStaticText(x, y, texts.disc_static(i))
