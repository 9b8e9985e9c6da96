"""Token windows over a document's text, counted with cl100k_base loaded fully offline.

Windows are chosen on token offsets and cut, in order of preference, at a paragraph end,
a sentence end, a line or word boundary, or hard at the limit. A plain-text stream is cut
in segments of about `SEGMENT_CHARS` characters: the windows of a segment are yielded but
its last one, which starts the next segment, so memory does not grow with the file (a
document smaller than a segment is cut exactly as a whole text would be).
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from docatlas.core.base.tokens import count_tokens, get_encoding
from docatlas.core.ingest.loaders import Document, TextStream

SEGMENT_CHARS = 1 << 20

_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"""[.!?][)"'\]\u201d\u2019]*(?=\s|$)|[。！？]""")
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


@dataclass(frozen=True)
class Chunk:
    """One window of a document; pages are 1-based PDF pages, None for non-paged text.

    `start`/`end` is its span in the document's extracted text (`text == full[start:end]`);
    `lead` is the text between the previous chunk's end and `start` (whitespace; empty when
    the chunks overlap), so the chunks with their leads give back the whole text exactly.
    """

    index: int
    text: str
    tokens: int
    page_start: int | None
    page_end: int | None
    start: int = 0
    end: int = 0
    lead: str = ""


def _token_starts(text: str, tokens: list[int]) -> list[int]:
    """Character offset where each token starts, plus len(text) as a sentinel."""
    pieces = get_encoding().decode_tokens_bytes(tokens)
    if text.isascii():
        sizes = [len(piece) for piece in pieces]
        return [0, *itertools.accumulate(sizes)]
    starts, chars = [], 0
    for piece in pieces:  # a char starts at each non-continuation byte
        starts.append(max(0, chars - (0x80 <= piece[0] < 0xC0)) if piece else chars)
        chars += len(piece.translate(None, _CONTINUATION_BYTES))
    starts.append(len(text))
    return starts


