"""The workspace database: schema versions, WAL, concurrent opening, friendly failures."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from docatlas.core.base.errors import StoreError
from docatlas.core.base.records import EntityRecord
from docatlas.core.storage.database import SCHEMA_VERSION, NewChunk, Store


def test_new_file_is_migrated_to_the_current_schema_in_wal_mode(tmp_path):
    with Store(tmp_path / "a.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with Store(tmp_path / "a.sqlite") as store:  # opening again changes nothing
        assert store.schema_version == SCHEMA_VERSION


def test_many_openers_at_once_migrate_exactly_once(tmp_path):
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            Store(tmp_path / "race.sqlite").close()
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_newer_schema_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "new.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer DocAtlas"):
        Store(path)


def test_a_damaged_file_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="damaged"):
        Store(path)


def test_a_failed_transaction_leaves_nothing_behind(tmp_path):
    with Store(tmp_path / "t.sqlite") as store:
        doc_id, _ = store.put_document(path="/x.txt", title="x", kind="txt", content_hash="h", size=1,
                                       chunks=[NewChunk("Ada met Alan.", 4, None, None)])
        chunk = store.work_chunks()[0]
        with pytest.raises(RuntimeError), store.transaction() as conn:
            conn.execute("UPDATE chunks SET status = 'done' WHERE id = ?", (chunk.id,))
            raise RuntimeError("killed half-way")
        assert store.work_chunks()[0].status == "pending"
        store.finish_chunk(chunk.id, [EntityRecord("Ada", "person", "A mathematician.")], [],
                           status="done", profile="lightrag", model="m", calls=1, keys=["ada"], relation_keys=[])
        assert store.work_chunks() == [] and store.chunk_counts(doc_id) == {"done": 1}


def test_replacing_a_document_reports_the_keys_it_supported(tmp_path):
    with Store(tmp_path / "r.sqlite") as store:
        store.put_document(path="/x.txt", title="x", kind="txt", content_hash="h1", size=1,
                           chunks=[NewChunk("Ada met Alan.", 4, None, None)])
        chunk = store.work_chunks()[0]
        store.finish_chunk(chunk.id, [EntityRecord("Ada", "person", "d")], [], status="done",
                           profile="lightrag", model="m", calls=1, keys=["ada"], relation_keys=[])
        _, touched = store.put_document(path="/x.txt", title="x", kind="txt", content_hash="h2", size=1,
                                        chunks=[NewChunk("Grace.", 2, None, None)])
        assert touched == {"ada"}
        assert [c.text for c in store.work_chunks()] == ["Grace."]
        assert store.query("SELECT COUNT(*) AS n FROM chunk_entities")[0]["n"] == 0


def test_a_workspace_whose_explorer_made_its_own_tables_still_migrates(tmp_path):
    """Before migration 5 the graph explorer created its tables on first use."""
    path = tmp_path / "v4.sqlite"
    with Store(path) as store:
        store.conn.execute("PRAGMA user_version = 4")
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE graph_layout")
    conn.execute("INSERT INTO graph_overrides(kind, key, value, created_at) VALUES ('rename', 'ada', '{}', 0)")
    conn.commit()
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.query("SELECT key FROM graph_overrides") == [{"key": "ada"}]
        assert store.query("SELECT COUNT(*) AS n FROM graph_layout") == [{"n": 0}]
