"""The user's prompts are what DocAtlas sends (extraction, summaries, keywords, answers), a changed
extraction prompt dates the chunks it built, and re-extraction gets the unchanged work from the cache."""

from __future__ import annotations

import pytest
from docatlas.core.graph.suggest import confirm_with_model
from docatlas.core.jobs.ingest import index
from docatlas.core.jobs.reextract import requeue_chunks
from docatlas.core.prompts import store as ps
from docatlas.core.prompts.catalog import spec
from docatlas.core.retrieval.answer import ask
from docatlas.core.storage.database import Store
from fixtures.scripted_model import lightrag_responder, responder_for
from helpers import settings_for, write_corpus
from test_retrieval_helpers import Script, build_graph, chat_requests, client, prompt_of

EXTRACT = spec("lightrag/extract").default_text()
MINE = "Be brief in descriptions.\n" + EXTRACT


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "ws" / "docatlas.sqlite") as opened:
        yield opened


def ingest(store, paths, settings):
    return list(index(store, paths, settings))[-1]


def first_prompts(server) -> list[str]:
    return [r["body"]["messages"][0]["content"] for r in server.requests if r["path"] == "/api/chat"]


def test_extraction_uses_the_override_and_stamps_each_chunk(fake_ollama, store, tmp_path):
    fake_ollama.responder = lightrag_responder
    ps.save_prompt(store, "lightrag/extract", MINE, "brief")
    last = ingest(store, [write_corpus(tmp_path / "docs")], settings_for(fake_ollama, extraction__profile="lightrag"))
    assert last.stage == "done" and last.chunks_done == 3
    assert all(p.startswith("Be brief in descriptions.") for p in first_prompts(fake_ollama))
    stamps = {r["prompt_hash"] for r in store.query("SELECT prompt_hash FROM chunks")}
    assert stamps == {ps.fingerprint(ps.profile_for(store, "lightrag"))}
    assert ps.staleness(store, "lightrag") == (0, 3)


def test_a_changed_extraction_prompt_dates_the_graph_until_it_is_extracted_again(fake_ollama, store, tmp_path):
    fake_ollama.responder = lightrag_responder
    settings = settings_for(fake_ollama, extraction__profile="lightrag")
    ingest(store, [write_corpus(tmp_path / "docs")], settings)
    graph = store.counts()
    assert ps.staleness(store, "lightrag") == (0, 3)

    ps.save_prompt(store, "compact/extract", "Other profile: {input_text}")
    assert ps.staleness(store, "lightrag") == (0, 3)  # only the profile in use dates the graph
    ps.save_prompt(store, "lightrag/glean", "Write the missing records, then {completion_delimiter}")
    assert ps.staleness(store, "lightrag") == (3, 3)

    requeue_chunks(store, ps.stale_chunks(store, "lightrag"))
    assert store.counts()["chunks_pending"] == 3 and store.counts()["entities"] == 0
    before = len(first_prompts(fake_ollama))
    last = ingest(store, [], settings)
    assert last.chunks_done == 3 and ps.staleness(store, "lightrag") == (0, 3)
    assert store.counts()["entities"] == graph["entities"]
    # the first pass of each chunk did not change: it came from the cache; only the new gleaning was asked
    assert last.cached_calls == 3 and last.calls == 3
    assert len(first_prompts(fake_ollama)) - before == 3

    ps.reset_prompt(store, "lightrag/glean")  # back to what the first run used: all from the cache
    requeue_chunks(store, ps.stale_chunks(store, "lightrag"))
    last = ingest(store, [], settings)
    assert (last.calls, last.cached_calls, last.chunks_done) == (0, 6, 3)


def test_a_long_description_is_summarised_with_the_users_prompt(fake_ollama, store, tmp_path):
    fake_ollama.responder = responder_for("lightrag", varied=True)  # descriptions differ per chunk
    ps.save_prompt(store, "merge/summarize", "Summarise {entity_name} for me.\nNotes:\n{descriptions}\n")
    settings = settings_for(fake_ollama, extraction__summary_tokens=1)
    ingest(store, [write_corpus(tmp_path / "docs")], settings)
    summaries = [p for p in first_prompts(fake_ollama) if "\nNotes:\n" in p]
    assert summaries and all(p.startswith("Summarise ") for p in summaries)


def test_answers_and_keywords_use_the_users_prompts_and_the_answer_cache_knows(fake_ollama, tmp_path):
    fake_ollama.responder = Script()
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        build_graph(store)
        settings = settings_for(fake_ollama)
        llm = client(fake_ollama, store)
        first = ask(store, llm, "Who founded Harbor Analytics?", settings, mode="naive")
        again = ask(store, llm, "Who founded Harbor Analytics?", settings, mode="naive")
        assert not first.cached and again.cached

        ps.save_prompt(store, "query/answer_naive", "NAIVE RULES.\nConversation:\n{history}\nMaterial:\n{context}")
        ps.save_prompt(store, "query/keywords", "KEYWORDS PLEASE.\nQuestion: {question}")
        history = [{"role": "user", "content": "Hello?"}, {"role": "assistant", "content": "Hi."}]
        changed = ask(store, llm, "Who founded Harbor Analytics?", settings, mode="naive", history=history)
        assert not changed.cached  # a new answer prompt is a new cache version
        request = chat_requests(fake_ollama)[-1]
        system = request["messages"][0]["content"]
        assert system.startswith("NAIVE RULES.") and "User: Hello?\nAssistant: Hi." in system
        assert [m["role"] for m in request["messages"]] == ["system", "user"]  # the history went into {history}

        ask(store, llm, "Who leads Northwind Labs?", settings, mode="local")
        prompts = [prompt_of(r) for r in chat_requests(fake_ollama)]
        assert any(p.startswith("KEYWORDS PLEASE.") for p in prompts)
        local = chat_requests(fake_ollama)[-1]["messages"][0]["content"]
        assert local.startswith("You answer questions")  # local mode kept the bundled answer prompt


def test_merge_checks_use_the_users_same_entity_prompt(fake_ollama, store):
    fake_ollama.responder = lambda request: "NO"
    build_graph(store)
    store.conn.execute("INSERT INTO merge_suggestions(a_key, b_key, a_name, b_name, score, reason, created_at) "
                       "VALUES ('harbor analytics', 'northwind labs', 'Harbor Analytics', 'Northwind Labs', "
                       "0.9, 'test', 0)")
    ps.save_prompt(store, "merge/same_entity", "SAME THING?\n{first}\n{second}\nYES or NO.")
    counts = confirm_with_model(store, client(fake_ollama, store))
    assert counts["rejected"] == 1
    assert prompt_of(chat_requests(fake_ollama)[-1]).startswith("SAME THING?")
