"""What makes a chunk interesting to extract soon: the questions asked, and names the model has not read.

`asked_questions` (migration 16) keeps the last questions asked (a trigger copies each new
answer's question). `question_matches` ranks the chunks of an id range that match an FTS5
expression (BM25, best first); `new_names` counts, per chunk of an id range, its concept-layer
names that no model record supports yet; `unread_matches` gives the unread chunks that match
the questions, for a run to take first. Each is one indexed query per batch of chunks, never
a scan per pick.
"""

from __future__ import annotations

from docatlas.core.base.concepts import CONCEPT, MODEL
from docatlas.core.storage.database import ChunkRow, Store

RECENT_QUESTIONS = 20  # the newest questions that order a run


def recent_questions(store: Store, limit: int = RECENT_QUESTIONS) -> list[str]:
    """The newest questions asked, newest first."""
    return [r["question"] for r in
            store.query("SELECT question FROM asked_questions ORDER BY asked_at DESC LIMIT ?", (limit,))]


def questions_stamp(store: Store) -> tuple[int, float]:
    """(how many, newest time) of the questions kept: it changes when a question is asked."""
    row = store.query("SELECT COUNT(*) AS n, COALESCE(MAX(asked_at), 0) AS at FROM asked_questions")[0]
    return int(row["n"]), float(row["at"])


def question_matches(store: Store, expression: str, low: int, high: int, limit: int) -> dict[int, float]:
    """Chunk id -> BM25 rank (lower is better) of the best `limit` chunks in ids `low`..`high`
    that match `expression` (quoted words only: FTS5 takes it as it is)."""
    rows = store.query("SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ? "
                       "ORDER BY rank LIMIT ?", (expression, low, high, limit))
    return {int(r["rowid"]): float(r["rank"]) for r in rows}


def new_names(store: Store, low: int, high: int) -> dict[int, int]:
    """Chunk id -> how many of its concept-layer names no model record supports yet (ids `low`..`high`)."""
    rows = store.query(
        "SELECT ce.chunk_id AS id, COUNT(*) AS n FROM chunk_entities ce "
        "WHERE ce.chunk_id BETWEEN ? AND ? AND ce.layer = ? "
        "AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.key = ce.key AND e.layer = ?) GROUP BY ce.chunk_id",
        (low, high, CONCEPT, MODEL))
    return {int(r["id"]): int(r["n"]) for r in rows}


def unread_rows(store: Store, chunk_ids: list[int]) -> list[ChunkRow]:
    """The chunks of `chunk_ids` the model has not read (pending or failed), without text, in id order."""
    found: list[ChunkRow] = []
    for at in range(0, len(chunk_ids), 500):
        part = chunk_ids[at:at + 500]
        found += [ChunkRow(**r) for r in store.query(
            "SELECT id, document_id, idx, '' AS text, tokens, page_start, page_end, status FROM chunks "
            f"WHERE id IN ({','.join('?' * len(part))}) AND status IN ('pending', 'failed') ORDER BY id", part)]
    return found


def unread_matches(store: Store, expression: str, limit: int) -> list[ChunkRow]:
    """The chunks the model has not read (pending or failed) that match `expression`, best first, without text."""
    rows = store.query(
        "SELECT c.id, c.document_id, c.idx, '' AS text, c.tokens, c.page_start, c.page_end, c.status "
        "FROM (SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) m "
        "JOIN chunks c ON c.id = m.id WHERE c.status IN ('pending', 'failed') ORDER BY m.rank",
        (expression, limit))
    return [ChunkRow(**r) for r in rows]
