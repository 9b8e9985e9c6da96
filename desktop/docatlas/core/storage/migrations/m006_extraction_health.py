"""Migration 6: extraction health per chunk, ungrounded records, and what is learned per model.

`chunk_health` holds one chunk's figures (see `ingest.health`) and the types it remapped;
`ungrounded_records` keeps every record the chunk's text did not back (accepted ones join
the chunk's records and stay marked, so a re-derivation keeps them); `model_facts` keeps,
per model, the learned token ratio and the profile `--profile auto` chose.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS chunk_health (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        found INTEGER NOT NULL, grounded INTEGER NOT NULL, ungrounded INTEGER NOT NULL,
        grounded_entities INTEGER NOT NULL, remapped INTEGER NOT NULL, cut INTEGER NOT NULL,
        retries INTEGER NOT NULL, reply_format TEXT NOT NULL, type_notes TEXT NOT NULL DEFAULT '[]');
    CREATE TABLE IF NOT EXISTS ungrounded_records (
        id INTEGER PRIMARY KEY,
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        kind TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL DEFAULT '',
        target TEXT NOT NULL DEFAULT '', keywords TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '', strength REAL, reason TEXT NOT NULL,
        accepted INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS ungrounded_records_chunk ON ungrounded_records(chunk_id);
    CREATE TABLE IF NOT EXISTS model_facts (model TEXT PRIMARY KEY, token_ratio REAL, profile TEXT,
        profile_scores TEXT, updated_at REAL NOT NULL);
    """
