"""Migration: each document's counts, kept by triggers in the transaction that changes them.

`document_counts` holds per document its chunks, those finished (done or empty), failed and
pending, and the distinct entity keys its chunks name; `document_entity_keys` holds how many
of the document's entity records carry each key (what `entities` counts). Triggers on
`documents`, `chunks` and `chunk_entities` keep both exact whatever writes them (a finished
chunk, a requeue, a re-key by a merge, a delete), so the Documents list and `status` read a
row per document instead of scanning every chunk and entity record.

A chunk is deleted with its records: the records go first (in a trigger, while the chunk
still says which document it was in), which is what the foreign key's cascade would do.
The rows already stored are counted once, here.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS document_counts (
        document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        chunks INTEGER NOT NULL DEFAULT 0,
        done INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        pending INTEGER NOT NULL DEFAULT 0,
        entities INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS document_counts_work ON document_counts(pending, failed);
    CREATE TABLE IF NOT EXISTS document_entity_keys (
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        records INTEGER NOT NULL,
        PRIMARY KEY (document_id, key)) WITHOUT ROWID;

    CREATE TRIGGER IF NOT EXISTS document_counts_document AFTER INSERT ON documents BEGIN
        INSERT OR IGNORE INTO document_counts(document_id) VALUES (NEW.id);
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_chunk_added AFTER INSERT ON chunks BEGIN
        UPDATE document_counts SET chunks = chunks + 1,
            done = done + (NEW.status IN ('done', 'empty')), failed = failed + (NEW.status = 'failed'),
            pending = pending + (NEW.status = 'pending')
        WHERE document_id = NEW.document_id;
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_chunk_status AFTER UPDATE OF status, document_id ON chunks
    WHEN OLD.status IS NOT NEW.status OR OLD.document_id IS NOT NEW.document_id BEGIN
        UPDATE document_counts SET chunks = chunks - 1,
            done = done - (OLD.status IN ('done', 'empty')), failed = failed - (OLD.status = 'failed'),
            pending = pending - (OLD.status = 'pending')
        WHERE document_id = OLD.document_id;
        UPDATE document_counts SET chunks = chunks + 1,
            done = done + (NEW.status IN ('done', 'empty')), failed = failed + (NEW.status = 'failed'),
            pending = pending + (NEW.status = 'pending')
        WHERE document_id = NEW.document_id;
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_chunk_records BEFORE DELETE ON chunks BEGIN
        DELETE FROM chunk_entities WHERE chunk_id = OLD.id;
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_chunk_gone AFTER DELETE ON chunks BEGIN
        UPDATE document_counts SET chunks = chunks - 1,
            done = done - (OLD.status IN ('done', 'empty')), failed = failed - (OLD.status = 'failed'),
            pending = pending - (OLD.status = 'pending')
        WHERE document_id = OLD.document_id;
    END;

    CREATE TRIGGER IF NOT EXISTS document_entity_keys_added AFTER INSERT ON chunk_entities BEGIN
        INSERT INTO document_entity_keys(document_id, key, records)
            SELECT document_id, NEW.key, 1 FROM chunks WHERE id = NEW.chunk_id
            ON CONFLICT(document_id, key) DO UPDATE SET records = records + 1;
    END;
    CREATE TRIGGER IF NOT EXISTS document_entity_keys_gone AFTER DELETE ON chunk_entities BEGIN
        UPDATE document_entity_keys SET records = records - 1
        WHERE key = OLD.key AND document_id = (SELECT document_id FROM chunks WHERE id = OLD.chunk_id);
        DELETE FROM document_entity_keys
        WHERE key = OLD.key AND document_id = (SELECT document_id FROM chunks WHERE id = OLD.chunk_id)
            AND records <= 0;
    END;
    CREATE TRIGGER IF NOT EXISTS document_entity_keys_moved AFTER UPDATE OF key, chunk_id ON chunk_entities
    WHEN OLD.key IS NOT NEW.key OR OLD.chunk_id IS NOT NEW.chunk_id BEGIN
        UPDATE document_entity_keys SET records = records - 1
        WHERE key = OLD.key AND document_id = (SELECT document_id FROM chunks WHERE id = OLD.chunk_id);
        DELETE FROM document_entity_keys
        WHERE key = OLD.key AND document_id = (SELECT document_id FROM chunks WHERE id = OLD.chunk_id)
            AND records <= 0;
        INSERT INTO document_entity_keys(document_id, key, records)
            SELECT document_id, NEW.key, 1 FROM chunks WHERE id = NEW.chunk_id
            ON CONFLICT(document_id, key) DO UPDATE SET records = records + 1;
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_key_added AFTER INSERT ON document_entity_keys BEGIN
        UPDATE document_counts SET entities = entities + 1 WHERE document_id = NEW.document_id;
    END;
    CREATE TRIGGER IF NOT EXISTS document_counts_key_gone AFTER DELETE ON document_entity_keys BEGIN
        UPDATE document_counts SET entities = entities - 1 WHERE document_id = OLD.document_id;
    END;

    INSERT OR IGNORE INTO document_counts(document_id, chunks, done, failed, pending)
        SELECT d.id, COUNT(c.id), COALESCE(SUM(c.status IN ('done', 'empty')), 0),
            COALESCE(SUM(c.status = 'failed'), 0), COALESCE(SUM(c.status = 'pending'), 0)
        FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id;
    INSERT OR IGNORE INTO document_entity_keys(document_id, key, records)
        SELECT c.document_id, e.key, COUNT(*) FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id
        GROUP BY c.document_id, e.key;
    """
