"""The one community detection: the explorer colours by it and retrieval writes reports on it.

Louvain (weighted, seeded) runs on each connected component by itself, built in sorted
order, so the same graph always gives the same partition and a change in one part of the
graph leaves the communities elsewhere as they were.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from docatlas.core.storage import communities as stored
from docatlas.core.storage.database import Store

SEED = 7  # Louvain is randomised: a fixed seed keeps communities (and their reports) stable
MIN_WEIGHT = 1e-6  # a relation of weight 0 still joins its ends


def partition(edges: Iterable[tuple[str, str, float]], min_size: int = 2) -> list[list[str]]:
    """Communities of a graph given as weighted edges: largest first, members sorted.

    Components and communities smaller than `min_size` are left out; components of up to
    three nodes are one community each.
    """
    whole = nx.Graph()
    whole.add_weighted_edges_from((s, t, max(float(w), MIN_WEIGHT)) for s, t, w in edges)
    groups: list[list[str]] = []
    for component in nx.connected_components(whole):
        if len(component) < min_size:
            continue
        nodes = sorted(component)
        part = nx.Graph()
        part.add_nodes_from(nodes)
        part.add_weighted_edges_from(sorted((s, t, d["weight"]) for s, t, d in whole.edges(nodes, data=True)))
        found = nx.community.louvain_communities(part, weight="weight", seed=SEED) if len(nodes) > 3 else [nodes]
        groups += [sorted(g) for g in found if len(g) >= min_size]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def detect(store: Store, min_size: int = 2) -> list[list[str]]:
    """Communities of the stored relation graph (see `partition`)."""
    return partition(stored.relation_edges(store), min_size)
