"""Graph layout for the explorer: a vectorised multilevel force layout, cached in the store.

The layout is a spring–electrical model (Hu 2005, the model behind Graphviz `sfdp`):
springs pull neighbours together (d²/K), every pair of nodes repels (C·K²/d), nodes move a
fixed step along their force and the step adapts to progress. Two things make it fast in
plain numpy at 10,000+ nodes:

* multilevel: the graph is coarsened (each node joins the basin of its highest-ranked
  neighbour, ranks random) until a few dozen nodes are left; each level starts from the
  coarser one, so the finest level only needs a few dozen iterations;
* repulsion by particle–mesh (the P3M method of N-body codes): masses are spread on a grid,
  convolved with the force kernel by FFT, and read back at the nodes; pairs in
  neighbouring cells get an exact short-range correction, so nodes do not overlap.

Every step is a whole-array operation: no Python loop runs per node or per edge.
Positions are cached in the store (`graph_layout`), so a reopened graph needs no layout,
and a grown graph is laid out incrementally (new nodes start next to their neighbours,
old nodes stay put). Communities for colouring come from the retrieval tables when they
were detected there, else from the same detection (`docatlas.core.graph.communities`), cached
likewise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from docatlas.core.graph import communities as detection
from docatlas.core.storage import communities as stored
from docatlas.core.storage.database import Store

SEED = 7
_C = 0.2  # relative strength of repulsion (Hu's C)
_EXACT_BELOW = 300  # node count under which repulsion is computed pair by pair
_HUB_MASS = 1.0  # ForceAtlas2-style: a node repels as 1 + degree, so hubs get room for their leaves

Cancel = Callable[[], bool]
_UNIT_KEY = "graph_layout_unit"  # in the meta table

class LayoutCancelled(Exception):
    """The caller asked the layout to stop."""


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
    rows = [(index[a], index[b], 1.0 if weights is None else weights[j])
            for j, (a, b) in enumerate(pairs) if a in index and b in index and a != b]
    if not rows:
        empty = np.zeros(0, np.int32)
        return GraphArrays(list(keys), empty, empty.copy(), np.zeros(0))
    src, dst, w = zip(*rows)
    return GraphArrays(list(keys), np.asarray(src, np.int32), np.asarray(dst, np.int32),
                       np.asarray(w, np.float64))


def read_graph(store: Store) -> GraphArrays:
    """The stored entities (sorted by key) and relations as arrays."""
    rows = stored.relation_edges(store)
    return graph_arrays(stored.entity_keys(store), [(s, t) for s, t, _ in rows], [max(w, 0.1) for _, _, w in rows])


# -- the force model ---------------------------------------------------------------------------


def _pair_forces(xy: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Exact repulsion, every pair (small graphs and coarse levels)."""
    diff = xy[:, None, :] - xy[None, :, :]
    d2 = np.einsum("ijk,ijk->ij", diff, diff)
    np.fill_diagonal(d2, np.inf)
    d2 = np.maximum(d2, 1e-6)
    return mass[:, None] * np.einsum("ij,ijk->ik", mass[None, :] / d2, diff)


class _Mesh:
    """Particle–mesh repulsion on a G×G grid with a short-range pair correction."""

    def __init__(self, n: int):
        self.g = int(min(256, max(32, 2 ** np.ceil(np.log2(np.sqrt(n) * 1.2)))))
        size = 2 * self.g
        offsets = np.fft.fftfreq(size, 1.0 / size).astype(np.float32)  # 0, 1, …, -1 (wrapped)
        ox, oy = np.meshgrid(offsets, offsets, indexing="ij")
        r2 = ox * ox + oy * oy + 1.0  # Plummer-softened by one cell
        self.kx = np.fft.rfft2(ox / r2)
        self.ky = np.fft.rfft2(oy / r2)

    def forces(self, xy: np.ndarray, mass: np.ndarray) -> np.ndarray:
        """Repulsion on every node: Σ_j m_i m_j (x_i − x_j) / |x_i − x_j|²."""
        g = self.g
        lo = xy.min(axis=0)
        h = max(float((xy.max(axis=0) - lo).max()), 1e-9) / (g - 1.001)
        cell = (xy - lo) / h
        base = np.minimum(np.floor(cell).astype(np.int64), g - 2)
        frac = (cell - base).astype(np.float32)
        fx, fy = frac[:, 0], frac[:, 1]
        weights = ((1 - fx) * (1 - fy), (1 - fx) * fy, fx * (1 - fy), fx * fy)
        corners = ((0, 0), (0, 1), (1, 0), (1, 1))
        size = 2 * g
        flat = [(base[:, 0] + a) * size + (base[:, 1] + b) for a, b in corners]
        grid = np.zeros(size * size, np.float32)
        m32 = mass.astype(np.float32)
        for idx, w in zip(flat, weights):
            grid += np.bincount(idx, w * m32, minlength=size * size)
        spectrum = np.fft.rfft2(grid.reshape(size, size))
        field_x = np.fft.irfft2(spectrum * self.kx, s=(size, size)).ravel()
        field_y = np.fft.irfft2(spectrum * self.ky, s=(size, size)).ravel()
        force = np.zeros_like(xy)
        for idx, w in zip(flat, weights):
            force[:, 0] += w * field_x[idx]
            force[:, 1] += w * field_y[idx]
        force *= (mass / h)[:, None]
        return force + _near_correction(xy, mass, base, h, g)


