"""Every extraction profile end to end: the pipeline, the fake Ollama over real HTTP, SQLite.

Recall is measured against the scripted model's truth; the compact profile must keep it
while sending at most half the prompt tokens of lightrag (counted with tiktoken)."""

from __future__ import annotations

import pytest
from docatlas.core.base.tokens import count_tokens
from docatlas.core.jobs.ingest import index
from docatlas.core.prompts.catalog import load_profile
from docatlas.core.storage.database import Store
from fixtures.scripted_model import PROFILES, detect_profile, responder_for, scripted_responder
from helpers import expected_graph, settings_for, write_corpus


def ingest(server, tmp_path, profile: str, **overrides) -> tuple[Store, object]:
    store = Store(tmp_path / profile / "docatlas.sqlite")
    corpus = write_corpus(tmp_path / "docs")
    events = list(index(store, [corpus], settings_for(server, profile=profile, **overrides)))
    return store, events[-1]


def chats(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"]


def prompt_tokens(body: dict) -> int:
    return sum(count_tokens(m["content"]) for m in body["messages"])


@pytest.mark.parametrize("profile", PROFILES)
def test_each_profile_gives_the_whole_graph(fake_ollama, tmp_path, profile):
    fake_ollama.responder = responder_for(profile)
    store, last = ingest(fake_ollama, tmp_path, profile)
    with store:
        entities, pairs = expected_graph()
        assert {r["key"] for r in store.query("SELECT key FROM entities")} == entities
        edges = {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")}
        assert edges == pairs
        assert {r["profile"] for r in store.query("SELECT profile FROM chunks")} == {profile}
    assert last.chunks_done == 3 and last.calls == 6  # first pass and one gleaning round per chunk
    schema = load_profile(profile).json_schema
    assert all(body.get("format") == schema for body in chats(fake_ollama))


@pytest.mark.parametrize("profile", PROFILES)
def test_the_scripted_model_tells_the_profile_from_the_request(fake_ollama, tmp_path, profile):
    fake_ollama.responder = scripted_responder
    ingest(fake_ollama, tmp_path, profile)
    assert {detect_profile(body) for body in chats(fake_ollama)} == {profile}


def test_compact_sends_at_most_half_the_prompt_tokens_of_lightrag_without_losing_recall(fake_ollama, tmp_path):
    fake_ollama.responder = scripted_responder
    spent: dict[str, dict[str, int]] = {}
    graphs = {}
    for profile in ("lightrag", "compact"):
        fake_ollama.requests.clear()
        store, _ = ingest(fake_ollama, tmp_path, profile)
        with store:
            graphs[profile] = ({r["key"] for r in store.query("SELECT key FROM entities")},
                               {(r["source_key"], r["target_key"]) for r in store.query("SELECT * FROM relations")})
        bodies = chats(fake_ollama)
        spent[profile] = {
            "first": sum(prompt_tokens(b) for b in bodies if len(b["messages"]) == 1),
            "glean": sum(prompt_tokens(b) for b in bodies if len(b["messages"]) > 1),
        }
    assert graphs["compact"] == graphs["lightrag"]
    entities, pairs = expected_graph()
    assert graphs["compact"][0] == entities and {frozenset(p) for p in graphs["compact"][1]} == pairs
    # the first pass alone, and everything a chunk sends (the gleaning turn resends the
    # conversation, the model's own reply included)
    assert 2 * spent["compact"]["first"] <= spent["lightrag"]["first"], spent
    assert 2 * sum(spent["compact"].values()) <= sum(spent["lightrag"].values()), spent


def test_entity_types_and_language_reach_every_profile(fake_ollama, tmp_path):
    fake_ollama.responder = scripted_responder
    for profile in PROFILES:
        fake_ollama.requests.clear()
        ingest(fake_ollama, tmp_path, profile, entity_types=("scientist", "lab"), language="Portuguese")
        first = chats(fake_ollama)[0]["messages"][0]["content"]
        assert "scientist, lab" in first and "Portuguese" in first and "person, organization" not in first


@pytest.mark.parametrize(("asked", "answered"), list(zip(PROFILES, PROFILES[1:] + PROFILES[:1])))
def test_a_model_drifting_into_another_format_still_gives_the_whole_graph(fake_ollama, tmp_path, asked, answered):
    fake_ollama.responder = responder_for(answered)
    store, _ = ingest(fake_ollama, tmp_path, asked)
    with store:
        entities, pairs = expected_graph()
        assert {r["key"] for r in store.query("SELECT key FROM entities")} == entities
        assert {frozenset((r["source_key"], r["target_key"])) for r in store.query("SELECT * FROM relations")} == pairs


def test_lean_gives_the_same_graph_for_a_fraction_of_the_reply_tokens_with_the_texts_sentences(fake_ollama, tmp_path):
    scripted = responder_for(varied=True)  # descriptions quote the text, as a model's would
    said: list[str] = []

    def respond(request: dict) -> str:
        said.append(scripted(request))
        return said[-1]

    fake_ollama.responder = respond
    replies: dict[str, int] = {}
    graphs = {}
    for profile in ("lightrag", "lean"):
        said.clear()
        store, _ = ingest(fake_ollama, tmp_path, profile)
        with store:
            graphs[profile] = ({r["key"] for r in store.query("SELECT key FROM entities")},
                               {(r["source_key"], r["target_key"]) for r in store.query("SELECT * FROM relations")})
            if profile == "lean":
                texts = " ".join(r["text"] for r in store.query("SELECT text FROM chunks"))
                described = store.query("SELECT name, description FROM entities")
                keywords = {r["keywords"] for r in store.query("SELECT keywords FROM relations")}
        replies[profile] = sum(count_tokens(reply) for reply in said)
    assert graphs["lean"] == graphs["lightrag"]
    assert replies["lean"] * 5 <= replies["lightrag"] * 3, replies  # 353 against 685 tokens here
    # no description came from the model: each line is a sentence of the documents naming the entity
    flat = " ".join(texts.split())
    assert described and all(r["name"] in line and line in flat
                             for r in described for line in r["description"].splitlines()), described
    assert keywords == {"co-occurrence"}
