"""Budgeted reading at question time: a question reads the chunks it needs first, within its budget.

Real SQLite, the known-facts corpus stored but not read by the model (the run that stored it found
the chat model missing), the scripted fact model over real HTTP. With no run going the reading
stores what it read (chunks done, the graph holds the records); while another process holds the
workspace it stores only the replies and lists the chunks for the run, which then asks nothing again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from docatlas.core.base.errors import LLMError
from docatlas.core.jobs.budgeted import RUN_HOLDS, ask_within
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import workspace_writer
from docatlas.core.storage.wanted import wanted_ids
from fixtures.fact_model import ANSWER_MARK, fact_responder
from fixtures.known_facts import build
from fixtures.ollama_fixture import CHAT_MODEL
from fixtures.scripted_model import passage_of
from helpers import docatlas, settings_for, write_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = build(seed=3, documents=40, groups=2)
TWO_HOP = next(q for q in CORPUS.questions if q.kind == "multihop")
SINGLE = next(q for q in CORPUS.questions if q.kind == "single")
HOLDER = """import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import workspace_writer
with Store(Path(sys.argv[2])) as store, workspace_writer(store, "ingest"):
    print("held", flush=True)
    sys.stdin.read()
"""


def extraction_passages(server) -> list[str]:
    """The passages of the first-pass extraction calls the server answered (gleaning rounds not counted)."""
    out = []
    for request in server.requests:
        messages = (request["body"] or {}).get("messages") or []
        first = str(messages[0].get("content") or "") if messages else ""
        if request["path"] == "/api/chat" and len(messages) == 1 and "Passage:\n" in first \
                and ANSWER_MARK not in first and not isinstance(request["body"].get("format"), dict):
            out.append(passage_of(first))
    return out


@pytest.fixture
def unread(fake_ollama, tmp_path):
    """A workspace whose documents are stored and none read by the model: (store, llm, settings, server, docs)."""
    fake_ollama.responder = fact_responder
    chat = fake_ollama.models.pop(CHAT_MODEL)
    settings = settings_for(fake_ollama, ollama__embed_model="", ollama__model=CHAT_MODEL)
    docs = write_corpus(tmp_path / "docs", CORPUS.documents)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        with pytest.raises(LLMError):  # the run stores every file, then says the model is missing
            list(index(store, [docs], settings))
        fake_ollama.models[CHAT_MODEL] = chat
        assert store.counts()["chunks_done"] == 0
        llm = OllamaLLM(settings.ollama, cache=store)
        fake_ollama.requests.clear()
        yield store, llm, settings, fake_ollama, docs
        llm.close()


def chunk_status(store: Store, ids) -> set[str]:
    marks = ",".join("?" * len(ids))
    return {r["status"] for r in store.query(f"SELECT status FROM chunks WHERE id IN ({marks})", list(ids))}


def test_with_no_run_a_two_hop_question_reads_what_it_needs_and_the_graph_keeps_it(unread):
    store, llm, settings, server, _ = unread
    seen = []
    answer = ask_within(store, llm, TWO_HOP.text, settings, 50, mode="local", on_progress=seen.append)
    assert TWO_HOP.answers[0] in answer.answer and any(r.cited for r in answer.references)
    read = answer.read
    assert read.stored and read.read and 0 < read.calls <= 50
    assert chunk_status(store, read.read) <= {"done", "empty"}  # stored as a run would
    met, funded = TWO_HOP.facts
    rows = store.query("SELECT layer FROM entities WHERE name IN (?, ?)", (funded.subject, met.object))
    assert {r["layer"] for r in rows} == {"model"}  # the second hop's names are the model's now
    assert seen and seen[-1].message.startswith("Reading for this question: ")
    assert "of 50 model calls spent" in seen[-1].message
    assert "what the model read for this question" in answer.rests_on
    assert any("their records are in the graph now" in w for w in answer.warnings)
    assert len(extraction_passages(server)) == len(read.read)  # one first pass a chunk read


def test_while_another_process_writes_the_reading_keeps_only_replies_and_the_run_asks_nothing_again(unread):
    store, llm, settings, server, docs = unread
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "desktop"), str(store.path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        answer = ask_within(store, llm, TWO_HOP.text, settings, 50, mode="local")
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    read = answer.read
    assert TWO_HOP.answers[0] in answer.answer and any(r.cited for r in answer.references)
    assert not read.stored and RUN_HOLDS in answer.warnings
    assert chunk_status(store, read.read) == {"pending"}  # nothing written but the cache and the wish list
    assert set(wanted_ids(store)) == set(read.read)
    asked = extraction_passages(server)
    server.requests.clear()
    list(index(store, [docs], settings))  # the run, once the other process is done
    again = extraction_passages(server)
    assert not set(again) & set(asked)  # the chunks the question read came from the cache
    assert len(again) == store.counts()["chunks"] - len(read.read)
    assert wanted_ids(store) == []  # finished chunks leave the list


def test_a_run_of_this_process_holding_the_workspace_is_not_joined(unread):
    store, llm, settings, _, _ = unread
    with workspace_writer(store, "ingest"):  # as the window's own run holds it
        answer = ask_within(store, llm, SINGLE.text, settings, 10)
    assert SINGLE.answers[0] in answer.answer
    assert not answer.read.stored and chunk_status(store, answer.read.read) == {"pending"}


def test_the_budget_bounds_the_calls_and_a_stop_answers_from_what_was_read(unread):
    store, llm, settings, _, _ = unread
    stop = threading.Event()

    def after_first(step) -> None:
        if step.step_done:
            stop.set()

    answer = ask_within(store, llm, TWO_HOP.text, settings, 50, mode="local", stop=stop, on_progress=after_first)
    read = answer.read
    assert read.stopped and 1 <= len(read.read) <= settings.ollama.total_parallel + 1
    assert answer.answer and "(stopped early)" in read.summary()
    more = ask_within(store, llm, TWO_HOP.text, settings, 5, mode="local")
    assert more.read.read and more.read.calls <= 5 and not set(more.read.read) & set(read.read)


def test_a_model_that_is_not_installed_says_so_in_one_sentence_and_stores_nothing(unread):
    store, llm, settings, server, _ = unread
    server.models.pop(CHAT_MODEL)
    with pytest.raises(LLMError) as failure:
        ask_within(store, llm, TWO_HOP.text, settings, 50)
    assert "is not installed" in failure.value.message
    assert store.counts()["chunks_done"] == 0


def test_query_budget_json_says_what_was_spent_and_read(unread, capsys):
    store, _, _, server, _ = unread

    code, out, err = docatlas(capsys, "--data-dir", str(store.path.parent), "query", SINGLE.text, "--budget", "10",
                              "--json", "--host", server.host, "--model", CHAT_MODEL)
    assert code == 0, err
    data = json.loads(out)
    assert data["reading"]["budget"] == 10 and 1 <= data["reading"]["calls"] <= 10
    assert data["reading"]["chunks_read"] >= 1 and data["reading"]["stored"] is True
    assert SINGLE.answers[0] in data["answer"] and data["rests_on"].startswith("Rests on: ")


def test_a_graph_that_covers_the_question_costs_no_call(unread):
    store, llm, settings, server, docs = unread
    list(index(store, [docs], settings))  # the model reads everything
    server.requests.clear()
    answer = ask_within(store, llm, TWO_HOP.text, settings, 50, mode="local")
    assert answer.read.read == () and answer.read.calls == 0 and not extraction_passages(server)
    assert "No passage was read for this question: the model has read every passage that matches it." in answer.warnings
    assert TWO_HOP.answers[0] in answer.answer and "the graph the model built" in answer.rests_on
