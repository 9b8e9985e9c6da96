"""Near-duplicate chunks are extracted once: a forwarded copy takes its original's records, grounded in
its own text, with no model call of its own; the reuse survives a stop and a restart, and a copy follows
its original when that is sent back to be extracted again.

Real parts: real SQLite files, the known-facts corpus, its scripted model behind the fake Ollama over
real HTTP; calls are counted at the server.
"""

from __future__ import annotations

import re
import threading

import pytest
from docatlas.core.base.fingerprints import THRESHOLD, shingles, similarity
from docatlas.core.base.keys import entity_key
from docatlas.core.graph.export import graph_data
from docatlas.core.jobs.ingest import index
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.storage import copy_finder, duplicates, records
from docatlas.core.storage.database import Store
from docatlas.core.storage.mentions import mentions
from docatlas.core.storage.read_models import passage
from fixtures import known_facts
from fixtures.fact_model import fact_responder
from fixtures.scripted_model import passage_of
from helpers import docatlas, settings_for

DOCUMENTS = 30
FORWARDER = "Kestrel Moor"  # named only in the copies' first line
DESK = "Ostrava Records Desk"  # named only in the copies' footer


def forwarded(text: str, number: int) -> str:
    """A forwarded copy: a new first line and a footer around the same body."""
    return (f"Forwarded by {FORWARDER} on {number % 28 + 1} May 2026, for the file.\n\n{text}\n"
            f"This copy was kept by the {DESK}; ask the desk for the signed original.\n")


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = fact_responder
    return fake_ollama


def corpus(folder, copies: bool):
    """The thirty documents in `a/`, and with `copies` a forwarded copy of each in `b/`."""
    documents = known_facts.build(seed=11, documents=DOCUMENTS).documents
    (folder / "a").mkdir(parents=True)
    for name, text in documents.items():
        (folder / "a" / name).write_text(text, encoding="utf-8")
        if copies:
            (folder / "b").mkdir(exist_ok=True)
            (folder / "b" / f"fwd-{name}").write_text(forwarded(text, len(name)), encoding="utf-8")
    return folder


def chats(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"]


def extraction_passages(server) -> list[str]:
    """The passage of every extraction prompt the server was sent (first passes and gleaning alike)."""
    found = []
    for body in chats(server):
        first = str((body.get("messages") or [{}])[0].get("content") or "")
        if "Passage:\n" in first:
            found.append(passage_of(first))
    return found


def ingest(store, folder, server, cancel=None, **overrides):
    return list(index(store, [folder], settings_for(server, **overrides), cancel=cancel))[-1]


def copy_chunks(store) -> dict[int, tuple[int, ...]]:
    return duplicates.all_copies(store)


def assert_grounded_in_own_text(store, copy_id: int) -> None:
    text = store.chunk_text(copy_id).casefold()
    entities, relations = records.chunk_records(store, copy_id)
    assert entities, "a copy has records of its own"
    for name, *_ in entities:
        assert name.casefold() in text
    for source, target, *_ in relations:
        assert source.casefold() in text and target.casefold() in text


def test_thirty_documents_and_a_forwarded_copy_of_each_cost_at_most_fifteen_percent_more_calls(model, tmp_path, capsys):
    with Store(tmp_path / "alone" / "docatlas.sqlite") as store:
        ingest(store, corpus(tmp_path / "docs-alone", copies=False), model)
    alone = len(chats(model))
    model.requests.clear()

    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        last = ingest(store, corpus(tmp_path / "docs", copies=True), model)
        with_copies = len(chats(model))
        assert last.stage == "done" and last.chunks_failed == 0
        assert with_copies <= 1.15 * alone, (alone, with_copies)
        copies = copy_chunks(store)
        assert len(copies) == DOCUMENTS and last.chunks_copied == DOCUMENTS
        assert store.counts()["copies_reused"] == DOCUMENTS
        # No copy's text was ever sent to the model: every extraction prompt holds an original's passage.
        assert not any(FORWARDER in p or DESK in p for p in extraction_passages(model))
        texts = {}
        for copy_id in copies:
            assert_grounded_in_own_text(store, copy_id)
            texts[copy_id] = store.chunk_text(copy_id)
            assert "/b/fwd-" in _path_of(store, copy_id)  # the later-stored one is the copy
        # References quote the copy: its records' mentions are sentences of its own text, in its document.
        for copy_id, text in texts.items():
            names = [e[0] for e in records.chunk_records(store, copy_id)[0]]
            for name in names[:3]:
                own = [m for m in mentions(store, entity_key(name), limit=500) if m.chunk_id == copy_id]
                assert own and all(m.quote in text and m.document == _path_of(store, copy_id) for m in own)
        # The copies' own names (the forwarding line, the footer) stay names the model has not read.
        layers = {e["name"]: e["layer"] for e in graph_data(store)["entities"]}
        assert layers.get(FORWARDER) == "concept" and layers.get(DESK) == "concept"
    code, out, _ = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "status")
    assert code == 0 and f"{DOCUMENTS} copies reused" in out


