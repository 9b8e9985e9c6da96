"""Hostile input on disk: zip bombs, link loops, odd names, unreadable folders, bad bytes, huge files."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from docatlas.cli import main
from docatlas.core.base.errors import DocumentError
from docatlas.core.ingest import archive_guard
from docatlas.core.ingest.chunking import iter_chunks
from docatlas.core.ingest.loaders import discover, load_document, open_document
from docatlas.core.jobs import feed
from docatlas.core.jobs import ingest as pipeline
from docatlas.core.storage.database import Store
from fixtures.make_docs import make_docx
from fixtures.scripted_model import lightrag_responder
from helpers import long_document, settings_for
from unprivileged import run_unprivileged


@pytest.fixture
def model(fake_ollama, monkeypatch):
    fake_ollama.responder = lightrag_responder
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama


def zip_bomb(path: Path, inflated: int) -> Path:
    """A .docx whose document part inflates to `inflated` bytes of zeros (a few KB stored)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1 << 20)
            for _ in range(inflated >> 20):
                part.write(block)
    return path


# --- archives -----------------------------------------------------------------------------


def test_zip_bomb_docx_is_refused_before_inflating(tmp_path, monkeypatch):
    bomb = zip_bomb(tmp_path / "bomb.docx", 300 << 20)
    assert bomb.stat().st_size < 1 << 20
    opened = []
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: opened.append(a) or pytest.fail("inflated"))
    with pytest.raises(DocumentError) as info:
        load_document(bomb)
    assert "bomb.docx was not opened" in info.value.message and "zip bomb" in info.value.message
    assert not opened


def test_a_part_that_inflates_too_many_times_is_refused(tmp_path):
    bomb = zip_bomb(tmp_path / "ratio.docx", 64 << 20)  # under the total limit, but ~1000:1
    with pytest.raises(DocumentError) as info:
        archive_guard.check_archive(bomb)
    assert "times its size" in info.value.message


def test_an_ordinary_docx_passes_the_guard(tmp_path):
    path = make_docx(tmp_path / "fine.docx")
    archive_guard.check_archive(path)
    assert load_document(path).text


# --- folders --------------------------------------------------------------------------------


def test_link_loops_and_broken_links_are_listed_failures(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("Ada wrote.", encoding="utf-8")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "gone.txt").symlink_to(folder / "nowhere.txt")
    (folder / "sub" / "up").symlink_to(folder, target_is_directory=True)  # a folder loop

    files, skipped = discover([folder])

    assert files == [folder / "a.txt"]
    reasons = dict(skipped)
    assert "leads back to itself" in reasons[folder / "loop.txt"]
    assert "does not exist" in reasons[folder / "gone.txt"]


def test_unreadable_folder_is_a_listed_failure(tmp_path):
    folder = tmp_path / "docs"
    (folder / "closed").mkdir(parents=True)
    (folder / "open.txt").write_text("Ada wrote.", encoding="utf-8")
    (folder / "closed" / "inside.txt").write_text("hidden", encoding="utf-8")
    (folder / "closed").chmod(0o000)
    try:
        found = run_unprivileged(
            "import json, sys\nfrom pathlib import Path\n"
            "from docatlas.core.ingest.loaders import discover\n"
            "files, skipped = discover([Path(sys.argv[1])])\n"
            "print(json.dumps([[str(f) for f in files], [[str(p), r] for p, r in skipped]]))\n", str(folder))
    finally:
        (folder / "closed").chmod(0o755)
    files, skipped = found
    assert files == [str(folder / "open.txt")]
    assert skipped == [[str(folder / "closed"), "The folder closed could not be read (Permission denied); "
                        "check that you may open it and add it again."]]


def test_unreadable_file_in_a_folder_is_a_listed_failure(model, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "open.txt").write_text("Maria Lopez founded Harbor Analytics.", encoding="utf-8")
    (folder / "locked.txt").write_text("secret", encoding="utf-8")
    (folder / "locked.txt").chmod(0o000)
    code, err = run_unprivileged(
        "import contextlib, io, json, sys\n"
        "from docatlas.cli import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n"
        "    code = main(['--data-dir', sys.argv[2], 'ingest', sys.argv[1]])\n"
        "print(json.dumps([code, err.getvalue()]))\n", str(folder), str(tmp_path / "ws"))
    assert code == 1
    assert "failed: locked.txt could not be read (Permission denied)" in err
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        assert {Path(d.path).name: d.status for d in store.documents()} == {"open.txt": "done"}


