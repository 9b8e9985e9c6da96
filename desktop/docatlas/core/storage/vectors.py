"""Embeddings and their work queue: the `embeddings` and `embed_queue` tables.

Triggers (migration 2) put every changed row on the queue; these functions read the
queue, the texts its rows are embedded from, and write or drop vectors (float32 blobs,
packed by `docatlas.core.retrieval.vectors`), always bumping the version counters.
Every vector has a key that is never reused (`seq`, migration 13); the reads below by key
and by stamp are what the on-disk index (`retrieval.vector_index`) is kept in step with.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
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


def has_vectors(store: Store, kinds: Sequence[str], model: str) -> bool:
    """True when at least one vector of these kinds was made by `model`."""
    if not kinds:
        return False
    return bool(store.query(f"SELECT 1 FROM embeddings WHERE kind IN ({','.join('?' * len(kinds))}) "
                            "AND model = ? LIMIT 1", [*kinds, model]))


@dataclass(frozen=True)
class VectorStamp:
    """What SQL holds of one kind and model at the size most of its vectors have."""

    dim: int
    count: int
    highest: int  # the highest key


def vector_stamp(store: Store, kind: str, model: str) -> VectorStamp | None:
    """The stamp of the most common vector size of `kind` by `model`; None when there is none."""
    rows = store.query("SELECT dim, COUNT(*) AS n, MAX(seq) AS top FROM embeddings "
                       "WHERE kind = ? AND model = ? GROUP BY dim", (kind, model))
    if not rows:
        return None
    best = max(rows, key=lambda r: (int(r["n"]), int(r["dim"])))  # a stray other size is left out
    return VectorStamp(int(best["dim"]), int(best["n"]), int(best["top"] or 0))


def highest_key(store: Store, kind: str, model: str, dim: int) -> int:
    """The highest key of the vectors of `kind`, `model` and size; 0 when there is none (one index seek)."""
    return int(store.query("SELECT MAX(seq) AS top FROM embeddings WHERE kind = ? AND model = ? AND dim = ?",
                           (kind, model, dim))[0]["top"] or 0)


def models_of(store: Store, kind: str) -> list[str]:
    """The models that made at least one stored vector of `kind`."""
    return [r["model"] for r in store.query("SELECT DISTINCT model FROM embeddings WHERE kind = ?", (kind,))]


def count_after(store: Store, kind: str, model: str, dim: int, key: int) -> int:
    """How many vectors have a key above `key`."""
    return int(store.query("SELECT COUNT(*) AS n FROM embeddings WHERE kind = ? AND model = ? AND dim = ? "
                           "AND seq > ?", (kind, model, dim, key))[0]["n"])


def vectors_after(store: Store, kind: str, model: str, dim: int, key: int,
                  batch: int = 8192) -> Iterator[list[tuple[int, str, bytes]]]:
    """(key, ref, blob) of every vector with a key above `key`, in key order, `batch` rows at a time.

    Each batch is its own read, so memory holds one batch, never all the vectors."""
    while True:
        rows = store.query("SELECT seq, ref, vector FROM embeddings WHERE kind = ? AND model = ? AND dim = ? "
                           "AND seq > ? ORDER BY seq LIMIT ?", (kind, model, dim, key, batch))
        if not rows:
            return
        yield [(int(r["seq"]), r["ref"], r["vector"]) for r in rows]
        key = int(rows[-1]["seq"])


def live_keys(store: Store, kind: str, model: str, dim: int, up_to: int) -> list[int]:
    """The keys of the vectors stored now, up to `up_to` (read from the index alone)."""
    rows = store.query("SELECT seq FROM embeddings WHERE kind = ? AND model = ? AND dim = ? AND seq <= ?",
                       (kind, model, dim, up_to))
    return [int(r["seq"]) for r in rows]


def vectors_by_key(store: Store, kind: str, model: str, dim: int,
                   keys: Sequence[int]) -> list[tuple[int, str, bytes]]:
    """(key, ref, blob) of the keys still stored; a key that is gone is left out."""
    out: list[tuple[int, str, bytes]] = []
    for start in range(0, len(keys), 500):
        part = [int(k) for k in keys[start:start + 500]]
        rows = store.query(f"SELECT seq, ref, vector FROM embeddings WHERE kind = ? AND model = ? AND dim = ? "
                           f"AND seq IN ({','.join('?' * len(part))})", [kind, model, dim, *part])
        out.extend((int(r["seq"]), r["ref"], r["vector"]) for r in rows)
    return out
