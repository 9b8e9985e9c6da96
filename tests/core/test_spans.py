"""Chunk spans: every chunk knows where it sits in its document's text, across overlap,
stream segments, page breaks and re-ingest of a changed file."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from docatlas.core.ingest import chunking, decoding
from docatlas.core.ingest.chunking import chunk_document, iter_chunks, page_starts
from docatlas.core.ingest.loaders import Document, Page, load_document, open_document
from helpers import long_document


def _rebuilt(chunks) -> str:
    """The text given back by the chunks and their leads alone."""
    out = ""
    for c in chunks:
        out += c.lead
        out += c.text[max(len(out) - c.start, 0):]
    return out


def test_spans_are_exact_across_overlap() -> None:
    text = "\n\n".join(" ".join(f"Sentence {p}.{i} about Ada." for i in range(30)) for p in range(20))
    document = Document(Path("a.txt"), "a", "txt", "0", (Page(None, "  " + text),))
    chunks = chunk_document(document, 120, 30)
    assert len(chunks) > 5
    assert any(b.start < a.end for a, b in itertools.pairwise(chunks))  # they do overlap
    for c in chunks:
        assert document.text[c.start:c.end] == c.text
    assert _rebuilt(chunks) == document.text.rstrip()


def test_stream_spans_match_the_whole_text(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chunking, "SEGMENT_CHARS", 20_000)
    monkeypatch.setattr(decoding, "BLOCK_BYTES", 7_000)
    path = tmp_path / "long.txt"
    path.write_text(long_document(3000), encoding="utf-8")
    full = load_document(path).text
    for overlap in (30, 0):
        whole = chunk_document(load_document(path), 300, overlap)
        streamed = list(iter_chunks(open_document(path), 300, overlap))
        assert [(c.start, c.end, c.lead) for c in streamed] == [(c.start, c.end, c.lead) for c in whole]
        assert all(full[c.start:c.end] == c.text for c in streamed)
        assert _rebuilt(streamed) == full.rstrip()


def test_spans_cross_page_breaks() -> None:
    rng = random.Random(3)
    pages = tuple(Page(n, " ".join(f"p{n}w{rng.randint(0, 99)}." for _ in range(150))) for n in (1, 2, 5))
    document = Document(Path("x.pdf"), "x", "pdf", "0", pages)
    chunks = chunk_document(document, 120, 20)
    starts = page_starts(document)
    assert [n for n, _ in starts] == [1, 2, 5]
    for c in chunks:
        assert document.text[c.start:c.end] == c.text
        first_word = c.text.split()[0]
        page = max(n for n, offset in starts if offset <= c.start)
        assert first_word.startswith(f"p{page}w")
    assert any(c.page_start != c.page_end for c in chunks)


def test_spans_survive_reingest_of_a_changed_file(fake_ollama, tmp_path: Path) -> None:
    from docatlas.core.jobs.ingest import index
    from docatlas.core.storage.database import Store
    from docatlas.core.storage.read_models import document_text
    from fixtures.scripted_model import lightrag_responder
    from helpers import settings_for

    fake_ollama.responder = lightrag_responder
    path = tmp_path / "docs" / "letters.txt"
    path.parent.mkdir()
    settings = settings_for(fake_ollama, chunking__chunk_tokens=120, chunking__overlap_tokens=20)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        for version in (long_document(60), "A new opening line.\n\n" + long_document(80)):
            path.write_text(version, encoding="utf-8")
            list(index(store, [path.parent], settings))
            rows = store.query("SELECT text, char_start, char_end FROM chunks ORDER BY idx")
            assert len(rows) > 3
            assert all(version[r["char_start"]:r["char_end"]] == r["text"] for r in rows)
            document_id = store.documents()[0].id
            assert document_text(store, document_id, 0, len(version)) == version.rstrip()


def test_migration_fills_spans_of_an_older_workspace(tmp_path: Path) -> None:
    import sqlite3

    from docatlas.core.storage.database import MIGRATIONS, SCHEMA_VERSION, Store, _statements

    text = long_document(200)
    chunks = chunk_document(Document(Path("a.txt"), "a", "txt", "0", (Page(None, text),)), 150, 25)
    conn = sqlite3.connect(tmp_path / "old.sqlite")
    for step in MIGRATIONS[:8]:
        for statement in _statements(step):
            conn.execute(statement)
    conn.execute("INSERT INTO documents VALUES (1, '/d/a.txt', 'a', 'txt', 'h', 1, 'done', NULL, 0, 0)")
    conn.executemany("INSERT INTO chunks(document_id, idx, text, tokens, status, updated_at) "
                     "VALUES (1, ?, ?, 1, 'done', 0)", [(c.index, c.text) for c in chunks])
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    with Store(tmp_path / "old.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
        rows = store.query("SELECT char_start, char_end FROM chunks ORDER BY idx")
    # Overlapping chunks are laid exactly where they were cut.
    assert [(r["char_start"], r["char_end"]) for r in rows] == [(c.start, c.end) for c in chunks]
