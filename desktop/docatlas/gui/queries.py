"""Read-only views of a workspace that the window shows (GUI thread, small queries).

They read the core tables through `Store.query`; nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from docatlas.core.graph.export import entity_sources
from docatlas.core.storage.database import DocumentRow, Store


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

    @property
    def name(self) -> str:
        """The file name."""
        return Path(self.path).name


def document_summaries(store: Store) -> list[DocumentSummary]:
    """Every document with its chunk counts by status and the entities found in it."""
    rows = store.query(
        "SELECT d.id, d.path, d.title, d.kind, d.size, d.status, d.error, COUNT(c.id) AS chunks,"
        " COALESCE(SUM(c.status IN ('done', 'empty')), 0) AS done,"
        " COALESCE(SUM(c.status = 'failed'), 0) AS failed,"
        " COALESCE(SUM(c.status = 'pending'), 0) AS pending"
        " FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id ORDER BY d.id"
    )
    entities = {r["id"]: r["n"] for r in store.query(
        "SELECT c.document_id AS id, COUNT(DISTINCT e.key) AS n FROM chunk_entities e"
        " JOIN chunks c ON c.id = e.chunk_id GROUP BY c.document_id")}
    return [
        DocumentSummary(r["id"], r["path"], r["title"], r["kind"], r["size"] or 0, r["status"], r["error"] or "",
                        r["chunks"], r["done"], r["failed"], r["pending"], entities.get(r["id"], 0))
        for r in rows
    ]


def failed_documents(store: Store) -> list[DocumentRow]:
    """Documents that failed to load or have failed chunks."""
    return [d for d in store.documents() if d.status == "failed" or store.chunk_counts(d.id).get("failed")]


def documents_with_work(store: Store) -> set[int]:
    """Ids of the documents that have pending or failed chunks."""
    return {r["document_id"] for r in store.query(
        "SELECT DISTINCT document_id FROM chunks WHERE status IN ('pending', 'failed')")}


def entities_only_in(store: Store, documents: list[str]) -> list[str]:
    """Names of the entities that would disappear with these documents (paths): no other supports them."""
    going = set(documents)
    keys = [key for key, found in entity_sources(store).items() if found and set(found) <= going]
    if not keys:
        return []
    names = {r["key"]: r["name"] for r in store.query(
        f"SELECT key, name FROM entities WHERE key IN ({','.join('?' * len(keys))})", keys)}
    return sorted((names.get(k, k) for k in keys), key=str.casefold)


@dataclass(frozen=True)
class Passage:
    """A chunk of a document with its neighbours, for the passage viewer."""

    document_id: int
    path: str
    title: str
    chunk_id: int
    chunks: tuple[dict, ...]  # {id, idx, text, page_start, page_end}, in order
    total_chunks: int


def passage(store: Store, chunk_id: int, neighbours: int = 2) -> Passage | None:
    """The chunk `chunk_id` and up to `neighbours` chunks either side; None if it is gone."""
    found = store.query(
        "SELECT c.document_id, c.idx, d.path, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
        " WHERE c.id = ?", (chunk_id,))
    if not found:
        return None
    row = found[0]
    chunks = store.query(
        "SELECT id, idx, text, page_start, page_end FROM chunks WHERE document_id = ? AND idx BETWEEN ? AND ?"
        " ORDER BY idx", (row["document_id"], row["idx"] - neighbours, row["idx"] + neighbours))
    total = store.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?", (row["document_id"],))[0]["n"]
    return Passage(row["document_id"], row["path"], row["title"], chunk_id, tuple(chunks), total)
