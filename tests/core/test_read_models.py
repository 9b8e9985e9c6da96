"""The window's read models return the rows the window read before, through indexed queries.

The `old_*` functions are the queries the GUI ran on its own thread before they moved to
`docatlas.core.storage.read_models`; the read models must give the same answers.
"""

from __future__ import annotations

import threading

import pytest
from docatlas.core.graph.export import entity_sources
from docatlas.core.jobs.ingest import index
from docatlas.core.storage import read_models
from docatlas.core.storage.database import Store
from fixtures.big_workspace import fill_workspace
from fixtures.scripted_model import lightrag_responder
from helpers import long_document, settings_for, write_corpus


def old_document_summaries(store: Store) -> list[tuple]:
    rows = store.query(
        "SELECT d.id, d.path, d.title, d.kind, d.size, d.status, d.error, COUNT(c.id) AS chunks,"
        " COALESCE(SUM(c.status IN ('done', 'empty')), 0) AS done,"
        " COALESCE(SUM(c.status = 'failed'), 0) AS failed,"
        " COALESCE(SUM(c.status = 'pending'), 0) AS pending"
        " FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id ORDER BY d.id")
    entities = {r["id"]: r["n"] for r in store.query(
        "SELECT c.document_id AS id, COUNT(DISTINCT e.key) AS n FROM chunk_entities e"
        " JOIN chunks c ON c.id = e.chunk_id GROUP BY c.document_id")}
    return [(r["id"], r["path"], r["title"], r["kind"], r["size"] or 0, r["status"], r["error"] or "",
             r["chunks"], r["done"], r["failed"], r["pending"], entities.get(r["id"], 0)) for r in rows]


def old_failed_documents(store: Store) -> list[str]:
    return [d.path for d in store.documents() if d.status == "failed" or store.chunk_counts(d.id).get("failed")]


def old_entities_only_in(store: Store, paths: list[str]) -> list[str]:
    going = set(paths)
    keys = [key for key, found in entity_sources(store).items() if found and set(found) <= going]
    if not keys:
        return []
    names = {r["key"]: r["name"] for r in store.query(
        f"SELECT key, name FROM entities WHERE key IN ({','.join('?' * len(keys))})", keys)}
    return sorted((names.get(k, k) for k in keys), key=str.casefold)


def as_tuple(row: read_models.DocumentSummary) -> tuple:
    return (row.id, row.path, row.title, row.kind, row.size, row.status, row.error, row.chunks,
            row.chunks_done, row.chunks_failed, row.chunks_pending, row.entities)


@pytest.fixture
def mixed(fake_ollama, tmp_path):
    """A workspace with done, failed (to load, and by a chunk) and half-extracted documents."""
    fake_ollama.responder = lightrag_responder
    corpus = write_corpus(tmp_path / "docs")
    (corpus / "broken.txt").write_bytes(bytes(range(256)) * 40)
    long = tmp_path / "long"
    long.mkdir()
    (long / "letters.txt").write_text(long_document(60), encoding="utf-8")
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [corpus], settings_for(fake_ollama)))
        cancel = threading.Event()
        for step in index(store, [long], settings_for(fake_ollama, chunking__chunk_tokens=80,
                                                          chunking__overlap_tokens=8), cancel=cancel):
            if step.stage == "extract" and step.chunks_done >= 2:
                cancel.set()
        gamma = store.document_by_path(str((corpus / "gamma.txt").resolve()))
        store.fail_chunk(store.query("SELECT id FROM chunks WHERE document_id = ?", (gamma.id,))[0]["id"],
                         "The model failed; run again.")
        store.refresh_document_status(gamma.id)
        yield store


def test_the_documents_list_reads_the_same_rows(mixed):
    rows = read_models.document_summaries(mixed)
    assert [as_tuple(r) for r in rows] == old_document_summaries(mixed)
    statuses = {r.name: r.status for r in rows}
    assert statuses["broken.txt"] == "failed" and statuses["letters.txt"] == "pending"
    assert any(r.chunks_failed for r in rows) and any(r.chunks_pending and r.chunks_done for r in rows)
    assert all(r.entities >= 1 for r in rows if r.chunks_done)


def test_a_few_documents_read_alone_match_the_full_read(mixed):
    everything = {r.id: r for r in read_models.document_summaries(mixed)}
    some = sorted(everything)[1::2]
    assert read_models.summaries_of(mixed, [*some, 99_999]) == [everything[i] for i in some]
    assert read_models.summaries_of(mixed, []) == []
    paths = [everything[i].path for i in some]
    assert read_models.document_ids_of(mixed, [*paths, "/nowhere.txt"]) == set(some)


def test_work_failures_and_counts_match_what_was_read_before(mixed):
    with_work = {r["document_id"] for r in mixed.query(
        "SELECT DISTINCT document_id FROM chunks WHERE status IN ('pending', 'failed')")}
    assert read_models.documents_with_work(mixed) == with_work and len(with_work) == 2
    assert read_models.failed_document_paths(mixed) == old_failed_documents(mixed)
    counts, old = read_models.workspace_counts(mixed), mixed.counts()
    assert (counts.documents, counts.chunks, counts.chunks_pending, counts.entities) == (
        old["documents"], old["chunks"], old["chunks_pending"], old["entities"])
    assert counts.failed == len(old_failed_documents(mixed)) == 2


def test_what_a_deletion_takes_with_it_matches_the_old_answer(mixed):
    documents = mixed.documents()
    for chosen in [[d] for d in documents] + [documents[:2], documents[1:3], documents]:
        assert read_models.entities_only_in(mixed, [d.id for d in chosen]) == \
            old_entities_only_in(mixed, [d.path for d in chosen])
    alpha = next(d for d in documents if d.path.endswith("alpha.txt"))
    assert "Maria Lopez" in read_models.entities_only_in(mixed, [alpha.id])


def test_the_passage_is_the_chunk_between_its_neighbours(mixed):
    letters = next(d for d in mixed.documents() if d.path.endswith("letters.txt"))
    chunks = mixed.query("SELECT id, idx, text FROM chunks WHERE document_id = ? ORDER BY idx", (letters.id,))
    middle = chunks[3]
    found = read_models.passage(mixed, middle["id"])
    assert found is not None and found.path == letters.path and found.total_chunks == len(chunks)
    assert [c["idx"] for c in found.chunks] == [1, 2, 3, 4, 5]
    assert read_models.chunk_text(mixed, middle["id"]) == middle["text"]
    assert read_models.passage(mixed, 99_999) is None and read_models.chunk_text(mixed, 99_999) is None


def plans(store: Store, read) -> list[str]:
    """The query plans of every statement `read(store)` runs."""
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        read(store)
    finally:
        store.conn.set_trace_callback(None)
    return [" | ".join(row[3] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql)) for sql in statements]


def test_reading_a_few_documents_searches_indexes_and_scans_no_big_table(tmp_path):
    with Store(tmp_path / "big.sqlite") as store:
        fill_workspace(store, 5000, per_document=50)
        some = [3, 40, 77]
        for read in (lambda s: read_models.summaries_of(s, some),
                     lambda s: read_models.document_ids_of(s, ["/existing/doc-00003.txt"]),
                     read_models.documents_with_work,
                     lambda s: read_models.entities_only_in(s, some),
                     lambda s: read_models.passage(s, 1234)):
            for plan in plans(store, read):
                assert "SCAN c" not in plan and "SCAN e" not in plan and "SCAN chunks" not in plan, plan
                assert "SCAN chunk_entities" not in plan and "SCAN r" not in plan, plan
