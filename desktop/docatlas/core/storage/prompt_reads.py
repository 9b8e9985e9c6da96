"""Read models of the Prompts tab: the chunks a prompt can be tried on, and their text."""

from __future__ import annotations

from docatlas.core.storage.database import Store


def trial_chunks(store: Store, limit: int) -> list[dict]:
    """Up to `limit` chunks in document order: {id, idx, tokens, title} (title: the document's)."""
    return store.query(
        "SELECT c.id, c.idx, c.tokens, d.title FROM chunks c JOIN documents d ON d.id = c.document_id "
        "ORDER BY d.id, c.idx LIMIT ?", (limit,))


def chunk_texts(store: Store, chunk_id: int | None) -> list[dict]:
    """[{text}] of one chunk, or [] when it is gone (or none is chosen)."""
    return [] if chunk_id is None else store.query("SELECT text FROM chunks WHERE id = ?", (chunk_id,))
