"""Community-first layout: the graph of communities is laid out first, then each community in its region.

So colouring by community shows groups in space. Steps:

1. every community big enough (`MIN_MEMBERS`) is laid out by itself (`placement.force_layout`:
   igraph's Fruchterman–Reingold, components packed), scaled so its typical node spacing is 1,
   and given the radius of a disc that holds it; the nodes in no such community are laid out
   together as one more group;
2. the graph of the groups (one node per group, edges weighted by the relations between
   them) is laid out with the same force engine, then spread so that no two discs overlap
   (vectorised separation rounds over the pairs of discs near each other) and pulled
   together again as far as they allow;
3. each node sits at its group's centre plus its place inside the group.
"""

from __future__ import annotations

import numpy as np

from docatlas.core.graph.forces import Cancel, check, fruchterman_reingold
from docatlas.core.graph.placement import SEED, GraphArrays, force_layout, prepared, spacing

MIN_MEMBERS = 4  # smaller communities join the group of the rest
GAP = 2.0  # node spacings between two community discs
_SEPARATION_ROUNDS = 80
_COMPACTION_ROUNDS = 6
# force iterations inside a community: on the bench graph's communities 300 gave the same ratio of edge
# length to distance between nodes (0.39-0.40) in twice the time
INNER_ITERATIONS = 150
_PAIRS_EVERY = 8  # separation rounds between two searches for the discs near each other


def _normalised(xy: np.ndarray) -> tuple[np.ndarray, float]:
    """`xy` centred, scaled to spacing 1, and the radius of the disc that holds it."""
    if len(xy) == 1:
        return np.zeros((1, 2)), 0.5
    centred = xy - (xy.min(axis=0) + xy.max(axis=0)) / 2
    centred = centred / spacing(centred)
    return centred, float(np.linalg.norm(centred, axis=1).max()) + 0.5


def _close_pairs(centres: np.ndarray, radii: np.ndarray, slack: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of discs (i < j) nearer than their radii, GAP and `slack` (the ones that may touch soon)."""
    i, j = np.triu_indices(len(centres), 1)
    near = np.hypot(*(centres[i] - centres[j]).T) < radii[i] + radii[j] + GAP + slack
    return i[near], j[near]


def _separate(centres: np.ndarray, radii: np.ndarray, cancel: Cancel | None) -> np.ndarray:
    """Move discs apart until none overlaps another (and by at least GAP), bigger discs moving less.

    Only pairs near each other are pushed; they are found again every `_PAIRS_EVERY` rounds."""
    k = len(centres)
    if k < 2:
        return centres
    mass = np.maximum(radii ** 2, 1e-9)
    slack = 2.0 * float(np.median(radii)) + GAP
    for round_ in range(_SEPARATION_ROUNDS):
        if round_ % _PAIRS_EVERY == 0:
            check(cancel)
            i, j = _close_pairs(centres, radii, slack)
        diff = centres[i] - centres[j]
        dist = np.hypot(diff[:, 0], diff[:, 1]) + 1e-9
        push = np.clip(radii[i] + radii[j] + GAP - dist, 0.0, None)
        if not len(push) or push.max() < 1e-3:
            if round_ % _PAIRS_EVERY == 0:
                break
            continue
        step = (push / dist / (mass[i] + mass[j]))[:, None] * diff * 0.55
        moves = np.zeros_like(centres)
        for axis in (0, 1):
            moves[:, axis] = (np.bincount(i, step[:, axis] * mass[j], minlength=k)
                              - np.bincount(j, step[:, axis] * mass[i], minlength=k))
        centres = centres + moves
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
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(count + 1))
    local = np.empty(n, np.int64)  # a node's number inside its group
    local[order] = np.arange(n) - starts[group[order]]
    inside = np.nonzero(group[src] == group[dst])[0]
    inside = inside[np.argsort(group[src[inside]], kind="stable")]
    edge_starts = np.searchsorted(group[src[inside]], np.arange(count + 1))
    for g in range(count):
        check(cancel)
        members = order[starts[g]:starts[g + 1]]
        if len(members) == 0:
            continue
        edges = inside[edge_starts[g]:edge_starts[g + 1]]
        sub = GraphArrays([graph.keys[i] for i in members], local[src[edges]], local[dst[edges]], w[edges])
        inner[members], radii[g] = _normalised(force_layout(sub, seed=seed + g, iterations=INNER_ITERATIONS,
                                                             cancel=cancel))
    sizes = np.bincount(group, minlength=count)
    radii[sizes == 0] = 0.0
    quotient = _group_graph(group, count, src, dst, w)
    centres = fruchterman_reingold(count, quotient.sources, quotient.targets, quotient.weights, seed=seed,
                                   cancel=cancel)
    centres = centres / max(spacing(centres), 1e-9) * 2.0 * float(np.median(radii[sizes > 0]))
    centres = _separate(centres, radii, cancel)
    for _ in range(_COMPACTION_ROUNDS):  # pull the discs together as far as they allow
        middle = (centres * sizes[:, None]).sum(axis=0) / sizes.sum()
        centres = _separate(middle + 0.85 * (centres - middle), radii, cancel)
    return centres[group] + inner
