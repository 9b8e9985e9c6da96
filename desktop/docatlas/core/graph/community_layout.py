"""Community-first layout: the graph of communities is laid out first, then each community in its region.

So colouring by community shows groups in space. Steps:

1. every community big enough (`MIN_MEMBERS`) is laid out by itself (`placement.force_layout`),
   scaled so its typical node spacing is 1, and given the radius of a disc that holds it;
   the nodes in no such community are laid out together as one more group;
2. the graph of the groups (one node per group, edges weighted by the relations between
   them) is laid out with the same force engine, then spread so that no two discs overlap
   (a few vectorised separation rounds) and pulled together again as far as they allow;
3. each node sits at its group's centre plus its place inside the group.
"""

from __future__ import annotations

import numpy as np

from docatlas.core.graph.forces import Cancel, LayoutCancelled
from docatlas.core.graph.placement import SEED, GraphArrays, force_layout, prepared, spacing, subgraph

MIN_MEMBERS = 4  # smaller communities join the group of the rest
GAP = 2.0  # node spacings between two community discs
_SEPARATION_ROUNDS = 80
_COMPACTION_ROUNDS = 6


def _normalised(xy: np.ndarray) -> tuple[np.ndarray, float]:
    """`xy` centred, scaled to spacing 1, and the radius of the disc that holds it."""
    if len(xy) == 1:
        return np.zeros((1, 2)), 0.5
    centred = xy - (xy.min(axis=0) + xy.max(axis=0)) / 2
    centred = centred / spacing(centred)
    return centred, float(np.linalg.norm(centred, axis=1).max()) + 0.5


def _separate(centres: np.ndarray, radii: np.ndarray, cancel: Cancel | None) -> np.ndarray:
    """Move discs apart until none overlaps another (and by at least GAP), bigger discs moving less."""
    k = len(centres)
    if k < 2:
        return centres
    mass = radii ** 2
    for _ in range(_SEPARATION_ROUNDS):
        if cancel is not None and cancel():
            raise LayoutCancelled
        diff = centres[:, None, :] - centres[None, :, :]
        dist = np.sqrt((diff ** 2).sum(axis=2)) + 1e-9
        need = radii[:, None] + radii[None, :] + GAP
        push = np.clip(need - dist, 0.0, None)
        np.fill_diagonal(push, 0.0)
        if push.max() < 1e-3:
            break
        share = mass[None, :] / (mass[:, None] + mass[None, :])
        centres = centres + ((push * share / dist)[:, :, None] * diff).sum(axis=1) * 0.55
    return centres


def _group_graph(group: np.ndarray, count: int, src: np.ndarray, dst: np.ndarray,
                 w: np.ndarray) -> GraphArrays:
    """The graph of the groups: an edge between two groups weighted by the relations between them."""
    a, b = group[src], group[dst]
    across = a != b
    lo, hi = np.minimum(a[across], b[across]), np.maximum(a[across], b[across])
    codes, inverse = np.unique(lo * count + hi, return_inverse=True)
    weight = np.bincount(inverse, w[across]) if len(codes) else np.zeros(0)
    return GraphArrays([str(i) for i in range(count)], (codes // count).astype(np.int32),
                       (codes % count).astype(np.int32), np.log1p(weight))


def groups_of(labels: np.ndarray) -> np.ndarray:
    """Group of each node: its community when it has at least MIN_MEMBERS, else one shared last group."""
    labels = np.asarray(labels, np.int64)
    sizes = np.bincount(labels[labels >= 0]) if (labels >= 0).any() else np.zeros(0, np.int64)
    kept = np.nonzero(sizes >= MIN_MEMBERS)[0]
    number = np.full(max(len(sizes), 1), len(kept), np.int64)
    number[kept] = np.arange(len(kept))
    return np.where(labels >= 0, number[np.maximum(labels, 0)], len(kept))


def community_layout(graph: GraphArrays, labels: np.ndarray, *, seed: int = SEED,
                     cancel: Cancel | None = None) -> np.ndarray:
    """Positions (n×2) with each community together in a region of its own (`labels`: -1 for none)."""
    n = graph.size
    if n == 0:
        return np.zeros((0, 2))
    group = groups_of(labels)
    count = int(group.max()) + 1
    if count == 1:
        return force_layout(graph, seed=seed, cancel=cancel)
    src, dst, w = prepared(graph)
    inner = np.zeros((n, 2))
    radii = np.zeros(count)
    for g in range(count):
        members = np.nonzero(group == g)[0]
        if len(members) == 0:
            continue
        sub = GraphArrays([graph.keys[i] for i in members], *subgraph(members, n, src, dst, w))
        placed = force_layout(sub, seed=seed, cancel=cancel) if len(members) > 1 else np.zeros((1, 2))
        inner[members], radii[g] = _normalised(placed)
    sizes = np.bincount(group, minlength=count)
    radii[sizes == 0] = 0.0
    centres = force_layout(_group_graph(group, count, src, dst, w), seed=seed, cancel=cancel)
    centres = centres / max(spacing(centres), 1e-9) * 2.0 * float(np.median(radii[sizes > 0]))
    centres = _separate(centres, radii, cancel)
    for _ in range(_COMPACTION_ROUNDS):  # pull the discs together as far as they allow
        middle = (centres * sizes[:, None]).sum(axis=0) / sizes.sum()
        centres = _separate(middle + 0.85 * (centres - middle), radii, cancel)
    return centres[group] + inner
