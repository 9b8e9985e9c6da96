"""Migration: a key for every stored vector, never reused, for the on-disk vector index.

`embeddings.seq` is the vector's key in the index files (`storage.vector_index`). Triggers
give every inserted or changed vector the next number of `meta.vector_seq`, whoever writes
it, so a key names one vector for good: the index can tell what it lacks (keys above its
highest) and what it holds that is gone (fewer live keys than it has) from SQL alone. The
rows already stored are numbered by their rowid. `embeddings_seq` lets both questions, and
the lookup of a search's keys, read the index alone, never the vector blobs.
`chunks_document_status` lets `status` count every document's chunks from one index read.
"""

import sqlite3

SQL = """
    UPDATE embeddings SET seq = rowid WHERE seq IS NULL;
    INSERT INTO meta(key, value) SELECT 'vector_seq', CAST(COALESCE(MAX(seq), 0) AS TEXT) FROM embeddings
        WHERE true ON CONFLICT(key) DO UPDATE
        SET value = CAST(MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT);
    CREATE INDEX IF NOT EXISTS embeddings_seq ON embeddings(kind, model, dim, seq);
    CREATE INDEX IF NOT EXISTS chunks_document_status ON chunks(document_id, status);
    CREATE TRIGGER IF NOT EXISTS embeddings_seq_insert AFTER INSERT ON embeddings WHEN NEW.seq IS NULL BEGIN
        UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'vector_seq';
        UPDATE embeddings SET seq = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'vector_seq')
            WHERE rowid = NEW.rowid;
    END;
    CREATE TRIGGER IF NOT EXISTS embeddings_seq_update AFTER UPDATE OF kind, ref, model, dim, vector ON embeddings BEGIN
        UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'vector_seq';
        UPDATE embeddings SET seq = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'vector_seq')
            WHERE rowid = NEW.rowid;
    END;
    """


def apply(conn: sqlite3.Connection, statements) -> None:  # statements: the runner's splitter
    """Add the key column (unless a run of this step over the workspace already did), then the rest."""
    if "seq" not in {row[1] for row in conn.execute("PRAGMA table_info(embeddings)")}:
        conn.execute("ALTER TABLE embeddings ADD COLUMN seq INTEGER")
    for statement in statements(SQL):
        conn.execute(statement)
