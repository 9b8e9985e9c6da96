"""E-books and other documents: .epub (chapters as pages), .odt and .rtf.

EPUB and ODT are zip archives read with the standard library after `archive_guard`;
XML is parsed with ElementTree (which expands no external entities). An EPUB with DRM
(`META-INF/encryption.xml` naming content) and an encrypted ODT are refused in one
sentence. RTF is read whole up to `MAX_RTF_BYTES` and stripped by `striprtf`.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name
from docatlas.core.ingest.archive_guard import check_archive
from docatlas.core.ingest.loaded import Loaded, damaged, too_large
from docatlas.core.ingest.sheets import row_sentence

MAX_RTF_BYTES = 64 << 20
_DC = "{http://purl.org/dc/elements/1.1/}"
_OPF = "{http://www.idpf.org/2007/opf}"
_BLOCKS = {"p", "div", "section", "article", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "br",
           "blockquote", "pre", "table", "dt", "dd", "hr"}


class _ChapterText(HTMLParser):
    """Visible text of an XHTML chapter; block elements end lines, cells are joined by |."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The visible text of an HTML or XHTML fragment, one line a block."""
    parser = _ChapterText()
    parser.feed(html)
    parser.close()
    return _lines("".join(parser.parts))


def _lines(text: str) -> str:
    lines = (" ".join(line.split()).strip(" |") for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    return ElementTree.fromstring(archive.read(name))


def _epub_pages(archive: zipfile.ZipFile, loaded: Loaded, path: Path) -> None:
    names = set(archive.namelist())
    if "META-INF/encryption.xml" in names and b"EncryptedData" in archive.read("META-INF/encryption.xml"):
        raise DocumentError(f"{shown_name(path)} is protected by DRM; DocAtlas reads only e-books "
                            "without DRM, so add a DRM-free copy.")
    container = _xml(archive, "META-INF/container.xml")
    rootfile = next(el for el in container.iter() if el.tag.endswith("rootfile"))
    opf_name = rootfile.attrib["full-path"]
    opf = _xml(archive, opf_name)
    metadata = opf.find(f"{_OPF}metadata")
    if metadata is not None:
        loaded.title = metadata.findtext(f"{_DC}title") or ""
        loaded.meta("title", loaded.title)
        loaded.meta("author", "; ".join(el.text or "" for el in metadata.findall(f"{_DC}creator")))
        loaded.meta("created", metadata.findtext(f"{_DC}date"))
        modified = next((el.text for el in metadata.findall(f"{_OPF}meta")
                         if el.get("property") == "dcterms:modified"), None)
        loaded.meta("modified", modified)
    base = posixpath.dirname(opf_name)
    manifest = {item.get("id"): item.get("href") for item in opf.iter(f"{_OPF}item")}
    spine = [ref.get("idref") for ref in opf.iter(f"{_OPF}itemref")]
    for number, idref in enumerate(spine, start=1):
        href = manifest.get(idref)
        if not href:
            continue
        member = posixpath.normpath(posixpath.join(base, unquote(href)))
        if member not in names:
            continue
        if text := html_to_text(archive.read(member).decode("utf-8", errors="replace")):
            loaded.pages.append((number, text))


def load_epub(path: Path) -> Loaded:
    """Each chapter of the spine as a page (its place in the reading order as its number)."""
    check_archive(path, "e-book")
    loaded = Loaded()
    try:
        with zipfile.ZipFile(path) as archive:
            _epub_pages(archive, loaded, path)
    except (DocumentError, OSError):
        raise
    except Exception as exc:  # a missing container or OPF, bad XML
        raise damaged(path, "EPUB e-book", ".epub") from exc
    return loaded


_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_META = "{urn:oasis:names:tc:opendocument:xmlns:meta:1.0}"


def _odt_text(element: ElementTree.Element) -> str:
    parts = [element.text or ""]
    for child in element:
        if child.tag == f"{_TEXT}s":
            parts.append(" " * int(child.get(f"{_TEXT}c", "1")))
        elif child.tag in (f"{_TEXT}tab", f"{_TEXT}line-break"):
            parts.append(" ")
        else:
            parts.append(_odt_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _odt_blocks(element: ElementTree.Element, out: list[str]) -> None:
    for child in element:
        if child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
            out.append(" ".join(_odt_text(child).split()))
        elif child.tag == f"{_TABLE}table":
            rows = [[" ".join(_odt_text(cell).split()) for cell in row.iter(f"{_TABLE}table-cell")]
                    for row in child.iter(f"{_TABLE}table-row")]
            if rows:
                out.extend(row_sentence(rows[0], cells) for cells in rows[1:])
        else:
            _odt_blocks(child, out)


def load_odt(path: Path) -> Loaded:
    """An OpenDocument text's paragraphs, headings and tables (one page), with its metadata."""
    check_archive(path, "OpenDocument text")
    loaded = Loaded()
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "META-INF/manifest.xml" in names and b"encryption-data" in archive.read("META-INF/manifest.xml"):
                raise DocumentError(f"{shown_name(path)} is password-protected; remove the password "
                                    "and add it again.")
            if "meta.xml" in names:
                meta = _xml(archive, "meta.xml")
                loaded.title = next((el.text or "" for el in meta.iter(f"{_DC}title")), "")
                loaded.meta("title", loaded.title)
                loaded.meta("author", next((el.text for el in meta.iter(f"{_META}initial-creator")), None)
                            or next((el.text for el in meta.iter(f"{_DC}creator")), None))
                loaded.meta("created", next((el.text for el in meta.iter(f"{_META}creation-date")), None))
                loaded.meta("modified", next((el.text for el in meta.iter(f"{_DC}date")), None))
            blocks: list[str] = []
            _odt_blocks(_xml(archive, "content.xml"), blocks)
    except (DocumentError, OSError):
        raise
    except Exception as exc:
        raise damaged(path, "OpenDocument text", ".odt") from exc
    loaded.pages.append((None, "\n".join(block for block in blocks if block)))
    return loaded


_RTF_INFO = re.compile(rb"\{\\(title|author|creatim|revtim)\b([^{}]*)\}")
_RTF_TIME = re.compile(rb"\\(yr|mo|dy|hr|min)(\d+)")


def _rtf_time(body: bytes) -> str:
    parts = {key.decode(): int(value) for key, value in _RTF_TIME.findall(body)}
    if "yr" not in parts:
        return ""
    return (f"{parts['yr']:04d}-{parts.get('mo', 1):02d}-{parts.get('dy', 1):02d}"
            f"T{parts.get('hr', 0):02d}:{parts.get('min', 0):02d}:00")


def load_rtf(path: Path) -> Loaded:
    """The text of an RTF file (one page) and its \\info title, author and dates."""
    from striprtf.striprtf import rtf_to_text

    if path.stat().st_size > MAX_RTF_BYTES:
        raise too_large(path, MAX_RTF_BYTES >> 20, "an RTF file")
    raw = path.read_bytes()
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise damaged(path, "RTF document", ".rtf")
    loaded = Loaded()
    for key, body in _RTF_INFO.findall(raw[:1 << 20]):
        name = {b"title": "title", b"author": "author", b"creatim": "created", b"revtim": "modified"}[key]
        value = _rtf_time(body) if key in (b"creatim", b"revtim") else body.decode("cp1252", "replace")
        loaded.meta(name, value)
    loaded.title = loaded.metadata.get("title", "")
    try:
        text = rtf_to_text(raw.decode("cp1252", errors="replace"), errors="replace")
    except Exception as exc:  # striprtf raises on some malformed control words
        raise damaged(path, "RTF document", ".rtf") from exc
    loaded.pages.append((None, _lines(text)))
    return loaded
