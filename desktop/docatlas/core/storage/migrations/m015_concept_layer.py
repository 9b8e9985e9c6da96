"""Migration 15: the concept layer, names found in the text without a model, beside the model's records.

A record's `layer` says where it came from: `model` (an extraction reply; every record stored
before this step) or `concept` (capitalised names of a chunk not yet extracted, and the pairs
that share a sentence: `docatlas.core.base.concepts`). The derived `entities` and `relations`
carry the layer too: `concept` while no model record supports them, `model` once one does.
A chunk's concept records are replaced by the model's when it is extracted (`finish_chunk`
deletes the chunk's records before it writes the reply's). Chunks stored before this step get
no concept records: their documents were read by the model already, or will be.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

TABLES = ("chunk_entities", "chunk_relations", "entities", "relations")


def apply(conn: sqlite3.Connection, statements: Callable[[str], list[str]]) -> None:
    """Add `layer` to each table that has none yet (a step run again adds nothing)."""
    for table in TABLES:
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if "layer" not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN layer TEXT NOT NULL DEFAULT 'model'")
