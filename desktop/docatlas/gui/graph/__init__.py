"""The graph explorer: see, search, filter and fix the knowledge graph, smooth at 10,000+ nodes.

`GraphExplorer` is the widget (the main window's Graph tab). Its parts: `model` (the
graph as arrays, Qt-free), `query` (search, filters, neighbourhoods), `scene`, `render`
and `renderer` (batched drawing on a reader thread), `canvas` (pan, zoom, pick, labels),
`minimap`, `legend`, `panel` (details), `actions` and `commands` (undoable edits) and
`export` (of the view). Its background jobs are in `gui.jobs.graph`, run by the window's
`gui.tasks.TaskRunner`.
"""

from __future__ import annotations

from docatlas.gui.graph.explorer import GraphExplorer

__all__ = ["GraphExplorer"]
