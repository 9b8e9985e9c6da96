"""Document loaders: turn .txt, .md, .html, .pdf and .docx files into plain text pages.

Every failure a user can cause (wrong type, encrypted, scanned, empty, damaged) is raised as
a `DocumentError` whose message is one sentence naming the file and saying what to do.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from docatlas.core.base.errors import DocumentError

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx"}
)
_KINDS = {".txt": "txt", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html",
          ".pdf": "pdf", ".docx": "docx"}
_SUPPORTED_TEXT = ".txt, .md, .html, .pdf or .docx"


@dataclass(frozen=True)
class Page:
    """A run of text; `number` is the 1-based PDF page, None for non-paged documents."""

    number: int | None
    text: str


@dataclass(frozen=True)
class Document:
    """A loaded document: where it came from, what it is, and its text by page."""

    path: Path
    title: str
    kind: str
    content_hash: str
    pages: tuple[Page, ...]

    @property
    def text(self) -> str:
        """The whole text: pages joined by a blank line."""
        return "\n\n".join(page.text for page in self.pages)


def file_hash(path: Path) -> str:
    """SHA-256 hex digest of the file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unsupported_reason(path: Path) -> str:
    suffix = path.suffix or "no extension"
    return (f"{path.name} has an unsupported type ({suffix}); "
            f"DocAtlas reads {_SUPPORTED_TEXT} files, so convert it to one of those.")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Expand folders (recursively, sorted, hidden entries skipped) into supported files.

    Returns (files, skipped): skipped holds explicitly given files that cannot be read
    (unsupported type or missing) with a one-sentence reason. Files of other types found
    inside folders are ignored silently. Each file appears once.
    """
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            files.append(path)

    for given in paths:
        given = Path(given)
        if given.is_dir():
            found: list[Path] = []
            for root, dirnames, filenames in os.walk(given):
                dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d))
                found.extend(Path(root) / name for name in filenames
                             if not _is_hidden(name)
                             and Path(name).suffix.lower() in SUPPORTED_SUFFIXES)
            for path in sorted(found):
                add(path)
        elif given.is_file():
            if given.suffix.lower() in SUPPORTED_SUFFIXES:
                add(given)
            else:
                skipped.append((given, _unsupported_reason(given)))
        else:
            reason = f"{given.name} could not be found; check the path and add it again."
            skipped.append((given, reason))
    return files, skipped


def load_document(path: Path) -> Document:
    """Read one supported file into a `Document`; raise `DocumentError` if it cannot be used."""
    path = Path(path)
    kind = _KINDS.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(_unsupported_reason(path))
    name = path.name
    try:
        if not path.is_file():
            raise DocumentError(f"{name} could not be found; check that it still exists and "
                                "add it again.")
        if path.stat().st_size == 0:
            raise DocumentError(f"{name} is empty; add a file that contains text.")
        if kind in ("pdf", "docx"):
            content_hash = file_hash(path)
            title, pages = _load_pdf(path) if kind == "pdf" else _load_docx(path)
        else:
            raw = path.read_bytes()
            content_hash = hashlib.sha256(raw).hexdigest()
            title, pages = _load_html(path, raw) if kind == "html" else _load_plain(path, raw, kind)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DocumentError(f"{name} could not be read ({reason}); check that the file is "
                            "accessible and add it again.") from exc
    pages = tuple(page for page in pages if page.text.strip())
    if not pages:
        raise DocumentError(f"{name} is empty; add a file that contains text.")
    return Document(path=path, title=" ".join(str(title).split()) or path.stem, kind=kind,
                    content_hash=content_hash, pages=pages)


# --- plain text -------------------------------------------------------------------------

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_WESTERN = {"cp1252", "latin_1", "iso8859_15"}
# Control characters that never occur in real text (tab, newlines and form feed are fine).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd]")
_MD_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")


def _utf16_without_bom(raw: bytes) -> str | None:
    """Codec name when NUL bytes sit in every other position (ASCII-range UTF-16)."""
    sample = raw[:4096]
    half = len(sample) // 2
    if half < 1:
        return None
    even, odd = sample[0::2].count(0) / half, sample[1::2].count(0) / half
    if odd >= 0.3 and even <= 0.05:
        return "utf-16-le"
    if even >= 0.3 and odd <= 0.05:
        return "utf-16-be"
    return None


def _guess_codec(raw: bytes) -> str:
    """Ask charset-normalizer; on a tie prefer Western European (cp1252), the usual case."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(raw))
    if not matches:
        return "cp1252"
    best = matches[0]
    for match in matches:
        close = match.chaos <= best.chaos + 0.01 and match.coherence >= best.coherence - 0.01
        if close and _WESTERN.intersection(match.could_be_from_charset):
            return "cp1252"
    return best.encoding


