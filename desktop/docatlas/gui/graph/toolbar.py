"""The explorer's controls, in two groups that wrap onto more lines when the tab is narrow (`flow`):
search, colouring, size, filters; neighbourhood, focus, view, export, edits."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QLineEdit,
    QMenu,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from docatlas.gui.graph.flow import FlowBar
from docatlas.gui.graph.palette import BY_COMMUNITY, BY_TYPE, SIZE_BY_DEGREE, SIZE_BY_MENTIONS

EXPORTS = (("png", "View as PNG (2x)…"), ("svg", "View as SVG…"), ("graphml", "Shown graph as GraphML…"),
           ("gexf", "Shown graph as GEXF…"), ("json", "Whole graph as JSON…"), ("csv", "Whole graph as CSV (folder)…"))


MIN_WIDTH = 440  # px: the window's minimum height counts the lines at this width (no narrower than the tab)


class ChoiceMenu(QToolButton):
    """A button with a menu of checkable choices (all checked: no restriction)."""

    changed = Signal()

    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setText(text)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self._actions: dict[object, QAction] = {}
        self._hidden: set = set()  # restored as unchecked before being offered

    def set_choices(self, choices: list[tuple[object, str]]) -> None:
        """Replace the choices, keeping unchecked ones unchecked."""
        unchecked = {k for k, a in self._actions.items() if not a.isChecked()} | (self._hidden - set(self._actions))
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
        self._hidden -= set(self._actions)

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

    def unchecked(self) -> list:
        """The values left out (to save the filter)."""
        return [k for k, a in self._actions.items() if not a.isChecked()] + sorted(self._hidden - set(self._actions),
                                                                                     key=str)

    def hide_values(self, values: list) -> None:
        """Uncheck these values, now or when they are offered (a restored filter)."""
        self._hidden = set(values)
        for value, action in self._actions.items():
            action.setChecked(value not in self._hidden)


class GraphToolbar(QWidget):
    """Controls in two groups that wrap onto more lines when the tab is narrow, so nothing hides in
    an overflow menu: what is shown (search, colour, size, filters), then how to look at it.
    The explorer reads their state and listens to `changed` and the action signals."""

    changed = Signal()  # anything that changes what is shown or how
    searchRequested = Signal(str)
    fitRequested = Signal()
    relayoutRequested = Signal()
    exportRequested = Signal(str)
    suggestionsRequested = Signal()
    unpinRequested = Signal()
    localRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.rows = (FlowBar("Graph: what is shown", min_width=MIN_WIDTH),
                     FlowBar("Graph: view", min_width=MIN_WIDTH))
        self.filters, self.view = self.rows
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for row in self.rows:
            row.setSizePolicy(policy)
            layout.addWidget(row)
        self.search = QLineEdit(placeholderText="Find an entity…", clearButtonEnabled=True)
        self.search.setMaximumWidth(240)
        self.names = QStringListModel(self)
        completer = QCompleter(self.names, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.search.setCompleter(completer)
        self.search.returnPressed.connect(lambda: self.searchRequested.emit(self.search.text()))
        completer.activated.connect(self.searchRequested)
        self.colour = QComboBox(toolTip="What the node colours mean")
        self.colour.addItem("Colour by type", BY_TYPE)
        self.colour.addItem("Colour by community", BY_COMMUNITY)
        self.size = QComboBox(toolTip="What the node sizes mean")
        self.size.addItem("Size by links", SIZE_BY_DEGREE)
        self.size.addItem("Size by mentions", SIZE_BY_MENTIONS)
        self.types = ChoiceMenu("Types")
        self.communities = ChoiceMenu("Communities")
        self.document = QComboBox(toolTip="Show only the entities of one document")
        self.document.setMaximumWidth(200)
        self.document.setMinimumContentsLength(14)
        self.min_degree = QSpinBox(prefix="Min links ", maximum=10_000, toolTip="Hide entities with fewer links")
        for widget in (self.search, self.colour, self.size, self.types, self.communities, self.document,
                       self.min_degree):
            self.filters.addWidget(widget)
        self.neighbours = self._toggle("Neighbours only", "Show only the selection and its neighbours to this depth")
        self.depth = QSpinBox(prefix="Depth ", minimum=1, maximum=6, toolTip="How many links away counts as near")
        self.focus = self._toggle("Focus", "Dim everything but the selection and its neighbours")
        for widget in (self.neighbours, self.depth, self.focus):
            self.view.addWidget(widget)
        self.view.addSeparator()
        self.fit = self.view.addAction("Fit", lambda: self.fitRequested.emit())
        self.fit.setToolTip("Show the whole graph (key 0)")
        self.labels = self._toggle("Labels", "Show node names that fit", checked=True)
        self.minimap = self._toggle("Minimap", "Show an overview when the graph is larger than the view", checked=True)
        self.table = self._toggle("Table", "Show the entities and relations as tables under the graph")
        for widget in (self.labels, self.minimap, self.table):
            self.view.addWidget(widget)
        self.local = self.view.addAction("Local graph", lambda: self.localRequested.emit())
        self.local.setToolTip("Open the selected entity's neighbourhood in a view of its own")
        self.relayout = self.view.addAction("Re-layout", lambda: self.relayoutRequested.emit())
        self.relayout.setToolTip("Lay the graph out again (pinned nodes stay where you put them)")
        self.unpin = self.view.addAction("Unpin all", lambda: self.unpinRequested.emit())
        self.unpin.setToolTip("Release the nodes you dragged into place")
        export = QToolButton(text="Export", popupMode=QToolButton.ToolButtonPopupMode.InstantPopup)
        export.setToolTip("Save a picture of the view, or the graph as data")
        export.setMenu(QMenu(export))
        for name, text in EXPORTS:
            export.menu().addAction(text, lambda name=name: self.exportRequested.emit(name))
        self.export = export
        self.view.addWidget(export)
        self.suggestions = self.view.addAction("Merge suggestions…", lambda: self.suggestionsRequested.emit())
        self.view.addSeparator()
        for signal in (self.colour.currentIndexChanged, self.size.currentIndexChanged,
                       self.document.currentIndexChanged, self.min_degree.valueChanged, self.depth.valueChanged):
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
