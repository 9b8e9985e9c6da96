"""Embeddings and their work queue: the `embeddings` and `embed_queue` tables.

Triggers (migration 2) put every changed row on the queue; these functions read the
queue, the texts its rows are embedded from, and write or drop vectors (float32 blobs,
packed by `docatlas.core.retrieval.vectors`), always bumping the version counters.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.base.keys import split_relation_ref
from docatlas.core.storage.database import Store

_BUMP = ("INSERT INTO meta(key, value) VALUES (?, '1') "
         "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")


@dataclass(frozen=True)
class QueuedItem:
    """One row waiting for an embedding."""

    id: int
    kind: str
    ref: str


@dataclass(frozen=True)
class NewVector:
    """A vector to store: its row, the hash of the text it was made from, the packed blob."""

    queue_id: int
    kind: str
    ref: str
    text_hash: str
    dim: int
    blob: bytes


def bump_versions(conn: sqlite3.Connection) -> None:
    """Mark the vectors (and so the answers' inputs) as changed, inside the caller's transaction."""
    conn.execute(_BUMP, ("vectors_version",))
    conn.execute(_BUMP, ("index_version",))


def queue_length(store: Store) -> int:
    """How many rows wait for an embedding."""
    return int(store.query("SELECT COUNT(*) AS n FROM embed_queue")[0]["n"])


def queued(store: Store, limit: int) -> list[QueuedItem]:
    """The oldest `limit` queue rows."""
    rows = store.query("SELECT id, kind, ref FROM embed_queue ORDER BY id LIMIT ?", (limit,))
    return [QueuedItem(int(r["id"]), r["kind"], r["ref"]) for r in rows]


def queue_everything(store: Store, model: str) -> None:
    """Queue every chunk, entity, relation and written report, and record `model` as the one in use."""
    with store.transaction() as conn:
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'chunk', CAST(id AS TEXT) FROM chunks")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'entity', key FROM entities")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) "
                     "SELECT 'relation', source_key || char(31) || target_key FROM relations")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) "
                     "SELECT 'community', CAST(id AS TEXT) FROM communities WHERE status = 'done'")
        store.set_meta("embed_model", model, conn)


def source_texts(store: Store, kind: str, refs: Sequence[str]) -> dict[str, str]:
    """The full text each ref of `kind` is embedded from; refs whose row is gone are left out."""
    out: dict[str, str] = {}
    if kind == "relation":
        for ref in refs:
            source, target = split_relation_ref(ref)
            rows = store.query(
                "SELECT r.keywords, r.description, COALESCE(s.name, r.source_key) AS s, "
                "COALESCE(t.name, r.target_key) AS t FROM relations r "
                "LEFT JOIN entities s ON s.key = r.source_key LEFT JOIN entities t ON t.key = r.target_key "
                "WHERE r.source_key = ? AND r.target_key = ?", (source, target))
            if rows:
                r = rows[0]
                out[ref] = f"{r['s']} - {r['t']}: {r['keywords']}. {r['description']}"
        return out
    if kind not in ("entity", "chunk", "community"):
        raise ValueError(f"unknown embedding kind {kind!r}")
    params = [int(r) for r in refs if r.isdigit()] if kind in ("chunk", "community") else list(refs)
    if not params:
        return out
    marks = ",".join("?" * len(params))
    if kind == "entity":
        sql = f"SELECT key AS ref, name || ': ' || description AS text FROM entities WHERE key IN ({marks})"
    elif kind == "chunk":
        sql = f"SELECT CAST(id AS TEXT) AS ref, text FROM chunks WHERE id IN ({marks})"
    else:
        sql = (f"SELECT CAST(id AS TEXT) AS ref, title || '\n' || summary AS text FROM communities "
               f"WHERE status = 'done' AND id IN ({marks})")
    for row in store.query(sql, params):
        out[row["ref"]] = row["text"]
    return out


def stored_hashes(store: Store, kind: str, refs: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(model, text hash) of the stored vector of each ref that has one."""
    if not refs:
        return {}
    marks = ",".join("?" * len(refs))
    rows = store.query(f"SELECT ref, model, hash FROM embeddings WHERE kind = ? AND ref IN ({marks})",
                       [kind, *refs])
    return {r["ref"]: (r["model"], r["hash"]) for r in rows}


def drop_queued(store: Store, queue_ids: Sequence[int], gone: Sequence[tuple[str, str]]) -> None:
    """Take rows off the queue; the vectors of the (kind, ref) pairs in `gone` are deleted too."""
    with store.transaction() as conn:
        if gone:
            conn.executemany("DELETE FROM embeddings WHERE kind = ? AND ref = ?", list(gone))
            bump_versions(conn)
        conn.executemany("DELETE FROM embed_queue WHERE id = ?", [(i,) for i in queue_ids])


def write_vectors(store: Store, model: str, rows: Sequence[NewVector]) -> None:
    """Store a batch's vectors and take their rows off the queue, together."""
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings(kind, ref, model, hash, dim, vector) VALUES (?, ?, ?, ?, ?, ?)",
            [(v.kind, v.ref, model, v.text_hash, v.dim, v.blob) for v in rows])
        bump_versions(conn)
        conn.executemany("DELETE FROM embed_queue WHERE id = ?", [(v.queue_id,) for v in rows])


def vector_rows(store: Store, kind: str, model: str) -> list[tuple[str, int, bytes]]:
    """(ref, dim, blob) of every vector of `kind` made by `model`."""
    rows = store.query("SELECT ref, dim, vector FROM embeddings WHERE kind = ? AND model = ?", (kind, model))
    return [(r["ref"], r["dim"], r["vector"]) for r in rows]


def has_vectors(store: Store, kinds: Sequence[str], model: str) -> bool:
    """True when at least one vector of these kinds was made by `model`."""
    if not kinds:
        return False
    return bool(store.query(f"SELECT 1 FROM embeddings WHERE kind IN ({','.join('?' * len(kinds))}) "
                            "AND model = ? LIMIT 1", [*kinds, model]))
