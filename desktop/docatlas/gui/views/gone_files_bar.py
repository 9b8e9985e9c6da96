"""The Documents tab's question about files gone from linked folders: remove them from the graph, or keep them.

Shown when `sync.gone_files` is "ask" and a look at the linked folders found documents whose
files are gone (renamed, moved or deleted). Nothing leaves the graph until the person says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from docatlas.gui.folder_sync import FolderSync
from docatlas.gui.formatting import plain_tip

SHOWN_NAMES = 3


class GoneFilesBar(QFrame):
    """A banner: "2 files are gone from the linked folders: a.txt, b.txt." [Remove from Graph] [Keep]."""

    def __init__(self, folder_sync: FolderSync, parent: QWidget | None = None):
        super().__init__(parent, frameShape=QFrame.Shape.StyledPanel)
        self.folder_sync = folder_sync
        self.label = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.remove_button = QPushButton("Remove from Graph", clicked=self._remove)
        self.keep_button = QPushButton("Keep", clicked=folder_sync.keep_gone)
        self.remove_button.setToolTip("Delete these documents and what only they supported")
        self.keep_button.setToolTip("Leave them in the graph; you can delete them later")
        row = QHBoxLayout(self)
        row.addWidget(self.label, 1)
        row.addWidget(self.remove_button)
        row.addWidget(self.keep_button)
        folder_sync.gone_found.connect(self.show_gone)
        self.hide()

    def show_gone(self) -> None:
        """Show (or hide) the question for what the last look found gone."""
        gone = self.folder_sync.gone
        self.setVisible(bool(gone))
        if not gone:
            return
        names = [Path(g.path).name for g in gone]
        shown = ", ".join(names[:SHOWN_NAMES]) + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES
                                                   else "")
        many = len(names) != 1
        self.label.setText(f"{len(names)} file{'s are' if many else ' is'} gone from the linked folders: {shown}. "
                           f"Remove {'them' if many else 'it'} from the graph?")
        self.label.setToolTip(plain_tip("\n".join(g.path for g in gone[:50])))

    def _remove(self) -> None:
        if not self.folder_sync.remove_gone():
            self.label.setText(self.label.text().split(" Wait")[0] + " Wait for the run to finish, then press "
                               "Remove again.")
