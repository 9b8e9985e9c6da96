"""Answers on the known-facts corpus: the generator's truth, count and list questions counted
in the graph, and questions the documents cannot answer ("not in your documents", no references)."""

from __future__ import annotations

import re

import pytest
from docatlas.core.base.settings import QuerySettings
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.retrieval.aggregate import family_of, intent, stem
from docatlas.core.retrieval.answer import ask
from docatlas.core.retrieval.keywords import Keywords
from docatlas.core.retrieval.retrieve import retrieve
from docatlas.core.retrieval.search import QueryVectors
from docatlas.core.storage.database import Store
from fixtures.fact_model import ANSWER_MARK, fact_responder
from fixtures.known_facts import build
from helpers import settings_for, write_corpus
from test_retrieval_helpers import build_graph, open_store

CORPUS = build(seed=3, documents=30, groups=2)


def test_every_fact_is_stated_in_its_own_document_and_the_questions_follow_the_facts():
    assert build(seed=3, documents=30, groups=2).documents == CORPUS.documents  # the seed decides everything
    for fact in CORPUS.facts:
        assert fact.sentence() in CORPUS.documents[fact.document]
    kinds = [q.kind for q in CORPUS.questions]
    assert kinds.count("absent") == 4 and {"single", "multihop", "count", "list"} <= set(kinds)
    for q in CORPUS.questions:
        if q.kind == "multihop":
            met, funded = q.facts
            assert met.verb == "met" and funded.verb == "funded" and funded.object == met.object
            assert met.document != funded.document and met.subject not in CORPUS.documents[funded.document]
            assert q.answers == (funded.subject,)
        elif q.kind == "count":
            assert q.count == len(q.facts) == len(set(q.answers)) >= 3
            assert len(q.documents) == q.count and all(f.verb == "worked with" for f in q.facts)
        elif q.kind == "list":
            assert set(q.answers) == {f.subject for f in q.facts} and all(f.verb == "visited" for f in q.facts)
        elif q.kind == "absent":
            assert not q.answers and not q.facts
            asked = re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", q.text)[0]
            stated = [f for f in CORPUS.facts if f.subject == asked and f.verb == "visited"]
            assert not stated and (q.text.startswith("Which place") or
                                   not any(asked in t for t in CORPUS.documents.values()))


@pytest.fixture
def workspace(fake_ollama, tmp_path):
    fake_ollama.responder = fact_responder
    settings = settings_for(fake_ollama, ollama__embed_model="")
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        list(index(store, [write_corpus(tmp_path / "docs", CORPUS.documents)], settings))
        llm = OllamaLLM(settings.ollama, cache=store)
        fake_ollama.requests.clear()
        yield store, llm, settings, fake_ollama
        llm.close()


def answer_calls(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"
            and ANSWER_MARK in str(r["body"]["messages"][0]["content"])]


def question(kind: str):
    return next(q for q in CORPUS.questions if q.kind == kind)


@pytest.mark.parametrize("mode", ["local", "mix"])
def test_a_count_question_is_counted_in_the_graph_and_says_how(workspace, mode):
    store, llm, settings, server = workspace
    q = question("count")
    answer = ask(store, llm, q.text, settings, mode=mode)
    assert answer.computed == "count" and answer_calls(server) == []  # no model wrote it
    assert answer.answer.startswith(f"{q.count} organizations: ")
    assert all(name in answer.answer for name in q.answers)
    assert "How this was computed: counted in the knowledge graph" in answer.answer
    assert {r.document.rsplit("/", 1)[-1] for r in answer.references if r.cited} == set(q.documents)
    assert answer.to_json()["computed"] == "count"


def test_a_list_question_lists_every_match_and_nothing_else(workspace):
    store, llm, settings, _ = workspace
    q = question("list")
    answer = ask(store, llm, q.text, settings, mode="hybrid")
    listed = re.findall(r"([A-Z][a-z]+ [A-Z][a-z]+) \[R\d+\]", answer.answer)
    assert answer.computed == "list" and sorted(listed) == sorted(q.answers)


def test_naive_mode_leaves_counting_to_the_model(workspace):
    store, llm, settings, server = workspace
    answer = ask(store, llm, question("count").text, settings, mode="naive")
    assert answer.computed == "" and len(answer_calls(server)) == 1


