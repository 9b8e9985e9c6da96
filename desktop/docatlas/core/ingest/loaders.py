"""Document loaders: turn .txt, .md, .html, .pdf, .docx, image files and the `formats` files into text pages.

Plain text is read as a stream (`open_document` -> `TextStream`), never whole; HTML pages
up to `MAX_HTML_BYTES`; PDF and Word in `office` (archives checked by `archive_guard`); scanned PDF pages and
images (.png, .jpg, .tif) by OCR in `scans` (`load_steps` reports each page and can stop). The
readers of PDF, Word, images and the `formats` are imported by the first file that needs them.

Every failure a user can cause (wrong type, encrypted, scanned, empty, damaged) is raised as
a `DocumentError` whose message is one sentence naming the file and saying what to do.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import threading
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name, shown_path
from docatlas.core.ingest import discovery
from docatlas.core.ingest.decoding import CONTROL, Encoding, choose_encoding, decode_blocks, looks_binary
from docatlas.core.ingest.formats import FORMAT_LOADERS, FORMATS_TEXT, office_metadata, safe_file_name
from docatlas.core.ingest.loaded import Loaded, Part

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx"}
) | frozenset(FORMAT_LOADERS) | {".png", ".jpg", ".jpeg", ".tif", ".tiff"}
_KINDS = {".txt": "txt", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html",
          ".pdf": "pdf", ".docx": "docx"} | {suffix: suffix[1:] for suffix in FORMAT_LOADERS}
_KINDS.update({".png": "image", ".jpg": "image", ".jpeg": "image", ".tif": "image", ".tiff": "image"})
_SUPPORTED_TEXT = ".txt, .md, .html, .pdf, .docx, .png, .jpg, .tif, " + FORMATS_TEXT
MAX_HTML_BYTES = 64 << 20  # an HTML page is parsed whole; plain text is read as a stream


@dataclass(frozen=True)
class Page:
    """A run of text; `number` is the 1-based PDF page, None for non-paged documents.

    `confidence` is OCR's (0..1) when some of the page's text was read by OCR, else None."""

    number: int | None
    text: str
    confidence: float | None = None


@dataclass(frozen=True)
class Document:
    """A loaded document: where it came from, what it is, and its text by page."""

    path: Path
    title: str
    kind: str
    content_hash: str
    pages: tuple[Page, ...]
    metadata: tuple[tuple[str, str], ...] = ()  # (key, value): author, title, dates, mail headers
    warnings: tuple[str, ...] = ()
    parts: Iterable[tuple[Part, Document | DocumentError]] = field(default=(), compare=False)  # attachments, messages
    part_key: str = ""  # within its parent document; "" for a file of its own

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
    return (f"{shown_name(path)} has an unsupported type ({suffix}); "
            f"DocAtlas reads {_SUPPORTED_TEXT} files, so convert it to one of those.")


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Expand folders into supported files; see `discovery.discover` (failures are listed)."""
    return discovery.discover(paths, SUPPORTED_SUFFIXES, _unsupported_reason)


def walk(paths: Iterable[Path]) -> Iterator[discovery.Found]:
    """The supported files (and listed failures) under `paths`, one folder at a time; see `discovery.walk`."""
    return discovery.walk(paths, SUPPORTED_SUFFIXES, _unsupported_reason)


def _checked_kind(path: Path) -> str:
    """The document kind of an existing, non-empty supported file; else `DocumentError`."""
    kind = _KINDS.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(_unsupported_reason(path))
    name = shown_name(path)
    try:
        if not path.is_file():
            raise DocumentError(f"{name} could not be found; check that it still exists and "
                                "add it again.")
        if path.stat().st_size == 0:
            raise DocumentError(f"{name} is empty; add a file that contains text.")
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    return kind


def open_document(path: Path) -> Document | TextStream:
    """A plain-text file as a `TextStream` (read block by block later); others as `load_document`."""
    path = Path(path)
    kind = _checked_kind(path)
    if kind not in ("txt", "md"):
        return load_document(path)
    try:
        return _open_plain(path, kind)
    except OSError as exc:
        raise _unreadable(path, exc) from exc


def load_document(path: Path) -> Document:
    """Read one supported file whole into a `Document`; raise `DocumentError` if it cannot be used."""
    steps = load_steps(path)
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value


def open_steps(path: Path, cancel: threading.Event | None = None) -> Generator[
        tuple[int, int], None, Document | TextStream]:
    """`open_document`, yielding (pages done, total) while scanned pages are OCR'd; `Cancelled` on a stop."""
    path = Path(path)
    if _checked_kind(path) in ("txt", "md"):
        return open_document(path)
    return (yield from load_steps(path, cancel))


def load_steps(path: Path, cancel: threading.Event | None = None) -> Generator[tuple[int, int], None, Document]:
    """`load_document`, yielding (pages done, total) after each page of a PDF or image."""
    path = Path(path)
    kind = _checked_kind(path)
    extra: dict[str, str] = {}
    try:
        content_hash = file_hash(path)
        if kind in ("txt", "md"):
            stream = _open_plain(path, kind)
            title, pages = stream.title, [Page(None, "".join(stream.blocks()))]
        elif kind == "html":
            title, pages = _load_html(path)
        elif kind in ("pdf", "docx", "image"):
            from docatlas.core.ingest.office import load_docx, load_pdf  # their libraries load with them
            from docatlas.core.ingest.scans import image_pages

            if kind == "pdf":
                title, numbered = yield from load_pdf(path, cancel)
            elif kind == "image":
                title, numbered = "", (yield from image_pages(path, cancel))
            else:
                title, numbered = load_docx(path)
            pages = [Page(*item) for item in numbered]
            if kind != "image":
                extra = office_metadata(path, kind)
        else:
            return _from_loaded(path, kind, content_hash, FORMAT_LOADERS[path.suffix.lower()](path))
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    pages = tuple(page for page in pages if page.text.strip())
    if not pages:
        raise DocumentError(f"{shown_name(path)} is empty; add a file that contains text.")
    return Document(path=path, title=" ".join(str(title).split()) or shown_path(path.stem), kind=kind,
                    content_hash=content_hash, pages=pages, metadata=tuple(extra.items()))


