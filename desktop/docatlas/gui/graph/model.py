"""The graph as the explorer holds it: arrays by node index, scene positions, provenance by document.

Qt-free and read-only once built (except `xy`, which a drag moves in place on the GUI
thread), so a worker thread builds it and hands it to the GUI thread whole. `load_model`
reads the store, reuses (or computes) the cached layout, and fills in communities when
they are at hand without running Leiden (`with_communities` adds them later).
"""

from __future__ import annotations

import gc
import io
import logging
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import compress, repeat

import numpy as np

from docatlas.core.base.concepts import CONCEPT
from docatlas.core.base.errors import StoreError
from docatlas.core.graph import layout
from docatlas.core.graph.layout import Cancel, Communities, GraphArrays
from docatlas.core.storage.database import Store
from docatlas.core.storage.graph_reads import GraphSnapshot, graph_snapshot, save_document_nodes

log = logging.getLogger(__name__)
SPACING = 24.0  # scene units between neighbouring nodes
MIN_RADIUS, MAX_RADIUS = 3.0, 24.0


def fold(text: str) -> str:
    """Text for matching: Unicode-normalised, accents dropped, case folded."""
    if text.isascii():  # nothing to normalise or drop: the same result, without a walk over every character
        return text.casefold().strip()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().strip()


@dataclass(frozen=True)
class GraphModel:
    """Nodes (entities) and edges (relations) by index, laid out in scene units."""

    keys: list[str]
    names: list[str]
    types: list[str]
    sources: np.ndarray  # edge endpoints, node indices
    targets: np.ndarray
    xy: np.ndarray  # n×2 scene positions
    community: np.ndarray  # community number per node, -1: none
    community_titles: list[str]
    documents: list[tuple[int, str]]  # (id, title)
    document_nodes: dict[int, np.ndarray]  # document id -> indices of the nodes it mentions
    layout_seconds: float = 0.0
    placed: int = 0  # nodes laid out now (not from the cache)
    weights: np.ndarray | None = None  # per edge (1 when not given)
    keywords: list[str] | None = None  # per edge
    mentions: np.ndarray | None = None  # per node (its degree when not given)
    scale: float = 1.0  # scene units per layout unit (positions are saved in layout units)
    pinned: frozenset[str] = frozenset()  # keys of the nodes the user pinned
    concept_nodes: np.ndarray | None = None  # per node: only the concept layer names it (not read by the model)
    concept_edges: np.ndarray | None = None  # per edge: only the concept layer links it (a shared sentence)
    degree: np.ndarray = field(init=False)
    radius: np.ndarray = field(init=False)  # by degree
    radius_by_mentions: np.ndarray = field(init=False)
    document_count: np.ndarray = field(init=False)  # documents mentioning each node
    type_names: list[str] = field(init=False)  # most common first
    type_index: np.ndarray = field(init=False)
    index: dict[str, int] = field(init=False)
    indptr: np.ndarray = field(init=False)  # neighbours of i: neighbours[indptr[i]:indptr[i + 1]]
    neighbours: np.ndarray = field(init=False)
    edge_of_neighbour: np.ndarray = field(init=False)  # the edge behind each entry of `neighbours`
    folded: list[str] = field(init=False)  # names as search compares them
    completions: list[str] = field(init=False)  # the search box's names: each once, in alphabetical order

    def __post_init__(self) -> None:
        n = len(self.keys)
        set_ = object.__setattr__
        ends = np.concatenate((self.sources, self.targets)).astype(np.int64)
        others = np.concatenate((self.targets, self.sources)).astype(np.int64)
        order = np.argsort(ends, kind="stable")
        set_(self, "degree", np.bincount(ends, minlength=n))
        set_(self, "indptr", np.concatenate(([0], np.cumsum(self.degree))))
        set_(self, "neighbours", others[order])
        set_(self, "edge_of_neighbour", np.tile(np.arange(len(self.sources)), 2)[order])
        if self.weights is None:
            set_(self, "weights", np.ones(len(self.sources)))
        if self.keywords is None:
            set_(self, "keywords", [""] * len(self.sources))
        if self.mentions is None:
            set_(self, "mentions", self.degree.copy())
        if self.concept_nodes is None:
            set_(self, "concept_nodes", np.zeros(n, bool))
        if self.concept_edges is None:
            set_(self, "concept_edges", np.zeros(len(self.sources), bool))
        set_(self, "radius", _radius(self.degree))
        set_(self, "radius_by_mentions", _radius(np.asarray(self.mentions)))
        count = np.zeros(n, np.int64)
        for nodes in self.document_nodes.values():
            count[nodes] += 1
        set_(self, "document_count", count)
        names, counts = np.unique(np.asarray(self.types, dtype=object), return_counts=True) if n else ([], [])
        ranked = [t for _, t in sorted(zip((-c for c in counts), names))]
        lookup = {t: i for i, t in enumerate(ranked)}
        set_(self, "type_names", ranked)
        set_(self, "type_index", np.array([lookup[t] for t in self.types], np.int64))
        set_(self, "index", {k: i for i, k in enumerate(self.keys)})
        set_(self, "folded", [fold(name) for name in self.names])
        set_(self, "completions", sorted(set(self.names), key=str.casefold))  # here: not on the GUI thread

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.keys)

    def radius_for(self, mode: str) -> np.ndarray:
        """Node radii by "degree" or by "mentions"."""
        return self.radius_by_mentions if mode == "mentions" else self.radius

    def subgraph(self, nodes: np.ndarray, xy: np.ndarray) -> GraphModel:
        """The graph among `nodes` (indices, in order) placed at `xy`, with its own numbering."""
        nodes = np.asarray(nodes, np.int64)
        local = np.full(self.size, -1, np.int64)
        local[nodes] = np.arange(len(nodes))
        keep = np.nonzero((local[self.sources] >= 0) & (local[self.targets] >= 0))[0]
        documents = {d: local[m][local[m] >= 0] for d, m in self.document_nodes.items()}
        return GraphModel(
            keys=[self.keys[i] for i in nodes], names=[self.names[i] for i in nodes],
            types=[self.types[i] for i in nodes], sources=local[self.sources[keep]], targets=local[self.targets[keep]],
            xy=xy, community=self.community[nodes], community_titles=self.community_titles, documents=self.documents,
            document_nodes={d: m for d, m in documents.items() if len(m)}, weights=self.weights[keep],
            keywords=[self.keywords[i] for i in keep], mentions=np.asarray(self.mentions)[nodes],
            concept_nodes=self.concept_nodes[nodes], concept_edges=self.concept_edges[keep])

    def neighbours_of(self, node: int) -> np.ndarray:
        """Indices of a node's neighbours."""
        return self.neighbours[self.indptr[node]:self.indptr[node + 1]]

    def edges_of(self, node: int) -> np.ndarray:
        """Indices of a node's edges."""
        return self.edge_of_neighbour[self.indptr[node]:self.indptr[node + 1]]

    def edge_between(self, a: int, b: int) -> int | None:
        """The edge joining two nodes, if any."""
        hits = np.nonzero(self.neighbours_of(a) == b)[0]
        return int(self.edges_of(a)[hits[0]]) if len(hits) else None

    def with_communities(self, found: Communities) -> GraphModel:
        """The same graph coloured by other communities."""
        return replace(self, community=found.labels, community_titles=titled(self, found))


