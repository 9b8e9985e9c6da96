"""The answer cache (`answers`) and the counters that date its rows (`graph_version`,
`index_version` in meta)."""

from __future__ import annotations

import time

from docatlas.core.storage.database import Store


def version_counters(store: Store) -> tuple[str, str]:
    """(graph_version, index_version), read together; "0" for a counter not set yet."""
    rows = store.query("SELECT key, value FROM meta WHERE key IN ('graph_version', 'index_version')")
    values = {r["key"]: r["value"] for r in rows}
    return values.get("graph_version", "0"), values.get("index_version", "0")


def answer_payload(store: Store, key: str) -> str | None:
    """The stored payload (JSON text) of an answer, or None."""
    rows = store.query("SELECT payload FROM answers WHERE key = ?", (key,))
    return rows[0]["payload"] if rows else None


def keep_answer(store: Store, key: str, question: str, mode: str, version: str, payload: str) -> None:
    """Store an answer's payload and drop every answer made for another `version`, together."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM answers WHERE version != ?", (version,))
        conn.execute(
            "INSERT OR REPLACE INTO answers(key, question, mode, version, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key, question, mode, version, payload, time.time()),
        )
