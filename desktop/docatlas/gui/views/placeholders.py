"""Tabs whose real views are their own issues: the graph view and the prompt editor."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from docatlas.core.store import Store


class PlaceholderTab(QWidget):
    """A tab that says what will be here and what to use meanwhile."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        heading = QLabel(title, alignment=Qt.AlignmentFlag.AlignCenter)
        font = heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        heading.setFont(font)
        self.body = QLabel(text, alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.detail = QLabel(alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.detail.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(heading)
        layout.addWidget(self.body)
        layout.addWidget(self.detail)
        layout.addStretch(2)


class GraphPlaceholder(PlaceholderTab):
    """Until the graph view exists: the graph's size and how to look at it now."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(
            "Graph",
            "The interactive graph view is coming in a later version. Meanwhile, export the graph "
            "(docatlas export --format graphml graph.graphml) and open it in Gephi or yEd.",
            parent,
        )

    def show_counts(self, store: Store) -> None:
        """Show how big the graph is."""
        counts = store.counts()
        self.detail.setText(f"{counts['entities']} entities and {counts['relations']} relations "
                            f"from {counts['documents']} documents.")


class PromptsPlaceholder(PlaceholderTab):
    """Until the prompt editor exists: how prompts can be changed now."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(
            "Prompts",
            "The prompt editor is coming in a later version. Until then DocAtlas extracts with its "
            "bundled prompt profile (lightrag); the command line can pick another with ingest --profile.",
            parent,
        )
