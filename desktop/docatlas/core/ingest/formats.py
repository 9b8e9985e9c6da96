"""The formats beyond text, HTML, PDF and Word: which loader reads which suffix, and the
metadata (author, title, created, modified) of PDF and Word files.

`loaders` dispatches every suffix in `FORMAT_LOADERS` here; each loader returns a
`loaded.Loaded` (title, pages, metadata, warnings and parts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from docatlas.core.ingest.books import load_epub, load_odt, load_rtf
from docatlas.core.ingest.email_loader import load_eml, load_mbox, load_msg
from docatlas.core.ingest.loaded import Loaded, iso_date
from docatlas.core.ingest.sheets import load_csv, load_xlsx
from docatlas.core.ingest.slides import load_pptx

FORMAT_LOADERS: dict[str, Callable[[Path], Loaded]] = {
    ".eml": load_eml, ".mbox": load_mbox, ".msg": load_msg, ".pptx": load_pptx, ".xlsx": load_xlsx,
    ".csv": load_csv, ".epub": load_epub, ".odt": load_odt, ".rtf": load_rtf,
}
FORMATS_TEXT = ".eml, .mbox, .msg, .pptx, .xlsx, .csv, .epub, .odt or .rtf"
_UNSAFE = re.compile(r"[^\w.\- ]+")


def safe_file_name(name: str) -> str:
    """A name from a document (an attachment's) made safe as one file name; the suffix kept."""
    base = Path(name.replace("\\", "/")).name
    stem, suffix = Path(base).stem, Path(base).suffix.lower()
    return (_UNSAFE.sub("_", stem).strip(" .")[:80] or "attachment") + _UNSAFE.sub("", suffix)[:10]


def office_metadata(path: Path, kind: str) -> dict[str, str]:
    """Author, title, created and modified of a PDF or Word file; {} when they cannot be read."""
    loaded = Loaded()
    try:
        if kind == "pdf":
            from pypdf import PdfReader

            info = PdfReader(path).metadata
            if info is not None:
                loaded.meta("author", info.author)
                loaded.meta("title", info.title)
                loaded.meta("created", iso_date(info.creation_date))
                loaded.meta("modified", iso_date(info.modification_date))
        elif kind == "docx":
            import docx

            props = docx.Document(str(path)).core_properties
            loaded.meta("author", props.author)
            loaded.meta("title", props.title)
            loaded.meta("created", iso_date(props.created))
            loaded.meta("modified", iso_date(props.modified))
    except Exception:  # broken metadata is no reason to refuse the text already read
        return {}
    return loaded.metadata
