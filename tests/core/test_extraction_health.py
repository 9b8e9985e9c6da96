"""Extraction health through ingestion, against the scripted Ollama over real HTTP and a real SQLite file.

Each small-model failure mode in turn: an echoed prompt example, an invented name, a type
outside the list, a reply cut at the limit, a looping reply; and the review of what was held back.
"""

from __future__ import annotations

import pytest
from docatlas.core.base.keys import entity_key
from docatlas.core.ingest.grounding import EXAMPLE, NOT_IN_TEXT
from docatlas.core.jobs.ingest import index
from docatlas.core.jobs.reextract import rederive
from docatlas.core.jobs.review import NoSuchRecord, accept_record
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage import health, ungrounded
from docatlas.core.storage.database import Store
from fixtures.scripted_model import (
    echoing_responder,
    invented_responder,
    looping_responder,
    truth,
    verbose_responder,
)
from helpers import DOCUMENTS, expected_graph, settings_for, write_corpus


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as s:
        yield s


def ingest(store, server, folder, **overrides):
    return list(index(store, [folder], settings_for(server, **overrides)))[-1]


def graph_keys(store) -> set[str]:
    return {r["key"] for r in store.query("SELECT key FROM entities")}


def figures(store) -> list[dict]:
    ids = [r["id"] for r in store.query("SELECT id FROM chunks ORDER BY id")]
    return list(health.chunk_health(store, ids).values())


def test_the_prompts_example_never_enters_the_graph_and_waits_for_review(fake_ollama, store, tmp_path):
    fake_ollama.responder = echoing_responder()
    ingest(store, fake_ollama, write_corpus(tmp_path / "docs"))
    entities, _ = expected_graph()
    assert graph_keys(store) == entities  # the documents' names, and no "Amara Osei"
    held = ungrounded.list_ungrounded(store)
    assert {(r.name, r.reason) for r in held if r.kind == "entity"} == {("Amara Osei", EXAMPLE),
                                                                       ("BlueCurrent", EXAMPLE)}
    assert {r.reason for r in held if r.kind == "relation"} == {EXAMPLE}
    assert len(held) == 3 * len(DOCUMENTS)  # kept per chunk: nothing is thrown away
    assert all(f["ungrounded"] == 3 and f["grounded"] > 0 for f in figures(store))


def test_an_invented_name_and_its_relation_are_held_back(fake_ollama, store, tmp_path):
    fake_ollama.responder = invented_responder("Felix Mexopolar")
    ingest(store, fake_ollama, write_corpus(tmp_path / "docs"))
    assert "felix mexopolar" not in graph_keys(store)
    assert not store.query("SELECT * FROM relations WHERE source_key = 'felix mexopolar' "
                           "OR target_key = 'felix mexopolar'")
    reasons = {(r.kind, r.reason) for r in ungrounded.list_ungrounded(store)}
    assert reasons == {("entity", NOT_IN_TEXT), ("relation", "an end is not in the text")}


def test_accepting_a_held_back_record_adds_it_and_a_rebuild_keeps_it(fake_ollama, store, tmp_path):
    fake_ollama.responder = invented_responder("Felix Mexopolar")
    ingest(store, fake_ollama, write_corpus(tmp_path / "docs"))
    relation = next(r for r in ungrounded.list_ungrounded(store) if r.kind == "relation")
    accept_record(store, relation.id)
    assert {"felix mexopolar", entity_key(relation.target)} <= graph_keys(store)
    assert store.query("SELECT COUNT(*) AS n FROM relations WHERE source_key = 'felix mexopolar' "
                       "OR target_key = 'felix mexopolar'")[0]["n"] == 1
    with pytest.raises(NoSuchRecord):
        accept_record(store, relation.id)  # already accepted

    rederive(store, settings_for(fake_ollama))  # re-parse every cached reply, re-ground, re-merge
    assert "felix mexopolar" in graph_keys(store)
    waiting = ungrounded.list_ungrounded(store)
    assert relation.id not in {r.id for r in waiting}
    assert len(waiting) == 2 * len(DOCUMENTS) - 2  # the other chunks' inventions still wait


def test_a_type_outside_the_list_is_stored_as_the_nearest_allowed_one(fake_ollama, store, tmp_path):
    fake_ollama.responder = echoing_responder("", bad_type="family member of scrooge's")
    ingest(store, fake_ollama, write_corpus(tmp_path / "docs"))
    assert {r["type"] for r in store.query("SELECT type FROM entities")} == {"person"}
    notes = [n for f in figures(store) for n in f["type_notes"]]
    assert notes and {(n["written"], n["stored"]) for n in notes} == {("family member of scrooge's", "person")}
    assert sum(f["remapped"] for f in figures(store)) == len(notes)


