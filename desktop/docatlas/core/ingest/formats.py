"""The formats beyond text, HTML, PDF and Word: which loader reads which suffix, and the
metadata (author, title, created, modified) of PDF and Word files.

`loaders` dispatches every suffix in `FORMAT_LOADERS` here; each loader returns a
`loaded.Loaded` (title, pages, metadata, warnings and parts).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path

from docatlas.core.ingest.loaded import Loaded, iso_date


def _on_first_use(module: str, name: str) -> Callable[[Path], Loaded]:
    """The loader `name` of `docatlas.core.ingest.<module>`, imported when a file of its type is read."""
    def load(path: Path) -> Loaded:
        return getattr(importlib.import_module(f"docatlas.core.ingest.{module}"), name)(path)

    load.__name__ = name
    return load


# Each format's module (mail, mailbox, zip and XML readers) is imported by its first file, not
# by a run that meets none: an ingest of text and PDFs never loads the e-mail parser.
FORMAT_LOADERS: dict[str, Callable[[Path], Loaded]] = {
    suffix: _on_first_use(module, name) for suffix, (module, name) in {
        ".eml": ("email_loader", "load_eml"), ".mbox": ("email_loader", "load_mbox"),
        ".msg": ("email_loader", "load_msg"), ".pptx": ("slides", "load_pptx"), ".xlsx": ("sheets", "load_xlsx"),
        ".csv": ("sheets", "load_csv"), ".epub": ("books", "load_epub"), ".odt": ("books", "load_odt"),
        ".rtf": ("books", "load_rtf")}.items()
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
            props = _docx_core_properties(path)
            loaded.meta("author", props.author)
            loaded.meta("title", props.title)
            loaded.meta("created", iso_date(props.created))
            loaded.meta("modified", iso_date(props.modified))
    except Exception:  # broken metadata is no reason to refuse the text already read
        return {}
    return loaded.metadata


def _docx_core_properties(path: Path):
    """A Word file's core properties from their own small part, by python-docx's reader of that part:
    the document itself was parsed once already, for its text."""
    import zipfile
    from xml.etree import ElementTree

    from docx.opc.constants import CONTENT_TYPE, RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.parts.coreprops import CorePropertiesPart

    with zipfile.ZipFile(path) as archive:
        relations = ElementTree.fromstring(archive.read("_rels/.rels"))
        name = next((r.get("Target", "") for r in relations if r.get("Type") == RELATIONSHIP_TYPE.CORE_PROPERTIES),
                    "docProps/core.xml").lstrip("/")
        blob = archive.read(name)
    part = CorePropertiesPart.load(PackURI(f"/{name}"), CONTENT_TYPE.OPC_CORE_PROPERTIES, blob, None)
    return part.core_properties
