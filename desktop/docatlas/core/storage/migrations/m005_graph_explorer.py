"""Migration 5: the graph explorer's user edits and its view caches.

`graph_overrides` are replayed after every re-derivation (`docatlas.core.graph.overrides`);
`graph_layout` and `graph_view_communities` cache positions and colours. IF NOT EXISTS:
earlier builds created them on first use.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS graph_overrides (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,
        key TEXT NOT NULL, value TEXT NOT NULL, created_at REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS graph_layout (key TEXT PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS graph_view_communities (key TEXT PRIMARY KEY, community INTEGER NOT NULL);
    """
