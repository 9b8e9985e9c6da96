"""Schema migration 2: full-text indexes, embedding queue and version counters kept by triggers."""

from __future__ import annotations

import sqlite3

from docatlas.core.graph.merge import rebuild
from docatlas.core.retrieval import fulltext
from docatlas.core.retrieval.cache import knowledge_version
from docatlas.core.storage.database import MIGRATIONS, SCHEMA_VERSION, Store, _statements
from docatlas.core.storage.migrations.m002_retrieval import RETRIEVAL_SCHEMA
from test_retrieval_helpers import build_graph, open_store


def test_the_migration_splits_into_whole_statements():
    statements = list(_statements(RETRIEVAL_SCHEMA))
    triggers = [s for s in statements if s.startswith("CREATE TRIGGER")]
    assert len(triggers) == 14 and all(t.endswith("END;") for t in triggers)
    assert all(sqlite3.complete_statement(s) for s in statements)


def test_new_workspace_has_the_retrieval_schema(tmp_path):
    with open_store(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 2
        tables = {r["name"] for r in store.query("SELECT name FROM sqlite_master")}
        assert {"entities_fts", "relations_fts", "chunks_fts", "embeddings", "embed_queue",
                "communities", "community_members", "answers"} <= tables
        assert store.get_meta("graph_version") == "0"


def test_triggers_keep_fulltext_queue_and_versions_in_step(tmp_path):
    with open_store(tmp_path) as store:
        before = knowledge_version(store)
        build_graph(store)
        assert knowledge_version(store) != before
        assert fulltext.search_entities(store, ["Lopez"], 5) == ["maria lopez"]
        assert fulltext.search_relations(store, ["supply"], 5) == [("harbor analytics", "northwind labs")]
        assert len(fulltext.search_chunks(store, ["tomatoes"], 5)) == 1
        queued = {r["kind"] for r in store.query("SELECT DISTINCT kind FROM embed_queue")}
        assert queued == {"chunk", "entity", "relation"}

        # a re-merge replaces rows: the full-text index keeps one row per entity
        n_fts = store.query("SELECT COUNT(*) AS n FROM entities_fts")[0]["n"]
        rebuild(store)
        assert store.query("SELECT COUNT(*) AS n FROM entities_fts")[0]["n"] == n_fts == store.counts()["entities"]

        # deleting a document empties its part of the indexes and moves the versions
        version = knowledge_version(store)
        doc = store.find_documents("garden.txt")[0]
        rebuild(store, store.delete_document(doc.id))
        assert fulltext.search_chunks(store, ["tomatoes"], 5) == []
        assert fulltext.search_entities(store, ["basil"], 5) == []
        assert knowledge_version(store) != version


def test_version_one_workspace_is_upgraded_and_backfilled(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.executescript("""
        INSERT INTO documents VALUES (1, '/docs/a.txt', 'a', 'txt', 'h', 1, 'done', NULL, 0, 0);
        INSERT INTO chunks(document_id, idx, text, tokens, status, updated_at)
            VALUES (1, 0, 'Jonas Weber builds tide sensors in Lisbon.', 9, 'done', 0);
        INSERT INTO entities VALUES ('jonas weber', 'Jonas Weber', 'person', 'An engineer.', 1);
        INSERT INTO entities VALUES ('lisbon', 'Lisbon', 'location', 'A city.', 1);
        INSERT INTO relations VALUES ('jonas weber', 'lisbon', 'works in', 'Jonas works in Lisbon.', 1, 1);
        PRAGMA user_version = 1;
    """)
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert fulltext.search_entities(store, ["Jonas"], 5) == ["jonas weber"]
        assert fulltext.search_relations(store, ["works"], 5) == [("jonas weber", "lisbon")]
        assert fulltext.search_chunks(store, ["tide sensors"], 5) == [1]
        kinds = {r["kind"]: r["n"] for r in store.query("SELECT kind, COUNT(*) AS n FROM embed_queue GROUP BY kind")}
        assert kinds == {"chunk": 1, "entity": 2, "relation": 1}


def test_relations_are_read_in_one_statement_with_their_endpoints_names(tmp_path):
    from docatlas.core.storage import context as lookups

    with open_store(tmp_path) as store:
        build_graph(store)
        rows = store.query("SELECT r.source_key, r.target_key, r.keywords, r.description, a.name AS a, b.name AS b "
                           "FROM relations r JOIN entities a ON a.key = r.source_key "
                           "JOIN entities b ON b.key = r.target_key")
        pairs = [(r["source_key"], r["target_key"]) for r in rows]
        assert len(pairs) >= 3
        asked = [*pairs, ("nobody", "nowhere"), pairs[0]] * 150  # over 400 pairs (two reads), repeats
        texts = lookups.relation_texts(store, asked)
        assert set(texts) == set(pairs)  # a pair that is no relation is not there
        for r in rows:
            text = texts[(r["source_key"], r["target_key"])]
            assert (text.source, text.target, text.keywords, text.description) == (
                r["a"], r["b"], r["keywords"], r["description"])
        assert lookups.relation_texts(store, []) == {}
