"""`ask` end to end against the fake Ollama: streaming, every mode, references, history,
the answer cache and its invalidation, no context, no embedding model, Ollama failing."""

from __future__ import annotations

import threading

import pytest
from docatlas.core.base.errors import Cancelled, LLMError
from docatlas.core.base.tokens import count_tokens
from docatlas.core.graph.merge import rebuild
from docatlas.core.retrieval.answer import NO_CONTEXT_ANSWER, QueryError, ask
from docatlas.core.retrieval.embed import embed_pending
from test_retrieval_helpers import (
    ANSWER,
    CORPUS,
    Script,
    add_document,
    build_graph,
    chat_requests,
    client,
    embed_requests,
    open_store,
    settings_for,
)

QUESTION = "What did Maria Lopez found?"


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = Script()
    return fake_ollama


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path) as s:
        yield build_graph(s)


def embedded(store, server):
    list(embed_pending(store, client(server), settings_for(server)))
    return store


def answer_requests(server) -> list[dict]:
    return [b for b in chat_requests(server) if not b.get("format")]


def test_answer_streams_and_cites_its_sources(model, store):
    embedded(store, model)
    tokens: list[str] = []
    answer = ask(store, client(model, store), QUESTION, settings_for(model), mode="local", on_token=tokens.append)
    assert "".join(tokens) == answer.answer == ANSWER and len(tokens) > 3
    assert answer.mode == "local" and not answer.cached and answer.warnings == ()
    assert answer.keywords.low_level == ("Maria Lopez",)
    first = answer.references[0]
    assert (first.label, first.cited, first.document, first.page) == ("C1", True, "/docs/harbor.txt", None)
    assert "Maria Lopez founded Harbor Analytics" in first.text
    data = answer.to_json()
    assert {"answer", "mode", "context", "references"} <= set(data)
    assert {"entities", "relations", "chunks"} <= set(data["context"])
    assert {"document", "page", "chunk"} <= set(data["references"][0])
    (request,) = answer_requests(model)
    system = request["messages"][0]["content"]
    assert "[E1] Maria Lopez" in system and "a few short paragraphs" in system
    assert request["messages"][-1] == {"role": "user", "content": QUESTION}


def test_references_point_at_pdf_pages(model, store):
    model.responder = Script(answer="Northwind Labs buys tide sensors [C1].")
    answer = ask(store, client(model, store), "Who buys tide sensors?", settings_for(model), mode="naive")
    ref = answer.references[0]
    assert (ref.document, ref.page, ref.page_end, ref.cited) == ("/docs/northwind.pdf", 2, 3, True)
    assert ref.chunk == store.query("SELECT id FROM chunks WHERE text LIKE 'Northwind Labs bought%'")[0]["id"]


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "naive", "mix"])
def test_every_mode_answers_from_its_context(model, store, mode):
    embedded(store, model)
    answer = ask(store, client(model, store), "Which supply contract links Harbor Analytics and Northwind Labs?",
                 settings_for(model), mode=mode)
    assert answer.answer == ANSWER and answer.mode == mode and not answer.context.empty
    assert answer.references
    keyword_calls = [b for b in chat_requests(model) if b.get("format")]
    assert len(keyword_calls) == (0 if mode == "naive" else 1)
    assert embed_requests(model)[-1]["input"]  # the question side was embedded in one call


def test_history_keeps_the_last_turns_within_budget(model, store):
    history = []
    for i in range(5):
        history += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    settings = settings_for(model, query__history_turns=2)
    ask(store, client(model, store), QUESTION, settings, mode="local", history=history)
    messages = answer_requests(model)[0]["messages"]
    assert [m["content"] for m in messages[1:-1]] == ["question 3", "answer 3", "question 4", "answer 4"]
    keyword_prompt = next(b for b in chat_requests(model) if b.get("format"))["messages"][0]["content"]
    assert "User: question 4" in keyword_prompt and "question 2" not in keyword_prompt

    tight = settings_for(model, query__history_turns=5, query__history_budget=18)
    ask(store, client(model, store), QUESTION, tight, mode="local", history=history)
    messages = answer_requests(model)[-1]["messages"]
    assert [m["content"] for m in messages[1:-1]] == ["question 4", "answer 4"]


def test_answers_are_cached_until_the_graph_changes(model, store):
    settings = settings_for(model)
    first = ask(store, client(model, store), QUESTION, settings, mode="hybrid")
    calls = len(chat_requests(model))
    tokens: list[str] = []
    again = ask(store, client(model), QUESTION, settings, mode="hybrid", on_token=tokens.append)
    assert again.cached and again.answer == first.answer and tokens == [first.answer]
    assert again.references == first.references and again.context.entities == first.context.entities
    assert len(chat_requests(model)) == calls

    ask(store, client(model), QUESTION, settings, mode="local")  # another mode is another answer
    assert len(chat_requests(model)) > calls
    calls = len(chat_requests(model))

    add_document(store, "extra.txt", [("Maria Lopez also sails.", None, None,
                                       [("Maria Lopez", "person", "A sailor.")], [])])
    rebuild(store)
    fresh = ask(store, client(model), QUESTION, settings, mode="hybrid")
    assert not fresh.cached and len(chat_requests(model)) > calls
    assert store.query("SELECT COUNT(DISTINCT version) AS n FROM answers")[0]["n"] == 1


