"""The context of each query mode, and its token budgets (no chat model involved)."""

from __future__ import annotations

import pytest
from docatlas.core.base.settings import QuerySettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.retrieval import vectors
from docatlas.core.retrieval.budget import free_room, split
from docatlas.core.retrieval.context import build_context
from docatlas.core.retrieval.embed import embed_pending
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.retrieval.search import QueryVectors
from fixtures.ollama_server import fake_embedding
from test_retrieval_helpers import build_graph, client, open_store, settings_for

NONE = QueryVectors()
SETTINGS = QuerySettings()


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path) as s:
        yield build_graph(s)


def kw(high=(), low=()) -> Keywords:
    return Keywords(tuple(high), tuple(low))


def names(items) -> list[str]:
    return [getattr(i, "name", None) or f"{i.source}--{i.target}" for i in items]


def test_local_takes_matching_entities_their_relations_and_source_chunks(store):
    ctx = build_context(store, "local", "Who is Maria Lopez?", kw(low=["Maria Lopez"]), NONE, SETTINGS, 4000)
    assert ctx.entities[0].name == "Maria Lopez" and ctx.entities[0].label == "E1"
    assert ("harbor analytics", "maria lopez") in {(r.source_key, r.target_key) for r in ctx.relations}
    assert "Maria Lopez founded Harbor Analytics" in ctx.chunks[0].text
    assert ctx.chunks[0].path == "/docs/harbor.txt" and ctx.chunks[0].label == "C1"
    assert "[E1] Maria Lopez (person): Founder of Harbor Analytics." in ctx.text
    assert all("garden" not in c.path for c in ctx.chunks)


def test_global_takes_matching_relations_their_endpoints_and_chunks(store):
    ctx = build_context(store, "global", "Who supplies whom?", kw(high=["supply contract"]), NONE, SETTINGS, 4000)
    assert (ctx.relations[0].source_key, ctx.relations[0].target_key) == ("harbor analytics", "northwind labs")
    assert {"Harbor Analytics", "Northwind Labs"} <= set(names(ctx.entities))
    assert ctx.chunks[0].path == "/docs/northwind.pdf" and (ctx.chunks[0].page_start, ctx.chunks[0].page_end) == (2, 3)
    assert ", pages 2-3:" in ctx.text


def test_hybrid_holds_both_and_mix_adds_similar_chunks(store):
    keywords = kw(high=["cultivation"], low=["Priya Nair"])
    hybrid = build_context(store, "hybrid", "Priya and gardens", keywords, NONE, SETTINGS, 4000)
    assert {"Priya Nair", "Community Garden"} <= set(names(hybrid.entities))
    mix = build_context(store, "mix", "What grows every summer?", keywords, NONE, SETTINGS, 4000)
    texts = [c.text for c in mix.chunks]
    assert any("every summer" in t for t in texts) and any("Priya Nair" in t for t in texts)


def test_naive_takes_chunks_only_by_text_and_by_vector(fake_ollama, store):
    ctx = build_context(store, "naive", "underwater robots", None, NONE, SETTINGS, 4000)
    assert not ctx.entities and not ctx.relations
    assert "underwater robots" in ctx.chunks[0].text
    # with vectors: the question's embedding equals one chunk's, whatever the words say
    list(embed_pending(store, client(fake_ollama), settings_for(fake_ollama)))
    chunk = "The community garden grows tomatoes and basil every summer."
    query = QueryVectors("nomic-embed-text", question=vectors.unit(fake_embedding(chunk, 16)))
    ctx = build_context(store, "naive", "zzz qqq", None, query, SETTINGS, 4000)
    assert ctx.chunks[0].text == chunk


def test_entity_vectors_find_what_the_words_miss(fake_ollama, store):
    list(embed_pending(store, client(fake_ollama), settings_for(fake_ollama)))
    text = "Oslo: City in Norway where Northwind Labs works."
    query = QueryVectors("nomic-embed-text", low=vectors.unit(fake_embedding(text, 16)))
    ctx = build_context(store, "local", "?", kw(low=["nothing matches this"]), query, SETTINGS, 4000)
    assert ctx.entities[0].name == "Oslo"


def test_nothing_found_is_an_empty_context(store):
    ctx = build_context(store, "mix", "quantum chromodynamics", kw(["physics"], ["quark"]), NONE, SETTINGS, 4000)
    assert ctx.empty and ctx.text == ""


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "naive", "mix"])
@pytest.mark.parametrize("room", [60, 150, 400, 5000])
def test_every_mode_fits_its_room(store, mode, room):
    keywords = kw(["supply contract", "leadership", "cultivation"], ["Harbor Analytics", "Northwind Labs", "Basil"])
    ctx = build_context(store, mode, "Harbor Analytics and Northwind Labs", keywords, NONE, SETTINGS, room)
    assert count_tokens(ctx.text) == ctx.tokens <= room


def test_each_part_keeps_to_its_budget(store):
    settings = QuerySettings(entity_budget=40, relation_budget=30, chunk_budget=500)
    keywords = kw(["supply contract", "leadership"], ["Harbor Analytics", "Northwind Labs", "Maria Lopez"])
    ctx = build_context(store, "hybrid", "Harbor", keywords, NONE, settings, 10_000)
    assert sum(count_tokens(e.line()) + 1 for e in ctx.entities) <= 40
    assert sum(count_tokens(r.line()) + 1 for r in ctx.relations) <= 30
    assert ctx.entities and ctx.relations and ctx.chunks


def test_budgets_shrink_together_and_naive_gives_chunks_everything():
    settings = QuerySettings(entity_budget=1000, relation_budget=1000, chunk_budget=2000)
    assert split(settings, "mix", 10_000).total == 4000
    small = split(settings, "mix", 1000)
    assert small.total <= 1000 and small.chunks == 2 * small.entities
    assert split(settings, "naive", 10_000).entities == 0 and split(settings, "naive", 10_000).chunks == 4000


def test_room_leaves_space_for_overhead_and_reply():
    messages = [{"role": "system", "content": "x " * 100}, {"role": "user", "content": "question"}]
    assert free_room(4096, messages, 1024) < (4096 - 1024) / 1.1 - 100
    assert free_room(512, messages, 400) == 0
