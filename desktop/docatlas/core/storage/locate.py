"""Locating a chunk's mentions from its records and text (no model): the one writer of
`chunk_mentions`, called in the transaction that writes the records."""

from __future__ import annotations

import sqlite3

from docatlas.core.base.mentions import mention_spans, sentences_naming
from docatlas.core.base.sentences import sentence_spans


def relocate(conn: sqlite3.Connection, chunk_id: int) -> None:
    """Replace the mentions of one chunk with those its records and text give now."""
    conn.execute("DELETE FROM chunk_mentions WHERE chunk_id = ?", (chunk_id,))
    row = conn.execute("SELECT text FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    if row is None:
        return
    text = row[0]
    entity_rows = conn.execute("SELECT rowid, key, name FROM chunk_entities WHERE chunk_id = ?",
                               (chunk_id,)).fetchall()
    names: dict[str, set[str]] = {}
    for _, key, name in entity_rows:
        names.setdefault(key, set()).add(name)
    spans = [(chunk_id, "entity", rowid, s, e) for rowid, _, name in entity_rows
             for s, e in mention_spans(text, [name])]
    sentences = sentence_spans(text)
    for rowid, sk, tk, source, target in conn.execute(
            "SELECT rowid, source_key, target_key, source, target FROM chunk_relations WHERE chunk_id = ?",
            (chunk_id,)).fetchall():
        ends = ({source, *names.get(sk, ())}, {target, *names.get(tk, ())})
        spans += [(chunk_id, "relation", rowid, s, e) for s, e in sentences_naming(text, *ends, sentences=sentences)]
    conn.executemany("INSERT INTO chunk_mentions(chunk_id, kind, record, start, end) VALUES (?, ?, ?, ?, ?)",
                     spans)
