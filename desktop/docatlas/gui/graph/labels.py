"""Which node labels fit on screen: the best-connected first, none overlapping another.

Labels are placed greedily, in order of importance, into a coarse occupancy grid of the
viewport; one that would touch a placed label is skipped. Zooming in gives nodes room, so
more labels appear by themselves and text never piles up. Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

CELL = 6  # pixels per occupancy cell
MIN_RADIUS_PX = 3.0  # nodes drawn smaller than this get no label (unless forced)
GAP = 3.0  # pixels between a node and its label


def place(screen: np.ndarray, radius_px: np.ndarray, width: Callable[[int], float], height: float,
          viewport: tuple[int, int], limit: int, forced: int = 0) -> list[tuple[int, float, float]]:
    """Labels that fit: (candidate index, left, baseline) for candidates in priority order.

    `screen` and `radius_px` describe the candidates; the first `forced` ones are always
    placed (selection, hover), and nodes too small on screen are passed over."""
    w, h = viewport
    grid = np.zeros((h // CELL + 2, w // CELL + 2), bool)
    placed: list[tuple[int, float, float]] = []
    for i in range(len(screen)):
        if len(placed) >= limit + forced:
            break
        if i >= forced and radius_px[i] < MIN_RADIUS_PX:
            continue
        x, y = screen[i]
        left = x + radius_px[i] + GAP
        top = y - height / 2
        right, bottom = left + width(i), top + height
        if i >= forced and (left < 0 or top < 0 or right > w or bottom > h):
            continue
        c0, c1 = int(max(left, 0)) // CELL, int(min(max(right, 0), w)) // CELL + 1
        r0, r1 = int(max(top, 0)) // CELL, int(min(max(bottom, 0), h)) // CELL + 1
        if i >= forced and grid[r0:r1, c0:c1].any():
            continue
        grid[r0:r1, c0:c1] = True
        placed.append((i, left, top))
    return placed


class LabelIndex:
    """Label candidates by place: the most important `PER_CELL` nodes of each cell of a grid over
    the graph, so a frame looks only at the cells in view (a few thousand nodes, not every node:
    whole-graph array work in a frame would wait on the renderer thread for the GIL)."""

    PER_CELL = 24
    SIDE = 64

    def __init__(self, xy: np.ndarray, order: np.ndarray):
        self.rank = np.empty(len(xy), np.int64)
        self.rank[order] = np.arange(len(order))
        points = xy[order] if len(order) else np.zeros((0, 2))
        self.lo = points.min(axis=0) if len(points) else np.zeros(2)
        span = (points.max(axis=0) - self.lo) if len(points) else np.ones(2)
        self.cell = np.maximum(span / self.SIDE, 1e-9)
        ij = np.clip(((points - self.lo) / self.cell).astype(np.int64), 0, self.SIDE - 1)
        cells = ij[:, 0] * self.SIDE + ij[:, 1]
        by_cell = np.argsort(cells, kind="stable")  # within a cell, still in order of importance
        sorted_cells = cells[by_cell]
        starts = np.searchsorted(sorted_cells, np.arange(self.SIDE * self.SIDE + 1))
        keep = np.arange(len(by_cell)) - starts[sorted_cells] < self.PER_CELL if len(by_cell) else np.zeros(0, bool)
        self.nodes = order[by_cell[keep]]
        self.starts = np.searchsorted(sorted_cells[keep], np.arange(self.SIDE * self.SIDE + 1))

    def candidates(self, left: float, top: float, right: float, bottom: float, most: int) -> np.ndarray:
        """Nodes of the cells meeting the scene rectangle, most important first (at most `most`)."""
        if len(self.nodes) == 0:
            return self.nodes
        i0, j0 = np.clip(((np.array([left, top]) - self.lo) / self.cell).astype(np.int64), 0, self.SIDE - 1)
        i1, j1 = np.clip(((np.array([right, bottom]) - self.lo) / self.cell).astype(np.int64), 0, self.SIDE - 1)
        parts = [self.nodes[self.starts[i * self.SIDE + j0]:self.starts[i * self.SIDE + j1 + 1]]
                 for i in range(i0, i1 + 1)]
        found = np.concatenate(parts) if parts else self.nodes[:0]
        return found[np.argsort(self.rank[found], kind="stable")][:most]