def _near_correction(xy: np.ndarray, mass: np.ndarray, base: np.ndarray, h: float, g: int) -> np.ndarray:
    """Exact minus softened repulsion for pairs in the same or adjacent cells."""
    n = len(xy)
    cell_id = base[:, 0] * g + base[:, 1]
    order = np.argsort(cell_id, kind="stable")
    starts = np.searchsorted(cell_id[order], np.arange(g * g + 1))
    firsts, seconds = [], []
    for dx, dy in ((0, 0), (1, -1), (1, 0), (1, 1), (0, 1)):
        ox, oy = base[:, 0] + dx, base[:, 1] + dy
        ok = (ox < g) & (oy >= 0) & (oy < g)
        i_nodes = np.nonzero(ok)[0]
        other = ox[ok] * g + oy[ok]
        lo = starts[other]
        counts = starts[other + 1] - lo
        total = int(counts.sum())
        if total == 0:
            continue
        ends = np.cumsum(counts)
        i = np.repeat(i_nodes, counts)
        j = order[np.repeat(lo - ends + counts, counts) + np.arange(total)]
        if dx == 0 and dy == 0:
            keep = j > i
            i, j = i[keep], j[keep]
        firsts.append(i)
        seconds.append(j)
    force = np.zeros_like(xy)
    if not firsts:
        return force
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    dx_, dy_ = xy[i, 0] - xy[j, 0], xy[i, 1] - xy[j, 1]
    d2 = np.maximum(dx_ * dx_ + dy_ * dy_, 1e-9)
    scale = mass[i] * mass[j] * (h * h) / (d2 * (d2 + h * h))
    both = np.concatenate((i, j))
    force[:, 0] = np.bincount(both, np.concatenate((scale * dx_, -scale * dx_)), minlength=n)
    force[:, 1] = np.bincount(both, np.concatenate((scale * dy_, -scale * dy_)), minlength=n)
    return force


