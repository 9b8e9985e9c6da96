"""The force engine of the explorer's layout: igraph's Fruchterman–Reingold, seeded and in short calls.

igraph (C) runs the force model; this module makes it fit the explorer:

* seeded: every call starts from positions drawn by numpy from a fixed seed, and igraph's
  own random numbers come from a `random.Random` of that seed, set under a lock (igraph's
  generator is global), so one graph always gets one layout;
* in short calls: igraph holds the GIL while it works, so a long layout runs as a few
  calls of a bounded amount of work each (the cooling goes on from one to the next); the
  caller's `cancel` is asked between them, and the GUI thread gets its turns.

igraph is imported here, lazily (`igraph_module`): the command line's `--version` and
`status` never load it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np

Cancel = Callable[[], bool]
GRID_FROM = 300  # nodes from which the grid variant (repulsion between nearby nodes only) is used
_WORK_PER_CALL = 4e6  # node pairs (or grid neighbours) one igraph call may handle before `cancel` is asked again
_RNG_LOCK = threading.Lock()


class LayoutCancelled(Exception):
    """The caller asked the layout to stop."""


def igraph_module() -> ModuleType:
    """The igraph package (imported on first use)."""
    import igraph

    return igraph


@contextmanager
def seeded(seed: int) -> Iterator[ModuleType]:
    """igraph with its random numbers drawn from `seed`, for the duration of the block (one thread at a time)."""
    igraph = igraph_module()
    with _RNG_LOCK:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            yield igraph
        finally:
            igraph.set_random_number_generator(random)


def check(cancel: Cancel | None) -> None:
    """Raise LayoutCancelled when the caller asked to stop."""
    if cancel is not None and cancel():
        raise LayoutCancelled


def fruchterman_reingold(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, *, seed: int,
                         start: np.ndarray | None = None, iterations: int = 300, temperature: float | None = None,
                         fixed: np.ndarray | None = None, cancel: Cancel | None = None) -> np.ndarray:
    """Positions (n×2) for the graph of `n` nodes and weighted edges `src`–`dst`, by igraph.

    `start` gives the first positions (else drawn from `seed`), `temperature` the largest
    first step (igraph's default: √n / 10); nodes where `fixed` is true do not move."""
    if n < 2:
        return np.zeros((n, 2)) if start is None else np.array(start, np.float64)
    rng = np.random.default_rng(seed)
    xy = np.array(start, np.float64) if start is not None else rng.uniform(-1.0, 1.0, (n, 2)) * np.sqrt(n) / 2
    grid = n >= GRID_FROM
    per_iteration = 20.0 * (n + len(src)) if grid else float(n) * n
    calls = int(np.clip(np.ceil(iterations * per_iteration / _WORK_PER_CALL), 1, iterations))
    hot = float(temperature if temperature is not None else np.sqrt(n) / 10)
    bounds: dict[str, list[float]] = {}
    if fixed is not None and fixed.any():  # fixed nodes never move: their bounds hold for every call
        x, y = xy[:, 0].tolist(), xy[:, 1].tolist()
        free = (~fixed).tolist()
        bounds = {"minx": [-np.inf if f else v for f, v in zip(free, x)],
                  "maxx": [np.inf if f else v for f, v in zip(free, x)],
                  "miny": [-np.inf if f else v for f, v in zip(free, y)],
                  "maxy": [np.inf if f else v for f, v in zip(free, y)]}
    with seeded(seed) as igraph:
        graph = igraph.Graph(n=n, edges=np.column_stack((src, dst)).tolist())
        weights = np.asarray(w, np.float64).tolist() if len(src) else None
        done = 0
        for call in range(calls):
            check(cancel)
            steps = (iterations * (call + 1)) // calls - done
            placed = graph.layout_fruchterman_reingold(
                weights=weights, niter=steps, start_temp=hot * (1.0 - done / iterations), seed=xy.tolist(),
                grid=grid, **bounds)
            xy = np.array(placed.coords, np.float64)
            done += steps
    if fixed is not None:
        xy[fixed] = np.asarray(start, np.float64)[fixed]
    return xy


def spacing(xy: np.ndarray) -> float:
    """A typical distance between neighbouring nodes: the side of the bounding box's area per node.

    Points on a line (two communities, a chain) have no area: their line's length shared out is
    taken instead (the area alone made them millions of units apart once scaled to spacing 1)."""
    if len(xy) < 2:
        return 1.0
    width, height = (xy.max(axis=0) - xy.min(axis=0)).tolist()
    area = max(width * height, max(width, height) ** 2 / len(xy))
    return max(float(np.sqrt(area / len(xy))), 1e-6)


def unit_length(xy: np.ndarray, src: np.ndarray, dst: np.ndarray) -> float:
    """The median edge length (1 when there are no edges)."""
    if len(src) == 0:
        return 1.0
    return max(float(np.median(np.linalg.norm(xy[src] - xy[dst], axis=1))), 1e-6)
