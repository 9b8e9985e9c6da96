"""The counts kept per document (migration 14's triggers) stay what a direct COUNT says.

Through a real ingest against the test Ollama server, a failed chunk, a re-extraction
(requeue and extract again), a merge that re-keys records (an accepted alias), a changed file
read again and a delete; the Documents list's pages and the status bar's totals read them.
"""

from __future__ import annotations

from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.jobs.reextract import rederive, requeue_chunks
from docatlas.core.storage import document_list, read_models
from docatlas.core.storage.database import Store
from docatlas.core.storage.document_list import DocumentQuery
from fixtures.big_workspace import fill_workspace
from fixtures.scripted_model import lightrag_responder
from helpers import settings_for, workspace_before, write_corpus


def counted(store: Store) -> dict[int, dict[str, int]]:
    """Per document, counted from the chunks and records themselves (the slow way)."""
    rows = store.query(
        "SELECT d.id AS document_id, COUNT(c.id) AS chunks, COALESCE(SUM(c.status IN ('done', 'empty')), 0) AS done,"
        " COALESCE(SUM(c.status = 'failed'), 0) AS failed, COALESCE(SUM(c.status = 'pending'), 0) AS pending,"
        " (SELECT COUNT(DISTINCT e.key) FROM chunk_entities e JOIN chunks k ON k.id = e.chunk_id"
        "  WHERE k.document_id = d.id) AS entities"
        " FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id")
    return {r["document_id"]: dict(r) for r in rows}


def assert_counts_right(store: Store) -> None:
    kept = document_list.chunk_totals(store)
    assert kept == counted(store)
    totals, direct = read_models.workspace_counts(store), store.counts()
    assert (totals.documents, totals.chunks, totals.chunks_pending, totals.entities) == (
        direct["documents"], direct["chunks"], direct["chunks_pending"], direct["entities"])
    assert read_models.documents_with_work(store) == {r["document_id"] for r in store.query(
        "SELECT DISTINCT document_id FROM chunks WHERE status IN ('pending', 'failed')")}


def test_counts_follow_ingest_failure_reextract_rekey_change_and_delete(fake_ollama, tmp_path):
    fake_ollama.responder = lightrag_responder
    corpus = write_corpus(tmp_path / "docs")
    settings = settings_for(fake_ollama)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [corpus], settings))
        assert_counts_right(store)
        assert all(c["entities"] >= 2 for c in document_list.chunk_totals(store).values())

        first = store.query("SELECT id FROM chunks ORDER BY id LIMIT 1")[0]["id"]
        store.fail_chunk(first, "The model failed; run again.")
        assert_counts_right(store)
        assert len(read_models.documents_with_work(store)) == 1

        requeue_chunks(store, [r["id"] for r in store.query("SELECT id FROM chunks")])
        assert_counts_right(store)
        assert sum(c["pending"] for c in document_list.chunk_totals(store).values()) == store.counts()["chunks"]
        list(index(store, [], settings))  # a run with no new file extracts what is pending
        assert_counts_right(store)
        assert not read_models.documents_with_work(store)

        key, other = (r["key"] for r in store.query("SELECT key FROM entities ORDER BY key LIMIT 2"))
        with store.transaction() as conn:  # a merge moving one key's records onto another
            conn.execute("UPDATE chunk_entities SET key = ? WHERE key = ?", (other, key))
        assert_counts_right(store)
        rederive(store, settings)
        assert_counts_right(store)

        (corpus / "beta.md").write_text("Ada Byron wrote to Alan Turing.\n\nGrace Hopper replied.", encoding="utf-8")
        list(index(store, [corpus], settings))  # the changed file replaces its old version
        assert_counts_right(store)

        alpha = store.document_by_path(str((corpus / "alpha.txt").resolve()))
        remove_document(store, alpha.id)
        assert_counts_right(store)
        assert alpha.id not in document_list.chunk_totals(store)