@pytest.mark.parametrize("mode", ["naive", "local", "mix", "community"])
def test_a_name_the_documents_never_mention_is_not_in_them_without_a_model_call(workspace, mode):
    store, llm, settings, server = workspace
    q = next(q for q in CORPUS.questions if q.kind == "absent" and q.text.startswith("Whom"))
    answer = ask(store, llm, q.text, settings, mode=mode)
    name = re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", q.text)[0]
    assert answer.answer == f'This is not in your documents: none of them mentions "{name}".'
    assert answer.references == () and answer.computed == "absent"
    assert [r for r in server.requests if r["path"] in ("/api/chat", "/api/embed")] == []


def test_a_model_that_finds_no_answer_in_the_material_shows_no_references(workspace):
    store, llm, settings, server = workspace
    q = next(q for q in CORPUS.questions if q.kind == "absent" and q.text.startswith("Which place"))
    answer = ask(store, llm, q.text, settings, mode="local")
    assert answer.answer == "This is not in your documents." and answer.references == ()
    assert not answer.context.empty and len(answer_calls(server)) == 1  # the model read a context and declined
    cited = ask(store, llm, question("single").text, settings, mode="local")
    assert cited.references and any(r.cited for r in cited.references)  # an answer keeps its sources


@pytest.mark.parametrize("mode", ["local", "mix"])
def test_a_two_hop_answer_cites_the_documents_of_both_facts(workspace, mode):
    store, llm, settings, _ = workspace
    for q in (q for q in CORPUS.questions if q.kind == "multihop"):
        answer = ask(store, llm, q.text, settings, mode=mode)
        assert q.answers[0] in answer.answer
        cited = {r.document.rsplit("/", 1)[-1] for r in answer.references if r.cited}
        assert set(q.documents) <= cited, q.text  # "met" in one document, "funded" in another
        for item in (*answer.context.entities, *answer.context.relations):
            assert item.chunk_ids, item  # every graph line of the context leads back to its chunks


def test_the_question_words_behind_the_count():
    assert [stem(w) for w in ("visited", "visits", "funded", "worked", "met", "meeting")] == [
        "visit", "visit", "fund", "work", "meet", "meet"]
    assert (intent("How many firms did she hire?"), intent("List everyone who met Ana Lobo."),
            intent("Who met Ana Lobo?")) == ("count", "list", None)
    assert (intent("What does Tomas Berg audit every year?"), intent("Show all the firms that hired Ana Lobo."),
            intent("Name the people Ana Lobo met.")) == (None, "list", "list")
    assert [family_of(w) for w in ("organisations", "ORGANIZATION", "people", "cities", "sensor")] == [
        "organization", "organization", "person", "location", None]



def test_local_mode_follows_a_second_hop_that_matches_the_question(tmp_path):
    with open_store(tmp_path) as store:
        build_graph(store)
        kw = Keywords(("supply contract",), ("Maria Lopez",))
        found = retrieve(store, "local", "Who buys from the company Maria Lopez founded?", kw, QueryVectors(),
                         QuerySettings())
        first_hop = ("harbor analytics", "maria lopez")
        second_hop = tuple(sorted(("northwind labs", "harbor analytics")))
        assert first_hop in found.relations and second_hop in found.relations
        assert found.relations.index(first_hop) < found.relations.index(second_hop)
        assert "northwind labs" in found.entities and found.sources[second_hop]  # its excerpt can be cited
        unrelated = retrieve(store, "local", "Who is Maria Lopez?", Keywords(("gardening",), ("Maria Lopez",)),
                             QueryVectors(), QuerySettings())
        assert second_hop not in unrelated.relations  # only neighbours' relations about the question


def test_the_question_names_lead_the_model_keywords():
    from docatlas.core.retrieval.keywords import with_question_names

    garbled = Keywords(("funding",), ("Voss", "person met"))
    kept = with_question_names(garbled, "Who funded the person Ardel Voss met?")
    assert kept.low_level == ("Ardel Voss", "Voss", "person met") and kept.high_level == ("funding",)
    assert with_question_names(garbled, "Did Ardel Voss meet Port Lis?").low_level[:2] == ("Ardel Voss", "Port Lis")
