"""The retrieval tables (schema migration 2) and the version counters they keep.

Migration 2 adds: full-text indexes (FTS5) over entities, relations and chunks; an
embedding table with a work queue; communities with their reports; an answer cache; and
two counters in `meta`: `graph_version` (entities and relations changed) and
`index_version` (chunks, embeddings or community reports changed). Triggers keep the
indexes, the queue and the counters in step with every write, whoever makes it.

The runner (`storage.database`) splits the script with `sqlite3.complete_statement`, trigger
bodies whole.
"""

from __future__ import annotations

_BUMP_GRAPH = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'graph_version';"
_BUMP_INDEX = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_version';"
_REL_REF = "{row}.source_key || char(31) || {row}.target_key"


def _entity_triggers() -> str:
    return f"""
    CREATE TRIGGER entities_before_insert BEFORE INSERT ON entities BEGIN
        DELETE FROM entities_fts WHERE rowid = (SELECT rowid FROM entities WHERE key = NEW.key);
    END;
    CREATE TRIGGER entities_after_insert AFTER INSERT ON entities BEGIN
        INSERT INTO entities_fts(rowid, name, description) VALUES (NEW.rowid, NEW.name, NEW.description);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('entity', NEW.key);
        {_BUMP_GRAPH}
    END;
    CREATE TRIGGER entities_after_update AFTER UPDATE ON entities BEGIN
        DELETE FROM entities_fts WHERE rowid = OLD.rowid;
        INSERT INTO entities_fts(rowid, name, description) VALUES (NEW.rowid, NEW.name, NEW.description);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('entity', NEW.key);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('entity', OLD.key);
        {_BUMP_GRAPH}
    END;
    CREATE TRIGGER entities_after_delete AFTER DELETE ON entities BEGIN
        DELETE FROM entities_fts WHERE rowid = OLD.rowid;
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('entity', OLD.key);
        {_BUMP_GRAPH}
    END;
    """


def _relation_triggers() -> str:
    new, old = _REL_REF.format(row="NEW"), _REL_REF.format(row="OLD")
    return f"""
    CREATE TRIGGER relations_before_insert BEFORE INSERT ON relations BEGIN
        DELETE FROM relations_fts WHERE rowid = (SELECT rowid FROM relations
            WHERE source_key = NEW.source_key AND target_key = NEW.target_key);
    END;
    CREATE TRIGGER relations_after_insert AFTER INSERT ON relations BEGIN
        INSERT INTO relations_fts(rowid, keywords, description)
            VALUES (NEW.rowid, NEW.keywords, NEW.description);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('relation', {new});
        {_BUMP_GRAPH}
    END;
    CREATE TRIGGER relations_after_update AFTER UPDATE ON relations BEGIN
        DELETE FROM relations_fts WHERE rowid = OLD.rowid;
        INSERT INTO relations_fts(rowid, keywords, description)
            VALUES (NEW.rowid, NEW.keywords, NEW.description);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('relation', {new});
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('relation', {old});
        {_BUMP_GRAPH}
    END;
    CREATE TRIGGER relations_after_delete AFTER DELETE ON relations BEGIN
        DELETE FROM relations_fts WHERE rowid = OLD.rowid;
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('relation', {old});
        {_BUMP_GRAPH}
    END;
    """


def _chunk_and_community_triggers() -> str:
    return f"""
    CREATE TRIGGER chunks_after_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, text) VALUES (NEW.id, NEW.text);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('chunk', CAST(NEW.id AS TEXT));
        {_BUMP_INDEX}
    END;
    CREATE TRIGGER chunks_after_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('chunk', CAST(OLD.id AS TEXT));
        {_BUMP_INDEX}
    END;
    CREATE TRIGGER chunks_after_update_text AFTER UPDATE OF text ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
        INSERT INTO chunks_fts(rowid, text) VALUES (NEW.id, NEW.text);
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('chunk', CAST(NEW.id AS TEXT));
        {_BUMP_INDEX}
    END;
    CREATE TRIGGER communities_after_insert AFTER INSERT ON communities BEGIN
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('community', CAST(NEW.id AS TEXT));
        {_BUMP_INDEX}
    END;
    CREATE TRIGGER communities_after_update AFTER UPDATE ON communities BEGIN
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('community', CAST(NEW.id AS TEXT));
        {_BUMP_INDEX}
    END;
    CREATE TRIGGER communities_after_delete AFTER DELETE ON communities BEGIN
        INSERT OR REPLACE INTO embed_queue(kind, ref) VALUES ('community', CAST(OLD.id AS TEXT));
        {_BUMP_INDEX}
    END;
    """


_TABLES = """
    INSERT OR IGNORE INTO meta(key, value) VALUES ('graph_version', '0');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('index_version', '0');
    CREATE INDEX relations_target ON relations(target_key);
    CREATE VIRTUAL TABLE entities_fts USING fts5(name, description,
        tokenize = 'unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE relations_fts USING fts5(keywords, description,
        tokenize = 'unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content = 'chunks', content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO entities_fts(entities_fts, rank) VALUES ('rank', 'bm25(4.0, 1.0)');
    INSERT INTO relations_fts(relations_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
    CREATE TABLE embeddings (
        kind TEXT NOT NULL,
        ref TEXT NOT NULL,
        model TEXT NOT NULL,
        hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (kind, ref)
    );
    CREATE INDEX embeddings_model ON embeddings(kind, model);
    CREATE TABLE embed_queue (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        ref TEXT NOT NULL,
        UNIQUE (kind, ref)
    );
    CREATE TABLE communities (
        id INTEGER PRIMARY KEY,
        signature TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        title TEXT NOT NULL DEFAULT '',
        summary TEXT NOT NULL DEFAULT '',
        findings TEXT NOT NULL DEFAULT '[]',
        rating REAL,
        rating_explanation TEXT NOT NULL DEFAULT '',
        model TEXT,
        error TEXT,
        updated_at REAL NOT NULL
    );
    CREATE TABLE community_members (
        community_id INTEGER NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        PRIMARY KEY (community_id, key)
    );
    CREATE INDEX community_members_key ON community_members(key);
    CREATE TABLE answers (
        key TEXT PRIMARY KEY,
        question TEXT NOT NULL,
        mode TEXT NOT NULL,
        version TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at REAL NOT NULL
    );
"""

_BACKFILL = """
    INSERT INTO entities_fts(rowid, name, description) SELECT rowid, name, description FROM entities;
    INSERT INTO relations_fts(rowid, keywords, description)
        SELECT rowid, keywords, description FROM relations;
    INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
    INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'chunk', CAST(id AS TEXT) FROM chunks;
    INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'entity', key FROM entities;
    INSERT OR IGNORE INTO embed_queue(kind, ref)
        SELECT 'relation', source_key || char(31) || target_key FROM relations;
"""

RETRIEVAL_SCHEMA = (
    _TABLES + _BACKFILL + _entity_triggers() + _relation_triggers() + _chunk_and_community_triggers()
)

SQL = RETRIEVAL_SCHEMA
