"""Finding near-duplicate chunks as they are stored (`chunk_bands`, `chunk_copies`, migration 16).

`find_copies` runs in the transaction that stores a document's chunks: each new chunk's
fingerprint (`base.fingerprints`) is looked up by its band hashes among the originals stored
before it (other documents' and its own document's earlier chunks); a candidate whose shingles
are at least `THRESHOLD` alike makes it a copy of that original, else its bands are added and it
is an original itself. Copies get no bands: a later copy matches the original directly.
"""

from __future__ import annotations

import sqlite3

from docatlas.core.base.fingerprints import THRESHOLD, Fingerprint, fingerprint, shingles, similarity

BATCH = 200  # chunks read back at a time (memory stays flat for a document of any size)
CANDIDATES = 4  # originals checked exactly per chunk, the ones sharing most bands first


def find_copies(conn: sqlite3.Connection, document_id: int) -> int:
    """Fingerprint a document's new chunks: copies linked to their originals, originals banded.

    Runs inside the caller's transaction; returns how many chunks were found to be copies."""
    copies = 0
    cursor = conn.execute("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY idx", (document_id,))
    while rows := cursor.fetchmany(BATCH):
        for chunk_id, text in rows:
            found = fingerprint(text)
            if found is None:
                continue
            original = _original_of(conn, chunk_id, found)
            if original is not None:
                conn.execute("INSERT OR REPLACE INTO chunk_copies(chunk_id, original_id, similarity) VALUES (?, ?, ?)",
                             (chunk_id, *original))
                copies += 1
            else:
                conn.executemany("INSERT OR IGNORE INTO chunk_bands(band, hash, chunk_id) VALUES (?, ?, ?)",
                                 [(band, value, chunk_id) for band, value in enumerate(found.bands)])
    return copies


def _original_of(conn: sqlite3.Connection, chunk_id: int, found: Fingerprint) -> tuple[int, float] | None:
    """(original id, similarity) of the most alike original of a chunk at `THRESHOLD` or more."""
    pairs = ",".join("(?, ?)" for _ in found.bands)
    params = [v for band, value in enumerate(found.bands) for v in (band, value)]
    candidates = conn.execute(
        f"SELECT chunk_id, COUNT(*) AS n FROM chunk_bands WHERE (band, hash) IN (VALUES {pairs}) "
        "AND chunk_id != ? GROUP BY chunk_id ORDER BY n DESC, chunk_id LIMIT ?",
        [*params, chunk_id, CANDIDATES]).fetchall()
    best: tuple[int, float] | None = None
    for candidate, _ in candidates:
        row = conn.execute("SELECT text FROM chunks WHERE id = ?", (candidate,)).fetchone()
        alike = similarity(found.shingles, shingles(row[0])) if row else 0.0
        if alike >= THRESHOLD and (best is None or alike > best[1]):
            best = (candidate, alike)
    return best
