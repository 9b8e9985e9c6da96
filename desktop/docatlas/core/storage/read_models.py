"""Read models of the window: the Documents list, the status bar counts, the passage viewer.

Plain functions over a `Store`, run by the window on a background thread (never on the
GUI thread). The counts come from `document_counts` (kept by triggers) and every
per-document read goes through an index by document, so reading a page of the list, or the
documents a progress tick names, costs what those documents hold, not what the workspace holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.storage import document_list
from docatlas.core.storage.database import Store
from docatlas.core.storage.document_list import DocumentQuery
from docatlas.core.storage.health import HealthMark, health_marks
from docatlas.core.storage.metadata import all_metadata, metadata_of
from docatlas.core.storage.scan_pages import ScanSummary
from docatlas.core.storage.scan_pages import summaries as scan_summaries


@dataclass(frozen=True)
class DocumentSummary:
    """One row of the documents table."""

    id: int
    path: str
    title: str
    kind: str
    size: int
    status: str  # the store's: pending, done, failed
    error: str
    chunks: int
    chunks_done: int
    chunks_failed: int
    chunks_pending: int
    entities: int
    health: HealthMark | None = None  # extraction health of its finished chunks
    metadata: tuple[tuple[str, str], ...] = ()  # author, title, dates, mail headers (sorted by key)
    ocr: ScanSummary | None = None  # OCR's pages and confidence, for a scanned document

    @property
    def name(self) -> str:
        """The file name."""
        return Path(self.path).name


@dataclass(frozen=True)
class WorkspaceCounts:
    """The totals the status bar and the resume banner show."""

    documents: int = 0
    failed: int = 0  # documents that failed to load or have failed chunks
    chunks: int = 0
    chunks_pending: int = 0
    entities: int = 0


def _marks(values: Sequence) -> str:
    return ",".join("?" * len(values))


def _summaries(store: Store, rows: list[dict], everything: bool = False) -> list[DocumentSummary]:
    """Rows of `document_list` with their health marks, metadata and OCR pages (read by id)."""
    ids = [r["id"] for r in rows]
    marks = health_marks(store, None if everything else ids)
    meta = all_metadata(store) if everything else metadata_of(store, ids)
    scans = scan_summaries(store, ids)
    return [
        DocumentSummary(r["id"], r["path"], r["title"], r["kind"], r["size"] or 0, r["status"], r["error"] or "",
                        r["chunks"], r["done"], r["failed"], r["pending"], r["entities"],
                        marks.get(r["id"]), tuple(sorted(meta.get(r["id"], {}).items())),
                        ocr=scans.get(r["id"]))
        for r in rows
    ]


def document_summaries(store: Store) -> list[DocumentSummary]:
    """Every document with its chunk counts by status and the entities found in it (a full read, by id)."""
    return _summaries(store, document_list.page_rows(store, DocumentQuery(), 0, -1), everything=True)


def summaries_page(store: Store, query: DocumentQuery, offset: int, limit: int) -> list[DocumentSummary]:
    """One page of the Documents list in the query's order and filter: what that page holds, no more."""
    return _summaries(store, document_list.page_rows(store, query, offset, limit))


def summaries_of(store: Store, document_ids: Iterable[int], text: str = "") -> list[DocumentSummary]:
    """The rows of these documents only (gone ones, and those the filter `text` hides, left out), by id."""
    ids = sorted(set(document_ids))
    return _summaries(store, document_list.rows_of(store, ids, text)) if ids else []


def document_ids_of(store: Store, paths: Iterable[str]) -> set[int]:
    """Ids of the documents stored under these paths."""
    wanted = sorted(set(paths))
    if not wanted:
        return set()
    return {r["id"] for r in store.query(f"SELECT id FROM documents WHERE path IN ({_marks(wanted)})", wanted)}


def documents_with_work(store: Store) -> set[int]:
    """Ids of the documents that have pending or failed chunks (through the kept counts)."""
    return document_list.ids_with_work(store)


def failed_document_paths(store: Store) -> list[str]:
    """Paths of the documents that failed to load or have failed chunks, oldest first."""
    return document_list.failed_paths(store)


def workspace_counts(store: Store) -> WorkspaceCounts:
    """Documents, failed documents, chunks, pending chunks and entities, in one read of the kept counts."""
    row = document_list.totals(store)
    return WorkspaceCounts(row["documents"], row["failed"], row["chunks"], row["chunks_pending"], row["entities"])


def entities_only_in(store: Store, document_ids: Sequence[int]) -> list[str]:
    """Names of the entities that would disappear with these documents: no other document supports them.

    An entity is supported by a chunk that names it or states a relation with it."""
    ids = sorted(set(document_ids))
    if not ids:
        return []
    marks = _marks(ids)
    keys = [r["key"] for r in store.query(
        "SELECT e.key AS key FROM chunks c JOIN chunk_entities e ON e.chunk_id = c.id"
        f" WHERE c.document_id IN ({marks})"
        " UNION SELECT r.source_key FROM chunks c JOIN chunk_relations r ON r.chunk_id = c.id"
        f" WHERE c.document_id IN ({marks})"
        " UNION SELECT r.target_key FROM chunks c JOIN chunk_relations r ON r.chunk_id = c.id"
        f" WHERE c.document_id IN ({marks})", ids * 3)]
    going = [key for key in keys if not _supported_elsewhere(store, key, ids)]
    if not going:
        return []
    names = {r["key"]: r["name"] for r in store.query(
        f"SELECT key, name FROM entities WHERE key IN ({_marks(going)})", going)}
    return sorted((names.get(k, k) for k in going), key=str.casefold)


