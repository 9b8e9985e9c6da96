"""The drawing of a graph as batched paths, built off the GUI thread.

Drawing 10,000 nodes one by one costs a Python call each; here every (layer, tile,
colour) group is one `QPainterPath` in scene units, so a whole picture is a few hundred
draw calls. Tiles let a zoomed-in view skip what is off screen; a cap on items per call
keeps each call short, because PySide holds the GIL while Qt draws (long edges, which
cost by their pixels, go in shorter calls of their own, which also keeps the short edges'
tiles tight). Edges are drawn first, beneath every node, stroked opaque with a cosmetic pen whose width (1, 1.8 or 2.8
pixels whatever the zoom) grows with the relation's weight; dimmed items use colours
blended toward the background rather than transparency, which is slow.
`QPainterPath` and `QColor` are plain values: a worker thread may build them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainterPath

from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.palette import LIGHT, blend
from docatlas.gui.graph.query import Look

BIG_RADIUS = 9.0  # nodes at least this big are drawn antialiased even in crowded views
# PySide holds the GIL during a draw call: short calls keep the GUI thread responsive while
# a worker renders (about a millisecond each).
EDGES_PER_CALL = 120
LONG_EDGES_PER_CALL = 30
LONG_EDGE = 8.0  # an edge this many times the median edge length is drawn in the shorter calls
NODES_PER_CALL = 150
RING_HOLE = 0.55  # a concept node's open centre, as a share of its radius
MOST_TILES_A_SIDE = 32  # a zoomed-in view of a big graph skips every tile it does not meet


@dataclass(frozen=True)
class Batch:
    """One draw call: a stroked edge path or a filled node path, with its bounds in scene units."""

    path: QPainterPath
    colour: QColor
    is_edge: bool
    bounds: QRectF
    count: int
    big: bool = False
    width: float = 1.0  # pixels, for edges
    dashed: bool = False  # an edge of the concept layer (two names in one sentence, not read by the model)


@dataclass(frozen=True)
class Scene:
    """Everything to draw, in order, and the bounds of it all."""

    batches: list[Batch]
    bounds: QRectF
    generation: int
    background: str = LIGHT.background


WIDTHS = (1.0, 1.8, 2.8)  # edge pixels by weight class


def width_class(weights: np.ndarray) -> np.ndarray:
    """0, 1 or 2 for each edge: up to 1.5×, up to 3×, or more than 3× the median weight."""
    if len(weights) == 0:
        return np.zeros(0, np.int64)
    relative = weights / max(float(np.median(weights)), 1e-9)
    return np.digitize(relative, [1.5, 3.0]).astype(np.int64)


def _tiles(xy: np.ndarray, count: int) -> np.ndarray:
    """A tile number per point, on a grid of about `count` / 150 tiles."""
    side = int(np.clip(np.sqrt(count / 150.0), 1, MOST_TILES_A_SIDE))
    if side == 1 or len(xy) == 0:
        return np.zeros(len(xy), np.int64)
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    cell = np.maximum((hi - lo) / side, 1e-9)
    ij = np.minimum(((xy - lo) / cell).astype(np.int64), side - 1)
    return ij[:, 0] * side + ij[:, 1]


def _groups(keys: np.ndarray, most: int) -> list[np.ndarray]:
    """Indices grouped by key, groups in key order, none longer than `most`."""
    if len(keys) == 0:
        return []
    order = np.argsort(keys, kind="stable")
    cuts = np.nonzero(np.diff(keys[order]))[0] + 1
    return [part for group in np.split(order, cuts) for part in np.split(group, range(most, len(group), most))]


def _edge_groups(model: GraphModel, edges: np.ndarray, widths: np.ndarray) -> list[np.ndarray]:
    """Edges (positions in `edges`) grouped by width and tile of their middle; long edges apart,
    in shorter calls (a line costs by its pixels), so the short ones' bounds stay tight."""
    a, b = model.sources[edges], model.targets[edges]
    length = np.hypot(*(model.xy[a] - model.xy[b]).T) if len(edges) else np.zeros(0)
    long = length > LONG_EDGE * max(float(np.median(length)) if len(length) else 0.0, 1e-9)
    key = widths[edges] * 100_000 + _tiles((model.xy[a] + model.xy[b]) / 2, len(edges))
    short_at, long_at = np.nonzero(~long)[0], np.nonzero(long)[0]
    return ([short_at[g] for g in _groups(key[short_at], EDGES_PER_CALL)]
            + [long_at[g] for g in _groups(key[long_at], LONG_EDGES_PER_CALL)])