def _from_loaded(path: Path, kind: str, content_hash: str, loaded: Loaded) -> Document:
    """A `Document` from a format loader's result; its parts are loaded when iterated."""
    pages = tuple(Page(number, text) for number, text in loaded.pages if text.strip())
    if not pages:
        raise DocumentError(f"{shown_name(path)} is empty; add a file that contains text.")
    return Document(path=path, title=" ".join(loaded.title.split()) or shown_path(path.stem), kind=kind,
                    content_hash=content_hash, pages=pages, metadata=tuple(loaded.metadata.items()),
                    warnings=tuple(loaded.warnings), parts=_part_documents(path, loaded.parts, kind))


def _part_documents(parent: Path, parts: Iterable[Part], kind: str) -> Iterator[tuple[Part, Document | DocumentError]]:
    """Each part as a document of its own (or the error that refused it), linked to `parent`."""
    link = ("mailbox" if kind == "mbox" else "attached to", shown_name(parent))
    for part in parts:
        virtual = Path(f"{parent}#{part.key}")
        try:
            if part.loaded is not None:
                document = _from_loaded(virtual, "eml", hashlib.sha256(part.data or b"").hexdigest(), part.loaded)
            else:
                with tempfile.TemporaryDirectory(prefix="docatlas-part-") as folder:
                    copy = Path(folder) / (safe_file_name(part.name) or "attachment")
                    copy.write_bytes(part.data or b"")
                    document = load_document(copy)
                    extras = tuple((inner, replace(found, path=Path(f"{virtual}#{inner.key}"))
                                    if isinstance(found, Document) else found) for inner, found in document.parts)
                document = replace(document, path=virtual, parts=extras)
        except DocumentError as exc:
            yield part, exc
            continue
        yield part, replace(document, part_key=part.key, metadata=(*document.metadata, link))


# --- plain text -------------------------------------------------------------------------

_MD_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_CHECK_CHARS = 65536  # decide "binary" early once this much text was seen


@dataclass(frozen=True)
class TextStream:
    """A plain-text document read as a stream of blocks, never whole in memory.

    `replaced` counts the bytes that were not valid UTF-8 and became U+FFFD."""

    path: Path
    title: str
    kind: str
    encoding: Encoding

    @property
    def replaced(self) -> int:
        """How many bad bytes were replaced with U+FFFD."""
        return self.encoding.replaced

    def blocks(self) -> Iterator[str]:
        """The text block by block; raises `DocumentError` for binary, empty or unreadable files."""
        chars = control = 0
        seen_text = False
        forgiven = self.encoding.replaced  # bad bytes of a UTF-8 file are counted, not held against it
        try:
            for block in decode_blocks(self.path, self.encoding):
                chars += len(block)
                control += len(CONTROL.findall(block))
                if chars >= _CHECK_CHARS and looks_binary(control - forgiven, chars):
                    raise _not_text(self.path)
                seen_text = seen_text or bool(block.strip())
                yield block
        except OSError as exc:
            raise _unreadable(self.path, exc) from exc
        if looks_binary(control - forgiven, chars):
            raise _not_text(self.path)
        if not seen_text:
            raise DocumentError(f"{shown_name(self.path)} is empty; add a file that contains text.")


def _not_text(path: Path) -> DocumentError:
    return DocumentError(f"{shown_name(path)} does not look like text; check that it is a "
                         "plain-text file or save it again as UTF-8 text.")


def _unreadable(path: Path, exc: OSError) -> DocumentError:
    reason = exc.strerror or type(exc).__name__
    return DocumentError(f"{shown_name(path)} could not be read ({reason}); check that the file is "
                         "accessible and add it again.")


def _markdown_title(text: str) -> str:
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and (match := _MD_HEADING.match(line)):
            return match.group(1)
    return ""


def _open_plain(path: Path, kind: str) -> TextStream:
    encoding = choose_encoding(path)
    title = ""
    if kind == "md":  # the first heading within the first block
        first = next(decode_blocks(path, encoding), "")
        title = _markdown_title(first)
    return TextStream(path=path, title=" ".join(title.split()) or shown_path(path.stem), kind=kind,
                      encoding=encoding)


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


def _load_html(path: Path) -> tuple[str, list[Page]]:
    if path.stat().st_size > MAX_HTML_BYTES:
        raise DocumentError(f"{shown_name(path)} is larger than {MAX_HTML_BYTES >> 20} MB, the most DocAtlas "
                            "reads of an HTML page; save it as a .txt file and add that.")
    with open(path, "rb") as handle:
        head = handle.read(8192)
    match = _META_CHARSET.search(head)
    declared = match.group(1).decode("ascii").lower() if match else None
    if declared in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii"):
        declared = "cp1252"  # what browsers do
    if declared in ("utf-8", "utf8"):
        declared = None  # UTF-8 is tried first anyway, and a few bad bytes are kept as U+FFFD
    parser = _TextExtractor()
    for block in TextStream(path, "", "html", choose_encoding(path, declared)).blocks():
        parser.feed(block)
    parser.close()
    title = " ".join("".join(parser.title_parts).split())
    return title, [Page(None, _tidy("".join(parser.parts)))]