def _supported_elsewhere(store: Store, key: str, ids: list[int]) -> bool:
    marks = _marks(ids)
    return bool(store.query(
        "SELECT 1 FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id"
        f" WHERE e.key = ? AND c.document_id NOT IN ({marks})"
        " UNION ALL SELECT 1 FROM chunk_relations r JOIN chunks c ON c.id = r.chunk_id"
        f" WHERE r.source_key = ? AND c.document_id NOT IN ({marks})"
        " UNION ALL SELECT 1 FROM chunk_relations r JOIN chunks c ON c.id = r.chunk_id"
        f" WHERE r.target_key = ? AND c.document_id NOT IN ({marks}) LIMIT 1",
        (key, *ids, key, *ids, key, *ids)))


@dataclass(frozen=True)
class Passage:
    """A chunk of a document with its neighbours, for the passage viewer."""

    document_id: int
    path: str
    title: str
    chunk_id: int
    chunks: tuple[dict, ...]  # {id, idx, text, page_start, page_end, char_start, char_end, lead}, in order
    total_chunks: int

    def stitched(self) -> tuple[str, int]:
        """The document's text these chunks cover, overlap shown once, and its offset in the
        document (chunks stored without spans are joined by a blank line, offset -1)."""
        if any(c["char_start"] is None for c in self.chunks):
            return "\n\n".join(c["text"] for c in self.chunks), -1
        first = self.chunks[0]["char_start"]
        parts, position = [], first
        for c in self.chunks:
            if c is not self.chunks[0]:
                parts.append(c["lead"][max(position - (c["char_start"] - len(c["lead"])), 0):])
            parts.append(c["text"][max(position - c["char_start"], 0):])
            position = max(position, c["char_end"])
        return "".join(parts), first


def passage(store: Store, chunk_id: int, neighbours: int = 2) -> Passage | None:
    """The chunk `chunk_id` and up to `neighbours` chunks either side; None if it is gone."""
    found = store.query(
        "SELECT c.document_id, c.idx, d.path, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
        " WHERE c.id = ?", (chunk_id,))
    if not found:
        return None
    row = found[0]
    chunks = store.query(
        "SELECT id, idx, text, page_start, page_end, char_start, char_end, lead FROM chunks"
        " WHERE document_id = ? AND idx BETWEEN ? AND ?"
        " ORDER BY idx", (row["document_id"], row["idx"] - neighbours, row["idx"] + neighbours))
    total = store.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?", (row["document_id"],))[0]["n"]
    return Passage(row["document_id"], row["path"], row["title"], chunk_id, tuple(chunks), total)


def chunk_text(store: Store, chunk_id: int) -> str | None:
    """The text of one chunk, or None when it is gone."""
    rows = store.query("SELECT text FROM chunks WHERE id = ?", (chunk_id,))
    return rows[0]["text"] if rows else None


def chunk_failure_reasons(store: Store) -> list[tuple[str, int]]:
    """Why chunks failed, grouped: (reason, how many chunks), the most frequent first."""
    rows = store.query("SELECT COALESCE(error, '') AS error, COUNT(*) AS n FROM chunks WHERE status = 'failed' "
                       "GROUP BY COALESCE(error, '') ORDER BY n DESC, error")
    return [(r["error"], r["n"]) for r in rows]


def document_preview(store: Store, document_id: int, chunks: int = 3) -> tuple[int | None, str]:
    """The id of a document's first chunk and the text of its first `chunks` chunks (a preview,
    bounded by the chunk size, never the whole document); (None, "") when it has none."""
    rows = store.query("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY idx LIMIT ?",
                       (document_id, chunks))
    if not rows:
        return None, ""
    return rows[0]["id"], "\n\n".join(r["text"].strip() for r in rows)


def document_text(store: Store, document_id: int, start: int, end: int) -> str:
    """The document's extracted text from `start` to `end`, given back by its chunks and leads.

    Reads only the chunks that overlap the span, so a part of a large document costs
    what it shows."""
    rows = store.query(
        "SELECT char_start, char_end, lead, text FROM chunks WHERE document_id = ? AND char_end > ?"
        " AND char_start - length(lead) < ? ORDER BY char_start", (document_id, start, end))
    if not rows:
        return ""
    first = rows[0]["char_start"] - len(rows[0]["lead"])
    parts, position = [], first
    for row in rows:
        piece_start = row["char_start"] - len(row["lead"])
        piece = row["lead"] + row["text"]
        parts.append(piece[max(position - piece_start, 0):])
        position = max(position, row["char_end"])
    text = "".join(parts)
    return text[max(start - first, 0):max(end - first, 0)]
