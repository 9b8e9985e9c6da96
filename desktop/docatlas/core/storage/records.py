"""The per-chunk records (`chunk_entities`, `chunk_relations`) as re-extraction reads and re-files them.

Records are the source of truth the graph is derived from; these functions read a finished
chunk's records, file them under new keys, and send chunks back to `pending` without them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store

FINISHED = "status IN ('done', 'empty')"


@dataclass(frozen=True)
class FinishedChunk:
    """A chunk whose extraction is finished: its text and what extracted it."""

    id: int
    text: str
    profile: str | None
    model: str | None


def finished_chunks(store: Store) -> list[FinishedChunk]:
    """Every finished chunk, oldest first."""
    return [FinishedChunk(r["id"], r["text"], r["profile"], r["model"])
            for r in store.query(f"SELECT id, text, profile, model FROM chunks WHERE {FINISHED} ORDER BY id")]


def finished_count(store: Store) -> int:
    """How many chunks are finished."""
    return int(store.query(f"SELECT COUNT(*) AS n FROM chunks WHERE {FINISHED}")[0]["n"])


def chunk_records(store: Store, chunk_id: int) -> tuple[list[tuple], list[tuple]]:
    """A chunk's records as stored: (name, type, description) and
    (source, target, keywords, description, strength) tuples, in the order they were written."""
    entities = [tuple(r) for r in store.conn.execute(
        "SELECT name, type, description FROM chunk_entities WHERE chunk_id = ? ORDER BY rowid", (chunk_id,))]
    relations = [tuple(r) for r in store.conn.execute(
        "SELECT source, target, keywords, description, strength FROM chunk_relations WHERE chunk_id = ? "
        "ORDER BY rowid", (chunk_id,))]
    return entities, relations


def entity_record_names(store: Store) -> Iterator[tuple[int, str, str]]:
    """(rowid, key, name) of every entity record."""
    yield from store.conn.execute("SELECT rowid, key, name FROM chunk_entities")


def relation_record_names(store: Store) -> Iterator[tuple[int, str, str, str, str]]:
    """(rowid, source_key, target_key, source, target) of every relation record."""
    yield from store.conn.execute("SELECT rowid, source_key, target_key, source, target FROM chunk_relations")


def refile_records(store: Store, entity_keys: Sequence[tuple[str, int]],
                   relation_keys: Sequence[tuple[str, str, int]]) -> None:
    """Give records new keys in one transaction: (key, rowid) and (source_key, target_key, rowid)."""
    with store.transaction() as conn:
        conn.executemany("UPDATE chunk_entities SET key = ? WHERE rowid = ?", entity_keys)
        conn.executemany("UPDATE chunk_relations SET source_key = ?, target_key = ? WHERE rowid = ?",
                         relation_keys)


def requeue(store: Store, chunk_ids: Sequence[int]) -> tuple[set[str], list[int]]:
    """Send chunks back to `pending` without their records, in one transaction.

    The copies of a requeued chunk (near-duplicates, `duplicates`) go back with it. Returns the
    entity keys their records supported and the documents they belong to. When
    any key was touched the graph is marked dirty, so a crash before the caller re-derives
    it makes the next run rebuild.
    """
    with store.transaction() as conn:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS requeue (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.requeue")
        conn.executemany("INSERT OR IGNORE INTO temp.requeue(id) VALUES (?)", [(int(i),) for i in chunk_ids])
        # A near-duplicate follows its original: it goes back to pending with it, to take its new records.
        conn.execute("INSERT OR IGNORE INTO temp.requeue(id) SELECT chunk_id FROM chunk_copies "
                     "WHERE original_id IN (SELECT id FROM temp.requeue) OR also_id IN (SELECT id FROM temp.requeue)")
        touched = {r[0] for r in conn.execute(
            "SELECT key FROM chunk_entities WHERE chunk_id IN (SELECT id FROM temp.requeue)")}
        for source, target in conn.execute("SELECT source_key, target_key FROM chunk_relations "
                                           "WHERE chunk_id IN (SELECT id FROM temp.requeue)"):
            touched.update((source, target))
        documents = [r[0] for r in conn.execute(
            "SELECT DISTINCT document_id FROM chunks WHERE id IN (SELECT id FROM temp.requeue)")]
        # A finished chunk's concept records are a copy's own names (the model never read them): they stay.
        conn.execute("DELETE FROM chunk_entities WHERE chunk_id IN (SELECT id FROM temp.requeue) "
                     "AND layer != 'concept'")
        conn.execute("DELETE FROM chunk_relations WHERE chunk_id IN (SELECT id FROM temp.requeue) "
                     "AND layer != 'concept'")
        conn.execute("DELETE FROM chunk_mentions WHERE chunk_id IN (SELECT id FROM temp.requeue)")
        conn.execute("UPDATE chunks SET status = 'pending', error = NULL, prompt_hash = NULL, updated_at = ? "
                     "WHERE id IN (SELECT id FROM temp.requeue)", (time.time(),))
        if touched:
            conn.execute("INSERT INTO meta(key, value) VALUES ('graph_dirty', '1') "
                         "ON CONFLICT(key) DO UPDATE SET value = '1'")
    return touched, documents
