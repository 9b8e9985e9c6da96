"""Mentions located without a model: every entity mention's text is a name its record gives,
every relation mention is a sentence naming both ends; `rebuild` re-derives them; the JSON
export gives each entity and relation its mentions (document, page, quote)."""

from __future__ import annotations

import json

import pytest
from docatlas.cli import main
from docatlas.core.base import paths
from docatlas.core.base.mentions import mention_spans, sentences_naming
from docatlas.core.base.sentences import sentence_spans
from docatlas.core.storage.database import Store
from fixtures.scripted_model import responder_for
from helpers import write_corpus


@pytest.fixture
def workspace(fake_ollama, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.responder = responder_for(None)
    ws = str(tmp_path / "ws")
    assert main(["--data-dir", ws, "ingest", str(write_corpus(tmp_path / "docs"))]) == 0
    capsys.readouterr()
    return ws


def open_store(ws: str) -> Store:
    return Store(paths.database_path(paths.data_dir(ws)))


def mention_rows(store: Store) -> list[dict]:
    """Every mention with its record's keys and its chunk's text."""
    return store.query(
        "SELECT m.chunk_id, m.start, m.end, c.text, COALESCE(e.key, r.source_key) AS key,"
        " COALESCE(r.target_key, '') AS target_key FROM chunk_mentions m JOIN chunks c ON c.id = m.chunk_id"
        " LEFT JOIN chunk_entities e ON m.kind = 'entity' AND e.rowid = m.record"
        " LEFT JOIN chunk_relations r ON m.kind = 'relation' AND r.rowid = m.record"
        " ORDER BY m.chunk_id, key, target_key, m.start")


def test_every_mention_names_its_entity_or_both_ends(workspace):
    with open_store(workspace) as store:
        rows = mention_rows(store)
        names = {(r["chunk_id"], r["key"]): set() for r in store.query("SELECT chunk_id, key FROM chunk_entities")}
        for r in store.query("SELECT chunk_id, key, name FROM chunk_entities"):
            names[(r["chunk_id"], r["key"])].add(r["name"].casefold())
        ends = {(r["chunk_id"], r["source_key"], r["target_key"]): (r["source"], r["target"])
                for r in store.query("SELECT * FROM chunk_relations")}
    entity_rows = [r for r in rows if not r["target_key"]]
    relation_rows = [r for r in rows if r["target_key"]]
    assert entity_rows and relation_rows
    for r in entity_rows:
        assert r["text"][r["start"]:r["end"]].casefold() in names[(r["chunk_id"], r["key"])]
    for r in relation_rows:
        sentence = r["text"][r["start"]:r["end"]]
        assert (r["start"], r["end"]) in sentence_spans(r["text"])
        source, target = ends[(r["chunk_id"], r["key"], r["target_key"])]
        assert mention_spans(sentence, [source]) and mention_spans(sentence, [target])


def test_rebuild_derives_the_mentions_again(workspace, capsys):
    with open_store(workspace) as store:
        before = mention_rows(store)
        with store.transaction() as conn:
            conn.execute("DELETE FROM chunk_mentions")
    assert main(["--data-dir", workspace, "rebuild"]) == 0
    with open_store(workspace) as store:
        assert mention_rows(store) == before


def test_the_json_export_quotes_each_mention(workspace, capsys, tmp_path):
    out = tmp_path / "graph.json"
    assert main(["--data-dir", workspace, "export", "--format", "json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    with open_store(workspace) as store:
        texts = [r["text"] for r in store.query("SELECT text FROM chunks")]
    quoted = [e for e in data["entities"] if e["mentions"]]
    assert quoted and all({"document", "page", "quote"} <= set(m) for e in quoted for m in e["mentions"])
    for entity in quoted:
        for mention in entity["mentions"]:
            assert any(mention["quote"] in text for text in texts)
            assert mention_spans(mention["quote"], [entity["name"]]) or entity.get("aliases")
    assert any(r["mentions"] for r in data["relations"])
    assert all("mentions" in r for r in data["relations"])


def test_a_name_inside_a_longer_word_is_no_mention():
    text = "Ada's notes. Adams wrote. ada lovelace met Grace."
    assert [text[s:e] for s, e in mention_spans(text, ["Ada"])] == ["Ada", "ada"]
    assert [text[s:e] for s, e in sentences_naming(text, ["Ada"], ["Grace"])] == ["ada lovelace met Grace."]
