"""The one community detection: the explorer colours by it and retrieval writes reports on it.

Leiden (igraph, modularity, weighted, seeded) runs on each connected component by itself,
built in sorted order, so the same graph always gives the same partition and a change in
one part of the graph leaves the communities elsewhere as they were. Leiden's communities
are connected, which the community-first layout relies on to draw each one as a group.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np

from docatlas.core.graph.forces import seeded
from docatlas.core.storage import communities as stored
from docatlas.core.storage.database import Store

SEED = 7  # Leiden is randomised: a fixed seed keeps communities (and their reports) stable
MIN_WEIGHT = 1e-6  # a relation of weight 0 still joins its ends


def partition(edges: Iterable[tuple[str, str, float]], min_size: int = 2) -> list[list[str]]:
    """Communities of a graph given as weighted edges: largest first, members sorted.

    Components and communities smaller than `min_size` are left out; components of up to
    three nodes are one community each. A pair stated twice (either way round) is one edge,
    of the weight given last.
    """
    weight_of: dict[tuple[str, str], float] = {}
    for s, t, w in edges:
        if s != t:
            weight_of[(s, t) if s < t else (t, s)] = max(float(w), MIN_WEIGHT)
    keys = sorted({k for pair in weight_of for k in pair})
    index = {k: i for i, k in enumerate(keys)}
    pairs = sorted(weight_of)
    groups: list[list[str]] = []
    with seeded(SEED) as igraph:
        whole = igraph.Graph(n=len(keys), edges=[(index[s], index[t]) for s, t in pairs])
        whole.es["weight"] = [weight_of[p] for p in pairs]
        for component in whole.connected_components():
            if len(component) < min_size:
                continue
            nodes = sorted(component)
            if len(nodes) <= 3:
                groups.append([keys[i] for i in nodes])
                continue
            igraph.set_random_number_generator(random.Random(SEED))  # each component from the same seed
            found = whole.induced_subgraph(nodes).community_leiden(
                objective_function="modularity", weights="weight", n_iterations=2)
            members = np.asarray(nodes)
            groups += [[keys[i] for i in members[g]] for g in found if len(g) >= min_size]
    return sorted((sorted(g) for g in groups), key=lambda g: (-len(g), g[0]))


def detect(store: Store, min_size: int = 2) -> list[list[str]]:
    """Communities of the stored relation graph (see `partition`)."""
    return partition(stored.relation_edges(store), min_size)
