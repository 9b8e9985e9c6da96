"""The graph explorer: see, search, filter and fix the knowledge graph, smooth at 10,000+ nodes.

`GraphExplorer` is the widget (the main window's Graph tab). Its parts: `model` (the
graph as arrays, Qt-free), `query` (search, filters, neighbourhoods), `scene` and
`render` (batched drawing on a worker thread), `canvas` (pan, zoom, pick, labels),
`minimap`, `legend`, `panel` (details and edits), `commands` (undoable edits), `loader`
(load and layout in the background) and `export`.
"""

from __future__ import annotations

from docatlas.gui.graph.explorer import GraphExplorer

__all__ = ["GraphExplorer"]
