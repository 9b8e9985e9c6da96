"""Scanned pages: PDF pages without a text layer, part-scanned pages, and image files, by OCR.

Each loader is a generator that yields `(pages done, pages total)` after every page, so the
job can show progress and stop between pages, and returns its pages as
`(number, text, confidence)` triples: confidence is None for a page read from its text
layer alone, else OCR's confidence for what it added. One page image is in memory at a time.

A PDF page is OCR'd when its text layer is empty, or when images cover at least
`IMAGE_SHARE` of it (a typed page with a pasted scan): then the lines OCR reads that the
text layer does not already hold are added after the text layer's.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Generator
from pathlib import Path

from docatlas.core.base.errors import Cancelled, DocumentError
from docatlas.core.base.paths import shown_name
from docatlas.core.ingest import ocr

PageText = tuple[int | None, str, float | None]
Steps = Generator[tuple[int, int], None, list[PageText]]

RENDER_DPI = 200  # enough for 10 pt print; the detector scales to 2000 px at most anyway
IMAGE_SHARE = 0.25
MAX_IMAGE_PIXELS = 120_000_000  # a 120-megapixel image is refused before it is decoded
MAX_FRAMES = 2000
_WORD = re.compile(r"\w+")


def _stop_if(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("Stopped while reading scanned pages; run again to continue.")


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def merged(layer: str, scanned: str) -> str:
    """The text layer followed by the OCR lines it does not already contain."""
    known = _words(layer)
    added = [line for line in scanned.split("\n") if (w := _words(line)) and w not in known]
    return "\n".join(part for part in (layer.strip(), "\n".join(added)) if part)


def pdf_pages(path: Path, texts: list[str], cancel: threading.Event | None = None) -> Steps:
    """Each page's text: `texts` (its text layer, from pypdf) where it suffices, else OCR."""
    import pypdfium2 as pdfium

    total = len(texts)
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:  # pypdf read it; without a renderer the text layer is all there is
        pdf = None
    pages: list[PageText] = []
    try:
        for number, text in enumerate(texts, 1):
            _stop_if(cancel)
            confidence = None
            if pdf is not None and number <= len(pdf):
                page = pdf[number - 1]
                try:
                    if not text.strip() or _image_share(page) >= IMAGE_SHARE:
                        image = page.render(scale=RENDER_DPI / 72).to_pil()
                        read = ocr.recognize(image)
                        del image
                        if read.text:
                            text, confidence = merged(text, read.text), read.confidence
                finally:
                    page.close()
            pages.append((number, text, confidence))
            yield number, total
    finally:
        if pdf is not None:
            pdf.close()
    return pages


def _image_share(page) -> float:
    """The share of the page's area that its images cover (overlaps counted twice, capped at 1)."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    if width <= 0 or height <= 0:
        return 0.0
    covered = 0.0
    for item in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
        left, bottom, right, top = item.get_bounds()
        covered += max(0.0, min(right, width) - max(left, 0.0)) * max(0.0, min(top, height) - max(bottom, 0.0))
    return min(1.0, covered / (width * height))


def image_pages(path: Path, cancel: threading.Event | None = None) -> Steps:
    """OCR every frame of an image file (.png, .jpg, .tif; a multi-page TIFF is one page a frame)."""
    from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

    name = shown_name(path)
    damaged = DocumentError(f"{name} is not a valid image or is damaged; open and re-save it as "
                            "PNG or JPEG and add it again.")
    try:
        source = Image.open(path)
    except UnidentifiedImageError as exc:
        raise damaged from exc
    except Image.DecompressionBombError as exc:
        raise _too_large(name) from exc
    except OSError as exc:  # a broken header; a file that cannot be opened at all is re-raised
        if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        raise damaged from exc
    with source:
        total = min(getattr(source, "n_frames", 1), MAX_FRAMES)
        pages: list[PageText] = []
        try:
            for number, frame in enumerate(ImageSequence.Iterator(source), 1):
                if number > MAX_FRAMES:
                    break
                _stop_if(cancel)
                if frame.width * frame.height > MAX_IMAGE_PIXELS:
                    raise _too_large(name)
                read = ocr.recognize(ImageOps.exif_transpose(frame))
                pages.append((number if total > 1 else None, read.text, read.confidence))
                yield number, total
        except (DocumentError, Cancelled):
            raise
        except OSError as exc:  # truncated or undecodable image data
            if isinstance(exc, FileNotFoundError | PermissionError):
                raise
            raise damaged from exc
        except (ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise damaged from exc
    if not any(text.strip() for _, text, _ in pages):
        raise DocumentError(f"{name} shows no text that OCR could read; scan it again more sharply "
                            "(300 dpi) and add it again.")
    return pages


def _too_large(name: str) -> DocumentError:
    return DocumentError(f"{name} is larger than {MAX_IMAGE_PIXELS // 1_000_000} megapixels, the most "
                         "DocAtlas reads of one image; scale it down and add it again.")
