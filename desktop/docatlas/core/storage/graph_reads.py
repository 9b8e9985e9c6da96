"""Read models of the graph explorer: what the side panel shows about an entity or a relation,
and the rows the explorer's graph is built from (Qt-free, run on the explorer's workers).

Provenance comes from the per-chunk records: the passages (chunks) whose records name
the entity or state the relation, with their documents and pages. Merged entities need
no special case: their records are filed under the surviving key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace

from docatlas.core.storage.database import Store
from docatlas.core.storage.mentions import mentions

PASSAGE_LIMIT = 200
NEIGHBOUR_LIMIT = 500
EXCERPT_CHARS = 160
QUOTE_LIMIT = 600  # mentions read for one item's panel
QUOTES_PER_PASSAGE = 3


@dataclass(frozen=True)
class Passage:
    """A chunk a node or an edge came from."""

    document_id: int
    chunk_id: int
    title: str
    page_start: int | None
    page_end: int | None
    excerpt: str
    quotes: tuple[str, ...] = ()  # the sentences of this chunk that name the entity (or both ends)

    @property
    def label(self) -> str:
        """'Title, p. 3: first words…' for a list."""
        pages = ""
        if self.page_start is not None:
            same = self.page_end in (None, self.page_start)
            pages = f", p. {self.page_start}" if same else f", pp. {self.page_start}-{self.page_end}"
        return f"{self.title}{pages}: {self.excerpt}"


@dataclass(frozen=True)
class EntityDetails:
    """One entity, its passages and its neighbours (key, name, keywords)."""

    key: str
    name: str
    type: str
    description: str
    mentions: int
    passages: list[Passage]
    neighbours: list[tuple[str, str, str]]


@dataclass(frozen=True)
class RelationDetails:
    """One relation and its passages."""

    source_key: str
    target_key: str
    source_name: str
    target_name: str
    keywords: str
    description: str
    weight: float
    passages: list[Passage]


def _passages(store: Store, where: str, params: tuple) -> list[Passage]:
    rows = store.query(
        "SELECT DISTINCT c.document_id AS doc, c.id AS chunk, d.title AS title, c.page_start AS p0, "
        "c.page_end AS p1, substr(c.text, 1, ?) AS text FROM chunks c JOIN documents d ON d.id = c.document_id "
        f"WHERE c.id IN ({where}) ORDER BY c.document_id, c.idx LIMIT ?", (EXCERPT_CHARS + 40, *params, PASSAGE_LIMIT))
    return [Passage(r["doc"], r["chunk"], r["title"], r["p0"], r["p1"], _excerpt(r["text"])) for r in rows]


def _quoted(store: Store, passages: list[Passage], key: str, target_key: str = "") -> list[Passage]:
    """The passages with the sentences that mention the item (located at extraction)."""
    by_chunk: dict[int, list[str]] = {}
    for mention in mentions(store, key, target_key, limit=QUOTE_LIMIT):
        by_chunk.setdefault(mention.chunk_id, []).append(" ".join(mention.quote.split()))
    return [replace(p, quotes=tuple(by_chunk.get(p.chunk_id, ())[:QUOTES_PER_PASSAGE])) for p in passages]


def _excerpt(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= EXCERPT_CHARS else words[:EXCERPT_CHARS].rsplit(" ", 1)[0] + "…"


def entity_details(store: Store, key: str) -> EntityDetails | None:
    """An entity as the panel shows it, or None when it is gone."""
    rows = store.query("SELECT name, type, description, mentions FROM entities WHERE key = ?", (key,))
    if not rows:
        return None
    row = rows[0]
    passages = _passages(store, "SELECT chunk_id FROM chunk_entities WHERE key = ? UNION "
                                "SELECT chunk_id FROM chunk_relations WHERE source_key = ? OR target_key = ?",
                         (key, key, key))
    neighbours = [(r["other"], r["name"] or r["other"], r["keywords"]) for r in store.query(
        "SELECT CASE WHEN r.source_key = ? THEN r.target_key ELSE r.source_key END AS other, e.name AS name, "
        "r.keywords AS keywords FROM relations r LEFT JOIN entities e ON e.key = "
        "(CASE WHEN r.source_key = ? THEN r.target_key ELSE r.source_key END) "
        "WHERE r.source_key = ? OR r.target_key = ? ORDER BY r.weight DESC LIMIT ?",
        (key, key, key, key, NEIGHBOUR_LIMIT))]
    passages = _quoted(store, passages, key)
    return EntityDetails(key, row["name"], row["type"], row["description"], row["mentions"], passages, neighbours)


def relation_details(store: Store, a: str, b: str) -> RelationDetails | None:
    """A relation as the panel shows it, or None when it is gone."""
    a, b = min(a, b), max(a, b)
    rows = store.query(
        "SELECT r.keywords, r.description, r.weight, s.name AS s, t.name AS t FROM relations r "
        "LEFT JOIN entities s ON s.key = r.source_key LEFT JOIN entities t ON t.key = r.target_key "
        "WHERE r.source_key = ? AND r.target_key = ?", (a, b))
    if not rows:
        return None
    row = rows[0]
    passages = _passages(store, "SELECT chunk_id FROM chunk_relations WHERE (source_key = ? AND target_key = ?) "
                                "OR (source_key = ? AND target_key = ?)", (a, b, b, a))
    passages = _quoted(store, passages, a, b)
    return RelationDetails(a, b, row["s"] or a, row["t"] or b, row["keywords"], row["description"],
                           float(row["weight"]), passages)


@dataclass(frozen=True)
class GraphSnapshot:
    """The explorer's rows of the graph, read in one transaction, with the version they are at."""

    entities: list[sqlite3.Row]  # (key, name, type, mentions, layer), by key
    relations: list[sqlite3.Row]  # (source, target, weight, keywords, layer)
    documents: list[tuple[int, str]]  # (id, title), by id
    version: str  # graph_version/index_version when read: the cached document map is valid at it alone
    document_nodes: bytes | None  # the document map cached at this version (None: not cached)
    document_keys: list[tuple[int, str]] | None  # (document id, key) pairs, read when nothing is cached


