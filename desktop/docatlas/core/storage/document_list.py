"""The Documents list as pages: one sort order and filter in SQL, read `limit` rows at a time.

Counts come from `document_counts` (kept by triggers, migration 14), so a page costs what
its rows hold (their health figures, metadata and OCR pages through per-document indexes),
never a scan of every chunk or entity record. Sorting orders the whole list (ties by id),
so the pages a window reads one after another join up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store

# the file name of a path (what the Name column shows), for sorting and filtering in SQL
_SLASHED = "replace(d.path, '\\', '/')"
NAME_SQL = f"replace({_SLASHED}, rtrim({_SLASHED}, replace({_SLASHED}, '/', '')), '')"


def _meta(*keys: str) -> str:
    return "COALESCE(" + ", ".join(
        f"(SELECT value FROM document_metadata m WHERE m.document_id = d.id AND m.key = '{k}')" for k in keys
    ) + ", '')"


STATUS_SQL = ("CASE WHEN n.pending > 0 THEN 1 WHEN d.status = 'failed' THEN 2"
              " WHEN n.failed > 0 THEN 2 ELSE 0 END")
SORTS = {  # sort key -> its SQL expression
    "id": "d.id",
    "name": f"lower({NAME_SQL})",
    "kind": "d.kind",
    "size": "COALESCE(d.size, 0)",
    "chunks": "n.chunks",
    "status": STATUS_SQL,
    "entities": "n.entities",
    "author": f"lower({_meta('author', 'from')})",
    "date": _meta("date", "created", "modified"),
}

_COLUMNS = ("d.id AS id, d.path AS path, d.title AS title, d.kind AS kind, d.size AS size, d.status AS status,"
            " d.error AS error, COALESCE(n.chunks, 0) AS chunks, COALESCE(n.done, 0) AS done,"
            " COALESCE(n.failed, 0) AS failed, COALESCE(n.pending, 0) AS pending,"
            " COALESCE(n.entities, 0) AS entities")
_FROM = " FROM documents d LEFT JOIN document_counts n ON n.document_id = d.id"


@dataclass(frozen=True)
class DocumentQuery:
    """Which documents the list shows and in what order."""

    sort: str = "id"  # a key of SORTS
    descending: bool = False
    text: str = ""  # the filter box: name, title or any metadata value contains it (case-insensitive)


def _filter(text: str) -> tuple[str, list]:
    if not text:
        return "", []
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return (f" WHERE ({NAME_SQL} LIKE ? ESCAPE '\\' OR d.title LIKE ? ESCAPE '\\' OR EXISTS"
            " (SELECT 1 FROM document_metadata m WHERE m.document_id = d.id AND m.value LIKE ? ESCAPE '\\'))",
            [pattern] * 3)


def _order(query: DocumentQuery) -> str:
    direction = " DESC" if query.descending else ""
    expression = SORTS.get(query.sort, "d.id")
    return f" ORDER BY {expression}{direction}, d.id{direction}"


def page_rows(store: Store, query: DocumentQuery, offset: int, limit: int) -> list[dict]:
    """The raw rows (id, path, ..., counts) of one page of the list."""
    where, params = _filter(query.text)
    return store.query(f"SELECT {_COLUMNS}{_FROM}{where}{_order(query)} LIMIT ? OFFSET ?",
                       (*params, int(limit), int(offset)))


def rows_of(store: Store, document_ids: Iterable[int], text: str = "") -> list[dict]:
    """The raw rows of these documents that pass the filter `text`, by id."""
    ids = sorted({int(i) for i in document_ids})
    found: list[dict] = []
    where, params = _filter(text)
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        clause = f"{where} AND d.id IN ({marks})" if where else f" WHERE d.id IN ({marks})"
        found += store.query(f"SELECT {_COLUMNS}{_FROM}{clause} ORDER BY d.id", (*params, *part))
    return found


def total(store: Store, text: str = "") -> int:
    """How many documents pass the filter `text`."""
    where, params = _filter(text)
    return int(store.query(f"SELECT COUNT(*) AS n FROM documents d{where}", params)[0]["n"])


def ids_with_work(store: Store) -> set[int]:
    """Documents with pending or failed chunks (one row per document, through its index)."""
    return {r["document_id"] for r in store.query(
        "SELECT document_id FROM document_counts WHERE pending > 0 UNION "
        "SELECT document_id FROM document_counts WHERE failed > 0")}


def failed_documents(store: Store) -> dict[int, str]:
    """id -> path of the documents that failed to load or have failed chunks, oldest first."""
    return {r["id"]: r["path"] for r in store.query(
        "SELECT id, path FROM documents WHERE status = 'failed' OR id IN"
        " (SELECT document_id FROM document_counts WHERE failed > 0) ORDER BY id")}


def failed_paths(store: Store) -> list[str]:
    """Paths of the documents that failed to load or have failed chunks, oldest first."""
    return list(failed_documents(store).values())


def chunk_totals(store: Store, document_ids: Sequence[int] | None = None) -> dict[int, dict[str, int]]:
    """Per document: chunks, done (or empty), failed, pending, entities."""
    sql = "SELECT document_id, chunks, done, failed, pending, entities FROM document_counts"
    if document_ids is None:
        return {r["document_id"]: dict(r) for r in store.query(sql)}
    ids = sorted({int(i) for i in document_ids})
    found: dict[int, dict[str, int]] = {}
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        found.update((r["document_id"], dict(r))
                     for r in store.query(f"{sql} WHERE document_id IN ({','.join('?' * len(part))})", part))
    return found


def totals(store: Store) -> dict[str, int]:
    """Documents, failed documents, chunks, pending chunks and entities, without reading a chunk."""
    row = store.query(
        "SELECT (SELECT COUNT(*) FROM documents) AS documents,"
        " (SELECT COUNT(*) FROM documents WHERE status = 'failed' OR id IN"
        "  (SELECT document_id FROM document_counts WHERE failed > 0)) AS failed,"
        " (SELECT COALESCE(SUM(chunks), 0) FROM document_counts) AS chunks,"
        " (SELECT COALESCE(SUM(pending), 0) FROM document_counts WHERE pending > 0) AS chunks_pending,"
        " (SELECT COUNT(*) FROM entities) AS entities")[0]
    return dict(row)


def reading_progress(store: Store) -> tuple[int, int]:
    """(documents whose every chunk the model has read, documents with text): what the graph covers so far."""
    row = store.query("SELECT COUNT(*) AS total, COALESCE(SUM(pending = 0), 0) AS done"
                      " FROM document_counts WHERE chunks > 0")[0]
    return int(row["done"]), int(row["total"])


def parents(store: Store) -> dict[int, int]:
    """document id -> the document it came inside (an attachment's message, a message's mailbox)."""
    return {int(r["document_id"]): int(r["parent_id"])
            for r in store.query("SELECT document_id, parent_id FROM document_parts")}
