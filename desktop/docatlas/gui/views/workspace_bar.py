"""The visible workspace switcher above the tabs: the open workspace and the recent ones, New, Open.

A person sees which workspace they are in and switches with one click, as in the sidebars of
other local document tools; File > Open Recent lists the same workspaces.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QSizePolicy, QToolBar, QWidget

from docatlas.gui.formatting import plain_tip

NEW_WORKSPACE, OPEN_WORKSPACE = "New Workspace…", "Open Workspace…"


class WorkspaceBar(QToolBar):
    """"Workspace: [ws1 ▾]" with the recent workspaces, then New… and Open…"""

    def __init__(self, open_workspace: Callable[[Path], object], new_workspace: Callable[[], None],
                 choose_workspace: Callable[[], None], parent: QWidget | None = None):
        super().__init__("Workspace", parent)
        self.setObjectName("workspace_bar")
        self.setMovable(False)
        self.open_workspace = open_workspace
        self.addWidget(QLabel(" Workspace: "))
        self.switcher = QComboBox()
        self.switcher.setToolTip("The workspace you are in; choose another to switch (recent workspaces)")
        self.switcher.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.switcher.setMinimumContentsLength(16)
        self.switcher.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.switcher.activated.connect(self._chosen)
        self.addWidget(self.switcher)
        self.new_action = self.addAction(NEW_WORKSPACE, lambda: new_workspace())
        self.new_action.setToolTip("Create a workspace in a new folder (it is made for you)")
        self.open_action = self.addAction(OPEN_WORKSPACE, lambda: choose_workspace())
        self.open_action.setToolTip("Open a folder as a workspace")

    def show_workspaces(self, current: Path, recent: list[str]) -> None:
        """List `recent` (full paths) with `current` first and selected."""
        self.switcher.blockSignals(True)
        self.switcher.clear()
        current_text = str(Path(current).resolve())
        for text in [current_text, *[p for p in recent if p != current_text]]:
            name = Path(text).name or text
            self.switcher.addItem(name, text)
            self.switcher.setItemData(self.switcher.count() - 1, plain_tip(text), Qt.ItemDataRole.ToolTipRole)
        self.switcher.setCurrentIndex(0)
        self.switcher.blockSignals(False)

    def _chosen(self, position: int) -> None:
        text = self.switcher.itemData(position)
        if position > 0 and text:
            self.open_workspace(Path(text))
