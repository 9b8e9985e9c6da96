"""SQL of the derived graph: per-chunk records in, `entities` and `relations` out, `graph_dirty`.

`docatlas.core.graph.merge` holds the rules; this module only reads and writes rows.
Functions named for a transaction take its `conn`; plain reads take the `Store` (or a
`conn`, to read inside a caller's transaction). A scope is a set of entity keys (None: all).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import Store

Source = Store | sqlite3.Connection
EntityRow = tuple[str, str, str, str, int, str]  # key, name, type, description, mentions, layer
# source_key, target_key, keywords, description, weight, mentions, layer
RelationRow = tuple[str, str, str, str, float, int, str]


@dataclass(frozen=True)
class Records:
    """Per-chunk records in scope, in chunk order, keys as stored."""

    entities: list[tuple[str, str, str, str, str]]  # key, name, type, description, layer
    # source_key, target_key, source, target, keywords, description, strength, layer
    relations: list[tuple[str, str, str, str, str, str, float | None, str]]


def fetch_rows(db: Source, sql: str, params: Sequence = ()) -> list[tuple]:
    """Rows as tuples, from a Store's connection or a transaction's (SQLite serialises the calls)."""
    conn = db.conn if isinstance(db, Store) else db
    return conn.execute(sql, params).fetchall()


def _keys(keys: Iterable[str]) -> str:
    """Keys as one JSON parameter for `IN (SELECT value FROM json_each(?))` (no temp table, no write)."""
    return json.dumps(sorted(keys), ensure_ascii=False)


_IN = "IN (SELECT value FROM json_each(?))"


def _scope(scope: set[str] | None) -> tuple[str, tuple, str, tuple]:
    """WHERE clauses (and parameters) limiting entity and relation rows to the keys in scope."""
    if scope is None:
        return "", (), "", ()
    keys = _keys(scope)
    return f" WHERE key {_IN}", (keys,), f" WHERE source_key {_IN} OR target_key {_IN}", (keys, keys)


# -- the state of the file -----------------------------------------------------------------------


def data_version(db: Source) -> int:
    """SQLite's `data_version`: changes when another connection commits to the file."""
    conn = db.conn if isinstance(db, Store) else db
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def graph_dirty(store: Store) -> bool:
    """True when records changed since the graph was last derived (a merge is owed)."""
    return store.get_meta("graph_dirty") == "1"


def set_graph_dirty(conn: sqlite3.Connection, dirty: bool) -> None:
    """Mark the derived graph stale (or up to date), inside the caller's transaction."""
    conn.execute("INSERT INTO meta(key, value) VALUES ('graph_dirty', ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value", ("1" if dirty else "0",))


def mark_graph_dirty(store: Store) -> None:
    """Mark the derived graph stale in a transaction of its own (a merge was stopped)."""
    with store.transaction() as conn:
        set_graph_dirty(conn, True)


# -- per-chunk records ---------------------------------------------------------------------------


def aliased_record_pairs(db: Source) -> list[tuple[str, str]]:
    """(alias, key) of accepted merges whose merged-away key still files some records."""
    if not fetch_rows(db, "SELECT 1 FROM sqlite_master WHERE name = 'entity_aliases'"):
        return []  # a workspace opened below schema 3 (tests of older versions)
    return fetch_rows(db, "SELECT alias, key FROM entity_aliases WHERE alias IN (SELECT key FROM chunk_entities)"
                     " OR alias IN (SELECT source_key FROM chunk_relations)"
                     " OR alias IN (SELECT target_key FROM chunk_relations)")


