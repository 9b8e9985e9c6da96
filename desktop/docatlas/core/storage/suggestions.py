"""SQL of `merge_suggestions`: likely duplicate pairs, open until someone decides.

`docatlas.core.graph.suggest` holds the rules. Writes take the `conn` of the caller's
transaction; reads take the `Store` or a `conn`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from docatlas.core.storage.database import Store
from docatlas.core.storage.graph import Source


def _dicts(db: Source, sql: str, params: Sequence = ()) -> list[dict]:
    if isinstance(db, Store):
        return db.query(sql, params)
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def suggestion_rows(db: Source, status: str | None = "open") -> list[dict]:
    """Stored suggestions with `status` (all with None), best first."""
    if status is None:
        return _dicts(db, "SELECT * FROM merge_suggestions ORDER BY score DESC, id")
    return _dicts(db, "SELECT * FROM merge_suggestions WHERE status = ? ORDER BY score DESC, id", (status,))


def suggestion_row(db: Source, suggestion_id: int) -> dict | None:
    """One suggestion by id, or None."""
    rows = _dicts(db, "SELECT * FROM merge_suggestions WHERE id = ?", (suggestion_id,))
    return rows[0] if rows else None


def is_open(db: Source, suggestion_id: int) -> bool:
    """True while the suggestion waits for a decision."""
    return bool(_dicts(db, "SELECT 1 FROM merge_suggestions WHERE id = ? AND status = 'open'", (suggestion_id,)))


def open_pairs(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """(id, a_key, b_key) of every open suggestion."""
    return [tuple(r) for r in conn.execute("SELECT id, a_key, b_key FROM merge_suggestions WHERE status = 'open'")]


def delete_suggestions(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Drop suggestions by id."""
    conn.executemany("DELETE FROM merge_suggestions WHERE id = ?", [(i,) for i in ids])


def upsert_open(conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, str, float, str, float]]) -> None:
    """Store (a_key, b_key, a_name, b_name, score, reason, created_at) as open; decided pairs stay decided."""
    conn.executemany(
        "INSERT INTO merge_suggestions(a_key, b_key, a_name, b_name, score, reason, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(a_key, b_key) DO UPDATE SET"
        " a_name = excluded.a_name, b_name = excluded.b_name, score = excluded.score,"
        " reason = excluded.reason WHERE merge_suggestions.status = 'open'",
        list(rows),
    )


def decide(conn: sqlite3.Connection, suggestion_id: int, status: str, by: str, at: float) -> None:
    """Mark a suggestion accepted or rejected, by the user or the model."""
    conn.execute("UPDATE merge_suggestions SET status = ?, decided_by = ?, decided_at = ? WHERE id = ?",
                 (status, by, at, suggestion_id))


def drop_open_with(conn: sqlite3.Connection, key: str) -> None:
    """Drop the open suggestions naming `key` (merged away: found again under the survivor)."""
    conn.execute("DELETE FROM merge_suggestions WHERE status = 'open' AND (a_key = ? OR b_key = ?)", (key, key))


def reject_accepted_pair(conn: sqlite3.Connection, a: str, b: str, at: float) -> None:
    """Turn the accepted suggestion of the pair (either order) into a rejection by the user."""
    conn.execute("UPDATE merge_suggestions SET status = 'rejected', decided_by = 'user', decided_at = ? "
                 "WHERE status = 'accepted' AND ((a_key = ? AND b_key = ?) OR (a_key = ? AND b_key = ?))",
                 (at, a, b, b, a))


def rows_naming(db: Source, keys: Sequence[str]) -> list[tuple]:
    """Whole rows of the suggestions naming any of `keys`, to put back later as they were."""
    marks = ",".join("?" * len(keys))
    return [tuple(r.values()) for r in _dicts(
        db, f"SELECT * FROM merge_suggestions WHERE a_key IN ({marks}) OR b_key IN ({marks})", [*keys, *keys])]


def restore_rows(conn: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """Put whole rows (from `rows_naming`) back as they were."""
    for row in rows:
        conn.execute(f"INSERT OR REPLACE INTO merge_suggestions VALUES ({','.join('?' * len(row))})", row)
