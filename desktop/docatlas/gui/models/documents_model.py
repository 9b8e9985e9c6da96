"""The documents table: name, type (with OCR's confidence for a scan, per page in the tooltip),
size, chunks, status, entities found (with a health mark, its reason in the tooltip, when
extraction went badly), author or sender, and date.

Rows are `DocumentSummary` read off the GUI thread (see `WorkspaceReader`); `refresh()`
takes a full read and diffs by document id so the selection survives, `update()` takes the
few rows a progress tick changed and touches only those. The status text depends on the run in
progress (extracting n/m, paused n/m, skipped unchanged), which the model asks
`RunView` about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from docatlas.core.ingest.health import document_reason
from docatlas.core.storage.read_models import DocumentSummary
from docatlas.gui.formatting import duration, human_size, plain_tip
from docatlas.gui.theme import error_color

COLUMNS = ("Name", "Type", "Size", "Chunks", "Status", "Entities", "Author / From", "Date")
NAME, KIND, SIZE, CHUNKS, STATUS, ENTITIES, AUTHOR, DATE = range(len(COLUMNS))
PROGRESS_ROLE = Qt.ItemDataRole.UserRole + 1  # (done, total) while a document is being extracted
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
ID_ROLE = Qt.ItemDataRole.UserRole + 3
FILTER_ROLE = Qt.ItemDataRole.UserRole + 4  # what the filter box matches: name, title and every metadata value

ModelIndex = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()


@dataclass(frozen=True)
class RunView:
    """What the table needs to know about the run in progress."""

    active: bool = False  # a run is extracting
    paused: bool = False
    skipped: frozenset[str] = field(default_factory=frozenset)  # paths found unchanged
    worked: frozenset[int] = field(default_factory=frozenset)  # documents with chunks to do at the start
    seconds_per_chunk: float | None = None  # wall time per chunk so far (model calls run in parallel)


HEALTH_MARK = "⚠"


def health_reason(row: DocumentSummary) -> str:
    """Why the document's extraction health is marked, one or two sentences; "" when it is fine."""
    mark = row.health
    return "" if mark is None else document_reason(mark.chunks, mark.no_entity, mark.ungrounded, mark.cut,
                                                   mark.remapped)


def author_of(row: DocumentSummary) -> str:
    """Who wrote the document (its author) or sent it (an email's From)."""
    meta = dict(row.metadata)
    return meta.get("author") or meta.get("from") or ""


def date_of(row: DocumentSummary) -> str:
    """The document's date: an email's Date, else created, else modified (ISO, so it sorts)."""
    meta = dict(row.metadata)
    return (meta.get("date") or meta.get("created") or meta.get("modified") or "")[:19].replace("T", " ")


def metadata_lines(row: DocumentSummary) -> list[str]:
    """"key: value" for each metadata pair, for a tooltip or the preview."""
    return [f"{key}: {value}" for key, value in row.metadata]


def status_text(row: DocumentSummary, run: RunView, eta: float | None = None) -> str:
    """The Status column: pending, extracting n/m (with ETA), paused n/m, done, failed: reason,
    skipped (unchanged)."""
    finished = row.chunks_done + row.chunks_failed
    if row.chunks_pending and run.active:
        text = f"{'paused' if run.paused else 'extracting'} {finished}/{row.chunks}"
        return text + (f" · ETA {duration(eta)}" if eta and not run.paused else "")
    if row.chunks_pending:
        return f"pending {finished}/{row.chunks}" if finished else "pending"
    if row.status == "failed":
        return f"failed: {row.error}" if row.error else "failed"
    if row.path in run.skipped and row.id not in run.worked:
        return "skipped (unchanged)"
    return "done"


class DocumentTableModel(QAbstractTableModel):
    """The workspace's documents, for a QTableView."""

    def __init__(self, run_view: Callable[[], RunView], parent=None):
        super().__init__(parent)
        self.rows: list[DocumentSummary] = []
        self.run_view = run_view
        self._position: dict[int, int] = {}  # document id -> row
        self._by_path: dict[str, int] = {}  # path -> document id
        self._pending: dict[int, int] = {}  # document id -> pending chunks, for the ETA

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

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell text, tooltips, sort keys and the progress of a document being extracted."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == SORT_ROLE:
            return self._sort_key(row, column)
        if role == ID_ROLE:
            return row.id
        if role == FILTER_ROLE:
            return " ".join((row.name, row.title, *(value for _, value in row.metadata)))
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

    # -- updates -----------------------------------------------------------------------
    def refresh(self, rows: list[DocumentSummary]) -> None:
        """Show `rows` (ordered by id): remove gone documents, update changed ones, append new ones."""
        new_ids = {r.id for r in rows}
        for position in range(len(self.rows) - 1, -1, -1):
            if self.rows[position].id not in new_ids:
                self.beginRemoveRows(QModelIndex(), position, position)
                del self.rows[position]
                self.endRemoveRows()
        self._reindex()
        self.update(rows)

    def update(self, rows: list[DocumentSummary]) -> None:
        """Show these rows (a few documents that changed): replace known ones, append new ones.

        A row whose path another row holds replaces it: the file was read again under a new id."""
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
        if added:
            first = len(self.rows)
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            self.rows += added
            for position in range(first, len(self.rows)):
                self._index_row(position)
            self.endInsertRows()

    def _reindex(self) -> None:
        self._position, self._by_path, self._pending = {}, {}, {}
        for position in range(len(self.rows)):
            self._index_row(position)

    def _index_row(self, position: int, replaced: DocumentSummary | None = None) -> None:
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
        before = sum(n for document_id, n in self._pending.items() if document_id <= row.id)
        return before * run.seconds_per_chunk

    def _sort_key(self, row: DocumentSummary, column: int) -> Any:
        keys = {NAME: row.name.casefold(), KIND: row.kind, SIZE: row.size, CHUNKS: row.chunks,
                STATUS: status_text(row, self.run_view()), ENTITIES: row.entities,
                AUTHOR: author_of(row).casefold(), DATE: date_of(row)}
        return keys[column]
