"""Migration 9: where each chunk sits in its document's extracted text, and where pages start.

`chunks.char_start`/`char_end` is the chunk's span in the text; `chunks.lead` the text
between the previous chunk's end and this start (whitespace; empty where chunks overlap),
so the chunks give back the extracted text exactly. `document_pages` holds the offset where
each PDF page starts. `chunk_mentions` holds, per chunk, the spans (in the chunk's text)
where an entity record (`kind` 'entity', `record` its rowid in `chunk_entities`) is named, and
the sentences naming both ends of a relation record (`kind` 'relation'); a record keeps its
rowid when it is re-keyed, so a merge needs no change here. They are located without a model and kept with the records
(`storage.mentions.relocate`). For a workspace written before, spans are filled from the stored
chunks alone, without the model or the files: consecutive chunks are laid end to end over
their longest overlap; where they do not overlap the cut is taken for a paragraph break
("\\n\\n"), and page starts stay unknown (a position then takes its chunk's first page).
"""

from __future__ import annotations

import sqlite3

COLUMNS = {"char_start": "INTEGER", "char_end": "INTEGER", "lead": "TEXT NOT NULL DEFAULT ''"}
SQL = """
    CREATE TABLE IF NOT EXISTS document_pages (
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        start INTEGER NOT NULL,
        PRIMARY KEY (document_id, number));
    CREATE INDEX IF NOT EXISTS chunks_span ON chunks(document_id, char_start);
    CREATE TABLE IF NOT EXISTS chunk_mentions (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        record INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS chunk_mentions_chunk ON chunk_mentions(chunk_id);
    CREATE INDEX IF NOT EXISTS chunk_mentions_record ON chunk_mentions(kind, record);
    """

_PROBE = 32


def overlap(before: str, after: str) -> int:
    """Length of the longest end of `before` that `after` starts with (0: none)."""
    probe = after[:_PROBE]
    position = before.find(probe, max(0, len(before) - len(after)))
    while position >= 0:
        if after.startswith(before[position:]):
            return len(before) - position
        position = before.find(probe, position + 1)
    return 0


def fill_spans(conn: sqlite3.Connection) -> None:
    """Give the chunks of every document that has none a span, one document at a time."""
    documents = [row[0] for row in conn.execute(
        "SELECT DISTINCT document_id FROM chunks WHERE char_start IS NULL ORDER BY document_id")]
    for document_id in documents:
        rows = conn.execute("SELECT id, text FROM chunks WHERE document_id = ? ORDER BY idx", (document_id,))
        updates, end, previous = [], 0, ""
        for number, (chunk_id, text) in enumerate(rows):
            shared = overlap(previous, text) if number else 0
            lead = "" if shared or not number else "\n\n"
            start = end - shared + len(lead)
            updates.append((start, start + len(text), lead, chunk_id))
            end, previous = start + len(text), text
        conn.executemany("UPDATE chunks SET char_start = ?, char_end = ?, lead = ? WHERE id = ?", updates)


def apply(conn: sqlite3.Connection, statements) -> None:
    """Run the schema step, then fill the spans of the chunks already stored."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(chunks)")}
    for name, declaration in COLUMNS.items():
        if name not in present:  # a step may run again over a workspace that has it
            conn.execute(f"ALTER TABLE chunks ADD COLUMN {name} {declaration}")
    for statement in statements(SQL):
        conn.execute(statement)
    fill_spans(conn)
    from docatlas.core.storage.locate import relocate  # the same code that keeps them after

    for (chunk_id,) in conn.execute("SELECT DISTINCT chunk_id FROM chunk_entities UNION "
                                    "SELECT DISTINCT chunk_id FROM chunk_relations").fetchall():
        relocate(conn, chunk_id)
