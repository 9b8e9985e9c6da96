"""What a question reads from the graph and chunk tables: entities, relations, their
source chunks and the chunks with their documents (context, references, reports' chunks).

Read-only; the tables belong to the graph and the documents, these are the lookups
retrieval makes of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.base.concepts import MODEL
from docatlas.core.storage.database import Store


@dataclass(frozen=True)
class EntityText:
    """An entity as a context shows it."""

    key: str
    name: str
    type: str
    description: str
    layer: str = MODEL  # CONCEPT: only names found in text the model has not read yet


@dataclass(frozen=True)
class RelationText:
    """A relation as a context shows it, with its endpoints' names (keys when unknown)."""

    source_key: str
    target_key: str
    source: str
    target: str
    keywords: str
    description: str
    weight: float
    layer: str = MODEL


@dataclass(frozen=True)
class ChunkSource:
    """A chunk with where it comes from."""

    id: int
    document_id: int
    idx: int
    text: str
    tokens: int
    page_start: int | None
    page_end: int | None
    path: str
    title: str
    char_start: int | None = None  # the chunk's span in its document's extracted text


def _marks(values: Sequence) -> str:
    return ",".join("?" * len(values))


def relations_touching(store: Store, keys: Sequence[str]) -> list[tuple[str, str, float]]:
    """(source_key, target_key, weight) of every relation with an end among `keys`."""
    if not keys:
        return []
    marks = _marks(keys)
    rows = store.query(
        f"SELECT source_key, target_key, weight FROM relations WHERE source_key IN ({marks}) "
        f"UNION SELECT source_key, target_key, weight FROM relations WHERE target_key IN ({marks})",
        [*keys, *keys])
    return [(r["source_key"], r["target_key"], float(r["weight"])) for r in rows]


def entity_chunk_ids(store: Store, key: str, limit: int) -> list[int]:
    """Up to `limit` chunks an entity was extracted from."""
    rows = store.query("SELECT DISTINCT chunk_id FROM chunk_entities WHERE key = ? LIMIT ?", (key, limit))
    return [r["chunk_id"] for r in rows]


def relation_chunk_ids(store: Store, source_key: str, target_key: str, limit: int) -> list[int]:
    """Up to `limit` chunks that state a relation (either direction)."""
    rows = store.query(
        "SELECT DISTINCT chunk_id FROM chunk_relations WHERE (source_key = ? AND target_key = ?) "
        "OR (source_key = ? AND target_key = ?) LIMIT ?",
        (source_key, target_key, target_key, source_key, limit))
    return [r["chunk_id"] for r in rows]


def entity_texts(store: Store, keys: Sequence[str]) -> dict[str, EntityText]:
    """The entities of `keys` that exist."""
    if not keys:
        return {}
    rows = store.query(f"SELECT key, name, type, description, layer FROM entities WHERE key IN ({_marks(keys)})",
                       list(keys))
    return {r["key"]: EntityText(r["key"], r["name"], r["type"], r["description"], r["layer"]) for r in rows}


RELATIONS_A_READ = 400  # pairs a statement (two parameters each, well under SQLite's limit)


def relation_texts(store: Store, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], RelationText]:
    """The relations of `pairs` that exist, with their endpoints' names: one read per 400 pairs."""
    out: dict[tuple[str, str], RelationText] = {}
    wanted = list(dict.fromkeys(pairs))
    for at in range(0, len(wanted), RELATIONS_A_READ):
        part = wanted[at:at + RELATIONS_A_READ]
        rows = store.query(
            f"WITH p(s, t) AS (VALUES {', '.join(['(?, ?)'] * len(part))}) "
            "SELECT r.source_key, r.target_key, r.keywords, r.description, r.weight, r.layer, "
            "COALESCE(a.name, r.source_key) AS source, COALESCE(b.name, r.target_key) AS target "
            "FROM p JOIN relations r ON r.source_key = p.s AND r.target_key = p.t "
            "LEFT JOIN entities a ON a.key = r.source_key LEFT JOIN entities b ON b.key = r.target_key",
            [key for pair in part for key in pair])
        for r in rows:
            out[(r["source_key"], r["target_key"])] = RelationText(
                r["source_key"], r["target_key"], r["source"], r["target"], r["keywords"], r["description"],
                float(r["weight"]), r["layer"])
    return out


def chunk_sources(store: Store, ids: Sequence[int]) -> dict[int, ChunkSource]:
    """The chunks of `ids` that exist, each with its document's path and title."""
    if not ids:
        return {}
    rows = store.query(
        "SELECT c.id, c.document_id, c.idx, c.text, c.tokens, c.page_start, c.page_end, d.path, d.title,"
        " c.char_start "
        f"FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({_marks(ids)})", list(ids))
    return {r["id"]: ChunkSource(r["id"], r["document_id"], r["idx"], r["text"], r["tokens"], r["page_start"],
                                 r["page_end"], r["path"], r["title"], r["char_start"]) for r in rows}


def chunks_mentioning(store: Store, keys: Sequence[str], limit: int) -> list[int]:
    """Chunks that mention the most of `keys`, most first (ties by id)."""
    if not keys or limit <= 0:
        return []
    rows = store.query(
        f"SELECT chunk_id, COUNT(*) AS n FROM chunk_entities WHERE key IN ({_marks(keys)}) "
        "GROUP BY chunk_id ORDER BY n DESC, chunk_id LIMIT ?", [*keys, limit])
    return [r["chunk_id"] for r in rows]


def page_of(store: Store, document_id: int, position: int, fallback: int | None) -> int | None:
    """The page holding `position` of a document's text; `fallback` when its pages are unknown."""
    rows = store.query("SELECT number FROM document_pages WHERE document_id = ? AND start <= ?"
                       " ORDER BY start DESC LIMIT 1", (document_id, position))
    return rows[0]["number"] if rows else fallback