def test_a_reply_cut_at_the_limit_is_asked_again_with_more_room_and_never_cached(fake_ollama, store, tmp_path):
    text = "Maria Lopez founded Harbor Analytics in Lisbon. Jonas Weber joined Harbor Analytics."
    folder = write_corpus(tmp_path / "docs", {"one.txt": text})
    fake_ollama.responder = verbose_responder(400)  # a short chunk gets 512 tokens; this reply needs ~900
    ingest(store, fake_ollama, folder, gleaning=0)
    first = [r["body"] for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert [b["options"]["num_predict"] for b in first] == [512, 1024]  # the limit follows the chunk size
    assert [f["reply_tokens"] for f in fake_ollama.fits] == [512, fake_ollama.fits[1]["reply_tokens"]]
    assert fake_ollama.fits[1]["reply_tokens"] < 1024  # the second reply ended by itself
    assert graph_keys(store) == {entity_key(n) for n in truth(text)[0][:-1]}  # all the first pass gives
    [chunk] = figures(store)
    assert (chunk["retries"], chunk["cut"]) == (1, 0)
    assert store.query("SELECT COUNT(*) AS n FROM llm_cache")[0]["n"] == 1  # only the complete reply


def test_a_reply_cut_twice_is_salvaged_and_a_rerun_asks_again(fake_ollama, store, tmp_path):
    text = "Maria Lopez founded Harbor Analytics in Lisbon. Jonas Weber joined Harbor Analytics."
    folder = write_corpus(tmp_path / "docs", {"one.txt": text})
    fake_ollama.responder = verbose_responder(900)  # too long even for twice the room
    ingest(store, fake_ollama, folder, gleaning=0)
    [chunk] = figures(store)
    assert (chunk["retries"], chunk["cut"]) == (1, 1)
    assert entity_key("Maria Lopez") in graph_keys(store)  # the complete records before the cut
    assert store.query("SELECT COUNT(*) AS n FROM llm_cache")[0]["n"] == 0
    rederive(store, settings_for(fake_ollama))  # nothing cached: the records are kept as they are
    assert entity_key("Maria Lopez") in graph_keys(store)


def test_a_looping_reply_is_stopped_while_streaming_and_salvaged(fake_ollama, store, tmp_path):
    fake_ollama.responder = looping_responder(400)
    llm = OllamaLLM(settings_for(fake_ollama).ollama, cache=store)
    try:
        reply = llm.chat([{"role": "user", "content": "Passage:\nMaria Lopez met Jonas Weber.\n\nRecords:"}])
    finally:
        llm.close()
    assert reply.done_reason == "repeat" and reply.cut
    assert reply.text.count("Maria Lopez") < 10  # stopped, and the repeats trimmed: not 400 copies
    assert store.query("SELECT COUNT(*) AS n FROM llm_cache")[0]["n"] == 0

    ingest(store, fake_ollama, write_corpus(tmp_path / "docs"))
    assert graph_keys(store)  # each chunk's first record was salvaged
    assert all(f["cut"] == 1 and f["retries"] == 0 for f in figures(store))  # stopped, not re-asked
    # gleaning ends after a looping reply: one call per chunk
    assert len([r for r in fake_ollama.requests if r["path"] == "/api/chat"]) == 1 + len(DOCUMENTS)


def test_rebuild_grounds_records_stored_before_grounding_existed(fake_ollama, store, tmp_path):
    fake_ollama.responder = echoing_responder("")
    ingest(store, fake_ollama, write_corpus(tmp_path / "docs", {"one.txt": DOCUMENTS["alpha.txt"]}))
    chunk = store.query("SELECT id FROM chunks")[0]["id"]
    with store.transaction() as conn:  # a workspace from before migration 6, its replies not cached
        conn.execute("DELETE FROM chunk_health")
        conn.execute("DELETE FROM llm_cache")
        conn.execute("INSERT INTO chunk_entities(chunk_id, key, name, type, description) "
                     "VALUES (?, 'rosa maretti', 'Rosa Maretti', 'person', 'A chef.')", (chunk,))
    rederive(store, settings_for(fake_ollama))
    assert "rosa maretti" not in graph_keys(store) and entity_key("Maria Lopez") in graph_keys(store)
    assert [(r.name, r.reason) for r in ungrounded.list_ungrounded(store)] == [("Rosa Maretti", EXAMPLE)]
    assert figures(store)[0]["reply_format"] == "stored"
