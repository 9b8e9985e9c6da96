"""The explorer's controls: search, colouring, filters, neighbourhood and focus, view, export, edits."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QLineEdit,
    QMenu,
    QSpinBox,
    QToolBar,
    QToolButton,
    QWidget,
)

from docatlas.gui.graph.palette import BY_COMMUNITY, BY_TYPE

EXPORTS = (("png", "View as PNG…"), ("svg", "View as SVG…"), ("graphml", "Graph as GraphML…"),
           ("gexf", "Graph as GEXF…"), ("json", "Graph as JSON…"), ("csv", "Graph as CSV (folder)…"))


class ChoiceMenu(QToolButton):
    """A button with a menu of checkable choices (all checked: no restriction)."""

    changed = Signal()

    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setText(text)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self._actions: dict[object, QAction] = {}

    def set_choices(self, choices: list[tuple[object, str]]) -> None:
        """Replace the choices, keeping unchecked ones unchecked."""
        unchecked = {k for k, a in self._actions.items() if not a.isChecked()}
        menu = self.menu()
        menu.clear()
        menu.addAction("Show all", lambda: self._check_all(True))
        menu.addAction("Hide all", lambda: self._check_all(False))
        menu.addSeparator()
        self._actions = {}
        for value, text in choices:
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(value not in unchecked)
            action.toggled.connect(self.changed)
            self._actions[value] = action

    def _check_all(self, state: bool) -> None:
        for action in self._actions.values():
            action.blockSignals(True)
            action.setChecked(state)
            action.blockSignals(False)
        self.changed.emit()

    def selected(self) -> frozenset | None:
        """The checked values, or None when all are checked."""
        chosen = frozenset(k for k, a in self._actions.items() if a.isChecked())
        return None if len(chosen) == len(self._actions) else chosen

    def set_checked(self, value: object, state: bool) -> None:
        """Check or uncheck one choice."""
        self._actions[value].setChecked(state)


class GraphToolbar(QToolBar):
    """Controls; the explorer reads their state and listens to `changed` and the action signals."""

    changed = Signal()  # anything that changes what is shown or how
    searchRequested = Signal(str)
    fitRequested = Signal()
    relayoutRequested = Signal()
    exportRequested = Signal(str)
    suggestionsRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Graph", parent)
        self.search = QLineEdit(placeholderText="Find an entity…", clearButtonEnabled=True)
        self.search.setMaximumWidth(260)
        self.names = QStringListModel(self)
        completer = QCompleter(self.names, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.search.setCompleter(completer)
        self.search.returnPressed.connect(lambda: self.searchRequested.emit(self.search.text()))
        completer.activated.connect(self.searchRequested)
        self.colour = QComboBox()
        self.colour.addItem("Colour by type", BY_TYPE)
        self.colour.addItem("Colour by community", BY_COMMUNITY)
        self.types = ChoiceMenu("Types")
        self.communities = ChoiceMenu("Communities")
        self.document = QComboBox()
        self.document.setMaximumWidth(220)
        self.min_degree = QSpinBox(prefix="Min links ", maximum=10_000)
        self.depth = QSpinBox(prefix="Depth ", minimum=1, maximum=6)
        self.neighbours = self._toggle("Neighbours only", "Show only the selection and its neighbours to this depth")
        self.focus = self._toggle("Focus", "Dim everything but the selection and its neighbours")
        self.labels = self._toggle("Labels", "Show node names that fit", checked=True)
        self.minimap = self._toggle("Minimap", "Show an overview of the whole graph", checked=True)
        for widget in (self.search, self.colour, self.types, self.communities, self.document, self.min_degree):
            self.addWidget(widget)
        self.addSeparator()
        for widget in (self.neighbours, self.depth, self.focus):
            self.addWidget(widget)
        self.addSeparator()
        self.fit = self.addAction("Fit", lambda: self.fitRequested.emit())
        self.addWidget(self.labels)
        self.addWidget(self.minimap)
        self.relayout = self.addAction("Re-layout", lambda: self.relayoutRequested.emit())
        export = QToolButton(text="Export", popupMode=QToolButton.ToolButtonPopupMode.InstantPopup)
        export.setMenu(QMenu(export))
        for name, text in EXPORTS:
            export.menu().addAction(text, lambda name=name: self.exportRequested.emit(name))
        self.export = export
        self.addWidget(export)
        self.suggestions = self.addAction("Merge suggestions…", lambda: self.suggestionsRequested.emit())
        self.addSeparator()
        for signal in (self.colour.currentIndexChanged, self.document.currentIndexChanged,
                       self.min_degree.valueChanged, self.depth.valueChanged):
            signal.connect(self.changed)
        for menu in (self.types, self.communities):
            menu.changed.connect(self.changed)

    def _toggle(self, text: str, tip: str, checked: bool = False) -> QToolButton:
        button = QToolButton(text=text, checkable=True, checked=checked, toolTip=tip)
        button.toggled.connect(self.changed)
        return button

    def set_documents(self, documents: list[tuple[int, str]]) -> None:
        """Offer these documents in the document filter (keeping the choice when it still exists)."""
        current = self.document.currentData()
        self.document.blockSignals(True)
        self.document.clear()
        self.document.addItem("All documents", None)
        for doc_id, title in documents:
            self.document.addItem(title, doc_id)
        index = self.document.findData(current)
        self.document.setCurrentIndex(max(index, 0))
        self.document.blockSignals(False)
