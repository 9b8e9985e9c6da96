"""Entities and relations as sortable tables beside the graph (Gephi's data laboratory is the anchor).

The rows are the canvas's: the same filters, as index arrays into the `GraphModel`, sorted
with numpy (a click on a header costs one argsort, not a Python comparison per row), and
the views ask only for the rows they show. Selection goes both ways: rows chosen here
select on the canvas (`rowsChosen`), and the canvas's selection is selected here
(`show_selection`). Cells are plain text. "Export CSV" writes the table as shown.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QPushButton, QTableView, QTabWidget, QVBoxLayout, QWidget

from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.query import Look, edges_among

ENTITY_COLUMNS = ("Name", "Type", "Links", "Mentions", "Documents")
RELATION_COLUMNS = ("Source", "Target", "Weight", "Keywords")
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()


class ArrayTable(QAbstractTableModel):
    """Rows are indices into the model's nodes or edges; columns are read from its arrays."""

    def __init__(self, columns: tuple[str, ...], parent: QWidget | None = None):
        super().__init__(parent)
        self.columns = columns
        self.model: GraphModel | None = None
        self.rows = np.zeros(0, np.int64)
        self._sort = (0, Qt.SortOrder.AscendingOrder)

    def set_rows(self, model: GraphModel, rows: np.ndarray) -> None:
        """Show these indices (re-sorted as the user last asked)."""
        self.beginResetModel()
        self.model, self.rows = model, np.asarray(rows, np.int64)
        self._apply_sort()
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        """Number of rows shown."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        """Number of columns."""
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """Column titles."""
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A cell's text (plain: item views do not render markup)."""
        if role != Qt.ItemDataRole.DisplayRole or self.model is None:
            return None
        return self.cell(int(self.rows[index.row()]), index.column())

    def cell(self, item: int, column: int) -> object:
        """The value of one column for one node or edge."""
        raise NotImplementedError

    def sort_key(self, column: int) -> np.ndarray | list:
        """Values to sort all items by, for one column."""
        raise NotImplementedError

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by a column (numpy argsort over the shown rows)."""
        self._sort = (column, order)
        self.layoutAboutToBeChanged.emit()
        self._apply_sort()
        self.layoutChanged.emit()

    def _apply_sort(self) -> None:
        if self.model is None or len(self.rows) == 0:
            return
        column, order = self._sort
        values = self.sort_key(column)
        keys = np.asarray(values, dtype=object if isinstance(values, list) else None)[self.rows]
        order_ = np.argsort(keys, kind="stable")
        self.rows = self.rows[order_[::-1] if order == Qt.SortOrder.DescendingOrder else order_]

    def export_rows(self) -> list[list[object]]:
        """Every shown row, in order, as values."""
        return [[self.cell(int(i), c) for c in range(len(self.columns))] for i in self.rows.tolist()]


class EntityTable(ArrayTable):
    """Entities: name, type, links, mentions, documents."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(ENTITY_COLUMNS, parent)

    def cell(self, item: int, column: int) -> object:
        """Name, type, degree, mentions or document count."""
        m = self.model
        return (m.names[item], m.types[item], int(m.degree[item]), int(m.mentions[item]),
                int(m.document_count[item]))[column]

    def sort_key(self, column: int) -> np.ndarray | list:
        """Names and types sort case-folded."""
        m = self.model
        if column == 0:
            return m.folded
        if column == 1:
            return m.types
        return (m.degree, m.mentions, m.document_count)[column - 2]


class RelationTable(ArrayTable):
    """Relations: source, target, weight, keywords."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(RELATION_COLUMNS, parent)

    def cell(self, item: int, column: int) -> object:
        """Source name, target name, weight or keywords."""
        m = self.model
        if column < 2:
            return m.names[int((m.sources if column == 0 else m.targets)[item])]
        return round(float(m.weights[item]), 3) if column == 2 else m.keywords[item]

    def sort_key(self, column: int) -> np.ndarray | list:
        """Ends sort by folded name."""
        m = self.model
        if column < 2:
            ends = m.sources if column == 0 else m.targets
            return [m.folded[int(i)] for i in ends]
        return m.weights if column == 2 else m.keywords


class GraphTables(QWidget):
    """The two tables in tabs, with an Export CSV button; in step with the canvas."""

    rowsChosen = Signal(list)  # entity keys chosen in the entity table
    edgeChosen = Signal(int)  # an edge chosen in the relation table
    exportRequested = Signal(str)  # "entities" or "relations"

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entities, self.relations = EntityTable(self), RelationTable(self)
        self.tabs = QTabWidget()
        self.entity_view, self.relation_view = QTableView(), QTableView()
        for view, table, title in ((self.entity_view, self.entities, "Entities"),
                                   (self.relation_view, self.relations, "Relations")):
            view.setModel(table)
            view.setSortingEnabled(True)
            view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            view.setAlternatingRowColors(True)
            view.verticalHeader().setDefaultSectionSize(22)
            view.verticalHeader().hide()
            view.horizontalHeader().setStretchLastSection(True)
            self.tabs.addTab(view, title)
        self.entity_view.horizontalHeader().resizeSection(0, 260)
        self.entity_view.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.relation_view.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.entity_view.selectionModel().selectionChanged.connect(self._entities_chosen)
        self.relation_view.selectionModel().selectionChanged.connect(self._relation_chosen)
        self.export = QPushButton("Export CSV…")
        self.export.setToolTip("Write the table as shown (filtered and sorted) to a CSV file")
        self.export.clicked.connect(lambda: self.exportRequested.emit(
            "entities" if self.tabs.currentIndex() == 0 else "relations"))
        self._syncing = False
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.export)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(row)

    def set_view(self, model: GraphModel, look: Look) -> None:
        """Show the canvas's shown entities and the relations among them."""
        self._syncing = True
        self.entities.set_rows(model, np.nonzero(look.shown)[0])
        self.relations.set_rows(model, np.nonzero(edges_among(model, look.shown))[0])
        self._syncing = False

    def show_selection(self, nodes: list[int], edge: int | None) -> None:
        """Select the canvas's selection here (and scroll to it)."""
        self._syncing = True
        for view, table, wanted in ((self.entity_view, self.entities, nodes),
                                    (self.relation_view, self.relations, [] if edge is None else [edge])):
            chosen = QItemSelection()
            rows = np.nonzero(np.isin(table.rows, np.asarray(wanted, np.int64)))[0].tolist() if wanted else []
            for r in rows:
                chosen.select(table.index(r, 0), table.index(r, len(table.columns) - 1))
            view.selectionModel().select(chosen, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            if rows:
                view.scrollTo(table.index(rows[0], 0))
        self._syncing = False

    def _entities_chosen(self) -> None:
        if self._syncing or self.entities.model is None:
            return
        rows = sorted({i.row() for i in self.entity_view.selectionModel().selectedRows()})
        self.rowsChosen.emit([self.entities.model.keys[int(self.entities.rows[r])] for r in rows])

    def _relation_chosen(self) -> None:
        if self._syncing or self.relations.model is None:
            return
        rows = [i.row() for i in self.relation_view.selectionModel().selectedRows()]
        if rows:
            self.edgeChosen.emit(int(self.relations.rows[rows[0]]))
