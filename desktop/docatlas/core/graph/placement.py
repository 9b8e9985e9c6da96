"""Whole-graph placement: the graph as arrays, components laid out and packed, a grown graph extended.

The force engine (igraph's Fruchterman–Reingold) is in `forces`; the community-first layout
the explorer uses is in `community_layout`, built from the pieces here.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from docatlas.core.graph.forces import Cancel, fruchterman_reingold, igraph_module, spacing, unit_length

SEED = 7


@dataclass(frozen=True)
class GraphArrays:
    """The relation graph as arrays: node keys and undirected edges by node index."""

    keys: list[str]
    sources: np.ndarray  # int32, one per edge
    targets: np.ndarray  # int32
    weights: np.ndarray  # float64

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.keys)


def graph_arrays(keys: list[str], pairs: list[tuple[str, str]], weights: list[float] | None = None) -> GraphArrays:
    """Arrays for nodes `keys` and edges `pairs` (pairs naming unknown keys are dropped)."""
    index = {k: i for i, k in enumerate(keys)}
    ends = tuple(zip(*pairs)) or ((), ())
    src, dst = (np.fromiter(map(index.get, end, repeat(-1)), np.int64, len(pairs)) for end in ends)
    w = np.ones(len(pairs)) if weights is None else np.asarray(weights, np.float64).reshape(len(pairs))
    keep = (src >= 0) & (dst >= 0) & (src != dst)
    return GraphArrays(list(keys), src[keep].astype(np.int32), dst[keep].astype(np.int32), w[keep])


# -- components and packing -------------------------------------------------------------------


def components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Connected component of each node, numbered by size (0 = largest; ties by their first node)."""
    if n == 0:
        return np.zeros(0, np.int64)
    graph = igraph_module().Graph(n=n, edges=np.column_stack((src, dst)).tolist())
    label = np.asarray(graph.connected_components().membership, np.int64)
    order = np.argsort(-np.bincount(label), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[label]


def _pack(xy: np.ndarray, label: np.ndarray, unit: float) -> np.ndarray:
    """Shelf-pack components (largest first) in rows; single nodes fill a grid at the end."""
    count = int(label.max()) + 1 if len(label) else 0
    sizes = np.bincount(label, minlength=count)
    lo = np.full((count, 2), np.inf)
    hi = np.full((count, 2), -np.inf)
    for axis in (0, 1):
        np.minimum.at(lo[:, axis], label, xy[:, axis])
        np.maximum.at(hi[:, axis], label, xy[:, axis])
    gap = 3.0 * unit
    boxes = [(int(c), *(hi[c] - lo[c] + gap)) for c in range(count) if sizes[c] > 1]
    singles = np.nonzero(sizes == 1)[0]
    if len(singles):
        side = int(np.ceil(np.sqrt(len(singles))))
        boxes.append((-1, side * 1.5 * unit + gap, int(np.ceil(len(singles) / side)) * 1.5 * unit + gap))
    width_limit = max(max((b[1] for b in boxes), default=0.0), np.sqrt(sum(b[1] * b[2] for b in boxes)) * 1.2)
    offsets = np.zeros((count, 2))
    x = y = row = 0.0
    for c, w, h in boxes:
        if x > 0 and x + w > width_limit:
            x, y, row = 0.0, y + row, 0.0
        if c >= 0:
            offsets[c] = (x, y) - lo[c]
        else:
            grid = np.arange(len(singles))
            offsets[singles, 0] = x + (grid % side) * 1.5 * unit - lo[singles, 0]
            offsets[singles, 1] = y + (grid // side) * 1.5 * unit - lo[singles, 1]
        x, row = x + w, max(row, h)
    out = xy + offsets[label]
    return out - (out.min(axis=0) + out.max(axis=0)) / 2


def subgraph(nodes: np.ndarray, n: int, src: np.ndarray, dst: np.ndarray,
              w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges among `nodes`, renumbered 0..len(nodes)-1."""
    local = np.full(n, -1)
    local[nodes] = np.arange(len(nodes))
    keep = (local[src] >= 0) & (local[dst] >= 0)
    return local[src[keep]], local[dst[keep]], w[keep]


def prepared(graph: GraphArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = graph.weights / max(float(np.median(graph.weights)), 1e-9) if len(graph.weights) else graph.weights
    return graph.sources.astype(np.int64), graph.targets.astype(np.int64), np.clip(w, 0.2, 5.0)


def force_layout(graph: GraphArrays, *, seed: int = SEED, iterations: int = 300,
                 cancel: Cancel | None = None) -> np.ndarray:
    """Positions (n×2) for the whole graph: big components laid out one by one, the small ones
    together, then every component packed in rows, largest first."""
    n = graph.size
    src, dst, w = prepared(graph)
    if n == 0:
        return np.zeros((0, 2))
    label = components(n, src, dst)
    sizes = np.bincount(label)
    xy = np.zeros((n, 2))
    big = [c for c in range(min(len(sizes), 20)) if sizes[c] >= 50]
    small = np.nonzero((sizes[label] > 1) & ~np.isin(label, big))[0]
    for number, group in enumerate([*(np.nonzero(label == c)[0] for c in big), small]):
        if len(group):
            xy[group] = fruchterman_reingold(len(group), *subgraph(group, n, src, dst, w), seed=seed + number,
                                             iterations=iterations, cancel=cancel)
    return _pack(xy, label, spacing(xy[sizes[label] > 1]))


def extend_layout(graph: GraphArrays, known: np.ndarray, *, seed: int = SEED,
                  cancel: Cancel | None = None) -> np.ndarray:
    """Positions for a grown graph: rows of `known` that are NaN are new nodes.

    New nodes start at the mean of their placed neighbours and settle while old nodes stay
    put; new nodes with no path to old ones are laid out by themselves, beside the rest.
    """
    n = graph.size
    xy = np.array(known, np.float64, copy=True).reshape(n, 2)
    new = np.isnan(xy).any(axis=1)
    if not new.any():
        return xy
    if new.sum() > 0.5 * n:
        return force_layout(graph, seed=seed, cancel=cancel)
    rng = np.random.default_rng(seed)
    src, dst, w = prepared(graph)
    placed = ~new
    unit = unit_length(np.nan_to_num(xy), src[placed[src] & placed[dst]], dst[placed[src] & placed[dst]])
    while True:
        total = np.zeros((n, 2))
        count = np.zeros(n)
        for a, b in ((src, dst), (dst, src)):
            ok = placed[b] & ~placed[a]
            count += np.bincount(a[ok], minlength=n)
            for axis in (0, 1):
                total[:, axis] += np.bincount(a[ok], xy[b[ok], axis], minlength=n)
        ready = count > 0
        if not ready.any():
            break
        xy[ready] = total[ready] / count[ready, None] + 0.5 * unit * rng.normal(0.0, 1.0, (int(ready.sum()), 2))
        placed |= ready
    settle = new & placed
    rest = np.nonzero(~placed)[0]
    if len(rest):
        sub = GraphArrays([graph.keys[i] for i in rest], *subgraph(rest, n, src, dst, w))
        part = force_layout(sub, seed=seed, cancel=cancel)
        old = xy[~new]
        part_lo, part_hi = part.min(axis=0), part.max(axis=0)
        corner = np.array([old[:, 0].max() + 3 * unit, old[:, 1].min()]) if len(old) else np.zeros(2)
        xy[rest] = part - part_lo + corner
        del part_hi
    if settle.any():
        xy = _settle(xy, settle, src, dst, w, unit, seed, cancel)
    return xy


def _settle(xy: np.ndarray, settle: np.ndarray, src: np.ndarray, dst: np.ndarray, w: np.ndarray, unit: float,
            seed: int, cancel: Cancel | None) -> np.ndarray:
    """Let the `settle` nodes find their places among their neighbours, which stay put."""
    n = len(xy)
    near = settle.copy()
    near[src[settle[dst]]] = True
    near[dst[settle[src]]] = True
    nodes = np.nonzero(near)[0]
    s, d, weights = subgraph(nodes, n, src, dst, w)
    scale = 2.0 / unit  # the engine's own length: an edge of about 2
    placed = fruchterman_reingold(len(nodes), s, d, weights, seed=seed, start=xy[nodes] * scale, iterations=60,
                                  temperature=0.5, fixed=~settle[nodes], cancel=cancel)
    out = xy.copy()
    out[nodes] = placed / scale
    return out
