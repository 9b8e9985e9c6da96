"""PowerPoint decks to text: one page per slide, numbered like the slides.

A slide's text is its shapes' text in reading order (groups opened, tables as
header-labelled rows) followed by its speaker notes. The deck passes `archive_guard` first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from docatlas.core.ingest.archive_guard import check_archive
from docatlas.core.ingest.loaded import Loaded, damaged, iso_date, refuse_ole
from docatlas.core.ingest.sheets import row_sentence


def _table_lines(table) -> Iterator[str]:
    rows = [[" ".join(cell.text.split()) for cell in row.cells] for row in table.rows]
    if not rows:
        return
    headers, body = rows[0], rows[1:]
    if not body:
        yield " | ".join(cell for cell in headers if cell)
    for cells in body:
        if line := row_sentence(headers, cells):
            yield line


def _shape_lines(shapes) -> Iterator[str]:
    for shape in shapes:
        if shape.shape_type is not None and getattr(shape, "shapes", None) is not None:  # a group
            yield from _shape_lines(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            yield from _table_lines(shape.table)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            for paragraph in shape.text_frame.paragraphs:
                text = " ".join("".join(run.text for run in paragraph.runs).split())
                if text:
                    yield text


def load_pptx(path: Path) -> Loaded:
    """Each slide (number kept as its page) with its notes; the deck's author, title and dates."""
    from pptx import Presentation

    refuse_ole(path, "PowerPoint", ".pptx")
    check_archive(path, "PowerPoint deck")
    loaded = Loaded()
    try:
        deck = Presentation(str(path))
        props = deck.core_properties
        loaded.title = props.title or ""
        loaded.meta("author", props.author)
        loaded.meta("title", props.title)
        loaded.meta("created", iso_date(props.created))
        loaded.meta("modified", iso_date(props.modified))
        for number, slide in enumerate(deck.slides, start=1):
            lines = list(_shape_lines(slide.shapes))
            if slide.has_notes_slide and (notes := slide.notes_slide.notes_text_frame) is not None:
                note = " ".join(notes.text.split())
                if note:
                    lines.append(f"Notes: {note}")
            if lines:
                loaded.pages.append((number, "\n".join(lines)))
    except OSError:
        raise
    except Exception as exc:  # missing parts, bad XML: python-pptx raises many types
        raise damaged(path, "PowerPoint deck", ".pptx") from exc
    return loaded
