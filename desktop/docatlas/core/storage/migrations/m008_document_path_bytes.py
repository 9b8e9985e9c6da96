"""Migration: the exact bytes of a document's path when they are not valid UTF-8.

`documents.path` holds a printable form (bad bytes as `\\xNN`); `document_path_bytes` keeps
the original (os.fsencode) so nothing is lost. Only such paths have a row.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS document_path_bytes (
        document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        raw BLOB NOT NULL);
    """
