"""The side panel: what a node or an edge is, where it came from, its neighbours, and edit buttons."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from docatlas.gui.graph.details import EntityDetails, Passage, RelationDetails

ENTITY_ACTIONS = (("rename", "Rename…"), ("retype", "Change type…"), ("describe", "Edit description…"),
                  ("delete", "Delete"), ("neighbours", "Show neighbours"), ("merge", "Merge with…"))
RELATION_ACTIONS = (("delete_relation", "Delete relation"),)
SELECTION_ACTIONS = (("merge", "Merge…"), ("neighbours", "Show neighbours"))
ROLE = Qt.ItemDataRole.UserRole


class DetailsPanel(QWidget):
    """Shows one entity, one relation or a multiple selection; asks the explorer to act."""

    open_passage = Signal(int, int, object)  # document id, chunk id, {names, quote}: what to highlight
    neighbourActivated = Signal(str)  # entity key
    actionRequested = Signal(str)  # one of the action names above

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setMinimumWidth(260)
        self.title = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title.setFont(font)
        self.subtitle = QLabel(wordWrap=True)
        for label in (self.title, self.subtitle):
            label.setTextFormat(Qt.TextFormat.PlainText)  # names and types are untrusted text
        self.description = QPlainTextEdit(readOnly=True)
        self.description.setMaximumHeight(160)
        self.buttons: dict[str, QPushButton] = {}
        grid = QGridLayout()
        for n, (name, text) in enumerate(ENTITY_ACTIONS + RELATION_ACTIONS):
            button = QPushButton(text)
            button.setObjectName(f"action_{name}")
            button.clicked.connect(lambda _=False, name=name: self.actionRequested.emit(name))
            self.buttons[name] = button
            grid.addWidget(button, n // 2, n % 2)
        self.passages_label = QLabel("From")
        self.passages = QListWidget()
        self.passages.setWordWrap(True)
        self.passages.itemActivated.connect(self._passage)
        self.passages.itemClicked.connect(self._passage)
        self.neighbours_label = QLabel("Neighbours")
        self.neighbours = QListWidget()
        self.neighbours.itemActivated.connect(self._neighbour)
        self.neighbours.itemClicked.connect(self._neighbour)
        layout = QVBoxLayout(self)
        for widget in (self.title, self.subtitle, self.description):
            layout.addWidget(widget)
        layout.addLayout(grid)
        for widget in (self.passages_label, self.passages, self.neighbours_label, self.neighbours):
            layout.addWidget(widget, 1 if isinstance(widget, QListWidget) else 0)
        self.show_nothing()

    def _show_actions(self, names: tuple[tuple[str, str], ...]) -> None:
        wanted = {n for n, _ in names}
        for name, button in self.buttons.items():
            button.setVisible(name in wanted)

    def _fill_passages(self, passages: list[Passage]) -> None:
        self.passages.clear()
        for passage in passages:
            quotes = "".join(f"\n    \u201c{quote}\u201d" for quote in passage.quotes)
            item = QListWidgetItem(passage.label + quotes)
            item.setData(ROLE, (passage.document_id, passage.chunk_id, passage.quotes[0] if passage.quotes else ""))
            item.setToolTip("Open this passage")
            self.passages.addItem(item)
        self.passages_label.setText(f"From {len(passages)} passage{'s' if len(passages) != 1 else ''}"
                                    " (click to open)")

    def show_nothing(self, hint: str = "Click a node or an edge to see where it came from.") -> None:
        """No selection."""
        self.title.setText("Nothing selected")
        self.subtitle.setText(hint)
        self.description.clear()
        self.description.hide()
        self._show_actions(())
        for widget in (self.passages_label, self.passages, self.neighbours_label, self.neighbours):
            widget.hide()

    def show_entity(self, details: EntityDetails) -> None:
        """One entity."""
        self._names = [details.name]
        self.title.setText(details.name)
        self.subtitle.setText(f"{details.type} · {details.mentions} mention{'s' if details.mentions != 1 else ''}")
        self.description.setPlainText(details.description or "(no description)")
        self.description.show()
        self._show_actions(ENTITY_ACTIONS)
        self._fill_passages(details.passages)
        self.neighbours.clear()
        for key, name, keywords in details.neighbours:
            item = QListWidgetItem(f"{name}  ({keywords})" if keywords else name)
            item.setData(ROLE, key)
            self.neighbours.addItem(item)
        self.neighbours_label.setText(f"Neighbours ({len(details.neighbours)})")
        for widget in (self.passages_label, self.passages, self.neighbours_label, self.neighbours):
            widget.show()

    def show_relation(self, details: RelationDetails) -> None:
        """One relation."""
        self._names = [details.source_name, details.target_name]
        self.title.setText(f"{details.source_name} — {details.target_name}")
        self.subtitle.setText(f"{details.keywords or 'related'} · weight {details.weight:g}")
        self.description.setPlainText(details.description or "(no description)")
        self.description.show()
        self._show_actions(RELATION_ACTIONS)
        self._fill_passages(details.passages)
        self.neighbours.clear()
        for key, name in ((details.source_key, details.source_name), (details.target_key, details.target_name)):
            item = QListWidgetItem(name)
            item.setData(ROLE, key)
            self.neighbours.addItem(item)
        self.neighbours_label.setText("Ends")
        for widget in (self.passages_label, self.passages, self.neighbours_label, self.neighbours):
            widget.show()

    def show_selection(self, names: list[str]) -> None:
        """Several entities (to merge, or to see together)."""
        self.title.setText(f"{len(names)} entities selected")
        self.subtitle.setText("Ctrl-click nodes to add or remove them.")
        self.description.setPlainText("\n".join(names))
        self.description.show()
        self._show_actions(SELECTION_ACTIONS)
        for widget in (self.passages_label, self.passages, self.neighbours_label, self.neighbours):
            widget.hide()

    def _passage(self, item: QListWidgetItem) -> None:
        document_id, chunk_id, quote = item.data(ROLE)
        self.open_passage.emit(int(document_id), int(chunk_id), {"names": list(getattr(self, "_names", [])),
                                                                 "quote": quote})

    def _neighbour(self, item: QListWidgetItem) -> None:
        self.neighbourActivated.emit(str(item.data(ROLE)))
