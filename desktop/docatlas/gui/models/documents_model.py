"""The documents table: name, type (with OCR's confidence for a scan, per page in the tooltip),
size, chunks, status, entities found (with a health mark, its reason in the tooltip, when
extraction went badly), author or sender, and date.

A model over a paged query: it holds the first rows of the list in the order and filter of
its `DocumentQuery` (sorting and the filter box run in SQL, `core.storage.document_list`),
and asks for the next page (`fetch_wanted`) when the view scrolls to the end of what it
has (Qt's canFetchMore/fetchMore). Pages are read off the GUI thread by `WorkspaceReader`.
`refresh()` takes the first rows again and merges them by document id so the selection
survives; `update()` takes the few rows a progress tick changed and touches only those. The
status text depends on the run in progress (extracting n/m, paused n/m, skipped unchanged),
which the model asks `RunView` about.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QModelRoleDataSpan, Qt, Signal

from docatlas.core.storage.document_list import DocumentQuery
from docatlas.core.storage.read_models import DocumentSummary
from docatlas.gui.formatting import human_size, plain_tip
from docatlas.gui.models.document_cells import (
    AUTHOR,
    CHUNKS,
    COLUMNS,
    DATE,
    ENTITIES,
    HEALTH_MARK,
    ID_ROLE,
    KIND,
    NAME,
    PROGRESS_ROLE,
    ROOT,
    SIZE,
    SORT_KEYS,
    STATUS,
    ModelIndex,
    RunView,
    author_of,
    date_of,
    health_reason,
    metadata_lines,
    status_text,
)
from docatlas.gui.theme import error_color

__all__ = ["AUTHOR", "CHUNKS", "COLUMNS", "DATE", "ENTITIES", "HEALTH_MARK", "ID_ROLE", "KIND",
           "NAME", "PAGE", "PROGRESS_ROLE", "SIZE", "STATUS", "DocumentTableModel", "RunView",
           "author_of", "date_of", "health_reason", "metadata_lines", "status_text"]

PAGE = 200  # rows read at a time


class DocumentTableModel(QAbstractTableModel):
    """The workspace's documents, for a QTableView: the rows read so far of a paged query."""

    fetch_wanted = Signal(int)  # the view reached the end of the rows read: read the page from this offset
    query_changed = Signal()  # the sort or the filter changed: read the first rows again

    def __init__(self, run_view: Callable[[], RunView], parent=None):
        super().__init__(parent)
        self.rows: list[DocumentSummary] = []
        self.total = 0  # rows the query has in all (those read and those not read yet)
        self.query = DocumentQuery()
        self.run_view = run_view
        self.fetching = False  # a page was asked for and has not landed
        self._position: dict[int, int] = {}  # document id -> row
        self._by_path: dict[str, int] = {}  # path -> document id
        self._pending: dict[int, int] = {}  # document id -> pending chunks, for the ETA
        self._pending_before: dict[int, int] | None = None  # document id -> pending chunks up to it

    # -- Qt model API ------------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = ROOT) -> int:
        """Number of documents."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: ModelIndex = ROOT) -> int:
        """Number of columns."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def multiData(self, index: ModelIndex, roleDataSpan: QModelRoleDataSpan) -> None:
        """Every role the view asks of a cell, in one call: a cell being painted asks for about seven,
        and each call from Qt into Python waits for the GIL while a run's threads work (a repaint of
        the table took 53 ms at a run's start for 15 ms of its own work)."""
        for role_data in roleDataSpan:
            role_data.setData(self.data(index, role_data.role()))

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, tooltips and the progress of a document being extracted."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == ID_ROLE:
            return row.id
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == STATUS and row.error:
                return plain_tip(row.error)
            if column == ENTITIES:
                reason = health_reason(row)
                return plain_tip(reason) if reason else None
            if column == KIND and row.ocr is not None:
                return plain_tip(row.ocr.sentence())
            if column == NAME:
                return plain_tip("\n".join((row.path, *metadata_lines(row))))
            return plain_tip(self._display(row, column)) if column in (AUTHOR, DATE) else None
        if role == Qt.ItemDataRole.ForegroundRole and column == STATUS and row.status == "failed" \
                and not row.chunks_pending:
            return error_color()
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (SIZE, CHUNKS, ENTITIES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == PROGRESS_ROLE and column == STATUS and row.chunks_pending and self.run_view().active:
            return (row.chunks_done + row.chunks_failed, row.chunks)
        return None

    def canFetchMore(self, parent: ModelIndex = ROOT) -> bool:
        """More rows than those read match the query."""
        return not parent.isValid() and len(self.rows) < self.total

    def fetchMore(self, parent: ModelIndex = ROOT) -> None:
        """Ask for the next page (it is read in the background and lands in `add_page`)."""
        if self.canFetchMore(parent) and not self.fetching:
            self.fetching = True
            self.fetch_wanted.emit(len(self.rows))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the whole list by a column (in SQL); -1 is the order documents were added in."""
        wanted = replace(self.query, sort=SORT_KEYS.get(column, "id"),
                         descending=order == Qt.SortOrder.DescendingOrder and column in SORT_KEYS)
        if wanted != self.query:
            self.query = wanted
            self.query_changed.emit()

    def set_filter(self, text: str) -> None:
        """Show only documents whose name, title or metadata contains `text` (in SQL)."""
        if text != self.query.text:
            self.query = replace(self.query, text=text)
            self.query_changed.emit()

    def rows_to_read(self) -> int:
        """How many rows a full read should cover: those read so far, at least a page."""
        return max(PAGE, len(self.rows))

    # -- updates -----------------------------------------------------------------------
    def refresh(self, rows: list[DocumentSummary], total: int | None = None) -> None:
        """Show `rows`, the first rows of the query in its order: remove gone documents, move the
        rest into the new order (the selection follows them), insert new ones, update changed ones."""
        self.fetching = False
        new_ids = {r.id for r in rows}
        for position in range(len(self.rows) - 1, -1, -1):
            if self.rows[position].id not in new_ids:
                self.beginRemoveRows(QModelIndex(), position, position)
                del self.rows[position]
                self.endRemoveRows()
        kept = {r.id for r in self.rows}
        order = [r.id for r in rows if r.id in kept]
        if [r.id for r in self.rows] != order:
            self._reorder(order)
        self._reindex()
        self.total = len(rows) if total is None else max(total, len(rows))
        position = 0
        while position < len(rows):
            new = rows[position]
            if position < len(self.rows) and self.rows[position].id == new.id:
                if self.rows[position] != new:
                    self.rows[position] = new
                    self.dataChanged.emit(self.index(position, 0), self.index(position, len(COLUMNS) - 1))
                position += 1
                continue
            end = position + 1  # new documents in a run are inserted together (one signal, one layout)
            while end < len(rows) and rows[end].id not in kept:
                end += 1
            self.beginInsertRows(QModelIndex(), position, end - 1)
            self.rows[position:position] = rows[position:end]
            self.endInsertRows()
            position = end
        self._reindex()

    def _reorder(self, order: list[int]) -> None:
        """Put the rows (the same documents) in `order`, keeping persistent indexes (the selection) on them."""
        self.layoutAboutToBeChanged.emit()
        old = {r.id: position for position, r in enumerate(self.rows)}
        by_id = {r.id: r for r in self.rows}
        self.rows = [by_id[i] for i in order]
        moved = {old[i]: position for position, i in enumerate(order)}
        before = self.persistentIndexList()
        self.changePersistentIndexList(before, [self.index(moved.get(i.row(), i.row()), i.column()) for i in before])
        self.layoutChanged.emit()

    def add_page(self, offset: int, rows: list[DocumentSummary], total: int, query: DocumentQuery) -> None:
        """A page read for `fetch_wanted`: append its documents not shown yet (one read for another
        order or filter is dropped)."""
        self.fetching = False
        if query != self.query:
            return
        new = [r for r in rows if r.id not in self._position]
        self.total = max(total, len(self.rows) + len(new)) if offset <= len(self.rows) else self.total
        if new and offset <= len(self.rows):
            self._append(new)

    def page_failed(self) -> None:
        """The read of a page failed (its sentence is shown elsewhere): scrolling may ask again."""
        self.fetching = False

    def update(self, rows: list[DocumentSummary], total: int | None = None) -> None:
        """Show these rows (a few documents that changed): replace known ones; a new one is appended
        when every row of the query is already shown (else it is read with its page).

        A row whose path another row holds replaces it: the file was read again under a new id."""
        everything = len(self.rows) >= self.total
        added: list[DocumentSummary] = []
        for new in rows:
            position = self._position.get(new.id)
            if position is None:
                previous = self._by_path.get(new.path)
                position = self._position.get(previous) if previous is not None else None
            if position is None:
                added.append(new)
                continue
            old = self.rows[position]
            if new != old:
                self.rows[position] = new
                self._index_row(position, old)
                self.dataChanged.emit(self.index(position, 0), self.index(position, len(COLUMNS) - 1))
        if added and everything:
            self._append(added)
        self.total = max(self.total if total is None else total, len(self.rows))

    def _append(self, added: list[DocumentSummary]) -> None:
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
        self.rows += added
        for position in range(first, len(self.rows)):
            self._index_row(position)
        self.endInsertRows()

    def _reindex(self) -> None:
        self._position, self._by_path, self._pending, self._pending_before = {}, {}, {}, None
        for position in range(len(self.rows)):
            self._index_row(position)

    def _index_row(self, position: int, replaced: DocumentSummary | None = None) -> None:
        self._pending_before = None
        row = self.rows[position]
        if replaced is not None and replaced.id != row.id:
            self._position.pop(replaced.id, None)
            self._pending.pop(replaced.id, None)
        self._position[row.id] = position
        self._by_path[row.path] = row.id
        if row.chunks_pending:
            self._pending[row.id] = row.chunks_pending
        else:
            self._pending.pop(row.id, None)

    def status_changed(self) -> None:
        """The run's state changed (paused, ended): redraw the status column."""
        if self.rows:
            self.dataChanged.emit(self.index(0, STATUS), self.index(len(self.rows) - 1, STATUS))

    def shown_ids(self) -> Collection[int]:
        """Ids of the documents read so far."""
        return self._position.keys()

    def row_by_id(self, document_id: int) -> DocumentSummary | None:
        """The row of a document."""
        position = self._position.get(document_id)
        return None if position is None else self.rows[position]

    # -- cells -------------------------------------------------------------------------
    def _display(self, row: DocumentSummary, column: int) -> str:
        if column == NAME:
            return row.name
        if column == KIND:
            return row.kind.upper() + (f" · OCR {row.ocr.mean_confidence:.0%}" if row.ocr is not None else "")
        if column == SIZE:
            return human_size(row.size)
        if column == CHUNKS:
            return str(row.chunks)
        if column == STATUS:
            run = self.run_view()
            return status_text(row, run, self._eta(row, run))
        if column == AUTHOR:
            return author_of(row)
        if column == DATE:
            return date_of(row)
        return f"{row.entities} {HEALTH_MARK}" if health_reason(row) else str(row.entities)

    def _eta(self, row: DocumentSummary, run: RunView) -> float | None:
        """When this document should be done: chunks are extracted in document order."""
        if not run.active or run.seconds_per_chunk is None or not row.chunks_pending:
            return None
        if self._pending_before is None:  # pending chunks up to each document, summed once per change
            running, self._pending_before = 0, {}
            for document_id in sorted(self._pending):
                running += self._pending[document_id]
                self._pending_before[document_id] = running
        return self._pending_before.get(row.id, 0) * run.seconds_per_chunk
