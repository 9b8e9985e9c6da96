"""The explorer's state across reopenings: colour and size modes, filters, labels, and the view (QSettings).

Keys live under `graph_explorer/<workspace>/`, the workspace named by a hash of its
database path, so two workspaces keep their own. Saved when the controls or the view
change; restored before the first scene is built, and the view once the graph is on
the canvas (the centre in scene units and the zoom).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QSettings

if TYPE_CHECKING:
    from docatlas.gui.graph.canvas import GraphCanvas
    from docatlas.gui.graph.toolbar import GraphToolbar


def settings_for(db_path: Path, settings: QSettings | None = None) -> tuple[QSettings, str]:
    """The settings store and this workspace's key prefix."""
    digest = hashlib.sha1(str(Path(db_path).resolve()).encode()).hexdigest()[:16]
    return (settings if settings is not None else QSettings("DocAtlas", "DocAtlas")), f"graph_explorer/{digest}/"


def save_controls(settings: QSettings, prefix: str, bar: GraphToolbar) -> None:
    """Remember the controls."""
    state = {"colour": bar.colour.currentData(), "size": bar.size.currentData(),
             "hidden_types": [str(t) for t in bar.types.unchecked()],
             "hidden_communities": [int(c) for c in bar.communities.unchecked()],
             "min_degree": bar.min_degree.value(), "labels": bar.labels.isChecked(),
             "minimap": bar.minimap.isChecked(), "table": bar.table.isChecked()}
    settings.setValue(prefix + "controls", json.dumps(state))


def restore_controls(settings: QSettings, prefix: str, bar: GraphToolbar) -> None:
    """Put the remembered controls back (unknown or broken values are ignored)."""
    try:
        state = json.loads(str(settings.value(prefix + "controls", "{}")))
    except ValueError:
        return
    if not isinstance(state, dict):
        return
    for combo, key in ((bar.colour, "colour"), (bar.size, "size")):
        index = combo.findData(state.get(key))
        if index >= 0:
            combo.setCurrentIndex(index)
    bar.types.hide_values(list(state.get("hidden_types", [])))
    bar.communities.hide_values(list(state.get("hidden_communities", [])))
    if isinstance(state.get("min_degree"), int):
        bar.min_degree.setValue(state["min_degree"])
    for button, key in ((bar.labels, "labels"), (bar.minimap, "minimap"), (bar.table, "table")):
        if isinstance(state.get(key), bool):
            button.setChecked(state[key])


def save_view(settings: QSettings, prefix: str, canvas: GraphCanvas) -> None:
    """Remember where the view looks and how close."""
    centre = canvas.visible_rect().center()
    settings.setValue(prefix + "view", json.dumps([centre.x(), centre.y(), canvas.scale]))


def restore_view(settings: QSettings, prefix: str, canvas: GraphCanvas) -> bool:
    """Look where the view looked last time; False when nothing was saved."""
    try:
        x, y, scale = json.loads(str(settings.value(prefix + "view", "null")) or "null")
    except (TypeError, ValueError):
        return False
    canvas.set_view(QPointF(float(x), float(y)), float(scale))
    return True
