"""The versions of one prompt: each save with its note and date, diffs, and loading one back."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.prompts.store import PromptVersion, diff_texts
from docatlas.gui.prompts.highlighter import DiffHighlighter

EDITOR = "the editor"
HINT = ("Select a version to see what changed from it to the text in the editor; select two to compare them. "
        "Load into Editor puts its text back in the editor (saving makes it a new version).")


class VersionsView(QWidget):
    """A list of versions (newest first, the default last) and the diff of the selection."""

    load_requested = Signal(str)  # the text of the version to put in the editor

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._entries: list[tuple[str, str]] = []  # (label, text), in list order
        self._current: Callable[[], str] = lambda: ""
        self.version_list = QListWidget()
        self.version_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.version_list.itemSelectionChanged.connect(self.refresh_diff)
        self.diff_view = QPlainTextEdit(readOnly=True)
        self.diff_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._highlighter = DiffHighlighter(self.diff_view.document())
        self.load_button = QPushButton("Load into Editor", enabled=False)
        self.load_button.clicked.connect(self._load)
        hint = QLabel(HINT, wordWrap=True)
        hint.setEnabled(False)

        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.version_list, 1)
        row = QHBoxLayout()
        row.addWidget(self.load_button)
        row.addStretch(1)
        column.addLayout(row)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.diff_view)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(split, 1)

    def show_versions(self, versions: list[PromptVersion], default_text: str, current: Callable[[], str]) -> None:
        """List `versions` (newest first) and the default; `current` gives the editor's text."""
        self._current = current
        self._entries = [(v.label if not v.is_reset else f"{v.label} (the default)",
                          v.text if v.text is not None else default_text) for v in versions]
        self._entries.append(("Default (bundled)" if not versions else "Default", default_text))
        self.version_list.clear()
        for label, _ in self._entries:
            self.version_list.addItem(QListWidgetItem(label))
        self.diff_view.setPlainText("")
        self.load_button.setEnabled(False)

    def select(self, *rows: int) -> None:
        """Select these rows (0 is the newest version)."""
        self.version_list.clearSelection()
        for row in rows:
            self.version_list.item(row).setSelected(True)

    def refresh_diff(self) -> None:
        """Show the diff for the selection."""
        rows = sorted(i.row() for i in self.version_list.selectedIndexes())
        self.load_button.setEnabled(len(rows) == 1)
        if len(rows) == 1:
            label, text = self._entries[rows[0]]
            diff = diff_texts(text, self._current(), label, EDITOR)
            self.diff_view.setPlainText(diff or f"The editor holds the same text as {label}.")
        elif len(rows) == 2:
            (new_label, new), (old_label, old) = self._entries[rows[0]], self._entries[rows[1]]
            self.diff_view.setPlainText(diff_texts(old, new, old_label, new_label) or "The two are the same.")
        else:
            self.diff_view.setPlainText("" if not rows else "Select one or two versions.")

    def _load(self) -> None:
        rows = [i.row() for i in self.version_list.selectedIndexes()]
        if len(rows) == 1:
            self.load_requested.emit(self._entries[rows[0]][1])
