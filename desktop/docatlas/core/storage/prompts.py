"""The user's prompts and the stamps they leave on chunks: `prompt_overrides` (the text
used instead of a bundled default), `prompt_versions` (every save and reset) and the
`prompt_hash` a trigger stamps on each finished chunk (migration 4)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from docatlas.core.storage.database import Store

FINISHED = "('done', 'empty')"


@dataclass(frozen=True)
class StoredVersion:
    """One saved state of a prompt (text None: a reset to the default)."""

    id: int
    key: str
    text: str | None
    note: str
    created_at: float


@dataclass(frozen=True)
class OverrideNote:
    """When an override was saved, and the note of its version."""

    key: str
    updated_at: float
    note: str


@dataclass(frozen=True)
class ChunkStamp:
    """The profile and prompt fingerprint a finished chunk was extracted with (None: not stamped)."""

    id: int
    profile: str | None
    prompt_hash: str | None


def overrides(store: Store) -> dict[str, str]:
    """Every override: prompt key -> text."""
    return {r["key"]: r["text"] for r in store.query("SELECT key, text FROM prompt_overrides")}


def versions(store: Store, key: str) -> list[StoredVersion]:
    """The saved versions of a prompt, newest first."""
    rows = store.query("SELECT id, key, text, note, created_at FROM prompt_versions WHERE key = ? ORDER BY id DESC",
                       (key,))
    return [StoredVersion(r["id"], r["key"], r["text"], r["note"], r["created_at"]) for r in rows]


def save_override(store: Store, key: str, text: str, note: str) -> StoredVersion:
    """Keep `text` as a new version of `key` and make it the override, together."""
    now = time.time()
    with store.transaction() as conn:
        version_id = conn.execute("INSERT INTO prompt_versions(key, text, note, created_at) VALUES (?, ?, ?, ?)",
                                  (key, text, note, now)).lastrowid
        conn.execute("INSERT INTO prompt_overrides(key, text, version_id, updated_at) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT(key) DO UPDATE SET text = excluded.text, version_id = excluded.version_id, "
                     "updated_at = excluded.updated_at", (key, text, version_id, now))
    return StoredVersion(int(version_id), key, text, note, now)


def drop_override(store: Store, key: str, note: str) -> StoredVersion | None:
    """Remove the override of `key`, kept as a version without text; None when there was none."""
    now = time.time()
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM prompt_overrides WHERE key = ?", (key,)).fetchone() is None:
            return None
        version_id = conn.execute("INSERT INTO prompt_versions(key, text, note, created_at) VALUES (?, NULL, ?, ?)",
                                  (key, note, now)).lastrowid
        conn.execute("DELETE FROM prompt_overrides WHERE key = ?", (key,))
    return StoredVersion(int(version_id), key, None, note, now)


def override_notes(store: Store) -> dict[str, OverrideNote]:
    """For every override: when it was saved and the note of its version."""
    rows = store.query("SELECT o.key, o.updated_at, v.note FROM prompt_overrides o "
                       "LEFT JOIN prompt_versions v ON v.id = o.version_id")
    return {r["key"]: OverrideNote(r["key"], r["updated_at"], r["note"] or "") for r in rows}


def finished_chunk_stamps(store: Store) -> list[ChunkStamp]:
    """The stamp of every finished chunk, by id."""
    rows = store.query(f"SELECT id, profile, prompt_hash FROM chunks WHERE status IN {FINISHED} ORDER BY id")
    return [ChunkStamp(int(r["id"]), r["profile"], r["prompt_hash"]) for r in rows]


def finished_stamp_counts(store: Store) -> list[tuple[str | None, str | None, int]]:
    """(profile, prompt fingerprint, finished chunks with that stamp): a few rows, counted in SQL."""
    rows = store.query(f"SELECT profile, prompt_hash, COUNT(*) AS n FROM chunks WHERE status IN {FINISHED}"
                       " GROUP BY profile, prompt_hash")
    return [(r["profile"], r["prompt_hash"], int(r["n"])) for r in rows]


def finished_chunk_count(store: Store) -> int:
    """How many chunks are finished (done or empty)."""
    return int(store.query(f"SELECT COUNT(*) AS n FROM chunks WHERE status IN {FINISHED}")[0]["n"])
