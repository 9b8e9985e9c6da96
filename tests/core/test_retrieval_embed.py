"""Embedding during ingestion: batches, nothing twice, changes and deletions, model switch,
a missing model, cancellation, and search over the stored vectors."""

from __future__ import annotations

import threading

from docatlas.core.base.progress import Progress
from docatlas.core.graph.merge import rebuild
from docatlas.core.jobs.ingest import index
from docatlas.core.retrieval import vector_index, vectors
from docatlas.core.retrieval.embed import embed_pending, embedding_texts, pending_count
from fixtures.ollama_server import fake_embedding
from test_retrieval_helpers import build_graph, client, embed_requests, open_store, settings_for


def run(store, llm, settings, cancel=None) -> list[Progress]:
    return list(embed_pending(store, llm, settings, cancel))


def test_everything_is_embedded_in_batches_and_only_once(fake_ollama, tmp_path):
    settings = settings_for(fake_ollama, query__embed_batch=4)
    with open_store(tmp_path) as store:
        build_graph(store)
        total = pending_count(store)
        events = run(store, client(fake_ollama), settings)
        assert events[0].step_total == total and events[-1].step_done == total
        assert all(isinstance(e, Progress) and e.stage == "embed" for e in events)
        assert all(not e.warnings for e in events)
        assert pending_count(store) == 0
        counts = {r["kind"]: r["n"] for r in store.query("SELECT kind, COUNT(*) AS n FROM embeddings GROUP BY kind")}
        assert counts == {"chunk": 5, "entity": store.counts()["entities"], "relation": 9}
        assert all(len(b["input"]) <= 4 for b in embed_requests(fake_ollama))
        assert {b["model"] for b in embed_requests(fake_ollama)} == {"nomic-embed-text"}

        calls = len(embed_requests(fake_ollama))
        assert run(store, client(fake_ollama), settings) == []  # nothing changed: no events, no calls
        rebuild(store)  # rewrites every row with the same text: queued, but no model call
        run(store, client(fake_ollama), settings)
        assert len(embed_requests(fake_ollama)) == calls and pending_count(store) == 0


def test_stored_vectors_are_the_models_and_searchable(fake_ollama, tmp_path):
    settings = settings_for(fake_ollama)
    with open_store(tmp_path) as store:
        build_graph(store)
        run(store, client(fake_ollama), settings)
        text = embedding_texts(store, "entity", ["maria lopez"])["maria lopez"]
        query = vectors.unit(fake_embedding(text, 16))
        found = vectors.search(store, "entity", "nomic-embed-text", query, 3, 0.2)
        assert found[0][0] == "maria lopez" and abs(found[0][1] - 1.0) < 1e-5
        assert vector_index.index_path(store, "entity", "nomic-embed-text", 16).is_file()  # on disk, beside it


def test_a_changed_entity_is_embedded_again_and_a_deleted_one_loses_its_vector(fake_ollama, tmp_path):
    settings = settings_for(fake_ollama)
    with open_store(tmp_path) as store:
        build_graph(store)
        run(store, client(fake_ollama), settings)
        before = len(embed_requests(fake_ollama))
        with store.transaction() as conn:
            conn.execute("UPDATE entities SET description = 'Founder and CEO.' WHERE key = 'maria lopez'")
        run(store, client(fake_ollama), settings)
        (body,) = embed_requests(fake_ollama)[before:]
        assert body["input"] == ["Maria Lopez: Founder and CEO."]

        doc = store.find_documents("garden.txt")[0]
        rebuild(store, store.delete_document(doc.id))
        run(store, client(fake_ollama), settings)
        left = {r["ref"] for r in store.query("SELECT ref FROM embeddings WHERE kind = 'entity'")}
        assert "basil" not in left and "maria lopez" in left
        assert store.query("SELECT COUNT(*) AS n FROM embeddings WHERE kind = 'chunk'")[0]["n"] == 4


def test_a_new_embedding_model_embeds_everything_again(fake_ollama, tmp_path):
    fake_ollama.models["mxbai-embed-large"] = {"dim": 8, "family": "bert", "context_length": 512}
    with open_store(tmp_path) as store:
        build_graph(store)
        run(store, client(fake_ollama), settings_for(fake_ollama))
        n = store.query("SELECT COUNT(*) AS n FROM embeddings")[0]["n"]
        settings = settings_for(fake_ollama, ollama__embed_model="mxbai-embed-large")
        events = run(store, client(fake_ollama), settings)
        assert events[-1].step_done == n
        rows = store.query("SELECT DISTINCT model, dim FROM embeddings")
        assert rows == [{"model": "mxbai-embed-large", "dim": 8}]


def test_a_missing_embedding_model_says_so_and_keeps_the_queue(fake_ollama, tmp_path):
    del fake_ollama.models["nomic-embed-text"]
    settings = settings_for(fake_ollama)
    with open_store(tmp_path) as store:
        build_graph(store)
        queued = pending_count(store)
        events = run(store, client(fake_ollama), settings)
        error = events[-1].warnings[0]
        assert "nomic-embed-text is not installed" in error and "ollama pull nomic-embed-text" in error
        assert error.count(".") == 1  # one sentence
        assert pending_count(store) == queued


def test_the_pipeline_carries_the_embedding_warning_to_its_end(fake_ollama, tmp_path):
    del fake_ollama.models["nomic-embed-text"]
    settings = settings_for(fake_ollama, query__community_reports=False)
    with open_store(tmp_path) as store:
        build_graph(store)
        steps = list(index(store, [], settings, client(fake_ollama)))
        embedding = [p for p in steps if p.stage == "embed"]
        assert embedding and embedding[0].step_total == pending_count(store) > 0
        assert steps[-1].stage == "done" and len(steps[-1].warnings) == 1
        assert "nomic-embed-text is not installed" in steps[-1].warnings[0]


def test_cancel_stops_between_batches_and_the_rest_waits(fake_ollama, tmp_path):
    settings = settings_for(fake_ollama, query__embed_batch=2)
    cancel = threading.Event()
    with open_store(tmp_path) as store:
        build_graph(store)
        total = pending_count(store)
        events = []
        for event in embed_pending(store, client(fake_ollama), settings, cancel):
            events.append(event)
            if event.step_done >= 4:
                cancel.set()
        assert events[-1].stage == "cancelled"
        assert 0 < pending_count(store) < total
        run(store, client(fake_ollama), settings)
        assert pending_count(store) == 0


def test_batches_run_in_parallel_up_to_the_setting(fake_ollama, tmp_path):
    fake_ollama.latency = 0.05
    settings = settings_for(fake_ollama, query__embed_batch=2, ollama__parallel=3)
    with open_store(tmp_path) as store:
        build_graph(store)
        events = run(store, client(fake_ollama), settings)
        assert pending_count(store) == 0 and not events[-1].warnings
        assert len(embed_requests(fake_ollama)) > 3
        assert fake_ollama.max_in_flight == 3
