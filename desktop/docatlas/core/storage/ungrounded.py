"""Ungrounded records (`ungrounded_records`): what a chunk's replies named that its text does not.

Kept per chunk, never thrown away. Accepting one copies it into the chunk's records (so it
joins the graph) and keeps it marked accepted, so extracting or re-deriving the chunk again
counts its names as grounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store
from docatlas.core.storage.health import clear_chunk_health, put_chunk_health
from docatlas.core.storage.locate import relocate


@dataclass(frozen=True)
class UngroundedRow:
    """One stored ungrounded record. For a relation, `name` is its source."""

    id: int
    chunk_id: int
    document: str
    kind: str  # "entity" or "relation"
    name: str
    type: str
    target: str
    keywords: str
    description: str
    strength: float | None
    reason: str
    accepted: bool


def put_extraction_findings(store: Store, chunk_id: int, figures: dict, type_notes: Sequence[dict],
                            rows: Sequence[tuple]) -> None:
    """A chunk's health figures and its ungrounded records, in one transaction."""
    with store.transaction() as conn:
        put_chunk_health(conn, chunk_id, figures, type_notes)
        replace_ungrounded(conn, chunk_id, rows)


def replace_ungrounded(conn, chunk_id: int, rows: Sequence[tuple]) -> None:
    """A chunk's not-accepted records replaced by `rows` (inside the caller's transaction).

    Each row: (kind, name, type, target, keywords, description, strength, reason)."""
    conn.execute("DELETE FROM ungrounded_records WHERE chunk_id = ? AND accepted = 0", (chunk_id,))
    conn.executemany(
        "INSERT INTO ungrounded_records(chunk_id, kind, name, type, target, keywords, description, strength, "
        "reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(chunk_id, *row) for row in rows])


def list_ungrounded(store: Store, *, include_accepted: bool = False, limit: int = 500) -> list[UngroundedRow]:
    """Ungrounded records, oldest first (at most `limit`)."""
    where = "" if include_accepted else "WHERE u.accepted = 0"
    rows = store.query(
        "SELECT u.*, d.path AS document FROM ungrounded_records u JOIN chunks c ON c.id = u.chunk_id "
        f"JOIN documents d ON d.id = c.document_id {where} ORDER BY u.id LIMIT ?", (int(limit),))
    return [_row(r) for r in rows]


def ungrounded_count(store: Store) -> int:
    """How many records wait for review."""
    return int(store.query("SELECT COUNT(*) AS n FROM ungrounded_records WHERE accepted = 0")[0]["n"])


def get_ungrounded(store: Store, record_id: int) -> UngroundedRow | None:
    """One record by id."""
    rows = store.query("SELECT u.*, d.path AS document FROM ungrounded_records u JOIN chunks c ON "
                       "c.id = u.chunk_id JOIN documents d ON d.id = c.document_id WHERE u.id = ?", (int(record_id),))
    return _row(rows[0]) if rows else None


def chunk_entity_records(store: Store, chunk_id: int) -> list[UngroundedRow]:
    """A chunk's ungrounded entity records (accepted or not)."""
    rows = store.query("SELECT u.*, d.path AS document FROM ungrounded_records u JOIN chunks c ON "
                       "c.id = u.chunk_id JOIN documents d ON d.id = c.document_id "
                       "WHERE u.chunk_id = ? AND u.kind = 'entity' ORDER BY u.id", (int(chunk_id),))
    return [_row(r) for r in rows]


def accepted_names(store: Store, chunk_id: int) -> list[str]:
    """Names the user accepted for a chunk (entities, and both ends of accepted relations)."""
    names: list[str] = []
    for r in store.query("SELECT kind, name, target FROM ungrounded_records WHERE chunk_id = ? AND accepted = 1",
                         (chunk_id,)):
        names += [r["name"], r["target"]] if r["kind"] == "relation" else [r["name"]]
    return names


def accept(store: Store, record: UngroundedRow, entity_keys: Sequence[tuple[str, str, str, str]],
           relation: tuple[str, str] | None) -> None:
    """Mark `record` accepted and add it to its chunk's records, in one transaction.

    `entity_keys`: (key, name, type, description) entity records to add (the entity, or the
    ungrounded ends of a relation); `relation`: the (source, target) keys of a relation."""
    with store.transaction() as conn:
        conn.execute("UPDATE ungrounded_records SET accepted = 1 WHERE id = ?", (record.id,))
        conn.executemany("INSERT INTO chunk_entities(chunk_id, key, name, type, description) VALUES (?, ?, ?, ?, ?)",
                         [(record.chunk_id, *row) for row in entity_keys])
        if relation is not None:
            conn.execute(
                "INSERT INTO chunk_relations(chunk_id, source_key, target_key, source, target, keywords, "
                "description, strength) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.chunk_id, *relation, record.name, record.target, record.keywords, record.description,
                 record.strength))
        relocate(conn, record.chunk_id)
        conn.execute("UPDATE chunks SET status = 'done' WHERE id = ? AND status = 'empty'", (record.chunk_id,))
        conn.execute("INSERT INTO meta(key, value) VALUES ('graph_dirty', '1') "
                     "ON CONFLICT(key) DO UPDATE SET value = '1'")


def clear_ungrounded(store: Store, chunk_ids: Sequence[int]) -> None:
    """Forget the not-accepted records of chunks that go back to pending."""
    with store.transaction() as conn:
        conn.executemany("DELETE FROM ungrounded_records WHERE chunk_id = ? AND accepted = 0",
                         [(int(i),) for i in chunk_ids])
        clear_chunk_health(conn, chunk_ids)


def _row(r) -> UngroundedRow:
    return UngroundedRow(int(r["id"]), int(r["chunk_id"]), r["document"], r["kind"], r["name"], r["type"],
                         r["target"], r["keywords"], r["description"], r["strength"], r["reason"],
                         bool(r["accepted"]))