def _last_cut(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    """End of the last match of pattern ending within [lo, hi]."""
    cut = None
    for match in pattern.finditer(text, lo, min(hi + 1, len(text))):
        if match.end() <= hi and match.end() > lo:
            cut = match.end()
    return cut


def _find_cut(text: str, para_lo: int, soft_lo: int, hi: int) -> int:
    """Best character position to end a window that may run up to hi."""
    for pattern, lo in ((_PARAGRAPH_END, para_lo), (_SENTENCE_END, soft_lo)):
        cut = _last_cut(pattern, text, lo, hi)
        if cut is not None:
            return cut
    for sep in ("\n", " ", "\t"):
        cut = text.rfind(sep, soft_lo, hi)
        if cut > soft_lo:
            return cut
    return hi


def _validate(chunk_tokens: int, overlap_tokens: int) -> None:
    if chunk_tokens < 50:
        raise ValueError(f"chunk_tokens must be at least 50, got {chunk_tokens}")
    if not 0 <= overlap_tokens < chunk_tokens / 2:
        raise ValueError(f"overlap_tokens must be >= 0 and < chunk_tokens / 2, got {overlap_tokens}")


def _windows(text: str, chunk_tokens: int, overlap_tokens: int) -> list[tuple[str, int, int, int]]:
    """(text, char_start, char_end, tokens) for each window; see `chunk_text`."""
    _validate(chunk_tokens, overlap_tokens)
    tokens = get_encoding().encode(text, disallowed_special=())
    starts = _token_starts(text, tokens)
    n = len(tokens)
    out: list[tuple[str, int, int, int]] = []
    char_start = 0
    while char_start < len(text):
        first = bisect_right(starts, char_start) - 1  # token holding char_start
        budget = chunk_tokens
        while True:
            last = min(first + budget, n)
            if last == n:
                char_end = len(text)
            else:
                para_lo = max(char_start, starts[first + budget * 3 // 4])
                soft_lo = max(char_start, starts[first + budget // 2])
                char_end = _find_cut(text, para_lo, soft_lo, starts[last])
                if char_end <= char_start:
                    char_end = next(s for s in starts[first:] if s > char_start)
            raw = text[char_start:char_end]
            piece = raw.strip()
            count = count_tokens(piece)
            if count <= chunk_tokens or budget <= 1:
                break
            budget = max(1, budget - (count - chunk_tokens) - 1)
        if piece:
            lead = len(raw) - len(raw.lstrip())
            out.append((piece, char_start + lead, char_start + lead + len(piece), count))
        if char_end >= len(text):
            break
        char_start = _next_start(text, starts, char_start, char_end, overlap_tokens)
    return out


def _next_start(text: str, starts: list[int], prev: int, end: int, overlap: int) -> int:
    """Start of the next window: about `overlap` tokens before end, snapped to a word."""
    back = bisect_left(starts, end) - overlap
    start = starts[max(back, 0)]
    if overlap and start < end:
        space = min((i for i in (text.find(" ", start, end), text.find("\n", start, end))
                     if i >= 0), default=-1)
        if space >= 0:
            start = space
    return start if prev < start <= end else end


def chunk_text(text: str, chunk_tokens: int = 1200,
               overlap_tokens: int = 100) -> list[tuple[str, int, int]]:
    """Split text into trimmed windows of at most chunk_tokens tokens that overlap slightly.

    Returns (chunk, char_start, char_end) with text[char_start:char_end] == chunk.
    Raises ValueError unless chunk_tokens >= 50 and 0 <= overlap_tokens < chunk_tokens / 2.
    """
    return [(piece, start, end) for piece, start, end, _ in
            _windows(text, chunk_tokens, overlap_tokens)]


def chunk_document(document: Document, chunk_tokens: int = 1200,
                   overlap_tokens: int = 100) -> list[Chunk]:
    """Chunk a document's text; for PDFs each chunk knows the pages it comes from."""
    page_starts: list[int] = []
    numbers: list[int | None] = []
    offset = 0
    for page in document.pages:
        page_starts.append(offset)
        numbers.append(page.number)
        offset += len(page.text) + 2  # the "\n\n" between pages

    def page_at(char: int) -> int | None:
        return numbers[max(bisect_right(page_starts, char) - 1, 0)] if numbers else None

    text = document.text
    chunks, previous_end = [], 0
    for i, (piece, start, end, count) in enumerate(_windows(text, chunk_tokens, overlap_tokens)):
        chunks.append(Chunk(index=i, text=piece, tokens=count, page_start=page_at(start),
                            page_end=page_at(end - 1), start=start, end=end,
                            lead=text[previous_end:start]))
        previous_end = max(previous_end, end)
    return chunks


def page_starts(document: Document) -> list[tuple[int, int]]:
    """(page number, offset in the document's text where it starts) for a paged document."""
    out, offset = [], 0
    for page in document.pages:
        if page.number is not None:
            out.append((page.number, offset))
        offset += len(page.text) + 2
    return out


def iter_chunks(source: Document | TextStream, chunk_tokens: int = 1200,
                overlap_tokens: int = 100) -> Iterator[Chunk]:
    """The chunks of a document one by one; a `TextStream` is read and cut segment by segment."""
    if isinstance(source, Document):
        yield from chunk_document(source, chunk_tokens, overlap_tokens)
        return
    _validate(chunk_tokens, overlap_tokens)
    index, buffer = 0, ""
    base = 0  # offset of buffer[0] in the whole text
    previous_end, carry = 0, ""  # end of the last chunk yielded; the text from it to `base`
    for block in itertools.chain(source.blocks(), [None]):
        if block is not None:
            buffer += block
            if len(buffer) < SEGMENT_CHARS:
                continue
        windows = _windows(buffer, chunk_tokens, overlap_tokens)
        final = block is None
        if not final and len(windows) < 2:
            continue  # one window fills the segment: read more before cutting
        for piece, start, end, count in windows if final else windows[:-1]:
            lead = carry + buffer[max(previous_end - base, 0):start] if base + start > previous_end else ""
            carry = ""
            yield Chunk(index=index, text=piece, tokens=count, page_start=None, page_end=None,
                        start=base + start, end=base + end, lead=lead)
            previous_end = max(previous_end, base + end)
            index += 1
        if not final:
            cut = windows[-1][1]
            carry = buffer[previous_end - base:cut] if base + cut > previous_end else ""
            buffer = buffer[cut:]
            base += cut
