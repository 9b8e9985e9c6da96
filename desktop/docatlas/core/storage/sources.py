"""Sources: folders linked to the workspace in place, and the stored documents under each.

The files stay where they are; a sync compares them with what the store holds
(`jobs.sync`). Paths are stored resolved, as documents are.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from docatlas.core.storage.database import Store, stored_path


@dataclass(frozen=True)
class Source:
    """A linked folder."""

    id: int
    path: str
    added_at: float
    synced_at: float | None


@dataclass(frozen=True)
class StoredFile:
    """What the store knows of one document under a source: enough to tell whether it changed."""

    id: int
    path: str  # as stored (printable)
    file: str  # the file on disk, exactly (also when its name is not valid UTF-8)
    stamp: tuple[int, int] | None  # (mtime_ns, size) when it was last read by a sync


def add_source(store: Store, folder: str) -> bool:
    """Link `folder` (a resolved path); False when it was linked already."""
    with store.transaction() as conn:
        cursor = conn.execute("INSERT OR IGNORE INTO sources(path, added_at) VALUES (?, ?)", (folder, time.time()))
        return cursor.rowcount > 0


def remove_source(store: Store, folder: str) -> bool:
    """Unlink `folder`; its documents stay. False when it was not linked."""
    with store.transaction() as conn:
        return conn.execute("DELETE FROM sources WHERE path = ?", (folder,)).rowcount > 0


def list_sources(store: Store) -> list[Source]:
    """Every linked folder, in the order they were added."""
    rows = store.query("SELECT id, path, added_at, synced_at FROM sources ORDER BY id")
    return [Source(r["id"], r["path"], r["added_at"], r["synced_at"]) for r in rows]


def mark_synced(store: Store, folder: str) -> None:
    """Note that `folder` was just compared with the store."""
    with store.transaction() as conn:
        conn.execute("UPDATE sources SET synced_at = ? WHERE path = ?", (time.time(), folder))


def files_under(store: Store, folder: str) -> list[StoredFile]:
    """The stored documents whose path lies inside `folder` (at any depth) and that are files of
    their own: an attachment or a mailbox's message (`document_parts`) has no file, it follows
    the document it came in."""
    prefix = folder.rstrip(os.sep) + os.sep
    rows = store.query(
        "SELECT d.id, d.path, b.raw, s.mtime_ns, s.size FROM documents d "
        "LEFT JOIN document_path_bytes b ON b.document_id = d.id LEFT JOIN file_stamps s ON s.document_id = d.id "
        "WHERE substr(d.path, 1, ?) = ? AND d.id NOT IN (SELECT document_id FROM document_parts) "
        "ORDER BY d.path", (len(prefix), prefix))
    return [StoredFile(r["id"], r["path"], os.fsdecode(r["raw"]) if r["raw"] is not None else r["path"],
                       (r["mtime_ns"], r["size"]) if r["mtime_ns"] is not None else None) for r in rows]


def put_stamps(store: Store, stamps: dict[str, tuple[int, int]]) -> None:
    """Keep (mtime_ns, size) for the stored documents at these paths; others are ignored."""
    with store.transaction() as conn:
        for path, (mtime_ns, size) in stamps.items():
            conn.execute("INSERT OR REPLACE INTO file_stamps(document_id, mtime_ns, size) "
                         "SELECT id, ?, ? FROM documents WHERE path = ?", (mtime_ns, size, stored_path(path)[0]))


def stamp_of(store: Store, document_id: int) -> tuple[int, int] | None:
    """(mtime_ns, size) of a document's file when it was last read, if known."""
    rows = store.query("SELECT mtime_ns, size FROM file_stamps WHERE document_id = ?", (document_id,))
    return (rows[0]["mtime_ns"], rows[0]["size"]) if rows else None
