"""PDF and Word documents to text by page: (page number or None, text, OCR confidence) and a title.

Every failure a user can cause (encrypted, scanned, damaged, a zip bomb) is raised as a
`DocumentError` naming the file in one sentence; `docatlas.core.ingest.loaders` wraps the
pairs into pages.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name
from docatlas.core.ingest.archive_guard import check_archive
from docatlas.core.ingest.pdf_layer import PdfTextLayer
from docatlas.core.ingest.scans import PageText, pdf_pages
from docatlas.core.ingest.sheets import table_text

# --- PDF --------------------------------------------------------------------------------


def load_pdf(path: Path, cancel: threading.Event | None = None) -> Generator[
        tuple[int, int], None, tuple[str, list[PageText]]]:
    """Yield (pages done, total) while reading; return the title and each page with text.

    A page without a text layer, or mostly images, is OCR'd (`scans.pdf_pages`); a page
    with tables has them as header-labelled rows (`pdf_tables`)."""
    title, layer = _pdf_text_layer(path)
    try:
        pages = yield from pdf_pages(path, layer, cancel)  # type: ignore[arg-type]  # a lazy sequence
    finally:
        layer.close()
    pages = [page for page in pages if page[1].strip()]
    if not pages:
        raise DocumentError(f"{shown_name(path)} looks scanned but OCR found no text on its pages; scan "
                            "it again more sharply (300 dpi) and add it again.")
    return title, pages


def _pdf_text_layer(path: Path) -> tuple[str, PdfTextLayer]:
    """The title and the pages' text layer, read one page at a time as it is iterated."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    name = shown_name(path)
    damaged = DocumentError(f"{name} is not a valid PDF or is damaged; open and re-save it "
                            "(or download it again) and add it again.")
    locked = DocumentError(f"{name} is password-protected; remove the password and add it "
                           "again.")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise locked
        count = len(reader.pages)
    except DocumentError:
        raise
    except DependencyError as exc:  # AES without the optional `cryptography` package
        raise DocumentError(f"{name} is encrypted in a way DocAtlas cannot open; remove the "
                            "encryption and add it again.") from exc
    except OSError:
        raise
    except Exception as exc:  # pypdf raises many types on malformed input
        raise damaged from exc
    if not count:
        raise DocumentError(f"{name} has no pages; add a PDF that contains text.")
    try:
        title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception:  # broken metadata is no reason to refuse the text
        title = ""
    return title, PdfTextLayer(path, reader, count)


# --- DOCX -------------------------------------------------------------------------------


def load_docx(path: Path) -> tuple[str, list[tuple[int | None, str]]]:
    """The title and the text (paragraphs, tables as header-labelled rows); a zip bomb is refused first."""
    import docx
    from docx.table import Table

    check_archive(path)
    try:
        document = docx.Document(str(path))
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                rows = []
                for row in item.rows:
                    cells, seen = [], set()
                    for cell in row.cells:
                        if id(cell._tc) not in seen:  # merged cells repeat the same element
                            seen.add(id(cell._tc))
                            cells.append(" ".join(cell.text.split()))
                    if any(cells):
                        rows.append(cells)
                blocks.append(table_text(rows))
            else:
                blocks.append(item.text.strip())
        title = document.core_properties.title or ""
    except OSError:
        raise
    except Exception as exc:  # not a zip, missing parts, bad XML
        raise DocumentError(f"{shown_name(path)} is not a valid Word document or is damaged; open and "
                            "re-save it as .docx and add it again.") from exc
    text = "\n\n".join(block for block in blocks if block)
    return title, [(None, text.replace("\r\n", "\n").replace("\r", "\n"))]
