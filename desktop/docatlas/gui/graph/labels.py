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
