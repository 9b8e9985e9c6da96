"""The concept layer: names found in the text without a model, linked by their sentence, in the graph
as soon as a file is stored, and replaced by the model's records chunk by chunk.

The finder on plain strings; the layer through a real ingest into a real SQLite file, against
FakeOllama over real HTTP (first with a model that is not pulled, then with one that is).
"""

from __future__ import annotations

import pytest
from docatlas.core.base.concepts import SAME_SENTENCE, find_concepts
from docatlas.core.base.errors import ModelNotFound
from docatlas.core.graph.export import graph_data
from docatlas.core.jobs.ingest import index
from docatlas.core.storage.database import Store
from fixtures.scripted_model import responder_for
from helpers import DOCUMENTS, settings_for, write_corpus


def test_names_are_capitalised_runs_without_the_words_that_only_start_a_sentence():
    found = find_concepts("Later, Maria Lopez met Priya Nair in Lisbon. The Bank of England and NATO met there. "
                          "Reports said nothing. Then Scrooge's clerk Bob Cratchit wrote to the Bank of the West. "
                          "I'll go, said Johnson & Johnson.")
    assert set(found.names.values()) == {"Maria Lopez", "Priya Nair", "Lisbon", "Bank of England", "NATO",
                                         "Scrooge", "Bob Cratchit", "Bank of the West", "Johnson & Johnson"}
    assert found.names["bank of england"] == "Bank of England"  # keyed like the model's entities


def test_names_in_one_sentence_are_linked_once_per_sentence():
    found = find_concepts("Maria Lopez met Priya Nair. Priya Nair thanked Maria Lopez in Lisbon.")
    assert found.links == {("maria lopez", "priya nair"): 2, ("lisbon", "maria lopez"): 1,
                           ("lisbon", "priya nair"): 1}


def test_a_line_break_or_a_comma_ends_a_name_and_text_without_capitals_has_none():
    assert set(find_concepts("Harbor Analytics\nNorthwind Labs, Tomas Berg.").names.values()) == {
        "Harbor Analytics", "Northwind Labs", "Tomas Berg"}
    assert find_concepts("東京で会議があった。no capitals here at all.").names == {}


def layers(store: Store) -> tuple[dict[str, str], dict[frozenset, dict]]:
    data = graph_data(store)
    return ({e["name"]: e["layer"] for e in data["entities"]},
            {frozenset((r["source"], r["target"])): r for r in data["relations"]})


def test_a_model_that_is_not_pulled_still_leaves_a_graph_of_names_and_the_model_replaces_it(fake_ollama, tmp_path):
    fake_ollama.responder = responder_for("lightrag")
    docs = write_corpus(tmp_path / "docs", {**DOCUMENTS, "zeta.txt": "Zara Quill met Otto Brand in Kyoto."})
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        with pytest.raises(ModelNotFound):
            list(index(store, [docs], settings_for(fake_ollama, ollama__model="absent:1b")))
        entities, relations = layers(store)
        assert {"Maria Lopez", "Harbor Analytics", "Zara Quill", "Otto Brand", "Kyoto"} <= set(entities)
        assert set(entities.values()) == {"concept"}
        link = relations[frozenset(("Zara Quill", "Otto Brand"))]
        assert link["layer"] == "concept" and link["keywords"] == SAME_SENTENCE
        assert link["sources"][0].endswith("zeta.txt")  # a concept link is cited like any other

        list(index(store, [docs], settings_for(fake_ollama)))  # the model is there now: it reads every chunk
        entities, relations = layers(store)
        assert entities["Maria Lopez"] == entities["Zara Quill"] == "model"
        assert set(entities.values()) == {"model"}  # names the model did not give (Lisbon, Kyoto) are gone
        assert "Lisbon" not in entities
        assert all(r["layer"] == "model" and r["keywords"] != SAME_SENTENCE for r in relations.values())
        counts = store.query("SELECT layer, COUNT(*) AS n FROM chunk_entities GROUP BY layer")
        assert [c["layer"] for c in counts] == ["model"]