def _path_of(store, chunk_id: int) -> str:
    return passage(store, chunk_id, neighbours=0).path


def test_a_stopped_run_and_the_next_one_never_send_a_copy_to_the_model(model, tmp_path):
    folder = corpus(tmp_path / "docs", copies=True)
    cancel = threading.Event()
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        for step in index(store, [folder], settings_for(model, ollama__parallel=1), cancel=cancel):
            if step.chunks_done >= 8:
                cancel.set()  # stopped while originals and copies are still to do
        # Left to do: chunks stored and pending, or files not stored yet (a loader slower than the
        # writer, as on a loaded machine, leaves every stored chunk done).
        assert (len(store.documents()) < 2 * DOCUMENTS
                or any(store.chunk_counts(d.id).get("pending") for d in store.documents()))
        last = ingest(store, folder, model, ollama__parallel=1)
        assert last.stage == "done"
        assert all(not store.chunk_counts(d.id).get("pending") for d in store.documents())
        assert not any(FORWARDER in p for p in extraction_passages(model))
        for copy_id in copy_chunks(store):
            assert_grounded_in_own_text(store, copy_id)
        # Killed between an original's transaction and its copy's: the copy is pending, its original done.
        copy_id = next(iter(copy_chunks(store)))
        requeue_chunks(store, [copy_id])
        model.requests.clear()
        last = list(index(store, [], settings_for(model)))[-1]
        assert last.chunks_copied == 1 and not extraction_passages(model)  # taken over with no model call
        assert_grounded_in_own_text(store, copy_id)


def test_copies_follow_their_original_when_it_is_extracted_again_and_on_rebuild(model, tmp_path):
    folder = corpus(tmp_path / "docs", copies=True)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        ingest(store, folder, model)
        copies = copy_chunks(store)
        originals = sorted({o for sources in copies.values() for o in sources})[:3]
        before = {c: records.chunk_records(store, c) for c in copies}
        requeue_chunks(store, originals)  # a prompt change sends them back: their copies go with them
        followers = [c for c, sources in copies.items() if set(sources) & set(originals)]
        assert all(records.chunk_records(store, c)[0] == [] or _only_concepts(store, c) for c in followers)
        model.requests.clear()
        last = ingest(store, folder, model)
        assert last.stage == "done"
        assert not any(FORWARDER in p for p in extraction_passages(model))
        assert len({p for p in extraction_passages(model)}) <= len(originals)
        for copy_id in followers:
            assert_grounded_in_own_text(store, copy_id)
        report = rederive(store, settings_for(model))  # no model call; the copies take their originals' again
        assert report.chunks == 2 * DOCUMENTS
        assert {c: records.chunk_records(store, c) for c in copies} == before


def _only_concepts(store, chunk_id: int) -> bool:
    entities, _ = records.chunk_records(store, chunk_id)
    return {e[0] for e in entities} <= {FORWARDER, DESK}


def test_fingerprints_tell_a_copy_from_a_document_of_the_same_template():
    body = known_facts.build(seed=3, documents=30).documents["file000.txt"]
    copy = forwarded(body, 1)
    other = known_facts.build(seed=3, documents=30).documents["file001.txt"]
    template = re.sub(r"\b([A-Z][a-z]+) ([A-Z][a-z]+)\b", r"\2 \1", body)  # every name changed
    assert similarity(shingles(body), shingles(copy)) >= THRESHOLD
    assert similarity(shingles(body), shingles(other)) < 0.3
    assert similarity(shingles(body), shingles(template)) < THRESHOLD
    assert shingles("Too short to be compared.") is None


def test_the_originals_shingles_kept_in_memory_are_bounded_and_right():
    kept = copy_finder._kept_shingles
    kept.cache_clear()
    texts = [f"Report {n}: " + " ".join(f"word{n}x{i}" for i in range(40)) for n in range(copy_finder.KEPT + 20)]
    for text in texts:
        assert list(kept(text)) == list(shingles(text))
    assert kept.cache_info().currsize == copy_finder.KEPT  # the oldest were forgotten
    hits = kept.cache_info().hits
    kept(texts[-1])
    assert kept.cache_info().hits == hits + 1  # the newest is still there
    assert list(kept(texts[0])) == list(shingles(texts[0]))  # read again when asked
    assert kept.cache_info().hits == hits + 1  # it had been forgotten
