"""Reviewing merge suggestions (found by `docatlas.core.graph.suggest`): merge, or mark different.

A non-modal dialog over the explorer: every decision is an undoable explorer command, and
the list refreshes when the graph has been reloaded after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from docatlas.core.graph.suggest import Suggestion

COLUMNS = ("Entity", "Entity", "Score", "Why")


class SuggestionHost(Protocol):
    """What the dialog asks of the explorer."""

    def read_suggestions(self, shown: Callable[[list[Suggestion]], None]) -> None:
        """Read the open suggestions in the background and hand them to `shown`."""
        ...

    def accept_suggestion(self, suggestion_id: int, keep: str) -> None:
        """Merge the pair, keeping `keep`."""
        ...

    def reject_suggestion(self, suggestion_id: int) -> None:
        """Mark the pair as different."""
        ...

    def find_suggestions(self) -> None:
        """Look for new likely duplicates."""
        ...


class SuggestionsDialog(QDialog):
    """Open suggestions, best first; one button per decision."""

    refreshed = Signal()  # the list read in the background is shown

    def __init__(self, host: SuggestionHost, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self.setWindowTitle("Merge suggestions")
        self.resize(640, 420)
        self.suggestions: list[Suggestion] = []
        self.reading = False  # the newest read of the list has not landed yet
        self._asked = 0  # the newest read: an older one that lands is ignored
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.status = QLabel()
        self.keep_first = QPushButton("Merge, keep first")
        self.keep_second = QPushButton("Merge, keep second")
        self.different = QPushButton("Not the same")
        self.find = QPushButton("Find suggestions")
        self.keep_first.clicked.connect(lambda: self._decide("first"))
        self.keep_second.clicked.connect(lambda: self._decide("second"))
        self.different.clicked.connect(lambda: self._decide("reject"))
        self.find.clicked.connect(self.host.find_suggestions)
        buttons = QHBoxLayout()
        for button in (self.keep_first, self.keep_second, self.different):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.find)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Pairs that may be one thing written two ways. Every decision can be undone."))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.refresh()

    def refresh(self) -> None:
        """Read the open suggestions again (in the background; `refreshed` follows)."""
        self.reading = True
        self._asked += 1
        asked = self._asked
        self.host.read_suggestions(lambda found: self._show(found) if asked == self._asked else None)

    def _show(self, suggestions: list[Suggestion]) -> None:
        self.reading = False
        self.suggestions = list(suggestions)
        self.table.setRowCount(len(self.suggestions))
        for row, s in enumerate(self.suggestions):
            for col, text in enumerate((s.a_name, s.b_name, f"{s.score:.2f}", s.reason)):
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(row, col, item)
        if self.suggestions:
            self.table.selectRow(0)
        self.status.setText(f"{len(self.suggestions)} open suggestion{'s' if len(self.suggestions) != 1 else ''}.")
        for button in (self.keep_first, self.keep_second, self.different):
            button.setEnabled(bool(self.suggestions))
        self.refreshed.emit()

    def _decide(self, how: str) -> None:
        row = self.table.currentRow()
        if not 0 <= row < len(self.suggestions):
            return
        chosen = self.suggestions[row]
        if how == "reject":
            self.host.reject_suggestion(chosen.id)
        else:
            self.host.accept_suggestion(chosen.id, chosen.a_key if how == "first" else chosen.b_key)
        self.table.removeRow(row)
        del self.suggestions[row]
