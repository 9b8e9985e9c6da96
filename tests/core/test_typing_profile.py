"""The `typing` profile: the model types the names found in the text and links the pairs that
share a sentence; only listed names and pairs come back, so every record is grounded. The
parser on its own, then whole runs over real HTTP against the scripted test server."""

from __future__ import annotations

import json

import pytest
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.ingest.extract import extract_chunk
from docatlas.core.ingest.typing_reply import NOT_A_NAME, candidates_of, read_reply, schema_for
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts.catalog import load_profile
from docatlas.core.storage import health
from docatlas.core.storage.database import Store
from helpers import docatlas, settings_for, write_corpus

TEXT = ("Maria Lopez founded Harbor Analytics in Lisbon. The company builds sensors for ports. "
        "Jonas Weber joined Harbor Analytics after he left Siemens.")
TYPES = ExtractionSettings().entity_types
SHAPES = {"Maria Lopez": "person", "Jonas Weber": "person", "Harbor Analytics": "organization",
          "Lisbon": "location", "Siemens": "organization"}


def typing_model(request: dict) -> str:
    """A scripted typist: types the schema's names by a table, links the pairs it is asked about,
    adds a name that is not in the list, and calls an unknown name "not a name"."""
    schema = request.get("format")
    if not isinstance(schema, dict) or "types" not in schema.get("properties", {}):
        return "Here are the entities you asked for."  # a plain profile gets prose, as from a tiny model
    names = schema["properties"]["types"]["required"]
    pairs = schema["properties"].get("links", {}).get("required", [])
    types = {n: SHAPES.get(n, NOT_A_NAME) for n in names} | {"Felix Mexopolar": "person"}
    links = {p: ("" if "Lisbon" in p else "works with") for p in pairs} | {"Maria Lopez | Felix Mexopolar": "met"}
    return json.dumps({"types": types, "links": links})


def test_the_candidates_are_the_concept_names_and_their_sentence_pairs():
    found = candidates_of(TEXT)
    assert found.names == ("Maria Lopez", "Harbor Analytics", "Lisbon", "Jonas Weber", "Siemens")
    assert ("Maria Lopez", "Harbor Analytics") in found.pairs and ("Jonas Weber", "Siemens") in found.pairs
    assert ("Maria Lopez", "Jonas Weber") not in found.pairs  # two sentences apart
    schema = schema_for(found, TYPES)
    assert schema["properties"]["types"]["required"] == list(found.names)
    assert schema["properties"]["types"]["properties"]["Lisbon"]["enum"] == [*TYPES, NOT_A_NAME]
    assert schema["properties"]["types"]["additionalProperties"] is False  # no names of the model's own


def test_a_keyed_json_reply_keeps_only_listed_names_and_pairs_with_the_texts_sentences():
    found = candidates_of(TEXT)
    reply = json.dumps({"types": {"Maria Lopez": "person", "Harbor Analytics": "Organisation", "Siemens": NOT_A_NAME,
                                  "Bob Invented": "person"},
                        "links": {"Maria Lopez | Harbor Analytics": "founded", "Maria Lopez | Lisbon": "",
                                  "Jonas Weber | Siemens": "left", "Maria Lopez | Jonas Weber": "colleagues"}})
    result = read_reply(reply, found, TEXT, TYPES)
    assert [(e.name, e.type) for e in result.entities] == [("Maria Lopez", "person"),
                                                           ("Harbor Analytics", "organisation")]
    assert result.entities[0].description == "Maria Lopez founded Harbor Analytics in Lisbon."
    # the empty link, the pair from two sentences and the pair with "not a name" are left out
    assert [(r.source, r.target, r.keywords) for r in result.relations] == [
        ("Maria Lopez", "Harbor Analytics", "founded")]
    assert result.relations[0].description == "Maria Lopez founded Harbor Analytics in Lisbon."


