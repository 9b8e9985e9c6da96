"""Long merged descriptions are summarised by the model: one call per entity, past the
threshold only, cached, and never again when the graph is re-derived."""

from __future__ import annotations

import random
import re

import pytest
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.base.settings import ExtractionSettings, save_settings
from docatlas.core.graph.merge import rebuild
from docatlas.core.graph.summarize import ModelSummarizer, clean_summary, summary_messages
from docatlas.core.jobs.ingest import index, remove_document
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.replay import ReplayLLM
from docatlas.core.storage.database import Store
from fixtures.scripted_model import SUMMARY_MARK, responder_for
from helpers import settings_for, write_corpus

# Entities the test corpus names in more than one document: two or more distinct descriptions.
SHARED = {"Harbor Analytics", "Priya Nair", "Jonas Weber", "Tomas Berg"}


def summary_requests(server) -> list[str]:
    prompts = [r["body"]["messages"][0]["content"] for r in server.requests if r["path"] == "/api/chat"]
    return [p for p in prompts if SUMMARY_MARK in p]


def subject(prompt: str) -> str:
    return re.search(r"all describe (.+?);", prompt).group(1)


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = responder_for("lightrag", varied=True)
    return fake_ollama


@pytest.fixture
def ingested(model, tmp_path):
    settings = settings_for(model, summary_tokens=20)
    store = Store(tmp_path / "ws" / "docatlas.sqlite")
    list(index(store, [write_corpus(tmp_path / "docs")], settings))
    yield store, settings
    store.close()


def test_past_the_threshold_each_entity_gets_one_summary_call(model, ingested):
    store, _ = ingested
    asked = summary_requests(model)
    assert sorted(subject(p) for p in asked) == sorted(SHARED)  # one call per entity, no more
    descriptions = {r["name"]: r["description"] for r in store.query("SELECT name, description FROM entities")}
    assert all(descriptions[name].startswith("Summary of ") for name in SHARED)
    assert not any(descriptions[name].startswith("Summary") for name in set(descriptions) - SHARED)
    # the prompt lists the distinct descriptions, one per line
    harbor = next(p for p in asked if subject(p) == "Harbor Analytics")
    assert harbor.count("\n- Harbor Analytics is named where") == 3


def test_rederiving_the_graph_asks_nothing_again(model, ingested):
    store, settings = ingested
    before = len(model.requests)
    graph = store.query("SELECT * FROM entities ORDER BY key")
    summarize = ModelSummarizer(OllamaLLM(settings.ollama, cache=store), settings.extraction)
    rebuild(store, None, summarize)
    assert (summarize.calls, summarize.cached) == (0, len(SHARED))
    assert len(model.requests) == before
    assert store.query("SELECT * FROM entities ORDER BY key") == graph
    # cache-only, as `docatlas rebuild` runs: the same summaries, still no request
    offline = ModelSummarizer(ReplayLLM(settings.ollama, store), settings.extraction)
    with store.transaction() as conn:
        conn.execute("DELETE FROM entities")
    rebuild(store, None, offline)
    assert offline.cached == len(SHARED) and offline.skipped == 0
    assert store.query("SELECT * FROM entities ORDER BY key") == graph
    assert len(model.requests) == before


def test_the_cli_rebuild_uses_the_cached_summaries(model, ingested, capsys, monkeypatch):
    store, settings = ingested
    save_settings(settings, paths.settings_path())  # the threshold the ingest ran with
    graph = store.query("SELECT * FROM entities ORDER BY key")
    before = len(model.requests)
    monkeypatch.setenv("OLLAMA_HOST", model.host)
    code = main(["--data-dir", str(store.path.parent), "rebuild"])
    out = capsys.readouterr().out
    assert code == 0 and "Re-derived the graph from 3 chunks (3 re-read" in out
    assert f"{len(SHARED)} summaries from the cache, 0 written by the model" in out
    assert len(model.requests) == before
    assert store.query("SELECT * FROM entities ORDER BY key") == graph


def test_only_entities_whose_descriptions_changed_are_summarised_again(model, ingested):
    store, settings = ingested
    before = len(summary_requests(model))
    gamma = next(d for d in store.documents() if d.path.endswith("gamma.txt"))
    summarize = ModelSummarizer(OllamaLLM(settings.ollama, cache=store), settings.extraction)
    remove_document(store, gamma.id, summarize)
    new = summary_requests(model)[before:]
    # Harbor Analytics lost one of three descriptions; Jonas Weber and Tomas Berg have one left
    assert [subject(p) for p in new] == ["Harbor Analytics"]
    rows = {r["name"]: r["description"] for r in store.query("SELECT name, description FROM entities")}
    assert rows["Jonas Weber"].startswith("Jonas Weber is named where")


def test_short_descriptions_are_joined_without_a_call(model, tmp_path):
    settings = settings_for(model)  # the default threshold, 500 tokens
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [write_corpus(tmp_path / "docs")], settings))
        harbor = store.query("SELECT description FROM entities WHERE key = 'harbor analytics'")[0]["description"]
    assert summary_requests(model) == [] and harbor.count("\n") == 2


def test_the_same_set_of_descriptions_gives_the_same_prompt():
    settings = ExtractionSettings()
    texts = [f"Fact number {i} about the harbour." for i in range(6)]
    shuffled = texts[:]
    random.Random(7).shuffle(shuffled)
    assert summary_messages("Harbor", texts, settings) == summary_messages("Harbor", shuffled, settings)
    assert summary_messages("Harbor", texts, settings) != summary_messages("Harbor", texts[:5], settings)


def test_a_failed_summary_falls_back_to_joining(model, tmp_path):
    settings = settings_for(model, summary_tokens=20)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [write_corpus(tmp_path / "docs")], settings_for(model)))  # joined, no summaries
        model.stop()  # Ollama goes away
        summarize = ModelSummarizer(OllamaLLM(settings.ollama, cache=store), settings.extraction)
        rebuild(store, None, summarize)
        harbor = store.query("SELECT description FROM entities WHERE key = 'harbor analytics'")[0]["description"]
    assert harbor.count("\n") == 2  # the three descriptions, joined
    # one failure (after its retries) stops further attempts in the run
    assert summarize.calls == 0 and summarize.skipped == len(SHARED)


def test_summary_replies_are_cleaned():
    assert clean_summary('Description: "A firm in Lisbon."\n') == "A firm in Lisbon."
    assert clean_summary("**Summary:** Two notes agree.") == "Two notes agree."
