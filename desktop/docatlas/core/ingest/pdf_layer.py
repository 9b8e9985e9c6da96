"""A PDF's text layer, one page at a time: pypdf's text, or the page with its tables as rows.

`PdfTextLayer` is a lazy sequence of page texts: `scans.pdf_pages` iterates it, so each page
is read (and a cancel is seen) between pages, and nothing of a page is kept once its text is
taken. A page that draws no table keeps pypdf's text exactly as before; a page where
`pdf_tables` finds one is read from pdfium's text in content order with each table replaced
by its header-labelled rows. A table that ends a page and one that opens the next with as many
columns are read as one table (see `pdf_tables.page_with_tables`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from docatlas.core.ingest.pdf_rules import ruled_tables
from docatlas.core.ingest.pdf_tables import aligned_tables, page_with_tables

log = logging.getLogger(__name__)


class PdfTextLayer:
    """Every page's text ("" for a page without a text layer), computed as it is iterated."""

    def __init__(self, path: Path, reader, count: int) -> None:
        self.path, self.reader, self.count = path, reader, count
        self._pdfium = None
        self._carried: list[str] | None = None

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        for number in range(1, self.count + 1):
            yield self.page_text(number)

    def page_text(self, number: int) -> str:
        """Page `number` (from 1): its tables as rows when it has any, else pypdf's text."""
        try:
            text = self.reader.pages[number - 1].extract_text() or ""
        except Exception:  # pypdf raises many types; one unreadable page must not lose the others
            text = ""
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        carried, self._carried = self._carried, None
        if not text:
            return text  # no text layer: OCR reads the page (scans.pdf_pages)
        try:
            with_tables = self._with_tables(number, carried)
        except Exception as exc:  # a page the table finder cannot read keeps its plain text
            log.warning("table detection failed on a PDF page (%s); its plain text is kept", type(exc).__name__)
            with_tables = None
        return with_tables or text

    def _with_tables(self, number: int, carried: list[str] | None) -> str | None:
        document = self._pdfium_document()
        if document is None or number > len(document):
            return None
        page = document[number - 1]
        textpage = page.get_textpage()
        try:
            tables = ruled_tables(page, textpage)
            tables += aligned_tables(textpage, [table.box for table in tables], len(carried or ()))
            if not tables:
                return None
            read = page_with_tables(textpage, tables, carried)
            if read.ends_with_table:
                self._carried = read.last_header
            return read.text
        finally:
            textpage.close()
            page.close()

    def _pdfium_document(self):
        if self._pdfium is None:
            import pypdfium2 as pdfium

            try:
                self._pdfium = pdfium.PdfDocument(str(self.path))
            except pdfium.PdfiumError:
                self._pdfium = False
        return self._pdfium or None

    def close(self) -> None:
        """Close the pdfium document opened for tables."""
        if self._pdfium:
            self._pdfium.close()
        self._pdfium = None
