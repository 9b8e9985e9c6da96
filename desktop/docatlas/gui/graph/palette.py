"""Colours of the explorer: node classes by type or community, the light and dark canvas, the legend.

The canvas follows the application's palette (light, dark, or the system's: `gui.theme`
sets it): `current_theme()` reads the window colour's lightness, so no theme setting is
read here. Edge shades are opaque blends toward the background (transparency is slow to draw).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtGui import QGuiApplication, QPalette

from docatlas.gui.graph.model import GraphModel

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#edc948",
           "#76b7b2", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d"]
OTHER = "#b5b9c0"
BY_TYPE, BY_COMMUNITY = "type", "community"
SIZE_BY_DEGREE, SIZE_BY_MENTIONS = "degree", "mentions"


@dataclass(frozen=True)
class Theme:
    """The canvas's colours for one theme."""

    name: str
    background: str
    edge: str
    edge_dim: str
    edge_highlight: str
    text: str
    selection: str
    frame: str  # legend and minimap borders

    @property
    def dark(self) -> bool:
        """True for the dark theme."""
        return self.name == "dark"


LIGHT = Theme("light", "#fbfbfc", "#d3d7dd", "#eef0f2", "#4f5d6b", "#1f2328", "#111418", "#c9ced6")
DARK = Theme("dark", "#1e2126", "#464c55", "#2a2e34", "#c7d0da", "#e6e9ed", "#f5f7fa", "#4a5059")

# Kept for callers that want the light defaults by name.
BACKGROUND, EDGE, EDGE_DIM, EDGE_HIGHLIGHT, TEXT, SELECTION = (
    LIGHT.background, LIGHT.edge, LIGHT.edge_dim, LIGHT.edge_highlight, LIGHT.text, LIGHT.selection)


def current_theme() -> Theme:
    """The theme the application's palette asks for (dark when its window colour is dark)."""
    app = QGuiApplication.instance()
    if app is None:
        return LIGHT
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return DARK if window.lightness() < 128 else LIGHT


def blend(colour: str, toward: str = BACKGROUND, amount: float = 0.8) -> str:
    """An opaque colour `amount` of the way from `colour` to `toward` (how dimmed nodes look)."""
    a = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(toward[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b))


def classes(model: GraphModel, mode: str,
            shown: np.ndarray | None = None) -> tuple[np.ndarray, list[tuple[str, str, int]]]:
    """Colour class of each node (an index into the returned legend) and the legend:
    (label, colour, count of the `shown` nodes), the largest groups first, the rest as one grey "other"."""
    if mode == BY_COMMUNITY:
        group = model.community.copy()
        labels = model.community_titles
    else:
        group = model.type_index.copy()
        labels = model.type_names
    limit = len(PALETTE)
    other = (group < 0) | (group >= limit)
    group[other] = min(limit, len(labels))
    counted = group if shown is None else group[shown]
    counts = np.bincount(counted, minlength=min(limit, len(labels)) + 1)
    legend = [(labels[i], PALETTE[i], int(counts[i])) for i in range(min(limit, len(labels)))]
    fallback = "no community" if mode == BY_COMMUNITY and len(labels) <= limit else "other"
    legend.append((fallback, OTHER, int(counts[-1])))
    return group, legend