def move_records(conn: sqlite3.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """File the records of each merged-away key (alias) under the key it now belongs to."""
    for alias, key in pairs:
        conn.execute("UPDATE chunk_entities SET key = ? WHERE key = ?", (key, alias))
        conn.execute("UPDATE chunk_relations SET source_key = ? WHERE source_key = ?", (key, alias))
        conn.execute("UPDATE chunk_relations SET target_key = ? WHERE target_key = ?", (key, alias))


def read_records(db: Source, scope: set[str] | None) -> Records:
    """The entity and relation records touching `scope` (all when None), in chunk order."""
    where_e, params_e, where_r, params_r = _scope(scope)
    entities = fetch_rows(db, f"SELECT key, name, type, description, layer FROM chunk_entities{where_e} "
                         "ORDER BY chunk_id, rowid", params_e)
    relations = fetch_rows(db, "SELECT source_key, target_key, source, target, keywords, description, strength, "
                          f"layer FROM chunk_relations{where_r} ORDER BY chunk_id, rowid", params_r)
    return Records(entities, relations)


def records_under(db: Source, keys: Iterable[str]) -> tuple[list[tuple], list[tuple]]:
    """Records filed under `keys`: entity (rowid, key, name), relation (rowid, sk, tk, source, target)."""
    where_e, params_e, where_r, params_r = _scope(set(keys))
    return (fetch_rows(db, f"SELECT rowid, key, name FROM chunk_entities{where_e}", params_e),
            fetch_rows(db, f"SELECT rowid, source_key, target_key, source, target FROM chunk_relations{where_r}",
                  params_r))


def refile_records(conn: sqlite3.Connection, entities: Iterable[tuple[str, int]],
                   relations: Iterable[tuple[str, str, int]]) -> None:
    """Set the key of entity records (key, rowid) and the keys of relation records (sk, tk, rowid)."""
    conn.executemany("UPDATE chunk_entities SET key = ? WHERE rowid = ?", list(entities))
    conn.executemany("UPDATE chunk_relations SET source_key = ?, target_key = ? WHERE rowid = ?", list(relations))


# -- the derived graph ----------------------------------------------------------------------------


def entity(db: Source, key: str) -> dict | None:
    """One entity row (key, name, type, description, mentions), or None."""
    rows = fetch_rows(db, "SELECT key, name, type, description, mentions FROM entities WHERE key = ?", (key,))
    return dict(zip(("key", "name", "type", "description", "mentions"), rows[0])) if rows else None


def entity_names(db: Source, keys: Iterable[str]) -> dict[str, str]:
    """Display name of each of `keys` that is an entity."""
    return dict(fetch_rows(db, f"SELECT key, name FROM entities WHERE key {_IN}", (_keys(keys),)))


def all_entities(store: Store) -> list[dict]:
    """Every entity's key, name, type and mentions."""
    return store.query("SELECT key, name, type, mentions FROM entities")


def write_derived(conn: sqlite3.Connection, scope: set[str] | None, entities: Sequence[EntityRow],
                  relations: Sequence[RelationRow]) -> None:
    """Replace the rows in scope by the derived ones, writing only the differences.

    Untouched rows are not written, so the full-text index and embedding queue (triggers)
    and the graph version stay as they are when nothing changed."""
    where_e, params_e, where_r, params_r = _scope(scope)
    old_e = {r[0]: r for r in fetch_rows(conn, "SELECT key, name, type, description, mentions, layer"
                                               f" FROM entities{where_e}", params_e)}
    old_r = {r[:2]: r for r in fetch_rows(conn, "SELECT source_key, target_key, keywords, description, weight,"
                                           f" mentions, layer FROM relations{where_r}", params_r)}
    new_e = {r[0]: tuple(r) for r in entities}
    new_r = {tuple(r[:2]): tuple(r) for r in relations}
    conn.executemany("DELETE FROM entities WHERE key = ?", [(k,) for k in old_e.keys() - new_e.keys()])
    conn.executemany("DELETE FROM relations WHERE source_key = ? AND target_key = ?", list(old_r.keys() - new_r.keys()))
    conn.executemany("INSERT OR REPLACE INTO entities(key, name, type, description, mentions, layer)"
                     " VALUES (?, ?, ?, ?, ?, ?)", [row for key, row in new_e.items() if old_e.get(key) != row])
    conn.executemany("INSERT OR REPLACE INTO relations(source_key, target_key, keywords, description, weight, "
                     "mentions, layer) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [row for pair, row in new_r.items() if old_r.get(pair) != row])


def delete_relation(conn: sqlite3.Connection, a: str, b: str) -> None:
    """Remove the relation between `a` and `b` (`a <= b`)."""
    conn.execute("DELETE FROM relations WHERE source_key = ? AND target_key = ?", (a, b))


def delete_entity(conn: sqlite3.Connection, key: str) -> None:
    """Remove an entity and every relation touching it."""
    conn.execute("DELETE FROM relations WHERE source_key = ? OR target_key = ?", (key, key))
    conn.execute("DELETE FROM entities WHERE key = ?", (key,))


EDITABLE = ("name", "type", "description")


def set_entity_field(conn: sqlite3.Connection, key: str, column: str, value: str) -> None:
    """Set one editable column of an entity, only when it differs (an update fires the triggers)."""
    if column not in EDITABLE:
        raise ValueError(f"{column!r} is not an editable column of an entity.")
    conn.execute(f"UPDATE entities SET {column} = ? WHERE key = ? AND {column} IS NOT ?", (value, key, value))


# -- provenance and export --------------------------------------------------------------------------


def entity_document_paths(store: Store) -> list[tuple[str, str]]:
    """(entity key, document path) for every document mentioning a key, in document order."""
    return fetch_rows(store, "SELECT DISTINCT m.key AS key, d.path AS path, d.id AS doc FROM ("
                        " SELECT chunk_id, key FROM chunk_entities"
                        " UNION SELECT chunk_id, source_key FROM chunk_relations"
                        " UNION SELECT chunk_id, target_key FROM chunk_relations) AS m"
                        " JOIN chunks c ON c.id = m.chunk_id JOIN documents d ON d.id = c.document_id"
                        " ORDER BY d.id")


def relation_document_paths(store: Store) -> list[tuple[str, str, str]]:
    """(a, b, document path) for every document stating the undirected pair `a <= b`."""
    return fetch_rows(store, "SELECT DISTINCT min(r.source_key, r.target_key) AS a,"
                        " max(r.source_key, r.target_key) AS b, d.path AS path, d.id AS doc FROM chunk_relations r"
                        " JOIN chunks c ON c.id = r.chunk_id JOIN documents d ON d.id = c.document_id ORDER BY d.id")


def chunk_counts(store: Store) -> dict[int, int]:
    """Number of chunks of each document id."""
    return dict(fetch_rows(store, "SELECT document_id, COUNT(*) FROM chunks GROUP BY document_id"))


def entities_by_name(store: Store) -> list[dict]:
    """Every entity (key, name, type, description, layer), by display name."""
    return store.query("SELECT key, name, type, description, layer FROM entities ORDER BY name COLLATE NOCASE")


def relations_in_order(store: Store) -> list[dict]:
    """Every relation row, by its pair of keys."""
    return store.query("SELECT * FROM relations ORDER BY source_key, target_key")
