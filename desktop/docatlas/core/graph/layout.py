"""Graph layout for the explorer: community-first placement, cached in the store, with pins.

The parts: `forces` (igraph's Fruchterman–Reingold, seeded, in short calls), `placement` (components laid
out and packed, a grown graph extended), `community_layout` (the graph of communities
first, then each community inside its region). This module is what the explorer calls:
positions are cached in the store (`graph_layout`), so a reopened graph needs no layout,
and a grown graph is laid out incrementally (new nodes start next to their neighbours,
old nodes stay put). A node the user dragged is pinned: its position is saved, and a
re-layout keeps it where it was (the new layout is scaled and moved to fit the pins).
Communities (for the layout and for colouring) come from the retrieval tables when they
were detected there, else from the same detection (`docatlas.core.graph.communities`),
cached likewise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from docatlas.core.graph import communities as detection
from docatlas.core.graph.community_layout import community_layout
from docatlas.core.graph.forces import Cancel, LayoutCancelled
from docatlas.core.graph.placement import (
    SEED,
    GraphArrays,
    components,
    extend_layout,
    force_layout,
    graph_arrays,
    spacing,
)
from docatlas.core.storage import communities as stored
from docatlas.core.storage.database import Store

__all__ = ["Cancel", "Communities", "GraphArrays", "LayoutCancelled", "LayoutResult", "cached_layout", "communities",
           "community_layout", "components", "extend_layout", "force_layout", "graph_arrays", "nearest_spacing",
           "pin", "pinned", "read_graph", "spacing", "unpin_all"]

_UNIT_KEY = "graph_layout_unit"  # in the meta table


def read_graph(store: Store) -> GraphArrays:
    """The stored entities (sorted by key) and relations as arrays."""
    rows = stored.relation_edges(store)
    return graph_arrays(stored.entity_keys(store), [(s, t) for s, t, _ in rows], [max(w, 0.1) for _, _, w in rows])


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


def cached_layout(store: Store, graph: GraphArrays, *, relayout: bool = False,
                  cancel: Cancel | None = None) -> LayoutResult:
    """Positions for `graph`: from the cache, extended for new nodes, and cached again.

    With `relayout` the graph is laid out afresh (community-first), pinned nodes staying put."""
    cached = load_positions(store)
    unit = float(store.get_meta(_UNIT_KEY) or 0.0)
    held = {k: cached[k] for k in pinned(store) if k in cached} if relayout else {}
    if relayout:
        cached = {}
    known = np.array(list(map(cached.get, graph.keys, repeat((np.nan, np.nan)))), np.float64).reshape(-1, 2)
    missing = int(np.isnan(known).any(axis=1).sum())
    if missing == 0 and unit > 0:
        return LayoutResult(known, 0, 0.0, unit)
    started = time.perf_counter()
    if missing == 0:
        xy = known
    elif missing == graph.size:
        xy = community_layout(graph, communities(store, graph).labels, cancel=cancel)
    else:
        xy = extend_layout(graph, known, cancel=cancel)
    if held and unit > 0:
        xy = _hold_pins(xy, graph, held, unit)
    elif missing == graph.size or unit <= 0:
        unit = nearest_spacing(xy)
        store.set_meta(_UNIT_KEY, repr(unit))
    seconds = time.perf_counter() - started
    if relayout:
        clear_positions(store)
    save_positions(store, graph.keys, xy)
    return LayoutResult(xy, missing, seconds, unit)


def _hold_pins(xy: np.ndarray, graph: GraphArrays, held: dict[str, tuple[float, float]], unit: float) -> np.ndarray:
    """A fresh layout scaled and moved to fit the pinned nodes' old places (least squares), pins exact."""
    index = {k: i for i, k in enumerate(graph.keys)}
    rows = [index[k] for k in held if k in index]
    if not rows:
        return xy
    new = xy[rows]
    old = np.array([held[graph.keys[i]] for i in rows], np.float64)
    scale = unit / nearest_spacing(xy)
    if len(rows) >= 2:
        a, b = new - new.mean(axis=0), old - old.mean(axis=0)
        fitted = float((a * b).sum() / max((a * a).sum(), 1e-12))
        scale = fitted if fitted > 0 else scale
    out = (xy - new.mean(axis=0)) * scale + old.mean(axis=0)
    out[rows] = old
    return out


def pinned(store: Store) -> set[str]:
    """Keys of the nodes the user pinned (by dragging them)."""
    return stored.pinned_keys(store)


def pin(store: Store, key: str, x: float, y: float) -> None:
    """Pin a node at (x, y) in layout units: its position is saved and re-layouts keep it."""
    stored.save_positions(store, [key], [x], [y])
    stored.save_pinned_keys(store, pinned(store) | {key})


def unpin_all(store: Store) -> None:
    """Release every pin (positions stay until the next re-layout)."""
    stored.save_pinned_keys(store, set())


def nearest_spacing(xy: np.ndarray, sample: int = 400, seed: int = SEED) -> float:
    """The median distance from a node to its nearest other node (over a sample of nodes)."""
    n = len(xy)
    if n < 2:
        return 1.0
    picked = np.random.default_rng(seed).choice(n, min(n, sample), replace=False)
    centred = xy - xy.mean(axis=0)
    norms = (centred * centred).sum(axis=1)
    nearest = np.empty(len(picked))
    for lo in range(0, len(picked), 50):  # 50 rows of distances at a time: little memory at 100,000 nodes
        rows = picked[lo:lo + 50]
        d2 = norms[rows][:, None] + norms[None, :] - 2.0 * centred[rows] @ centred.T
        d2[np.arange(len(rows)), rows] = np.inf
        nearest[lo:lo + 50] = d2.min(axis=1)
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
    labels = np.fromiter(map(cached.get, graph.keys, repeat(-1)), np.int64, graph.size)
    _adopt(labels, graph)
    return _by_size(labels)


def _by_size(labels: np.ndarray) -> Communities:
    """`labels` renumbered by size, largest first (ties: the one with the first node first); single nodes: -1."""
    found, first, inverse, sizes = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
    kept = (found >= 0) & (sizes > 1)
    ranked = np.nonzero(kept)[0][np.lexsort((first[kept], -sizes[kept]))]
    number = np.full(len(found), -1, np.int64)
    number[ranked] = np.arange(len(ranked))
    return Communities(number[inverse.reshape(-1)], [f"Community {i + 1}" for i in range(len(ranked))])


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
