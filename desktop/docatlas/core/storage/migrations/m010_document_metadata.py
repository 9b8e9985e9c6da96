"""Migration: what each document says about itself, and documents inside documents.

`document_metadata` holds (key, value) pairs per document: author, title, created,
modified, and an email's from, to, cc, date, subject and attachments. `document_parts`
links an attachment (or a mailbox's message) to the document it came in.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS document_metadata (
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (document_id, key));
    CREATE INDEX IF NOT EXISTS document_metadata_by_value ON document_metadata(key, value);
    CREATE TABLE IF NOT EXISTS document_parts (
        document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        parent_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        part_key TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS document_parts_by_parent ON document_parts(parent_id);
    """
