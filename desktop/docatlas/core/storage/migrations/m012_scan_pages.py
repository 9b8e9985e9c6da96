"""Migration: OCR's confidence per page of a document read (partly) by OCR.

One row a page whose text OCR read or completed; `page` is the PDF page or TIFF frame
(NULL for a single image). A page read from its text layer alone has no row.
"""

SQL = """
    CREATE TABLE IF NOT EXISTS scan_pages (
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        page INTEGER,
        confidence REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS scan_pages_document ON scan_pages(document_id);
    """
