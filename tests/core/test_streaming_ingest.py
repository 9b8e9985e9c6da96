"""Streaming ingest: files are read ahead in a bounded queue while the first chunks are extracted.

Real parts: a real SQLite file, the fake Ollama over HTTP. Nothing here is timed: the
bound is checked by counting what the loader holds while the consumer stops pulling.
"""

from __future__ import annotations

import threading

from docatlas.core.base.progress import Progress
from docatlas.core.ingest.loaders import walk
from docatlas.core.jobs import feed as feed_module
from docatlas.core.jobs import ingest
from docatlas.core.jobs.feed import FEED_BOUND, Feed
from docatlas.core.jobs.ingest import index
from fixtures import ingest_fixtures
from helpers import long_document, settings_for

FILES = 30


model = ingest_fixtures.model
store = ingest_fixtures.store


def big_folder(tmp_path, files: int = FILES, sentences: int = 12):
    """A folder of `files` small letters (one chunk each at the default chunk size)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for number in range(files):
        (folder / f"letter{number:03}.txt").write_text(
            f"Letter {number}.\n\n" + long_document(sentences, start=number * sentences), encoding="utf-8")
    return folder


def test_the_loader_holds_at_most_its_bound_while_nobody_takes(model, store, tmp_path):
    folder = big_folder(tmp_path)
    files = sorted(folder.iterdir())
    wake = threading.Event()
    feed = Feed(store, walk([folder]), settings_for(model), threading.Event(), wake, bound=3).start()
    try:
        assert feed.blocked.wait(30)  # the queue is full: the loader waits instead of reading on
        assert feed.items.qsize() == 3 and feed.waiting == 4  # three queued and one in hand, of 30
        taken = []
        while not feed.done:
            wake.clear()
            item = feed.next()
            if item is not None:
                taken.append(item)
            elif not feed.done:
                wake.wait(5)
        assert [item.path for item in taken] == files  # every file once, in order
        assert all(item.chunks and item.error is None for item in taken)
        assert feed.most_waiting == 4 and feed.waiting == 0
    finally:
        feed.stop()


def test_extraction_starts_before_the_folder_is_read_and_memory_stays_bounded(model, store, tmp_path, monkeypatch):
    feeds: list[Feed] = []

    class Watched(Feed):
        def start(self):
            feeds.append(self)
            return super().start()

    monkeypatch.setattr(ingest, "Feed", Watched)
    folder = big_folder(tmp_path)
    run = index(store, [folder], settings_for(model, parallel=2))
    first = next(p for p in run if p.stage == "extract")
    # the model was called after the first file was stored, not after the whole folder
    assert first.still_reading and first.documents_done < FILES and len(store.documents()) < FILES
    assert "at least" not in first.message  # the display says it, not the message (see test_cli_progress)

    (feed,) = feeds
    assert feed.blocked.wait(30)  # the consumer has stopped pulling: the loader stops at its bound
    assert feed.waiting <= FEED_BOUND + 1 and len(store.documents()) < FILES

    events = list(run)
    last = events[-1]
    assert last.stage == "done" and not last.still_reading
    assert (last.documents_total, last.documents_done, last.chunks_done) == (FILES, FILES, FILES)
    assert feed.most_waiting == FEED_BOUND + 1  # reached while nobody pulled, never passed
    # the totals only grew while files were read, and were final once they were all read
    totals = [p.chunks_total for p in [first, *events] if p.stage == "extract"]
    assert totals == sorted(totals) and totals[-1] == FILES
    assert all(not p.still_reading for p in events if p.stage in ("merge", "embed", "done"))
    assert store.counts()["chunks_pending"] == 0


def test_chunk_embeddings_are_made_while_extraction_runs(model, store, tmp_path):
    folder = big_folder(tmp_path, files=12)
    last = list(index(store, [folder], settings_for(model, parallel=2, query__embed_batch=4)))[-1]
    assert last.stage == "done"
    paths = [r["path"] for r in model.requests if r["path"] in ("/api/chat", "/api/embed")]
    last_chat = max(i for i, path in enumerate(paths) if path == "/api/chat")
    assert "/api/embed" in paths[:last_chat]  # an embedding batch ran between extraction calls
    vectors = store.query("SELECT kind, COUNT(*) AS n FROM embeddings GROUP BY kind")
    assert {r["kind"]: r["n"] for r in vectors}["chunk"] == 12
    assert model.max_in_flight <= 2  # embeddings share the slots


def test_a_cancel_while_files_are_read_keeps_what_was_stored(model, store, tmp_path):
    model.latency = 0.05
    folder = big_folder(tmp_path)
    cancel = threading.Event()
    events: list[Progress] = []
    for p in index(store, [folder], settings_for(model, parallel=2), cancel=cancel):
        events.append(p)
        if p.stage == "extract":
            cancel.set()  # the first model calls have just started; files are still being read
    assert events[-1].stage == "cancelled"
    stored = len(store.documents())
    first = next(p for p in events if p.stage == "extract")
    assert stored == first.documents_done and 0 < stored < FILES  # nothing was stored after the stop
    # nothing half-stored: every stored document has its chunks; the next run reads the rest
    assert store.query("SELECT COUNT(*) AS n FROM documents d WHERE NOT EXISTS "
                       "(SELECT 1 FROM chunks c WHERE c.document_id = d.id)")[0]["n"] == 0
    last = list(index(store, [folder], settings_for(model, parallel=2)))[-1]
    assert last.stage == "done" and last.documents_skipped == stored
    assert store.counts()["chunks_pending"] == 0 and len(store.documents()) == FILES


def test_large_document_warning_names_the_file(model, store, tmp_path, monkeypatch):
    monkeypatch.setattr(feed_module, "LARGE_DOCUMENT_CHUNKS", 2)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(long_document(200), encoding="utf-8")
    last = list(index(store, [tmp_path / "docs"], settings_for(model, chunk_tokens=200, overlap_tokens=20)))[-1]
    assert any(w.startswith("long.txt makes ") for w in last.warnings)


def test_the_progress_says_the_totals_are_known_so_far():
    from docatlas.cli.progress import ProgressLine
    from docatlas.gui.run_state import running_state

    reading = Progress(stage="extract", documents_total=1000, documents_done=120, chunks_total=480,
                       chunks_done=100, chunks_failed=20, still_reading=True, eta=None)
    line = ProgressLine.line(reading, 200)
    assert "chunks 120/480+" in line and "(still reading files)" in line
    state = running_state("running", reading, None)
    assert state.text == ("Extracting entities and relations: 120 of at least 480 chunks "
                          "(still reading files: 120 of 1000 read)")
    assert state.percent is None  # no "25%" in the title while the total still grows
    assert running_state("paused", reading, None).text.startswith("Paused at 120/480+")

    read = Progress(stage="extract", documents_total=1000, documents_done=1000, chunks_total=4000,
                    chunks_done=1000, eta=60.0)
    assert "chunks 1000/4000 " in ProgressLine.line(read, 200) and "still" not in ProgressLine.line(read, 200)
    state = running_state("running", read, None)
    assert state.text == "Extracting entities and relations" and state.percent == 25
