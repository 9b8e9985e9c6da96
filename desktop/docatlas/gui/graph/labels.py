"""Which node labels fit on screen: the best-connected first, none overlapping another.

Labels are placed greedily, in order of importance, into a coarse occupancy grid of the
viewport (each row of cells one integer's bits); one that would touch a placed label is
skipped. Zooming in gives nodes room, so more labels appear by themselves and text never
piles up. Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

CELL = 6  # pixels per occupancy cell
MIN_RADIUS_PX = 3.0  # nodes drawn smaller than this get no label (unless forced)
GAP = 3.0  # pixels between a node and its label


def place(screen: np.ndarray, radius_px: np.ndarray, width: Callable[[int], float], height: float,
          viewport: tuple[int, int], limit: int, forced: int = 0) -> list[tuple[int, float, float]]:
    """Labels that fit: (candidate index, left, top) for candidates in priority order.

    `screen` and `radius_px` describe the candidates; the first `forced` ones are always
    placed (selection, hover), and nodes too small on screen are passed over. Candidates too
    small or off screen are dropped with whole-array operations first, so the loop (in a
    frame, on the GUI thread) sees only those that may fit."""
    w, h = viewport
    rows = [0] * (h // CELL + 2)  # the occupied cells of each row of the viewport, as bits
    placed: list[tuple[int, float, float]] = []
    if len(screen) == 0:
        return placed
    lefts = screen[:, 0] + radius_px + GAP
    tops = screen[:, 1] - height / 2
    index = np.arange(len(screen))
    may_fit = (index < forced) | ((radius_px >= MIN_RADIUS_PX) & (lefts >= 0) & (tops >= 0) & (lefts <= w)
                                  & (tops + height <= h))
    for i, left, top in zip(index[may_fit].tolist(), lefts[may_fit].tolist(), tops[may_fit].tolist()):
        if len(placed) >= limit + forced:
            break
        right, bottom = left + width(i), top + height
        if i >= forced and right > w:
            continue
        c0, c1 = int(max(left, 0)) // CELL, int(min(max(right, 0), w)) // CELL + 1
        r0, r1 = int(max(top, 0)) // CELL, int(min(max(bottom, 0), h)) // CELL + 1
        cells = ((1 << (c1 - c0)) - 1) << c0 if c1 > c0 else 0  # a forced label off screen takes no cell
        if i >= forced and any(rows[r] & cells for r in range(r0, r1)):
            continue
        for r in range(r0, r1):
            rows[r] |= cells
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
        rank = self.rank[found]
        if len(found) > most:  # the `most` best first: a partition, then a sort of those only
            best = np.argpartition(rank, most - 1)[:most]
            found, rank = found[best], rank[best]
        return found[np.argsort(rank, kind="stable")]