def graph_snapshot(store: Store) -> GraphSnapshot:
    """Entities, relations and documents in one consistent read, with the explorer's document map
    cached at the same version, or the (document, key) pairs to make it from when there is none."""
    conn = store.conn
    conn.execute("BEGIN")
    try:
        counters = dict(conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('graph_version', 'index_version')").fetchall())
        version = f"{counters.get('graph_version', '0')}/{counters.get('index_version', '0')}"
        row = conn.execute("SELECT nodes FROM graph_view_documents WHERE version = ?", (version,)).fetchone()
        entities, relations, documents = _rows(conn)
        keys = None if row else list(document_keys(store))
    finally:
        conn.execute("COMMIT")
    return GraphSnapshot(entities, relations, documents, version, bytes(row[0]) if row else None, keys)


def save_document_nodes(store: Store, version: str, nodes: bytes) -> None:
    """Cache the explorer's document map made at `version` (one row: the newest replaces the last)."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM graph_view_documents")
        conn.execute("INSERT INTO graph_view_documents(version, nodes) VALUES (?, ?)", (version, nodes))


def graph_rows(store: Store) -> tuple[list[sqlite3.Row], list[sqlite3.Row], list[tuple[int, str]]]:
    """(key, name, type, mentions, layer) of every entity by key, (source, target, weight, keywords,
    layer) of every relation, and (id, title) of every document, in one consistent read."""
    store.conn.execute("BEGIN")
    try:
        return _rows(store.conn)
    finally:
        store.conn.execute("COMMIT")


def _rows(conn: sqlite3.Connection) -> tuple[list[sqlite3.Row], list[sqlite3.Row], list[tuple[int, str]]]:
    entities = conn.execute("SELECT key, name, type, mentions, layer FROM entities ORDER BY key").fetchall()
    relations = conn.execute("SELECT source_key, target_key, weight, keywords, layer FROM relations").fetchall()
    documents = [(r[0], r[1]) for r in conn.execute("SELECT id, title FROM documents ORDER BY id")]
    return entities, relations, documents


def document_keys(store: Store) -> Iterator[tuple[int, str]]:
    """(document id, entity key) for every key a document's records name (entities and relation ends)."""
    return store.conn.execute(
        "SELECT DISTINCT c.document_id, m.key FROM (SELECT chunk_id, key FROM chunk_entities"
        " UNION ALL SELECT chunk_id, source_key FROM chunk_relations"
        " UNION ALL SELECT chunk_id, target_key FROM chunk_relations) AS m JOIN chunks c ON c.id = m.chunk_id")


def entity_description(store: Store, key: str) -> str:
    """An entity's description ('' when it is gone)."""
    rows = store.query("SELECT description FROM entities WHERE key = ?", (key,))
    return rows[0]["description"] if rows else ""
