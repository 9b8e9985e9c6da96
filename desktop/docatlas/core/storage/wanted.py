"""The chunks a question read or wants read: their status, and the list the run's writer takes first.

`wanted_chunks` (migration 17) is written without the workspace lock, like the reply cache: one
short transaction of its own (`CACHE_WAIT_S`), idempotent, left out when the database stays busy
(the replies are in the cache either way; the list only orders the run's work). A chunk leaves
the list when it is finished, by a trigger.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from docatlas.core.storage.database import CACHE_WAIT_S, Store, StoreBusy

log = logging.getLogger(__name__)
UNREAD = ("pending", "failed")  # what the model has not read yet (a failed chunk is tried again)


@dataclass(frozen=True)
class ChunkState:
    """A chunk's document and extraction status."""

    id: int
    document_id: int
    status: str

    @property
    def unread(self) -> bool:
        """The model has not read it (pending, or failed earlier)."""
        return self.status in UNREAD


def _marks(values: Sequence) -> str:
    return ",".join("?" * len(values))


def chunk_states(store: Store, ids: Sequence[int]) -> dict[int, ChunkState]:
    """The chunks of `ids` that exist, with their document and status."""
    out: dict[int, ChunkState] = {}
    wanted = list(dict.fromkeys(ids))
    for at in range(0, len(wanted), 500):
        part = wanted[at:at + 500]
        for r in store.query(f"SELECT id, document_id, status FROM chunks WHERE id IN ({_marks(part)})", part):
            out[r["id"]] = ChunkState(r["id"], r["document_id"], r["status"])
    return out


def unread_chunks(store: Store, ids: Sequence[int]) -> list[int]:
    """The chunks of `ids`, in their order, that the model has not read yet."""
    states = chunk_states(store, ids)
    return [i for i in dict.fromkeys(ids) if i in states and states[i].unread]


def want(store: Store, ids: Sequence[int]) -> int:
    """Ask the run's writer to take these chunks first; how many were added (0 when busy)."""
    if not ids:
        return 0
    now = time.time()
    try:
        with store.transaction(CACHE_WAIT_S) as conn:
            return conn.executemany(
                "INSERT OR IGNORE INTO wanted_chunks(chunk_id, wanted_at) SELECT id, ? FROM chunks "
                "WHERE id = ? AND status IN ('pending', 'failed')", [(now, i) for i in ids]).rowcount
    except StoreBusy:
        log.warning("the chunks a question read were not listed for the run: the workspace was busy")
        return 0


def wanted_ids(store: Store, limit: int = 1000) -> list[int]:
    """The chunks questions wanted read and the model has not read yet, oldest wish first."""
    rows = store.query("SELECT w.chunk_id FROM wanted_chunks w JOIN chunks c ON c.id = w.chunk_id "
                       "WHERE c.status IN ('pending', 'failed') ORDER BY w.wanted_at, w.chunk_id LIMIT ?", (limit,))
    return [r["chunk_id"] for r in rows]