def titled(model: GraphModel, found: Communities) -> list[str]:
    """Community titles: a report's title when there is one, else its two best-connected members' names."""
    titles = list(found.titles)
    untitled = [i for i, t in enumerate(titles) if not t or t.startswith("Community ")]
    if not untitled:
        return titles
    labels = found.labels
    members = np.nonzero(labels >= 0)[0]
    ranked = members[np.lexsort((-model.degree[members], labels[members]))]
    starts = np.searchsorted(labels[ranked], np.arange(len(titles) + 1))
    for i in untitled:
        top = ranked[starts[i]:starts[i + 1]][:2]
        if len(top):
            titles[i] = " · ".join(model.names[int(j)] for j in top)
    return titles


def _radius(metric: np.ndarray) -> np.ndarray:
    """Radius growing with the square root of a count (degree or mentions)."""
    grown = MIN_RADIUS + 1.6 * np.sqrt(np.maximum(np.asarray(metric, np.float64) - 1, 0))
    return np.clip(grown, MIN_RADIUS, MAX_RADIUS)


def arrays_of(model: GraphModel) -> GraphArrays:
    """The model's graph as layout arrays."""
    return GraphArrays(model.keys, model.sources, model.targets, np.ones(len(model.sources)))


def _document_nodes(store: Store, snapshot: GraphSnapshot, index: dict[str, int]) -> dict[int, np.ndarray]:
    """Each document's nodes: from the map cached at the snapshot's version, else made from its
    (document, key) pairs and cached (a reopen of an unchanged graph reads no record)."""
    if snapshot.document_nodes is not None:
        return _unpacked(snapshot.document_nodes)
    found = _made_document_nodes(snapshot.document_keys or [], index)
    try:
        save_document_nodes(store, snapshot.version, _packed(found))
    except StoreError as exc:  # a cache: the view is whole without it, the next open makes it again
        log.info("The explorer's document map was not cached: %s", type(exc).__name__)
    return found


