"""Migration 4: the user's prompts (overrides and every saved version) and each chunk's prompt stamp.

The pipeline puts the fingerprint of the extraction prompts in meta (`prompt_hash:<profile>`)
and the trigger stamps it on the chunk in the same transaction that finishes it
(see `docatlas.core.prompts.store`).
"""

SQL = """
    CREATE TABLE prompt_versions (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        text TEXT,
        note TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    );
    CREATE INDEX prompt_versions_key ON prompt_versions(key, id);
    CREATE TABLE prompt_overrides (
        key TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        version_id INTEGER REFERENCES prompt_versions(id),
        updated_at REAL NOT NULL
    );
    ALTER TABLE chunks ADD COLUMN prompt_hash TEXT;
    CREATE TRIGGER chunks_stamp_prompts AFTER UPDATE OF status ON chunks
    WHEN NEW.status IN ('done', 'empty') BEGIN
        UPDATE chunks SET prompt_hash = (SELECT value FROM meta WHERE key = 'prompt_hash:' || COALESCE(NEW.profile, ''))
        WHERE id = NEW.id;
    END;
    """
