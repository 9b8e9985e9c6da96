"""SQL of `pending_rederive`: the keys a drop or a finished chunk touched, kept until a merge derives them.

The store's drop (`Store._drop_document`: a delete, a changed document replaced) and
`Store.finish_chunk` write them in their own transaction, so the keys are on disk the moment
their records are gone or stored; `clear` runs inside the merge's transaction that derived them
(a provisional batch merge during a run leaves them: their summaries are still owed). Between
the two, a killed process leaves the keys here and the next writing job re-derives them first
(`docatlas.core.jobs.ingest.heal_steps`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from docatlas.core.storage.database import Store


def clear(conn: sqlite3.Connection, keys: Iterable[str] | None) -> None:
    """Forget `keys` (all when None) once a merge derived them (inside its transaction)."""
    if keys is None:
        conn.execute("DELETE FROM pending_rederive")
    else:
        conn.executemany("DELETE FROM pending_rederive WHERE key = ?", [(k,) for k in keys])


def pending(store: Store) -> set[str]:
    """The keys still owed a re-derivation."""
    return {r["key"] for r in store.query("SELECT key FROM pending_rederive")}
