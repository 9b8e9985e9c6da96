"""What the explorer's helpers (the editor, the merge questions) need of the explorer: a small Protocol,
so they never import the widget and the GUI has no import cycle."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QAction

from docatlas.core.storage.database import Store
from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.dialogs import Prompter
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.toolbar import GraphToolbar
from docatlas.gui.tasks import TaskRunner


class EditedView(Protocol):
    """What the editor needs of the explorer (a QWidget): its store, runner, controls and selection."""

    store: Store  # only its path is used: jobs open their own connection on store.path
    tasks: TaskRunner
    prompter: Prompter
    toolbar: GraphToolbar
    canvas: GraphCanvas
    model: GraphModel | None
    selected_keys: list[str]
    selected_edge: tuple[str, str] | None
    loaded: SignalInstance

    def reload(self, relayout: bool = False) -> None:
        """Read the graph again."""

    def select_keys(self, keys: list[str], centre: bool = False) -> None:
        """Select entities by key."""

    def clear_selection(self) -> None:
        """Select nothing."""

    def addAction(self, action: QAction) -> None:
        """Make a shortcut work over the view."""