def _made_document_nodes(rows: list[tuple[int, str]], index: dict[str, int]) -> dict[int, np.ndarray]:
    if not rows:
        return {}
    documents, keys = zip(*rows)
    nodes = np.fromiter(map(index.get, keys, repeat(-1)), np.int64, len(keys))
    known = nodes >= 0
    pairs = np.unique(np.asarray(documents, np.int64)[known] * max(len(index), 1) + nodes[known])  # by document
    documents_of, nodes = np.divmod(pairs, max(len(index), 1))
    found, starts = np.unique(documents_of, return_index=True)
    return {int(doc): part for doc, part in zip(found.tolist(), np.split(nodes, starts[1:]))}


def _packed(document_nodes: dict[int, np.ndarray]) -> bytes:
    """The map as three arrays (documents, where each one's nodes start, the nodes), in .npy form."""
    documents = np.fromiter(document_nodes, np.int64, len(document_nodes))
    parts = list(document_nodes.values())
    starts = np.cumsum([0] + [len(part) for part in parts], dtype=np.int64)
    nodes = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    out = io.BytesIO()
    for array in (documents, starts, nodes):
        np.save(out, array, allow_pickle=False)
    return out.getvalue()


def _unpacked(blob: bytes) -> dict[int, np.ndarray]:
    source = io.BytesIO(blob)
    documents, starts, nodes = (np.load(source, allow_pickle=False) for _ in range(3))
    return {int(doc): nodes[starts[i]:starts[i + 1]] for i, doc in enumerate(documents.tolist())}


def load_model(store: Store, *, relayout: bool = False, cancel: Cancel | None = None) -> GraphModel:
    """Read the graph, lay it out (from the cache when possible) and place it in scene units."""
    with _collector_paused():
        return _read_model(store, relayout, cancel)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a model is built: the read allocates a few million objects,
    and every full collection it set off would walk them and the shown model's again (a quarter of a
    reopen's processor time at 100,000 nodes)."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def _read_model(store: Store, relayout: bool, cancel: Cancel | None) -> GraphModel:
    snapshot = graph_snapshot(store)  # one consistent read of entities and relations
    keys, names, types, mentions, layers = _columns(snapshot.entities)
    sources, targets, weights, keywords, edge_layers = _columns(snapshot.relations)
    keys = list(keys)
    index = {k: i for i, k in enumerate(keys)}
    src, dst = (np.fromiter(map(index.get, end, repeat(-1)), np.int64, len(end)) for end in (sources, targets))
    keep = (src >= 0) & (dst >= 0) & (src != dst)  # an edge to a node not read, or a loop, is not drawn
    weight = np.maximum(np.nan_to_num(np.array(weights, np.float64).reshape(len(src))), 0.1)
    graph = GraphArrays(keys, src[keep].astype(np.int32), dst[keep].astype(np.int32), weight[keep])
    result = layout.cached_layout(store, graph, relayout=relayout, cancel=cancel)
    scale = SPACING / result.unit
    known = _known_communities(store, graph)
    model = GraphModel(
        keys=keys, names=list(names), types=[t or "unknown" for t in types],
        sources=graph.sources, targets=graph.targets, xy=result.xy * scale,
        community=known.labels, community_titles=known.titles, documents=snapshot.documents,
        document_nodes=_document_nodes(store, snapshot, index),
        layout_seconds=result.seconds, placed=result.placed, weights=graph.weights,
        keywords=[k or "" for k in compress(keywords, keep)],
        mentions=np.fromiter((m or 0 for m in mentions), np.int64, len(keys)),
        scale=scale, pinned=frozenset(layout.pinned(store)),
        concept_nodes=np.asarray(layers, dtype=object).reshape(len(keys)) == CONCEPT,
        concept_edges=np.asarray(edge_layers, dtype=object).reshape(len(src))[keep] == CONCEPT)
    object.__setattr__(model, "community_titles", titled(model, known))  # names need the degrees computed above
    return model


def _columns(rows: list) -> list[tuple]:
    """Rows of five columns as five columns (empty ones when there are no rows)."""
    return list(zip(*rows)) if rows else [()] * 5


def _known_communities(store: Store, graph: GraphArrays) -> Communities:
    """Communities that need no Leiden run: the retrieval ones, or the cached ones."""
    return layout.communities(store, graph, detect=False)


def load_communities(store: Store, model: GraphModel) -> Communities:
    """Communities for colouring (Leiden when nothing is stored yet)."""
    return layout.communities(store, arrays_of(model))
