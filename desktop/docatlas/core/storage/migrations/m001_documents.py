"""Migration 1: documents, chunks, their per-chunk records, the derived graph and the reply cache.

Per-chunk records (`chunk_entities`, `chunk_relations`) are the source of truth; `entities`
and `relations` are derived from them by `docatlas.core.graph.merge`.
"""

SQL = """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        kind TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'pending',
        error TEXT,
        added_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        text TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        page_start INTEGER,
        page_end INTEGER,
        status TEXT NOT NULL DEFAULT 'pending',
        error TEXT,
        profile TEXT,
        model TEXT,
        calls INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        UNIQUE (document_id, idx)
    );
    CREATE INDEX chunks_status ON chunks(status);
    CREATE TABLE chunk_entities (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        description TEXT NOT NULL
    );
    CREATE INDEX chunk_entities_key ON chunk_entities(key);
    CREATE INDEX chunk_entities_chunk ON chunk_entities(chunk_id);
    CREATE TABLE chunk_relations (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        source_key TEXT NOT NULL,
        target_key TEXT NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        keywords TEXT NOT NULL,
        description TEXT NOT NULL,
        strength REAL
    );
    CREATE INDEX chunk_relations_pair ON chunk_relations(source_key, target_key);
    CREATE INDEX chunk_relations_chunk ON chunk_relations(chunk_id);
    CREATE TABLE entities (
        key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        description TEXT NOT NULL,
        mentions INTEGER NOT NULL
    );
    CREATE TABLE relations (
        source_key TEXT NOT NULL,
        target_key TEXT NOT NULL,
        keywords TEXT NOT NULL,
        description TEXT NOT NULL,
        weight REAL NOT NULL,
        mentions INTEGER NOT NULL,
        PRIMARY KEY (source_key, target_key)
    );
    CREATE TABLE llm_cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        reply TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    """
