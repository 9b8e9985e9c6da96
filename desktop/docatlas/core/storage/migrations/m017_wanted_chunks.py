"""Migration: the chunks a question wanted read, for the run's writer to take first.

A question with a reading budget (`jobs.budgeted`) that finds a run writing the workspace may
not store records itself (one writer); it reads its chunks with the model (the replies land in
the reply cache) and lists them here, oldest first. The run's writer can extract them next:
their replies come from the cache, so no call is repeated. A chunk leaves the list in the
transaction that finishes it (done or empty), whoever finishes it, and with its chunk.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS wanted_chunks (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        wanted_at REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS wanted_chunks_order ON wanted_chunks(wanted_at, chunk_id);
    CREATE TRIGGER IF NOT EXISTS wanted_chunks_finished AFTER UPDATE OF status ON chunks
    WHEN NEW.status IN ('done', 'empty') BEGIN
        DELETE FROM wanted_chunks WHERE chunk_id = NEW.id;
    END;
"""
