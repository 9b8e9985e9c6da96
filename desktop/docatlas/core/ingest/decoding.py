"""Bytes to text for plain files: which codec, and decoding as a stream of blocks.

A file is read in blocks, never whole. The codec is chosen from the bytes: a BOM, a
declared charset (HTML), BOM-less UTF-16, then UTF-8. UTF-8 with a few bad bytes stays
UTF-8: the bad bytes become U+FFFD and are counted. Only text that is clearly not UTF-8
(more invalid sequences than valid multi-byte characters) falls back to a detected codec,
guessed from the first megabyte (Western European on a tie).
"""

from __future__ import annotations

import codecs
import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BLOCK_BYTES = 1 << 20
SAMPLE_BYTES = 1 << 20
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_WESTERN = {"cp1252", "latin_1", "iso8859_15"}
# Control characters that never occur in real text (tab, newlines and form feed are fine).
CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd]")
_counter = threading.local()


def _count_and_replace(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    _counter.value = getattr(_counter, "value", 0) + 1
    return "\ufffd", error.end


codecs.register_error("docatlas-count", _count_and_replace)


@dataclass(frozen=True)
class Encoding:
    """The codec chosen for a file and how many bad bytes UTF-8 decoding replaced."""

    codec: str
    replaced: int = 0


def utf16_without_bom(sample: bytes) -> str | None:
    """Codec name when NUL bytes sit in every other position (ASCII-range UTF-16)."""
    sample = sample[:4096]
    half = len(sample) // 2
    if half < 1:
        return None
    even, odd = sample[0::2].count(0) / half, sample[1::2].count(0) / half
    if odd >= 0.3 and even <= 0.05:
        return "utf-16-le"
    if even >= 0.3 and odd <= 0.05:
        return "utf-16-be"
    return None


def guess_codec(sample: bytes) -> str:
    """Ask charset-normalizer about a sample; on a tie prefer Western European (cp1252)."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample))
    if not matches:
        return "cp1252"
    best = matches[0]
    for match in matches:
        close = match.chaos <= best.chaos + 0.01 and match.coherence >= best.coherence - 0.01
        if close and _WESTERN.intersection(match.could_be_from_charset):
            return "cp1252"
    return best.encoding


def _blocks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            yield block


def _utf8_counts(path: Path) -> tuple[int, int]:
    """(invalid sequences, valid multi-byte characters) of the file read as UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="docatlas-count")
    _counter.value = 0
    non_ascii = 0
    for block in itertools.chain(_blocks(path), [b""]):
        text = decoder.decode(block, final=not block)
        non_ascii += len(text) - len(text.encode("ascii", "ignore"))
    invalid = _counter.value
    return invalid, non_ascii - invalid  # each invalid sequence became one U+FFFD


def _supported(codec: str) -> bool:
    try:
        codecs.lookup(codec)
    except LookupError:
        return False
    return True


def choose_encoding(path: Path, declared: str | None = None) -> Encoding:
    """The codec for a file (reads it once as a stream; see the module docstring)."""
    with open(path, "rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
    bom = next((codec for mark, codec in _BOMS if sample.startswith(mark)), None)
    if bom:
        return Encoding(bom)
    if declared and _supported(declared):
        return Encoding(declared)
    utf16 = utf16_without_bom(sample)
    if utf16:
        return Encoding(utf16)
    invalid, valid = _utf8_counts(path)
    if invalid == 0 or valid >= invalid:
        return Encoding("utf-8", invalid)
    return Encoding(guess_codec(sample))


def decode_blocks(path: Path, encoding: Encoding) -> Iterator[str]:
    """The file's text block by block, newlines normalised, a leading BOM dropped.

    Undecodable bytes become U+FFFD (for UTF-8 they were counted by `choose_encoding`)."""
    decoder = codecs.getincrementaldecoder(encoding.codec)(errors="replace")
    first, pending_cr = True, False
    for block in itertools.chain(_blocks(path), [None]):
        text = decoder.decode(b"", final=True) if block is None else decoder.decode(block)
        if pending_cr:
            text = "\r" + text
        pending_cr = text.endswith("\r") and block is not None
        if pending_cr:
            text = text[:-1]
        if first and text:
            text, first = text.lstrip("\ufeff"), False
        if text:
            yield text.replace("\r\n", "\n").replace("\r", "\n")


def looks_binary(control: int, chars: int) -> bool:
    """True when more than 2% of the characters are control characters."""
    return control > 0.02 * chars