def test_no_context_says_so_without_asking_for_an_answer(model, store):
    tokens: list[str] = []
    answer = ask(store, client(model, store), "What is quantum chromodynamics?", settings_for(model),
                 mode="mix", on_token=tokens.append)
    assert answer.answer == NO_CONTEXT_ANSWER == "".join(tokens)
    assert answer.references == () and answer_requests(model) == []


def test_the_prompt_tells_the_model_to_admit_gaps(model, store):
    ask(store, client(model, store), QUESTION, settings_for(model), mode="local")
    system = answer_requests(model)[0]["messages"][0]["content"]
    assert "does not hold the answer" in system and "do not guess" in system


def test_missing_embedding_model_falls_back_to_full_text(model, store):
    embedded(store, model)
    del model.models["nomic-embed-text"]
    answer = ask(store, client(model, store), QUESTION, settings_for(model), mode="mix")
    assert answer.answer == ANSWER and answer.context.entities[0].name in ("Harbor Analytics", "Maria Lopez")
    (warning,) = answer.warnings
    assert "nomic-embed-text is not installed" in warning and "full-text search only" in warning


def test_nothing_embedded_yet_still_answers(model, store):
    answer = ask(store, client(model, store), QUESTION, settings_for(model), mode="local")
    assert answer.answer == ANSWER and embed_requests(model) == []
    assert "Nothing is embedded" in answer.warnings[0]


def test_ollama_breaking_off_mid_answer_is_one_sentence_and_nothing_is_cached(model, store):
    tokens: list[str] = []
    model.fail_next("drop_stream", times=5)  # naive: the answer is the first chat call
    with pytest.raises(LLMError) as info:
        ask(store, client(model, store), "Who buys tide sensors?", settings_for(model), mode="naive",
            on_token=tokens.append)
    assert tokens and "connection to Ollama broke" in str(info.value)
    assert str(info.value).count(". ") == 0
    assert store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"] == 0


def test_ollama_stopping_during_a_question_is_one_sentence(model, store):
    script = Script()

    def responder(request: dict) -> str:
        reply = script(request)
        model.stop()  # Ollama quits (every connection cut, this one too) while replying
        return reply

    model.responder = responder
    with pytest.raises(LLMError) as info:
        ask(store, client(model, store), QUESTION, settings_for(model), mode="local")
    assert "Ollama" in str(info.value) and str(info.value).count(". ") == 0
    assert store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"] == 0


def test_cancel_mid_answer_stops_and_caches_nothing(model, store):
    cancel = threading.Event()
    with pytest.raises(Cancelled):
        ask(store, client(model, store), QUESTION, settings_for(model), mode="local",
            on_token=lambda piece: cancel.set(), cancel=cancel)
    assert store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"] == 0


def test_a_short_window_still_fits(model, tmp_path):
    model.models["tiny:1b"] = {"context_length": 2048, "family": "llama"}
    big = {name: [(text * 20, p0, p1, ents, rels) for text, p0, p1, ents, rels in chunks]
           for name, chunks in CORPUS.items()}
    settings = settings_for(model, ollama__model="tiny:1b")
    with open_store(tmp_path) as store:
        build_graph(store, big)
        answer = ask(store, client(model, store, ollama__model="tiny:1b"), QUESTION, settings, mode="mix")
    (request,) = answer_requests(model)
    prompt = sum(count_tokens(m["content"]) for m in request["messages"])
    assert request["options"]["num_ctx"] <= 2048
    assert (prompt + 64 * len(request["messages"])) * 1.1 + request["options"]["num_predict"] <= 2048
    assert answer.context.chunks  # something still fitted


def test_bad_requests_are_user_errors(model, store):
    with pytest.raises(QueryError, match="no query mode called 'fast'"):
        ask(store, client(model), QUESTION, settings_for(model), mode="fast")
    with pytest.raises(QueryError, match="empty"):
        ask(store, client(model), "   ", settings_for(model))


def test_a_question_asks_one_context_for_its_keyword_call_and_its_answer(model, tmp_path):
    """Ollama reloads a model whenever a call's num_ctx changes: each question in a process of its own
    (as `docatlas query` asks) must not load the model twice, nor again for the next question."""
    from docatlas.core.llm import steady_context

    big = {name: [(text * 20, p0, p1, ents, rels) for text, p0, p1, ents, rels in chunks]
           for name, chunks in CORPUS.items()}  # an answer's context far longer than its keyword prompt
    with open_store(tmp_path) as store:
        embedded(build_graph(store, big), model)
        for question in (QUESTION, "Where is Harbor Analytics based, and who works there?"):
            steady_context.forget()  # a new process knows nothing of what the last one asked
            answer = ask(store, client(model, store), question, settings_for(model), mode="mix", use_cache=False)
            assert answer.keywords is not None and answer.context.chunks
    asked = [b["options"]["num_ctx"] for b in chat_requests(model)]
    assert len(asked) == 4 and len(set(asked)) == 1 and model.reloads == 0
    longest = max(answer_requests(model), key=lambda b: sum(len(m["content"]) for m in b["messages"]))
    prompt = sum(count_tokens(m["content"]) for m in longest["messages"])
    assert prompt > 1000  # longer than the keyword prompt
    assert (prompt + 64 * len(longest["messages"])) * 1.1 + longest["options"]["num_predict"] <= asked[0]
