"""Finding near-duplicate chunks as they are stored (`chunk_bands`, `chunk_copies`, migration 16).

`find_copies` runs in the transaction that stores a document's chunks: each new chunk's
fingerprint (`base.fingerprints`) is looked up by its band hashes among the originals stored
before it (other documents' and its own document's earlier chunks); a candidate whose shingles
are at least `THRESHOLD` alike makes it a copy of that original, else its bands are added and it
is an original itself. A chunk whose shingles are mostly (`COVER`) in a candidate and its
neighbour in the candidate's document together is a copy of both (a forwarded document cut
one paragraph later than its original). Copies get no bands: a later copy matches the
original directly.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from docatlas.core.base.fingerprints import (COVER, THRESHOLD, Fingerprint, coverage, fingerprint_of, shingles,
                                             similarity)

BATCH = 200  # chunks read back at a time (memory stays flat for a document of any size)
CANDIDATES = 4  # originals checked exactly per chunk, the ones sharing most bands first
KEPT = 512  # originals' shingles kept in memory (a few MB): the same originals are checked again and again


def find_copies(conn: sqlite3.Connection, document_id: int) -> int:
    """Fingerprint a document's new chunks: copies linked to their originals, originals banded.

    Runs inside the caller's transaction; returns how many chunks were found to be copies."""
    copies = 0
    cursor = conn.execute("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY idx", (document_id,))
    while rows := cursor.fetchmany(BATCH):
        for chunk_id, text in rows:
            found = fingerprint_of(_kept_shingles(text))  # kept: a later chunk may be compared with this one
            if found is None:
                continue
            original = _original_of(conn, chunk_id, found)
            if original is not None:
                conn.execute("INSERT OR REPLACE INTO chunk_copies(chunk_id, original_id, also_id, similarity) "
                             "VALUES (?, ?, ?, ?)", (chunk_id, *original))
                copies += 1
            else:
                conn.executemany("INSERT OR IGNORE INTO chunk_bands(band, hash, chunk_id) VALUES (?, ?, ?)",
                                 [(band, value, chunk_id) for band, value in enumerate(found.bands)])
    return copies


def _original_of(conn: sqlite3.Connection, chunk_id: int,
                 found: Fingerprint) -> tuple[int, int | None, float] | None:
    """(original id, its neighbour or None, similarity or coverage) of a copy; None for an original."""
    pairs = ",".join("(?, ?)" for _ in found.bands)
    params = [v for band, value in enumerate(found.bands) for v in (band, value)]
    candidates = conn.execute(
        f"SELECT chunk_id, COUNT(*) AS n FROM chunk_bands WHERE (band, hash) IN (VALUES {pairs}) "
        "AND chunk_id != ? GROUP BY chunk_id ORDER BY n DESC, chunk_id LIMIT ?",
        [*params, chunk_id, CANDIDATES]).fetchall()
    best: tuple[int, int | None, float] | None = None
    read: dict[int, object] = {}
    for candidate, _ in candidates:
        row = conn.execute("SELECT text FROM chunks WHERE id = ?", (candidate,)).fetchone()
        read[candidate] = _kept_shingles(row[0]) if row else None
        alike = similarity(found.shingles, read[candidate])
        if alike >= THRESHOLD and (best is None or alike > best[2]):
            best = (candidate, None, alike)
    if best is not None:
        return best
    for candidate, _ in candidates:  # straddling two neighbouring originals
        for neighbour, text in conn.execute(
                "SELECT n.id, n.text FROM chunks c JOIN chunks n ON n.document_id = c.document_id "
                "AND n.idx IN (c.idx - 1, c.idx + 1) WHERE c.id = ? AND n.id != ? "
                "AND EXISTS (SELECT 1 FROM chunk_bands b WHERE b.chunk_id = n.id)",  # an original: it never waits
                (candidate, chunk_id)).fetchall():
            covered = coverage(found.shingles, read[candidate], _kept_shingles(text))
            if covered >= COVER and (best is None or covered > best[2]):
                best = (candidate, neighbour, covered)
    return best


@lru_cache(maxsize=KEPT)
def _kept_shingles(text: str):
    """A stored chunk's shingles (a text's never change), kept for the `KEPT` texts compared last."""
    return shingles(text)
