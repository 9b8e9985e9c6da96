"""SQL of the user's graph edits: `graph_overrides` (replayed edits) and `entity_aliases` (merges).

`docatlas.core.graph.overrides` and `docatlas.core.graph.edits` hold the rules. Functions
named for a write take the `conn` of the caller's transaction; reads take the `Store`
or a `conn`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from docatlas.core.storage.graph import Source
from docatlas.core.storage.graph import fetch_rows as _rows

# -- graph_overrides -----------------------------------------------------------------------------


def override_rows(db: Source) -> list[tuple[int, str, str, str]]:
    """Every stored override as (id, kind, key, value as JSON), oldest first."""
    return _rows(db, "SELECT id, kind, key, value FROM graph_overrides ORDER BY id")


def insert_override(conn: sqlite3.Connection, override_id: int | None, kind: str, key: str, value: str,
                    created_at: float) -> int:
    """Store one override (under `override_id` when given); return its id."""
    cursor = conn.execute("INSERT INTO graph_overrides(id, kind, key, value, created_at) VALUES (?, ?, ?, ?, ?)",
                          (override_id, kind, key, value, created_at))
    return int(cursor.lastrowid)


def delete_override(conn: sqlite3.Connection, override_id: int) -> None:
    """Forget one override."""
    conn.execute("DELETE FROM graph_overrides WHERE id = ?", (override_id,))


# -- entity_aliases --------------------------------------------------------------------------------


def aliases(db: Source) -> dict[str, str]:
    """Accepted merges: merged-away key -> the key it now belongs to."""
    if not _rows(db, "SELECT 1 FROM sqlite_master WHERE name = 'entity_aliases'"):
        return {}
    return dict(_rows(db, "SELECT alias, key FROM entity_aliases"))


def alias_target(db: Source, alias: str) -> str | None:
    """The key `alias` was merged into, or None."""
    rows = _rows(db, "SELECT key FROM entity_aliases WHERE alias = ?", (alias,))
    return rows[0][0] if rows else None


def alias_rows(db: Source, keys: Sequence[str]) -> list[tuple]:
    """The (alias, key, created_at) rows naming any of `keys` on either side."""
    marks = ",".join("?" * len(keys))
    return _rows(db, f"SELECT alias, key, created_at FROM entity_aliases WHERE alias IN ({marks}) OR key IN ({marks})",
                 [*keys, *keys])


def file_alias(conn: sqlite3.Connection, alias: str, key: str, created_at: float) -> None:
    """File `alias` (and whatever was merged into it) under `key`."""
    conn.execute("UPDATE entity_aliases SET key = ? WHERE key = ?", (key, alias))
    conn.execute("INSERT OR REPLACE INTO entity_aliases(alias, key, created_at) VALUES (?, ?, ?)",
                 (alias, key, created_at))


def remove_alias(conn: sqlite3.Connection, alias: str) -> None:
    """Forget that `alias` was merged away."""
    conn.execute("DELETE FROM entity_aliases WHERE alias = ?", (alias,))


def replace_alias_rows(conn: sqlite3.Connection, keys: Sequence[str], rows: Iterable[tuple]) -> None:
    """Drop the alias rows naming any of `keys` and put `rows` (alias, key, created_at) back."""
    marks = ",".join("?" * len(keys))
    conn.execute(f"DELETE FROM entity_aliases WHERE alias IN ({marks}) OR key IN ({marks})", [*keys, *keys])
    conn.executemany("INSERT OR REPLACE INTO entity_aliases(alias, key, created_at) VALUES (?, ?, ?)", list(rows))
