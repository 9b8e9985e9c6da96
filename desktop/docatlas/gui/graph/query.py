"""Search, filters and neighbourhoods over a `GraphModel`, as whole-array operations (Qt-free)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from docatlas.gui.graph.model import GraphModel, fold
from docatlas.gui.graph.palette import BY_TYPE, LIGHT, SIZE_BY_DEGREE, Theme, classes


@dataclass(frozen=True)
class Filters:
    """What the view shows; None means no restriction."""

    types: frozenset[str] | None = None
    communities: frozenset[int] | None = None
    document: int | None = None
    min_degree: int = 0
    around: tuple[int, ...] = ()  # show only these nodes' neighbourhoods …
    depth: int = 1  # … to this depth


def search(model: GraphModel, text: str, limit: int = 20) -> list[int]:
    """Nodes whose name matches `text`: exact, then prefix, then word prefix, then anywhere;
    better connected first within each kind."""
    wanted = fold(text)
    if not wanted:
        return []
    ranked: list[tuple[int, int, int]] = []
    for i, folded in enumerate(model.folded):
        if wanted not in folded:
            continue
        if folded == wanted:
            kind = 0
        elif folded.startswith(wanted):
            kind = 1
        elif f" {wanted}" in f" {folded}":
            kind = 2
        else:
            kind = 3
        ranked.append((kind, -int(model.degree[i]), i))
    ranked.sort()
    return [i for _, _, i in ranked[:limit]]


def neighbourhood(model: GraphModel, roots: Iterable[int], depth: int) -> np.ndarray:
    """Nodes within `depth` hops of any root (the roots included)."""
    seen = np.zeros(model.size, bool)
    frontier = np.unique(np.fromiter(roots, np.int64))
    seen[frontier] = True
    for _ in range(max(0, depth)):
        if len(frontier) == 0:
            break
        starts, ends = model.indptr[frontier], model.indptr[frontier + 1]
        counts = ends - starts
        if counts.sum() == 0:
            break
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        reached = np.unique(model.neighbours[offsets])
        frontier = reached[~seen[reached]]
        seen[frontier] = True
    return seen


def visible(model: GraphModel, filters: Filters) -> np.ndarray:
    """Which nodes the filters let through."""
    mask = model.degree >= filters.min_degree
    if filters.types is not None:
        allowed = np.array([t in filters.types for t in model.type_names], bool)
        mask &= allowed[model.type_index] if len(allowed) else False
    if filters.communities is not None:
        mask &= np.isin(model.community, list(filters.communities))
    if filters.document is not None:
        in_document = np.zeros(model.size, bool)
        in_document[model.document_nodes.get(filters.document, np.zeros(0, np.int64))] = True
        mask &= in_document
    if filters.around:
        mask &= neighbourhood(model, filters.around, filters.depth)
    return mask


def edges_among(model: GraphModel, nodes: np.ndarray) -> np.ndarray:
    """Edges whose two ends are both in the node mask."""
    return nodes[model.sources] & nodes[model.targets]


@dataclass(frozen=True)
class ViewSpec:
    """Everything that decides what the scene looks like, besides the graph."""

    filters: Filters = Filters()
    colour_mode: str = BY_TYPE
    selection: tuple[int, ...] = ()
    focus: bool = False
    depth: int = 1
    size_mode: str = SIZE_BY_DEGREE
    theme: Theme = LIGHT


@dataclass(frozen=True)
class Look:
    """What the scene shows: nodes shown, of those the dimmed ones, highlighted edges, colours, sizes."""

    shown: np.ndarray
    dimmed: np.ndarray
    highlighted: np.ndarray  # edges
    colour_class: np.ndarray
    colours: list[str]
    legend: list[tuple[str, str, int]]  # counts of the shown nodes
    radius: np.ndarray
    theme: Theme = LIGHT
    edges_shown: int = 0


def compute_look(model: GraphModel, spec: ViewSpec) -> Look:
    """Shown, dimmed and highlighted items and colours for a view (the selection is always shown)."""
    shown = visible(model, spec.filters)
    selection = [i for i in spec.selection if i < model.size]
    shown[selection] = True
    dimmed = np.zeros(model.size, bool)
    highlighted = np.zeros(len(model.sources), bool)
    if spec.focus and selection:
        near = neighbourhood(model, selection, spec.depth)
        dimmed = ~near
        highlighted = edges_among(model, near)
    colour_class, legend = classes(model, spec.colour_mode, shown)
    edges = int(edges_among(model, shown).sum())
    return Look(shown, dimmed, highlighted, colour_class, [c for _, c, _ in legend], legend,
                model.radius_for(spec.size_mode), spec.theme, edges)
