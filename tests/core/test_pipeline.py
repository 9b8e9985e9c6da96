"""The ingestion pipeline end to end against the fake Ollama over real HTTP and a real SQLite file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from docatlas.core.base.errors import ModelNotFound, OllamaUnreachable, StoreError
from docatlas.core.base.progress import Progress
from docatlas.core.graph.export import graph_data
from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.storage.database import Store
from fixtures import ingest_fixtures
from helpers import DOCUMENTS, expected_graph, long_document, settings_for, write_corpus


def run(store: Store, paths, settings, cancel=None) -> Progress:
    """Drive the generator to the end; return the last event."""
    events = list(index(store, paths, settings, cancel=cancel))
    return events[-1]


def chat_requests(server) -> list[dict]:
    return [r for r in server.requests if r["path"] == "/api/chat"]


model = ingest_fixtures.model
store = ingest_fixtures.store


def test_folder_becomes_a_graph_with_provenance(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    last = run(store, [corpus], settings_for(model))

    assert last.stage == "done"
    assert (last.documents_total, last.chunks_total, last.chunks_done) == (3, 3, 3)
    entities, pairs = expected_graph()
    stored = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert stored == entities  # gleaning brought back the names the first pass held back
    edges = {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")}
    assert edges == pairs
    data = graph_data(store)
    harbor = next(e for e in data["entities"] if e["name"] == "Harbor Analytics")
    assert sorted(Path(p).name for p in harbor["sources"]) == ["alpha.txt", "beta.md", "gamma.txt"]
    assert {d["title"] for d in data["documents"]} == {"alpha", "Notes", "gamma"}
    # one first pass and one gleaning round per chunk, nothing more
    assert last.calls == 6 and len(chat_requests(model)) == 6
    assert all(d.status == "done" for d in store.documents())


def test_every_request_sets_num_ctx_and_think_false(model, store, tmp_path):
    run(store, [write_corpus(tmp_path / "docs")], settings_for(model))
    for request in chat_requests(model):
        body = request["body"]
        assert body["options"]["num_ctx"] >= 2048
        assert body.get("think") is False


def test_unchanged_documents_are_skipped_and_cost_nothing(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    run(store, [corpus], settings_for(model))
    before = len(model.requests)
    last = run(store, [corpus], settings_for(model))
    assert last.documents_skipped == 3 and last.chunks_total == 0
    assert len(model.requests) == before


def test_repeated_work_is_answered_from_the_cache(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    run(store, [corpus], settings_for(model))
    with store.transaction() as conn:  # as if the records were lost: every chunk pending again
        conn.execute("UPDATE chunks SET status = 'pending'")
    before = len(chat_requests(model))
    last = run(store, [corpus], settings_for(model))
    assert last.chunks_done == 3 and last.calls == 0 and last.cached_calls == 6
    assert len(chat_requests(model)) == before


def test_changed_document_replaces_its_old_version(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    run(store, [corpus], settings_for(model))
    assert store.query("SELECT 1 FROM entities WHERE key = 'tomas berg'")
    (corpus / "gamma.txt").write_text("Jonas Weber met Olga Petrova in Oslo.", encoding="utf-8")
    (corpus / "beta.md").unlink()
    run(store, [corpus / "gamma.txt"], settings_for(model))
    keys = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert "olga petrova" in keys
    assert "tomas berg" in keys  # beta.md (not re-ingested) still supports him
    gamma = store.document_by_path(str((corpus / "gamma.txt").resolve()))
    texts = [r["text"] for r in store.query("SELECT text FROM chunks WHERE document_id = ?", (gamma.id,))]
    assert texts == ["Jonas Weber met Olga Petrova in Oslo."]
    assert len(store.documents()) == 3


def test_a_broken_file_fails_alone(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    (corpus / "broken.txt").write_bytes(bytes(range(256)) * 40)
    (corpus / "empty.md").write_text("   \n", encoding="utf-8")
    last = run(store, [corpus], settings_for(model))
    assert last.documents_failed == 2
    reasons = dict((Path(p).name, r) for p, r in last.failures)
    assert "broken.txt" in reasons["broken.txt"] and "empty.md" in reasons["empty.md"]
    statuses = {Path(d.path).name: d.status for d in store.documents()}
    assert statuses == {"alpha.txt": "done", "beta.md": "done", "gamma.txt": "done",
                        "broken.txt": "failed", "empty.md": "failed"}
    # fixed by the user, the same path loads on the next run; a still-broken one fails again
    (corpus / "empty.md").write_text("Nora Quint visited Harbor Analytics.", encoding="utf-8")
    last = run(store, [corpus], settings_for(model))
    assert last.documents_skipped == 3 and [Path(p).name for p, _ in last.failures] == ["broken.txt"]
    assert store.query("SELECT 1 FROM entities WHERE key = 'nora quint'")


def test_delete_keeps_what_other_documents_support(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    run(store, [corpus], settings_for(model))
    before = len(model.requests)
    alpha = store.document_by_path(str((corpus / "alpha.txt").resolve()))
    remove_document(store, alpha.id)
    keys = {r["key"] for r in store.query("SELECT key FROM entities")}
    assert "maria lopez" not in keys  # only alpha.txt named her
    assert {"harbor analytics", "priya nair", "jonas weber"} <= keys
    harbor = next(e for e in graph_data(store)["entities"] if e["name"] == "Harbor Analytics")
    assert sorted(Path(p).name for p in harbor["sources"]) == ["beta.md", "gamma.txt"]
    pairs = {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")}
    assert frozenset(("maria lopez", "harbor analytics")) not in pairs
    assert frozenset(("northwind labs", "harbor analytics")) in pairs
    assert len(model.requests) == before  # no text went to the model again


def test_ollama_down_keeps_documents_and_resumes_later(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    model.stop()
    with pytest.raises(OllamaUnreachable, match="start Ollama"):
        run(store, [corpus], settings_for(model))
    assert store.counts()["chunks_pending"] == 3  # stored before any model call
    model.start()
    last = run(store, [corpus], settings_for(model))
    assert last.documents_skipped == 3 and last.chunks_done == 3
    assert store.counts()["chunks_pending"] == 0


def test_missing_model_says_how_to_pull_it(model, store, tmp_path):
    with pytest.raises(ModelNotFound, match=r"ollama pull llama3\.2:3b"):
        run(store, [write_corpus(tmp_path / "docs")], settings_for(model, model="llama3.2:3b"))


def test_ollama_lost_mid_run_redoes_no_finished_chunk(model, store, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(long_document(120), encoding="utf-8")
    settings = settings_for(model, chunk_tokens=200, overlap_tokens=20, parallel=1)
    generator = index(store, [tmp_path / "docs"], settings)
    with pytest.raises(OllamaUnreachable):
        for event in generator:
            if event.stage == "extract" and event.chunks_done == 3:
                model.stop()
    done_texts = {r["text"] for r in store.query("SELECT text FROM chunks WHERE status = 'done'")}
    assert len(done_texts) >= 3
    model.start()
    model.requests.clear()
    last = run(store, [tmp_path / "docs"], settings)
    assert last.stage == "done" and store.counts()["chunks_pending"] == 0
    asked = {r["body"]["messages"][0]["content"] for r in chat_requests(model)}
    assert not any(text in prompt for text in done_texts for prompt in asked)


def test_cancel_stops_cleanly_and_the_next_run_finishes(model, store, tmp_path):
    model.latency = 0.05
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(long_document(120), encoding="utf-8")
    settings = settings_for(model, chunk_tokens=200, overlap_tokens=20)
    cancel = threading.Event()
    last = None
    for last in index(store, [tmp_path / "docs"], settings, cancel=cancel):
        if last.stage == "extract" and last.chunks_done >= 2:
            cancel.set()
    assert last.stage == "cancelled"
    counts = store.counts()
    assert counts["chunks_pending"] > 0 and counts["chunks_done"] >= 2
    # half-finished work is consistent: the graph holds exactly what the done chunks said
    assert store.query("SELECT COUNT(*) AS n FROM chunk_entities ce JOIN chunks c ON c.id = ce.chunk_id "
                       "WHERE c.status != 'done' AND ce.layer = 'model'")[0]["n"] == 0  # concept names only
    # and what the finished chunks found is in the graph already, before the next run
    found = {r["key"] for r in store.query("SELECT DISTINCT key FROM chunk_entities")}
    assert found and found <= {r["key"] for r in store.query("SELECT key FROM entities")}
    last = run(store, [tmp_path / "docs"], settings)
    assert last.stage == "done" and store.counts()["chunks_pending"] == 0


def test_closing_the_generator_stops_the_run(model, store, tmp_path):
    model.latency = 0.05
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(long_document(80), encoding="utf-8")
    generator = index(store, [tmp_path / "docs"], settings_for(model, chunk_tokens=200, overlap_tokens=20))
    for event in generator:
        if event.stage == "extract" and event.chunks_done >= 1:
            break
    generator.close()
    assert store.counts()["chunks_pending"] > 0


def test_at_most_parallel_calls_in_flight(model, store, tmp_path):
    model.latency = 0.1
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "long.txt").write_text(long_document(100), encoding="utf-8")
    run(store, [tmp_path / "docs"], settings_for(model, chunk_tokens=200, overlap_tokens=20, parallel=3))
    assert model.max_in_flight == 3


def test_a_chunk_the_model_keeps_failing_is_retried_next_run(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs", {"one.txt": DOCUMENTS["alpha.txt"]})
    model.fail_next("http500", times=3)  # more than the retries allow
    last = run(store, [corpus], settings_for(model, parallel=1))
    assert last.chunks_failed == 1
    doc = store.documents()[0]
    assert doc.status == "failed" and "Ollama" in doc.error
    last = run(store, [corpus], settings_for(model, parallel=1))
    assert last.chunks_done == 1 and store.documents()[0].status == "done"


def test_prose_reply_marks_the_chunk_empty_without_a_retry_storm(model, store, tmp_path):
    model.responder = lambda request: "I am sorry, but I cannot help with that request."
    corpus = write_corpus(tmp_path / "docs", {"one.txt": DOCUMENTS["alpha.txt"]})
    last = run(store, [corpus], settings_for(model, gleaning=3))
    assert last.chunks_done == 1 and last.calls == 1
    assert store.query("SELECT status FROM chunks")[0]["status"] == "empty"


def test_a_full_disk_stops_with_a_clear_message_and_keeps_finished_work(model, store, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    run(store, [corpus / "alpha.txt"], settings_for(model))
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 1}")
    (tmp_path / "docs" / "big.txt").write_text(long_document(2000), encoding="utf-8")
    with pytest.raises(StoreError, match="disk is full"):
        run(store, [corpus], settings_for(model))
    assert store.query("SELECT status FROM documents WHERE path LIKE '%alpha.txt'")[0]["status"] == "done"
    assert store.query("SELECT COUNT(*) AS n FROM entities")[0]["n"] > 0


def test_a_model_is_never_asked_for_less_context_during_a_run(model, store, tmp_path):
    """Ollama reloads a model whenever a call asks for another num_ctx: a long chunk's context is
    asked again for the short one after it and for every gleaning round."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_long.txt").write_text(long_document(150), encoding="utf-8")
    (docs / "b_short.txt").write_text("Ada Byron wrote to Alan Turing.", encoding="utf-8")
    run(store, [docs], settings_for(model, ollama__parallel=1))
    asked = [r["body"]["options"]["num_ctx"] for r in chat_requests(model)]
    assert len(asked) >= 4 and asked == sorted(asked)  # never less than before
    assert model.reloads == len(set(asked)) - 1  # one reload a growth, none back
