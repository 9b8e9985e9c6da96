"""The full-text indexes (FTS5): `entities_fts`, `relations_fts` and `chunks_fts`.

Triggers (migration 2) keep them in step with their tables; these functions count and
rank matches of an FTS5 expression and map index rowids back to entity keys and
relation pairs (a chunk's rowid is its id).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from docatlas.core.storage.database import Store

INDEXES = ("entities_fts", "relations_fts", "chunks_fts")


class ExpressionRefused(Exception):
    """FTS5 would not run this match expression."""


def _index(table: str) -> str:
    if table not in INDEXES:
        raise ValueError(f"unknown full-text index {table!r}")
    return table


def count_matches(store: Store, table: str, expression: str, cap: int) -> int:
    """How many rows of the index match `expression`, counting no further than `cap`."""
    index = _index(table)
    try:
        return int(store.query(f"SELECT COUNT(*) AS n FROM (SELECT rowid FROM {index} WHERE {index} MATCH ? "
                               "LIMIT ?)", (expression, cap))[0]["n"])
    except sqlite3.OperationalError as exc:
        raise ExpressionRefused(str(exc)) from exc


def ranked_rowids(store: Store, table: str, expression: str, limit: int) -> list[int]:
    """Rowids of the best `limit` matches (BM25), best first."""
    index = _index(table)
    try:
        rows = store.query(f"SELECT rowid FROM {index} WHERE {index} MATCH ? ORDER BY rank LIMIT ?",
                           (expression, limit))
    except sqlite3.OperationalError as exc:
        raise ExpressionRefused(str(exc)) from exc
    return [int(r["rowid"]) for r in rows]


def entity_keys(store: Store, rowids: Sequence[int]) -> dict[int, str]:
    """The entity key of each rowid that still exists."""
    if not rowids:
        return {}
    rows = store.query(f"SELECT rowid, key FROM entities WHERE rowid IN ({','.join('?' * len(rowids))})",
                       list(rowids))
    return {r["rowid"]: r["key"] for r in rows}


def relation_pairs(store: Store, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """The (source_key, target_key) of each relation rowid that still exists."""
    if not rowids:
        return {}
    rows = store.query(f"SELECT rowid, source_key, target_key FROM relations "
                       f"WHERE rowid IN ({','.join('?' * len(rowids))})", list(rowids))
    return {r["rowid"]: (r["source_key"], r["target_key"]) for r in rows}
