"""The merge tables (schema migration 3): merge suggestions and accepted aliases.

`merge_suggestions` holds pairs of entities that look like one thing written two ways
(`IBM` / `International Business Machines`), found by name similarity; a pair is only
merged when the user (or the model, when asked) accepts it. `entity_aliases` maps the
key of each merged-away entity to the key it now belongs to, so that records extracted
later under the old name land on the same node.

"""

from __future__ import annotations

MERGE_SCHEMA = """
    CREATE TABLE merge_suggestions (
        id INTEGER PRIMARY KEY,
        a_key TEXT NOT NULL,
        b_key TEXT NOT NULL,
        a_name TEXT NOT NULL,
        b_name TEXT NOT NULL,
        score REAL NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        decided_by TEXT,
        created_at REAL NOT NULL,
        decided_at REAL,
        UNIQUE (a_key, b_key)
    );
    CREATE INDEX merge_suggestions_status ON merge_suggestions(status);
    CREATE TABLE entity_aliases (
        alias TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX entity_aliases_key ON entity_aliases(key);
    CREATE INDEX chunk_relations_target ON chunk_relations(target_key);
"""

SQL = MERGE_SCHEMA
