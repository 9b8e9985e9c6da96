"""Colours of the explorer: node classes by type or community, opaque edge shades, the legend."""

from __future__ import annotations

import numpy as np

from docatlas.gui.graph.model import GraphModel

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#edc948",
           "#76b7b2", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d"]
OTHER = "#b5b9c0"
BACKGROUND = "#fbfbfc"
EDGE = "#d3d7dd"
EDGE_DIM = "#eef0f2"
EDGE_HIGHLIGHT = "#6a7886"
TEXT = "#1f2328"
SELECTION = "#111418"
BY_TYPE, BY_COMMUNITY = "type", "community"


def blend(colour: str, toward: str = BACKGROUND, amount: float = 0.8) -> str:
    """An opaque colour `amount` of the way from `colour` to `toward` (how dimmed nodes look)."""
    a = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(toward[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b))


def classes(model: GraphModel, mode: str) -> tuple[np.ndarray, list[tuple[str, str, int]]]:
    """Colour class of each node (an index into the returned legend) and the legend:
    (label, colour, node count), the largest groups first, the rest as one grey "other"."""
    if mode == BY_COMMUNITY:
        group = model.community.copy()
        labels = model.community_titles
    else:
        group = model.type_index.copy()
        labels = model.type_names
    limit = len(PALETTE)
    other = (group < 0) | (group >= limit)
    group[other] = min(limit, len(labels))
    counts = np.bincount(group, minlength=min(limit, len(labels)) + 1)
    legend = [(labels[i], PALETTE[i], int(counts[i])) for i in range(min(limit, len(labels)))]
    fallback = "no community" if mode == BY_COMMUNITY and len(labels) <= limit else "other"
    legend.append((fallback, OTHER, int(counts[-1])))
    return group, legend
