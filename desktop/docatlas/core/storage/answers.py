"""The answer cache (`answers`) and the counters that date its rows (`graph_version`,
`index_version` in meta)."""

from __future__ import annotations

import time
from collections.abc import Callable

from docatlas.core.storage.database import CACHE_WAIT_S, Store


def version_counters(store: Store) -> tuple[str, str]:
    """(graph_version, index_version), read together; "0" for a counter not set yet."""
    rows = store.query("SELECT key, value FROM meta WHERE key IN ('graph_version', 'index_version')")
    values = {r["key"]: r["value"] for r in rows}
    return values.get("graph_version", "0"), values.get("index_version", "0")


def answer_payload(store: Store, key: str) -> str | None:
    """The stored payload (JSON text) of an answer, or None."""
    rows = store.query("SELECT payload FROM answers WHERE key = ?", (key,))
    return rows[0]["payload"] if rows else None


def keep_answer(store: Store, key: str, question: str, mode: str, version: str, payload: str,
                current_version: Callable[[], str]) -> bool:
    """Store an answer made at `version` and drop every answer of another version, together.

    `current_version()` is read inside the same write transaction: when the workspace moved
    on while the answer was being made (another process changed the graph or a prompt), the
    answer is already stale and is not kept, and nothing is dropped, so the newer answers
    another process keeps survive. False when it was not kept. Raises `StoreBusy` when
    another connection keeps the database busy past `CACHE_WAIT_S`.
    """
    with store.transaction(CACHE_WAIT_S) as conn:
        if current_version() != version:
            return False
        conn.execute("DELETE FROM answers WHERE version != ?", (version,))
        conn.execute(
            "INSERT OR REPLACE INTO answers(key, question, mode, version, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key, question, mode, version, payload, time.time()),
        )
    return True
