"""A node's local graph: its neighbourhood to a depth, laid out by itself (Qt-free; run on a reader thread)."""

from __future__ import annotations

import numpy as np

from docatlas.core.graph.layout import Cancel, GraphArrays, force_layout, nearest_spacing
from docatlas.gui.graph.model import SPACING, GraphModel
from docatlas.gui.graph.query import neighbourhood

LOCAL_LIMIT = 1500  # nodes in a local graph at most: the root and its best-connected neighbours


def local_nodes(model: GraphModel, root: int, depth: int, limit: int = LOCAL_LIMIT) -> np.ndarray:
    """Indices of the nodes within `depth` of `root` (root first), the best connected kept when too many."""
    near = np.nonzero(neighbourhood(model, [root], depth))[0]
    near = near[near != root]
    if len(near) > limit - 1:
        near = near[np.argsort(-model.degree[near], kind="stable")[:limit - 1]]
    return np.concatenate(([root], np.sort(near))).astype(np.int64)


def local_graph(model: GraphModel, root: int, depth: int, cancel: Cancel | None = None) -> tuple[GraphModel, int]:
    """The local graph as a model of its own (laid out afresh) and the root's index in it (0)."""
    nodes = local_nodes(model, root, depth)
    local = np.full(model.size, -1, np.int64)
    local[nodes] = np.arange(len(nodes))
    keep = (local[model.sources] >= 0) & (local[model.targets] >= 0)
    arrays = GraphArrays([model.keys[i] for i in nodes], local[model.sources[keep]].astype(np.int32),
                         local[model.targets[keep]].astype(np.int32), model.weights[keep])
    xy = force_layout(arrays, cancel=cancel)
    xy = (xy - xy[0]) * (SPACING * 1.6 / nearest_spacing(xy))
    return model.subgraph(nodes, xy), 0