def _spring_forces(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Attraction along edges: w·d² toward each other (K = 1)."""
    diff = xy[dst] - xy[src]
    pull = (w * np.sqrt(np.einsum("ij,ij->i", diff, diff)))[:, None] * diff
    n = len(xy)
    force = np.empty_like(xy)
    for axis in (0, 1):
        force[:, axis] = np.bincount(src, pull[:, axis], minlength=n) - np.bincount(dst, pull[:, axis], minlength=n)
    return force


def _relax(xy: np.ndarray, edges: tuple[np.ndarray, np.ndarray, np.ndarray], mass: np.ndarray, *,
           iterations: int, step: float, gravity: float = 0.0, movable: np.ndarray | None = None,
           cancel: Cancel | None = None) -> np.ndarray:
    """Move nodes along their forces with Hu's adaptive step until the layout settles."""
    n = len(xy)
    if n < 2:
        return xy
    src, dst, w = edges
    mesh = _Mesh(n) if n >= _EXACT_BELOW else None
    energy, progress, floor = np.inf, 0, step * 0.02
    for _ in range(iterations):
        if cancel is not None and cancel():
            raise LayoutCancelled
        repel = mesh.forces(xy, mass) if mesh is not None else _pair_forces(xy, mass)
        force = _C * repel + _spring_forces(xy, src, dst, w)
        if gravity:
            centre = (xy * mass[:, None]).sum(axis=0) / mass.sum()
            force -= gravity * mass[:, None] * (xy - centre)
        norm = np.sqrt(np.einsum("ij,ij->i", force, force))
        if movable is not None:
            norm[~movable] = 0.0
        moving = norm > 0
        xy[moving] += step * force[moving] / norm[moving, None]
        new_energy = float(np.dot(norm, norm))
        progress = progress + 1 if new_energy < energy else 0
        if progress >= 5:
            progress, step = 0, step / 0.9
        elif progress == 0:
            step *= 0.9
        energy = new_energy
        if step < floor:
            break
    return xy


# -- multilevel -----------------------------------------------------------------------------------


def _roots(parent: np.ndarray) -> np.ndarray:
    """Follow parent pointers to the roots (pointer jumping)."""
    while True:
        nxt = parent[parent]
        if np.array_equal(nxt, parent):
            return parent
        parent = nxt


def _coarsen(n: int, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Cluster of each node: the basin of the local rank maximum its best neighbours lead to."""
    rank = rng.permutation(n)
    by_rank = np.empty(n, np.int64)
    by_rank[rank] = np.arange(n)
    top = rank.copy()
    np.maximum.at(top, src, rank[dst])
    np.maximum.at(top, dst, rank[src])
    roots, cluster = np.unique(_roots(by_rank[top]), return_inverse=True)
    return cluster.astype(np.int64), len(roots)


def _coarse_edges(cluster: np.ndarray, count: int, src: np.ndarray, dst: np.ndarray,
                  w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = cluster[src], cluster[dst]
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    codes, inverse = np.unique(lo * count + hi, return_inverse=True)
    return codes // count, codes % count, np.bincount(inverse, w[keep])


def _multilevel(n: int, edges: tuple[np.ndarray, np.ndarray, np.ndarray], rng: np.random.Generator, *,
                gravity: float, cancel: Cancel | None) -> np.ndarray:
    """Coarsen, lay out the coarsest graph, then refine level by level."""
    degree = np.bincount(np.concatenate(edges[:2]), minlength=n)
    levels = [(*edges, 1.0 + _HUB_MASS * degree)]
    clusters: list[np.ndarray] = []
    while len(levels[-1][3]) > 60 and len(levels) < 16:
        s, d, w, mass = levels[-1]
        cluster, count = _coarsen(len(mass), s, d, rng)
        if count > 0.8 * len(mass):
            break
        clusters.append(cluster)
        levels.append((*_coarse_edges(cluster, count, s, d, w), np.bincount(cluster, mass)))
    s, d, w, mass = levels[-1]
    xy = rng.normal(0.0, np.sqrt(len(mass)), (len(mass), 2))
    xy = _relax(xy, (s, d, w), mass, iterations=400, step=1.0, gravity=gravity, cancel=cancel)
    for level in range(len(levels) - 2, -1, -1):
        s, d, w, mass = levels[level]
        cs, cd = levels[level + 1][0], levels[level + 1][1]
        spread = 0.4 * _unit(xy, cs, cd)
        xy = xy[clusters[level]] + spread * rng.normal(0.0, 1.0, (len(mass), 2))
        xy = _relax(xy, (s, d, w), mass, iterations=80 if level == 0 else 60, step=spread,
                    gravity=gravity, cancel=cancel)
    return xy


def spacing(xy: np.ndarray) -> float:
    """A typical distance between neighbouring nodes: the side of the bounding box's area per node."""
    if len(xy) < 2:
        return 1.0
    extent = xy.max(axis=0) - xy.min(axis=0)
    return max(float(np.sqrt(max(extent[0], 1e-9) * max(extent[1], 1e-9) / len(xy))), 1e-6)


def _unit(xy: np.ndarray, src: np.ndarray, dst: np.ndarray) -> float:
    """The median edge length (1 when there are no edges)."""
    if len(src) == 0:
        return 1.0
    return max(float(np.median(np.linalg.norm(xy[src] - xy[dst], axis=1))), 1e-6)


# -- components and packing -------------------------------------------------------------------


def components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Connected component of each node, numbered by size (0 = largest)."""
    parent = np.arange(n)
    while len(src):
        a, b = parent[src], parent[dst]
        split = a != b
        if not split.any():
            break
        np.minimum.at(parent, np.maximum(a, b)[split], np.minimum(a, b)[split])
        parent = _roots(parent)
    _, label, sizes = np.unique(parent, return_inverse=True, return_counts=True)
    order = np.argsort(-sizes, kind="stable")
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


def _subgraph(nodes: np.ndarray, n: int, src: np.ndarray, dst: np.ndarray,
              w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges among `nodes`, renumbered 0..len(nodes)-1."""
    local = np.full(n, -1)
    local[nodes] = np.arange(len(nodes))
    keep = (local[src] >= 0) & (local[dst] >= 0)
    return local[src[keep]], local[dst[keep]], w[keep]


def _prepared(graph: GraphArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = graph.weights / max(float(np.median(graph.weights)), 1e-9) if len(graph.weights) else graph.weights
    return graph.sources.astype(np.int64), graph.targets.astype(np.int64), np.clip(w, 0.2, 5.0)


def force_layout(graph: GraphArrays, *, seed: int = SEED, cancel: Cancel | None = None) -> np.ndarray:
    """Positions (n×2) for the whole graph: big components laid out one by one, the small ones
    together, then every component packed in rows, largest first."""
    n = graph.size
    rng = np.random.default_rng(seed)
    src, dst, w = _prepared(graph)
    if n == 0:
        return np.zeros((0, 2))
    label = components(n, src, dst)
    sizes = np.bincount(label)
    xy = np.zeros((n, 2))
    big = [c for c in range(min(len(sizes), 20)) if sizes[c] >= 50]
    small = np.nonzero((sizes[label] > 1) & ~np.isin(label, big))[0]
    for group, gravity in [*((np.nonzero(label == c)[0], 0.0) for c in big), (small, 0.05)]:
        if len(group):
            xy[group] = _multilevel(len(group), _subgraph(group, n, src, dst, w), rng, gravity=gravity, cancel=cancel)
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
    src, dst, w = _prepared(graph)
    placed = ~new
    unit = _unit(np.nan_to_num(xy), src[placed[src] & placed[dst]], dst[placed[src] & placed[dst]])
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
        sub = GraphArrays([graph.keys[i] for i in rest], *_subgraph(rest, n, src, dst, w))
        part = force_layout(sub, seed=seed, cancel=cancel)
        old = xy[~new]
        part_lo, part_hi = part.min(axis=0), part.max(axis=0)
        corner = np.array([old[:, 0].max() + 3 * unit, old[:, 1].min()]) if len(old) else np.zeros(2)
        xy[rest] = part - part_lo + corner
        del part_hi
    if settle.any():
        mass = 1.0 + _HUB_MASS * np.bincount(np.concatenate((src, dst)), minlength=n)
        xy = _relax(xy, (src, dst, w), mass, iterations=60, step=0.3 * unit, movable=settle, cancel=cancel)
    return xy


# -- the cache in the store -------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutResult:
    """Positions for every node of a graph, and how they were obtained."""

    xy: np.ndarray  # n×2, in layout units
    placed: int  # nodes that had no cached position
    seconds: float  # time spent laying out (0 when everything came from the cache)
    unit: float = 1.0  # typical nearest-neighbour distance, fixed when the layout was made (the view's scale)


def load_positions(store: Store) -> dict[str, tuple[float, float]]:
    """Cached positions by entity key."""
    return stored.positions(store)


def save_positions(store: Store, keys: list[str], xy: np.ndarray) -> None:
    """Cache positions; rows of keys no longer in the graph stay (an undone merge brings them back)."""
    stored.save_positions(store, keys, xy[:, 0].tolist(), xy[:, 1].tolist())


def clear_positions(store: Store) -> None:
    """Forget every cached position (the next layout starts from scratch)."""
    stored.clear_positions(store)


def cached_layout(store: Store, graph: GraphArrays, *, cancel: Cancel | None = None) -> LayoutResult:
    """Positions for `graph`: from the cache, extended for new nodes, and cached again."""
    cached = load_positions(store)
    known = np.array([cached.get(k, (np.nan, np.nan)) for k in graph.keys], np.float64).reshape(-1, 2)
    missing = int(np.isnan(known).any(axis=1).sum())
    unit = float(store.get_meta(_UNIT_KEY) or 0.0)
    if missing == 0 and unit > 0:
        return LayoutResult(known, 0, 0.0, unit)
    started = time.perf_counter()
    if missing == 0:
        xy = known
    elif missing == graph.size:
        xy = force_layout(graph, cancel=cancel)
    else:
        xy = extend_layout(graph, known, cancel=cancel)
    seconds = time.perf_counter() - started
    if missing == graph.size or unit <= 0:
        unit = nearest_spacing(xy)
        store.set_meta(_UNIT_KEY, repr(unit))
    save_positions(store, graph.keys, xy)
    return LayoutResult(xy, missing, seconds, unit)


def nearest_spacing(xy: np.ndarray, sample: int = 400, seed: int = SEED) -> float:
    """The median distance from a node to its nearest other node (over a sample of nodes)."""
    n = len(xy)
    if n < 2:
        return 1.0
    picked = np.random.default_rng(seed).choice(n, min(n, sample), replace=False)
    centred = xy - xy.mean(axis=0)
    a = centred[picked]
    d2 = (a * a).sum(axis=1)[:, None] + (centred * centred).sum(axis=1)[None, :] - 2.0 * a @ centred.T
    d2[np.arange(len(picked)), picked] = np.inf
    nearest = d2.min(axis=1)
    finite = nearest[np.isfinite(nearest) & (nearest > 1e-18)]
    return max(float(np.sqrt(np.median(finite))), 1e-9) if len(finite) else 1.0


# -- communities for colouring ----------------------------------------------------------------


@dataclass(frozen=True)
class Communities:
    """Community of each node (-1: none), numbered by size, largest first, and their titles."""

    labels: np.ndarray
    titles: list[str]


def _numbered(graph: GraphArrays, groups: list[tuple[list[str], str]]) -> Communities:
    index = {k: i for i, k in enumerate(graph.keys)}
    groups = [(g, t) for g, t in groups if sum(k in index for k in g) > 1]
    groups.sort(key=lambda gt: -sum(k in index for k in gt[0]))
    labels = np.full(graph.size, -1, np.int64)
    titles = []
    for number, (members, title) in enumerate(groups):
        labels[[index[k] for k in members if k in index]] = number
        titles.append(title or f"Community {number + 1}")
    return Communities(labels, titles)


def communities(store: Store, graph: GraphArrays, *, recompute: bool = False, detect: bool = True) -> Communities:
    """Communities for colouring: those detected for retrieval when present, else the same
    detection (`docatlas.core.graph.communities`) run here on the stored relations.

    Results are cached; nodes new since then join their neighbours' most common
    community, and detection runs again only when more than a fifth of the nodes are new
    (never with `detect=False`: then only what is stored is used).
    """
    for_retrieval = stored.stored_members(store)
    if for_retrieval and not recompute:
        groups: dict[int, tuple[list[str], str]] = {}
        for m in for_retrieval:
            groups.setdefault(m.community_id, ([], m.title))[0].append(m.key)
        return _numbered(graph, list(groups.values()))
    cached = stored.view_communities(store)
    unknown = [k for k in graph.keys if k not in cached]
    if detect and (recompute or not cached or len(unknown) > 0.2 * graph.size):
        cached = {k: number for number, group in enumerate(detection.detect(store)) for k in group}
        stored.replace_view_communities(store, cached)
    labels = np.array([cached.get(k, -1) for k in graph.keys], np.int64)
    _adopt(labels, graph)
    by_group: dict[int, list[str]] = {}
    for key, label in zip(graph.keys, labels.tolist()):
        if label >= 0:
            by_group.setdefault(label, []).append(key)
    return _numbered(graph, [(members, "") for members in by_group.values()])


def _adopt(labels: np.ndarray, graph: GraphArrays) -> None:
    """Unlabelled nodes take the most common label among their labelled neighbours (in place)."""
    lonely = labels < 0
    if not lonely.any() or len(graph.sources) == 0:
        return
    a = np.concatenate((graph.sources, graph.targets))
    b = np.concatenate((graph.targets, graph.sources))
    ok = lonely[a] & (labels[b] >= 0)
    if not ok.any():
        return
    pairs, counts = np.unique(np.stack((a[ok], labels[b[ok]]), axis=1), axis=0, return_counts=True)
    order = np.lexsort((-counts, pairs[:, 0]))
    first = np.unique(pairs[order, 0], return_index=True)[1]
    chosen = pairs[order][first]
    labels[chosen[:, 0]] = chosen[:, 1]