def test_pages_join_up_in_every_order_and_the_filter_runs_in_sql(tmp_path):
    with Store(tmp_path / "big.sqlite") as store:
        fill_workspace(store, 1200, per_document=4)
        everything = read_models.document_summaries(store)
        assert len(everything) == 300
        for sort in document_list.SORTS:
            for descending in (False, True):
                query = DocumentQuery(sort, descending)
                pages = [read_models.summaries_page(store, query, offset, 64) for offset in range(0, 300, 64)]
                ids = [r.id for page in pages for r in page]
                assert sorted(ids) == [r.id for r in everything], (sort, descending)  # no gap, no repeat
        by_name = [r.name for page in (read_models.summaries_page(store, DocumentQuery("name", True), o, 50)
                                       for o in range(0, 300, 50)) for r in page]
        assert by_name == sorted((r.name for r in everything), reverse=True)
        query = DocumentQuery(text="DOC-0012")  # the name, case-insensitively
        shown = read_models.summaries_page(store, query, 0, 100)
        assert [r.name for r in shown] == [f"doc-{n:05d}.txt" for n in range(120, 130)]
        assert document_list.total(store, query.text) == 10
        assert document_list.total(store, "100%") == 0  # a % in the box is a character, not a wildcard


def test_staleness_hashes_each_profiles_bundled_prompts_once_and_counts_in_sql(tmp_path, monkeypatch):
    from docatlas.core.prompts import store as prompt_store

    loads: list[str] = []
    real = prompt_store.load_profile
    monkeypatch.setattr(prompt_store, "load_profile", lambda name, *rest: loads.append(name) or real(name, *rest))
    with Store(tmp_path / "stamps.sqlite") as store:
        fill_workspace(store, 3000, per_document=100)  # finished before prompts were stamped
        fill_workspace(store, 500, per_document=100, profile="compact", prompt_hash="not what compact gives")
        fill_workspace(store, 500, per_document=100, profile="lightrag",
                       prompt_hash=prompt_store.fingerprint(prompt_store.profile_for(store, "lightrag")))
        loads.clear()
        stale = prompt_store.stale_chunks(store, "lightrag")
        assert len(loads) <= 3  # the profile in use, and the bundled one of unstamped chunks: not one a chunk
        loads.clear()
        assert prompt_store.staleness(store, "lightrag") == (len(stale), 4000)
        assert len(loads) <= 3
        assert len(stale) == 500  # unstamped chunks of no profile count as the asked profile's bundled prompts
        assert prompt_store.staleness(store, "compact") == (1000, 4000) == (len(prompt_store.stale_chunks(
            store, "compact")), 4000)  # compact's wrong stamp and lightrag's stamp


def test_the_migration_counts_what_an_older_workspace_already_holds(tmp_path):
    from docatlas.core.storage.database import SCHEMA_VERSION
    from docatlas.core.storage.migrations import m014_document_counts

    conn = workspace_before(tmp_path / "old.sqlite", m014_document_counts.SQL)  # as it was before that migration
    conn.executemany("INSERT INTO documents(id, path, title, kind, content_hash, size, status, added_at, updated_at)"
                     " VALUES (?, ?, ?, 'txt', ?, 1, 'done', 0, 0)",
                     [(d, f"/d/{d}.txt", str(d), str(d)) for d in (1, 2, 3)])
    conn.executemany("INSERT INTO chunks(id, document_id, idx, text, tokens, status, updated_at)"
                     " VALUES (?, ?, ?, 'text', 1, ?, 0)",
                     [(1, 1, 0, "done"), (2, 1, 1, "failed"), (3, 2, 0, "pending"), (4, 2, 1, "empty")])
    conn.executemany("INSERT INTO chunk_entities(chunk_id, key, name, type, description) VALUES (?, ?, ?, 'x', '')",
                     [(1, "ada", "Ada"), (1, "alan", "Alan"), (2, "ada", "Ada"), (4, "grace", "Grace")])
    conn.commit()
    conn.close()
    with Store(tmp_path / "old.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert document_list.chunk_totals(store) == counted(store)
        assert document_list.chunk_totals(store)[1] == {
            "document_id": 1, "chunks": 2, "done": 1, "failed": 1, "pending": 0, "entities": 2}
        assert document_list.chunk_totals(store)[3]["chunks"] == 0
