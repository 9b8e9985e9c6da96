"""What the documents table shows of one row: its columns, the status text, the author and date,
the health mark's reason and the metadata lines (plain functions of a `DocumentSummary`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from docatlas.core.ingest.health import document_reason
from docatlas.core.storage.read_models import DocumentSummary
from docatlas.gui.formatting import duration

COLUMNS = ("Name", "Type", "Size", "Chunks", "Status", "Entities", "Author / From", "Date")
NAME, KIND, SIZE, CHUNKS, STATUS, ENTITIES, AUTHOR, DATE = range(len(COLUMNS))
PROGRESS_ROLE = Qt.ItemDataRole.UserRole + 1  # (done, total) while a document is being extracted
ID_ROLE = Qt.ItemDataRole.UserRole + 3

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


# the column a header click sorts by -> its sort in `core.storage.document_list` (ties by id)
SORT_KEYS = {NAME: "name", KIND: "kind", SIZE: "size", CHUNKS: "chunks", STATUS: "status", ENTITIES: "entities",
             AUTHOR: "author", DATE: "date"}
