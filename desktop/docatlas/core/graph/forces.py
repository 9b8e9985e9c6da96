"""The force engine of the explorer's layout: a vectorised multilevel spring–electrical model.

The model is Hu's (2005, the one behind Graphviz `sfdp`): springs pull neighbours
together (d²/K), every pair of nodes repels (C·K²/d), nodes move a fixed step along their
force and the step adapts to progress. Two things make it fast in plain numpy at 10,000+
nodes:

* multilevel: the graph is coarsened (each node joins the basin of its highest-ranked
  neighbour, ranks random) until a few dozen nodes are left; each level starts from the
  coarser one, so the finest level only needs a few dozen iterations;
* repulsion by particle–mesh (the P3M method of N-body codes): masses are spread on a grid,
  convolved with the force kernel by FFT, and read back at the nodes; pairs in
  neighbouring cells get an exact short-range correction, so nodes do not overlap.

Every step is a whole-array operation: no Python loop runs per node or per edge.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_C = 0.2  # relative strength of repulsion (Hu's C)
_EXACT_BELOW = 300  # node count under which repulsion is computed pair by pair
HUB_MASS = 1.0  # ForceAtlas2-style: a node repels as 1 + degree, so hubs get room for their leaves

Cancel = Callable[[], bool]


class LayoutCancelled(Exception):
    """The caller asked the layout to stop."""


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


def relax(xy: np.ndarray, edges: tuple[np.ndarray, np.ndarray, np.ndarray], mass: np.ndarray, *,
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


def roots(parent: np.ndarray) -> np.ndarray:
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
    found, cluster = np.unique(roots(by_rank[top]), return_inverse=True)
    return cluster.astype(np.int64), len(found)


def _coarse_edges(cluster: np.ndarray, count: int, src: np.ndarray, dst: np.ndarray,
                  w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = cluster[src], cluster[dst]
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    codes, inverse = np.unique(lo * count + hi, return_inverse=True)
    return codes // count, codes % count, np.bincount(inverse, w[keep])


def multilevel(n: int, edges: tuple[np.ndarray, np.ndarray, np.ndarray], rng: np.random.Generator, *,
                gravity: float, cancel: Cancel | None) -> np.ndarray:
    """Coarsen, lay out the coarsest graph, then refine level by level."""
    degree = np.bincount(np.concatenate(edges[:2]), minlength=n)
    levels = [(*edges, 1.0 + HUB_MASS * degree)]
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
    xy = relax(xy, (s, d, w), mass, iterations=400, step=1.0, gravity=gravity, cancel=cancel)
    for level in range(len(levels) - 2, -1, -1):
        s, d, w, mass = levels[level]
        cs, cd = levels[level + 1][0], levels[level + 1][1]
        spread = 0.4 * unit_length(xy, cs, cd)
        xy = xy[clusters[level]] + spread * rng.normal(0.0, 1.0, (len(mass), 2))
        xy = relax(xy, (s, d, w), mass, iterations=80 if level == 0 else 60, step=spread,
                    gravity=gravity, cancel=cancel)
    return xy


def spacing(xy: np.ndarray) -> float:
    """A typical distance between neighbouring nodes: the side of the bounding box's area per node."""
    if len(xy) < 2:
        return 1.0
    extent = xy.max(axis=0) - xy.min(axis=0)
    return max(float(np.sqrt(max(extent[0], 1e-9) * max(extent[1], 1e-9) / len(xy))), 1e-6)


def unit_length(xy: np.ndarray, src: np.ndarray, dst: np.ndarray) -> float:
    """The median edge length (1 when there are no edges)."""
    if len(src) == 0:
        return 1.0
    return max(float(np.median(np.linalg.norm(xy[src] - xy[dst], axis=1))), 1e-6)