def test_non_utf8_name_is_kept_exactly_and_shown_readably(model, capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    raw = os.fsencode(folder) + b"/caf\xe9 notes.txt"
    with open(raw, "wb") as handle:
        handle.write(b"Maria Lopez founded Harbor Analytics in Lisbon.")
    (folder / "plain.txt").write_text("Jonas Weber joined Harbor Analytics.", encoding="utf-8")
    ws = tmp_path / "ws"

    assert main(["--data-dir", str(ws), "ingest", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "2 documents (0 unchanged, 0 failed)" in out, err

    with Store(ws / "docatlas.sqlite") as store:
        odd = next(d for d in store.documents() if "caf" in d.path)
        assert odd.path.endswith("caf\\xe9 notes.txt") and odd.status == "done"
        assert os.fsencode(store.file_path(odd)) == raw  # the exact bytes, to open it again
    assert main(["--data-dir", str(ws), "status", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert any(d["path"].endswith("caf\\xe9 notes.txt") for d in shown["documents"])
    # unchanged on the next run: found again by its exact name
    assert main(["--data-dir", str(ws), "ingest", str(folder)]) == 0
    assert "2 unchanged" in capsys.readouterr().out


def test_one_bad_entry_does_not_stop_the_others(model, capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "good.txt").write_text("Maria Lopez founded Harbor Analytics.", encoding="utf-8")
    code = main(["--data-dir", str(tmp_path / "ws"), "ingest", str(folder)])
    out, err = capsys.readouterr()
    assert code == 1  # a failure was listed
    assert "loop.txt is a link that leads back to itself" in err
    assert "1 failed" in out and "unexpected" not in err
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        assert [Path(d.path).name for d in store.documents()] == ["good.txt"]


# --- decoding -------------------------------------------------------------------------------


def test_utf8_with_a_few_bad_bytes_stays_utf8(tmp_path):
    path = tmp_path / "zurich.txt"
    path.write_bytes("Zürich and Genève, café.\n".encode() * 50 + b"one bad byte: \xff here\n")
    stream = open_document(path)
    text = "".join(stream.blocks())
    assert "Zürich" in text and "ZĂź" not in text
    assert "one bad byte: \ufffd here" in text
    assert stream.replaced == 1


def test_clearly_latin1_text_still_falls_back(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Zürich, Genève, café, naïve.\n".encode("latin-1") * 20)
    assert load_document(path).text.startswith("Zürich, Genève")


def test_bad_bytes_are_counted_in_a_warning(model, tmp_path):
    path = tmp_path / "patched.txt"
    path.write_bytes("Maria Lopez founded Harbor Analytics in Zürich, Genève and Málaga.\n".encode()
                     + b"\xfe\xff\n")
    with Store(tmp_path / "ws.sqlite") as store:
        last = list(pipeline.index(store, [path], settings_for(model)))[-1]
    assert last.stage == "done" and not last.failures
    assert any("patched.txt has 2 bytes that are not valid UTF-8" in w for w in last.warnings), last.warnings


# --- size -----------------------------------------------------------------------------------


def test_a_document_with_many_chunks_warns_with_count_and_time(model, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(feed, "LARGE_DOCUMENT_CHUNKS", 5)
    path = tmp_path / "long.txt"
    path.write_text(long_document(200), encoding="utf-8")
    ws = str(tmp_path / "ws")
    code = main(["--data-dir", ws, "ingest", str(path), "--chunk-tokens", "100", "--overlap-tokens", "0"])
    _out, err = capsys.readouterr()
    assert code == 0, err
    with Store(Path(ws) / "docatlas.sqlite") as store:
        chunks = store.counts()["chunks"]
    assert chunks > 5
    calls = chunks * 2  # one first pass and one gleaning round each
    assert f"long.txt makes {chunks:,} chunks, about {calls:,} model calls" in err
    assert "hours" in err


def test_streamed_chunks_cover_a_file_bigger_than_a_segment(tmp_path, monkeypatch):
    from docatlas.core.ingest import chunking, decoding

    monkeypatch.setattr(chunking, "SEGMENT_CHARS", 20_000)
    monkeypatch.setattr(decoding, "BLOCK_BYTES", 7_000)
    path = tmp_path / "long.txt"
    path.write_text(long_document(3000), encoding="utf-8")
    whole = [c.text for c in chunking.chunk_document(load_document(path), 300, 30)]
    streamed = list(iter_chunks(open_document(path), 300, 30))
    assert [c.text for c in streamed] == whole
    assert [c.index for c in streamed] == list(range(len(whole)))
    assert max(c.tokens for c in streamed) <= 300


def test_one_huge_line_is_cut_without_a_newline(tmp_path, monkeypatch):
    from docatlas.core.ingest import chunking, decoding

    monkeypatch.setattr(chunking, "SEGMENT_CHARS", 50_000)
    monkeypatch.setattr(decoding, "BLOCK_BYTES", 16_000)
    path = tmp_path / "line.txt"
    words = " ".join(f"word{i}" for i in range(60_000))  # one line, about 470 KB
    path.write_text(words, encoding="utf-8")
    chunks = list(iter_chunks(open_document(path), 500, 0))
    assert len(chunks) > 10 and all(c.tokens <= 500 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == words.split()