def _edge_batches(model: GraphModel, edges: np.ndarray, colour: str, widths: np.ndarray) -> list[Batch]:
    """Model edges solid, the concept layer's dashed, each in batches of their own."""
    concept = model.concept_edges[edges]
    return (_edges_drawn(model, edges[~concept], colour, widths)
            + _edges_drawn(model, edges[concept], colour, widths, dashed=True))


def _edges_drawn(model: GraphModel, edges: np.ndarray, colour: str, widths: np.ndarray,
                 dashed: bool = False) -> list[Batch]:
    batches = []
    a, b = model.sources[edges], model.targets[edges]
    for group in _edge_groups(model, edges, widths):
        path = QPainterPath()
        p, q = model.xy[a[group]], model.xy[b[group]]
        for x1, y1, x2, y2 in np.hstack((p, q)).tolist():
            path.moveTo(x1, y1)
            path.lineTo(x2, y2)
        lo, hi = np.minimum(p, q).min(axis=0), np.maximum(p, q).max(axis=0)
        batches.append(Batch(path, QColor(colour), True, QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]),
                             len(group), width=WIDTHS[int(widths[edges[group[0]]])], dashed=dashed))
    return batches


def _node_batches(model: GraphModel, nodes: np.ndarray, colour_class: np.ndarray,
                  colours: list[str], radius: np.ndarray) -> list[Batch]:
    batches = []
    big = radius[nodes] >= BIG_RADIUS
    tile = _tiles(model.xy[nodes], len(nodes))
    ring = model.concept_nodes[nodes]  # the concept layer's names are drawn as rings
    key = ((ring.astype(np.int64) * 2 + big) * 10_000 + tile) * 1000 + colour_class[nodes]
    for group in _groups(key, NODES_PER_CALL):
        members = nodes[group]
        path = QPainterPath()
        xy, r = model.xy[members], radius[members]
        hole = RING_HOLE if ring[group[0]] else 0.0
        for x, y, size in np.column_stack((xy, r)).tolist():
            path.addEllipse(x - size, y - size, 2 * size, 2 * size)
            if hole:  # filled odd-even: the inner circle is left open
                path.addEllipse(x - size * hole, y - size * hole, 2 * size * hole, 2 * size * hole)
        lo, hi = (xy - r[:, None]).min(axis=0), (xy + r[:, None]).max(axis=0)
        batches.append(Batch(path, QColor(colours[int(colour_class[members[0]])]), False,
                             QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]), len(members), bool(big[group[0]])))
    return batches


def build_scene(model: GraphModel, look: Look, generation: int) -> Scene:
    """The batches for a model as `look` wants it: dimmed layers first, highlighted last."""
    shown = look.shown
    edges_shown = shown[model.sources] & shown[model.targets]
    dim_edge = edges_shown & (look.dimmed[model.sources] | look.dimmed[model.targets]) & ~look.highlighted
    plain_edge = edges_shown & ~dim_edge & ~look.highlighted
    theme = look.theme
    dim_colours = [blend(c, theme.background) for c in look.colours]
    widths = width_class(model.weights)
    batches = (_edge_batches(model, np.nonzero(dim_edge)[0], theme.edge_dim, widths)
               + _edge_batches(model, np.nonzero(plain_edge)[0], theme.edge, widths)
               + _edge_batches(model, np.nonzero(edges_shown & look.highlighted)[0], theme.edge_highlight, widths)
               + _node_batches(model, np.nonzero(shown & look.dimmed)[0], look.colour_class, dim_colours, look.radius)
               + _node_batches(model, np.nonzero(shown & ~look.dimmed)[0], look.colour_class, look.colours,
                               look.radius))
    bounds = QRectF()
    for batch in batches:
        bounds = bounds.united(batch.bounds)
    return Scene(batches, bounds, generation, theme.background)
