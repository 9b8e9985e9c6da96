"""A big graph seen from afar: one disc per community, sized by its members, labelled by its top entities.

At low zoom the canvas draws this instead of every node (see `GraphCanvas.collapsed`): a
few hundred discs and the strongest links between communities, so a 100,000-node graph
paints as fast as a small one. Each disc sits at the centre of its shown members with the
area they take up; its colour is the one most of its members have. Built off the GUI
thread from whole-array operations (no Python loop per node).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainterPath

from docatlas.gui.graph.model import SPACING, GraphModel
from docatlas.gui.graph.query import Look
from docatlas.gui.graph.scene import WIDTHS, Batch, Scene

TOP_NAMES = 3  # entities named on a disc
LINKS_PER_COMMUNITY = 3  # the strongest links between communities drawn, per community


@dataclass(frozen=True)
class Overview:
    """The discs (by community number), what they are labelled with, and their scene."""

    scene: Scene
    community: np.ndarray  # community number of each disc
    centres: np.ndarray  # k×2 scene units
    radius: np.ndarray  # k, scene units
    members: np.ndarray  # k, shown members
    labels: list[str]  # top entities, by degree
    boxes: list[QRectF]  # the members' bounds: double-click zooms there

    def disc_at(self, point: tuple[float, float], slack: float = 0.0) -> int | None:
        """The disc under a scene point (index into the arrays), or None."""
        if len(self.centres) == 0:
            return None
        d = np.hypot(self.centres[:, 0] - point[0], self.centres[:, 1] - point[1]) - self.radius - slack
        best = int(np.argmin(d))
        return best if d[best] <= 0 else None


def _majority(group: np.ndarray, colour_class: np.ndarray, count: int) -> np.ndarray:
    """The most common colour class in each group."""
    pairs, counts = np.unique(np.stack((group, colour_class), axis=1), axis=0, return_counts=True)
    order = np.lexsort((-counts, pairs[:, 0]))
    first = np.unique(pairs[order, 0], return_index=True)[1]
    chosen = np.zeros(count, np.int64)
    chosen[pairs[order][first][:, 0]] = pairs[order][first][:, 1]
    return chosen


def build_overview(model: GraphModel, look: Look, generation: int) -> Overview | None:
    """The community discs of the shown nodes (None when no node is in a community)."""
    nodes = np.nonzero(look.shown & (model.community >= 0))[0]
    if len(nodes) == 0:
        return None
    ids, group = np.unique(model.community[nodes], return_inverse=True)
    k = len(ids)
    members = np.bincount(group, minlength=k)
    centres = np.stack([np.bincount(group, model.xy[nodes, axis], minlength=k) / members for axis in (0, 1)], axis=1)
    radius = SPACING * np.sqrt(members / np.pi) * 0.8 + SPACING * 0.5
    lo = np.stack([np.full(k, np.inf)] * 2, axis=1)
    hi = -lo
    for axis in (0, 1):
        np.minimum.at(lo[:, axis], group, model.xy[nodes, axis])
        np.maximum.at(hi[:, axis], group, model.xy[nodes, axis])
    ranked = np.lexsort((-model.degree[nodes], group))
    starts = np.searchsorted(group[ranked], np.arange(k))
    labels = [", ".join(model.names[int(nodes[ranked[j]])]
                        for j in range(s, min(s + TOP_NAMES, len(ranked))) if group[ranked[j]] == g)
              for g, s in enumerate(starts.tolist())]
    colour = _majority(group, look.colour_class[nodes], k)
    batches = _links(model, look, nodes, group, k, centres) + _discs(centres, radius, colour, look.colours)
    bounds = QRectF()
    for batch in batches:
        bounds = bounds.united(batch.bounds)
    boxes = [QRectF(a[0], a[1], b[0] - a[0], b[1] - a[1]) for a, b in zip(lo.tolist(), hi.tolist())]
    return Overview(Scene(batches, bounds, generation, look.theme.background), ids, centres, radius, members,
                    labels, boxes)


def _links(model: GraphModel, look: Look, nodes: np.ndarray, group: np.ndarray, k: int,
           centres: np.ndarray) -> list[Batch]:
    """The strongest links between communities, one path per width."""
    of_node = np.full(model.size, -1, np.int64)
    of_node[nodes] = group
    a, b = of_node[model.sources], of_node[model.targets]
    across = (a >= 0) & (b >= 0) & (a != b)
    if not across.any():
        return []
    lo, hi = np.minimum(a[across], b[across]), np.maximum(a[across], b[across])
    codes, counts = np.unique(lo * k + hi, return_counts=True)
    keep = np.argsort(-counts, kind="stable")[:LINKS_PER_COMMUNITY * k]
    codes, counts = codes[keep], counts[keep]
    relative = counts / max(float(np.median(counts)), 1.0)
    widths = np.digitize(relative, [2.0, 5.0])
    batches = []
    for w in range(len(WIDTHS)):
        chosen = codes[widths == w]
        if len(chosen) == 0:
            continue
        path = QPainterPath()
        for i, j in zip((chosen // k).tolist(), (chosen % k).tolist()):
            path.moveTo(*centres[i])
            path.lineTo(*centres[j])
        batches.append(Batch(path, QColor(look.theme.edge), True, path.boundingRect(), len(chosen), width=WIDTHS[w]))
    return batches


def _discs(centres: np.ndarray, radius: np.ndarray, colour: np.ndarray, colours: list[str]) -> list[Batch]:
    """One filled path per colour."""
    batches = []
    for c in np.unique(colour).tolist():
        chosen = np.nonzero(colour == c)[0]
        path = QPainterPath()
        for (x, y), r in zip(centres[chosen].tolist(), radius[chosen].tolist()):
            path.addEllipse(x - r, y - r, 2 * r, 2 * r)
        batches.append(Batch(path, QColor(colours[c] if c < len(colours) else "#b5b9c0"), False,
                             path.boundingRect(), len(chosen), big=True))
    return batches