def test_lines_lists_and_a_cut_reply_are_read_too():
    found = candidates_of(TEXT)
    lines = "- maria lopez | person\n2. Jonas Weber: person\nJonas Weber | Siemens | left the firm\nBob | person\n"
    result = read_reply(lines, found, TEXT, TYPES)
    assert [e.name for e in result.entities] == ["Maria Lopez", "Jonas Weber"]  # the listed spelling
    assert [(r.source, r.target, r.keywords) for r in result.relations] == [("Jonas Weber", "Siemens", "left the firm")]
    listed = json.dumps({"types": [{"name": "Lisbon", "type": "location"}],
                         "links": [{"source": "Harbor Analytics", "target": "Lisbon", "relation": "based in"}]})
    assert [r.keywords for r in read_reply(listed, found, TEXT, TYPES).relations] == ["based in"]
    cut = '{"types": {"Maria Lopez": "person", "Lisbon": "location", "Jonas We'
    assert [e.name for e in read_reply(cut, found, TEXT, TYPES).entities] == ["Maria Lopez", "Lisbon"]
    assert read_reply("I cannot help with that.", found, TEXT, TYPES).record_count == 0


def test_one_chunk_sends_the_list_and_its_schema_and_every_record_is_grounded(fake_ollama):
    fake_ollama.responder = typing_model
    settings = settings_for(fake_ollama, extraction__profile="typing", extraction__gleaning=0)
    llm = OllamaLLM(settings.ollama)
    try:
        result = extract_chunk(llm, load_profile("typing"), TEXT, settings.extraction)
    finally:
        llm.close()
    body = next(r["body"] for r in fake_ollama.requests if r["path"] == "/api/chat")
    prompt = body["messages"][0]["content"]
    assert "Names:\n- Maria Lopez\n- Harbor Analytics\n- Lisbon\n- Jonas Weber\n- Siemens\n" in prompt
    assert "- Jonas Weber | Siemens" in prompt and TEXT in prompt
    assert body["format"] == schema_for(candidates_of(TEXT), TYPES)
    assert {e.name for e in result.entities} == set(SHAPES)  # Felix Mexopolar, not listed, never came in
    assert {(r.source, r.target) for r in result.relations} == {
        ("Maria Lopez", "Harbor Analytics"), ("Harbor Analytics", "Jonas Weber"), ("Harbor Analytics", "Siemens"),
        ("Jonas Weber", "Siemens")}
    assert result.health.grounded == result.health.found == 9 and result.ungrounded == []


def test_an_ingest_with_the_typing_profile_builds_a_typed_graph(fake_ollama, tmp_path):
    fake_ollama.responder = typing_model
    settings = settings_for(fake_ollama, extraction__profile="typing", ollama__embed_model="")
    docs = write_corpus(tmp_path / "docs", {"harbor.txt": TEXT, "plain.txt": "nothing capitalised here at all."})
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [docs], settings))
        entities = {r["name"]: r["type"] for r in store.query("SELECT name, type FROM entities")}
        relations = store.query("SELECT COUNT(*) AS n FROM relations WHERE layer = 'model'")[0]["n"]
    assert entities == SHAPES and relations == 4
    prompts = [r["body"]["messages"][0]["content"] for r in fake_ollama.requests if r["path"] == "/api/chat"]
    assert len(prompts) == 1 and "nothing capitalised" not in prompts[0]  # a chunk with no name costs no call


def test_auto_falls_back_to_typing_only_when_no_plain_profile_grounds_anything(fake_ollama, monkeypatch, capsys,
                                                                                tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.responder = typing_model
    ws = tmp_path / "ws"
    docs = write_corpus(tmp_path / "d", {"a.txt": TEXT})
    code, out, err = docatlas(capsys, "--data-dir", str(ws), "ingest", str(docs), "--profile", "auto",
                              "--embed-model", "")
    assert code == 0, err
    assert "(profile typing)" in out
    with Store(ws / "docatlas.sqlite") as store:
        assert health.chosen_profile(store, "qwen2.5:7b") == "typing"
        assert {r["name"] for r in store.query("SELECT name FROM entities")} == set(SHAPES)


@pytest.mark.parametrize("profile", ["typing"])
def test_the_cli_offers_the_profile(profile, fake_ollama, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.responder = typing_model
    code, out, err = docatlas(capsys, "--data-dir", str(tmp_path / "ws"), "ingest",
                              str(write_corpus(tmp_path / "d", {"a.txt": TEXT})), "--profile", profile,
                              "--embed-model", "")
    assert code == 0, err
    assert f"(profile {profile})" in out