def _codecs_to_try(raw: bytes, declared: str | None) -> Iterator[str]:
    """Encodings in order: BOM, declared, BOM-less UTF-16, UTF-8, detected, Western."""
    bom = next((codec for mark, codec in _BOMS if raw.startswith(mark)), None)
    if bom:
        yield bom
        return
    if declared:
        yield declared
    utf16 = _utf16_without_bom(raw)
    if utf16:
        yield utf16
        return
    yield "utf-8"
    yield _guess_codec(raw)  # only computed when UTF-8 failed
    yield from ("cp1252", "latin-1")


def _decode(raw: bytes, declared: str | None = None) -> str | None:
    """Bytes to text with newlines normalised; None when no encoding fits."""
    for codec in _codecs_to_try(raw, declared):
        try:
            text = raw.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return None


def _decode_or_fail(path: Path, raw: bytes, declared: str | None = None) -> str:
    text = _decode(raw, declared)
    if text is None or len(_CONTROL.findall(text)) > 0.02 * len(text):
        raise DocumentError(f"{path.name} does not look like text; check that it is a "
                            "plain-text file or save it again as UTF-8 text.")
    return text


def _load_plain(path: Path, raw: bytes, kind: str) -> tuple[str, list[Page]]:
    text = _decode_or_fail(path, raw)
    title = ""
    if kind == "md":
        in_fence = False
        for line in text.split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not in_fence and (match := _MD_HEADING.match(line)):
                title = match.group(1)
                break
    return title, [Page(None, text)]


# --- HTML -------------------------------------------------------------------------------

_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.-]+)", re.IGNORECASE)
_SKIP_TAGS = {"script", "style", "noscript", "template"}
_PARAGRAPH_TAGS = {"p", "div", "section", "article", "header", "footer", "main", "aside", "nav",
                   "blockquote", "pre", "table", "ul", "ol", "dl", "form", "figure", "hr",
                   "h1", "h2", "h3", "h4", "h5", "h6", "body"}
_LINE_TAGS = {"br", "li", "tr", "dt", "dd", "caption", "figcaption", "address"}


class _TextExtractor(HTMLParser):
    """Collects visible text; block elements become line or paragraph breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.skip = 0
        self.in_head = False
        self.in_title = False
        self.cells_in_row = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self.skip += 1
        elif tag == "head":
            self.in_head = True
        elif tag == "title":
            self.in_title = True
        elif tag in ("td", "th"):
            if self.cells_in_row:
                self.parts.append(" | ")
            self.cells_in_row += 1
        elif tag == "body":
            self.in_head = False  # a missing </head> must not hide the page
        elif tag == "tr":
            self.cells_in_row = 0
        self._break(tag, opening=True)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag == "head":
            self.in_head = False
        elif tag == "title":
            self.in_title = False
        self._break(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif not (self.skip or self.in_head):
            self.parts.append(data)

    def _break(self, tag: str, opening: bool = False) -> None:
        if tag in _PARAGRAPH_TAGS:
            self.parts.append("\n\n")
        elif tag in _LINE_TAGS and opening:  # <li>a</li><li>b</li> is "a\nb"
            self.parts.append("\n")


def _tidy(text: str) -> str:
    """Collapse whitespace within lines and runs of blank lines into one blank line."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _load_html(path: Path, raw: bytes) -> tuple[str, list[Page]]:
    match = _META_CHARSET.search(raw[:8192])
    declared = match.group(1).decode("ascii").lower() if match else None
    if declared in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii"):
        declared = "cp1252"  # what browsers do
    parser = _TextExtractor()
    parser.feed(_decode_or_fail(path, raw, declared))
    parser.close()
    title = " ".join("".join(parser.title_parts).split())
    return title, [Page(None, _tidy("".join(parser.parts)))]


# --- PDF --------------------------------------------------------------------------------


def _load_pdf(path: Path) -> tuple[str, list[Page]]:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    name = path.name
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
    pages: list[Page] = []
    for number in range(1, count + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception:  # pypdf raises many types; one unreadable page must not lose the others
            text = ""
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        if text:
            pages.append(Page(number, text))
    if not pages:
        raise DocumentError(f"{name} has no extractable text and looks scanned (images only); "
                            "run OCR on it first and add the result.")
    try:
        title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception:  # broken metadata is no reason to refuse the text
        title = ""
    return title, pages


# --- DOCX -------------------------------------------------------------------------------


def _load_docx(path: Path) -> tuple[str, list[Page]]:
    import docx
    from docx.table import Table

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
                        rows.append(" | ".join(cells))
                blocks.append("\n".join(rows))
            else:
                blocks.append(item.text.strip())
        title = document.core_properties.title or ""
    except OSError:
        raise
    except Exception as exc:  # not a zip, missing parts, bad XML
        raise DocumentError(f"{path.name} is not a valid Word document or is damaged; open and "
                            "re-save it as .docx and add it again.") from exc
    text = "\n\n".join(block for block in blocks if block)
    return title, [Page(None, text.replace("\r\n", "\n").replace("\r", "\n"))]
