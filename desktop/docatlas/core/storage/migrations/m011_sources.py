"""Migration: folders linked to the workspace in place (sources), kept in sync.

A source is a folder the user added; its files are read where they are, never copied.
`synced_at` is when its files were last compared with the documents stored for them.
`file_stamps` keeps each synced document's file modification time and size as they were
when it was read, so the next sync stats files instead of hashing them again.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS sources (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        added_at REAL NOT NULL,
        synced_at REAL);
    CREATE TABLE IF NOT EXISTS file_stamps (
        document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL);
    """
