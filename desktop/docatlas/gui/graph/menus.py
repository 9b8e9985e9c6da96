"""The explorer's context menus: on a node (sources, focus, neighbours, local graph, rename, merge,
delete) and on an edge (sources, delete). Built for what was right-clicked, shown with
`popup` (never a blocking `exec`), and kept as `explorer.context_menu` until the next one."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu, QWidget

from docatlas.gui.graph.actions import GraphEditor
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.panel import DetailsPanel
from docatlas.gui.graph.toolbar import GraphToolbar


class GraphExplorer(Protocol):
    """What the menus need of the explorer (`explorer.GraphExplorer`), so neither imports the other."""

    model: GraphModel | None
    editor: GraphEditor
    toolbar: GraphToolbar
    panel: DetailsPanel
    context_menu: QMenu | None
    selected_edge: tuple[str, str] | None

    def select_keys(self, keys: list[str], centre: bool = False) -> None:
        """Select entities."""

    def select_edge(self, edge: int) -> None:
        """Select an edge."""

    def open_local_graph(self, key: str) -> QWidget:
        """Show a local graph."""

NODE_ITEMS = ("Sources", "Focus", "Neighbours only", "Local graph…", "Rename…", "Merge with…", "Delete…")
EDGE_ITEMS = ("Sources", "Delete relation…")


def node_menu(explorer: GraphExplorer, node: int) -> QMenu:
    """The menu of one node: it is selected first, so every entry acts on it."""
    key = explorer.model.keys[node]
    explorer.select_keys([key])
    editor, bar = explorer.editor, explorer.toolbar
    menu = QMenu(explorer)  # the explorer is a QWidget
    actions = {
        "Sources": lambda: explorer.panel.passages.setFocus(),
        "Focus": lambda: bar.focus.setChecked(True),
        "Neighbours only": lambda: bar.neighbours.setChecked(True),
        "Local graph…": lambda: explorer.open_local_graph(key),
        "Rename…": lambda: editor.rename(key),
        "Merge with…": editor.merge_selection,
        "Delete…": lambda: editor.delete(key),
    }
    for text in NODE_ITEMS:
        menu.addAction(text, actions[text])
    return menu


def edge_menu(explorer: GraphExplorer, edge: int) -> QMenu:
    """The menu of one edge: it is selected first."""
    explorer.select_edge(edge)
    a, b = explorer.selected_edge
    menu = QMenu(explorer)  # the explorer is a QWidget
    menu.addAction("Sources", lambda: explorer.panel.passages.setFocus())
    menu.addAction("Delete relation…", lambda: explorer.editor.delete_relation(a, b))
    return menu


def show_menu(explorer: GraphExplorer, kind: str, index: int, where: QPoint) -> QMenu:
    """Build the menu for what was right-clicked and pop it up at `where`."""
    if explorer.context_menu is not None:
        explorer.context_menu.deleteLater()
    menu = node_menu(explorer, index) if kind == "node" else edge_menu(explorer, index)
    explorer.context_menu = menu
    menu.popup(where)
    return menu
