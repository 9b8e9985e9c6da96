"""The background run extracts in an order that serves the person: the chunks that match the questions
already asked first, then the chunks richest in names the model's graph lacks, then the rest.

Real parts: a real SQLite file, the known-facts corpus and its scripted model behind the fake Ollama
over real HTTP; the order is the order of the extraction prompts the server received.
"""

from __future__ import annotations

import random

import pytest
from docatlas.core.base.concepts import find_concepts
from docatlas.core.base.errors import DocAtlasError
from docatlas.core.jobs.ingest import index
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.retrieval.answer import ask
from docatlas.core.storage import interest
from docatlas.core.storage.database import Store
from fixtures import known_facts
from fixtures.fact_model import fact_responder
from fixtures.ollama_fixture import CHAT_MODEL
from fixtures.scripted_model import passage_of
from helpers import settings_for

PLAIN = 4  # documents with no name at all
RICH_NAMES = [f"{a} {b}" for a in ("Odile", "Bram", "Ines", "Tarek", "Wanda", "Yusuf", "Zelda")
              for b in ("Achterberg", "Brightwater", "Castellan", "Drummond", "Everly", "Fairbanks")]


def first_passes(server) -> list[str]:
    """The passage of every first extraction prompt the server was sent, in order."""
    found = []
    for request in server.requests:
        messages = (request["body"] or {}).get("messages") or []
        if request["path"] == "/api/chat" and len(messages) == 1 and "Passage:\n" in messages[0]["content"]:
            found.append(passage_of(messages[0]["content"]))
    return found


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = fact_responder
    return fake_ollama


def test_after_a_question_its_chunks_come_first_then_new_names_then_the_rest(model, tmp_path):
    ask_then_run(model, tmp_path, again=False)


def test_a_run_given_the_folder_again_starts_with_the_chunks_of_the_question(model, tmp_path):
    ask_then_run(model, tmp_path, again=True)


def ask_then_run(model, tmp_path, again: bool) -> None:
    corpus = known_facts.build(seed=5, documents=16)
    folder = tmp_path / "docs"
    folder.mkdir()
    words = " ".join(known_facts.FILLER).lower().replace(".", "").split()
    for number in range(PLAIN):  # first in path order, but nothing in them is a name (and none is a copy)
        shuffled = random.Random(number).sample(words, len(words))
        (folder / f"a-plain-{number}.txt").write_text(f"note {number}: " + " ".join(shuffled) + ".\n",
                                                      encoding="utf-8")
    for name, text in corpus.documents.items():
        (folder / name).write_text(text, encoding="utf-8")
    rich = " ".join(f"{n} signed the register." for n in RICH_NAMES)  # last in path order, richest in names
    (folder / "z-rich.txt").write_text(rich + "\n", encoding="utf-8")
    question = next(q for q in corpus.questions if q.kind == "count")  # about a person many documents name
    name = question.text.removeprefix("How many organisations did ").removesuffix(" work with?")
    asked_about = [t for t in corpus.documents.values() if name in t]

    settings = settings_for(model, ollama__parallel=1)
    spec = model.models.pop(CHAT_MODEL)  # the model is not pulled yet: the files are stored, none is read
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        with pytest.raises(DocAtlasError):
            list(index(store, [folder], settings))
        model.models[CHAT_MODEL] = spec
        llm = OllamaLLM(settings.ollama, cache=store)
        try:
            ask(store, llm, question.text, settings, mode="naive")  # asked while nothing is extracted
        finally:
            llm.close()
        assert interest.recent_questions(store) == [question.text]
        model.requests.clear()

        # The run that resumes the stored work, or one given the same folder (its files are unchanged).
        last = list(index(store, [folder] if again else [], settings))[-1]
        assert last.stage == "done"
        order = list(dict.fromkeys(first_passes(model)))  # a cut reply is asked once more: its first time counts
        counts = store.counts()
        total = counts["chunks"] - counts["copies_reused"]  # filler-only chunks repeat other documents' filler
        assert len(order) == total  # every chunk read once (a copy takes its original's records)
        k = sum(name in p for p in order)  # the chunks that name what was asked about
        assert k >= len(asked_about) > 3
        # With one slot and one call prepared behind it, two neighbours may reach the model either way round.
        assert sum(name in p for p in order[:k + 1]) == k
        if again:
            return  # the other files join as they are looked at, so the rest of the order follows the walk
        assert any("Odile Achterberg" in p for p in order[k - 1:k + 2])  # the most names the graph lacks
        plain = [i for i, p in enumerate(order) if "note " in p and not any(c.isupper() for c in p)]
        named = [i for i, p in enumerate(order) if find_concepts(p).names]
        assert len(plain) == PLAIN and max(named) <= min(plain) + 1  # nothing new in them: after every name


def test_ranking_the_queue_again_during_the_run_takes_every_chunk_once(model, tmp_path, monkeypatch):
    from docatlas.core.jobs import order

    monkeypatch.setattr(order, "RERANK_EVERY", 2)  # ranked again after every second pick
    ask_then_run(model, tmp_path, again=True)


def test_a_chunk_a_question_wanted_read_during_a_run_is_taken_first(model, tmp_path):
    from docatlas.core.storage import wanted

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in known_facts.build(seed=9, documents=12).documents.items():
        (folder / name).write_text(text, encoding="utf-8")
    settings = settings_for(model, ollama__parallel=1)
    spec = model.models.pop(CHAT_MODEL)
    with Store(tmp_path / "ws" / "docatlas.sqlite") as store:
        with pytest.raises(DocAtlasError):
            list(index(store, [folder], settings))
        model.models[CHAT_MODEL] = spec
        last_chunk = store.work_chunks(with_text=False)[-1]  # in document order it would be read last
        assert wanted.want(store, [last_chunk.id]) == 1  # as a budgeted question does during a run
        model.requests.clear()
        list(index(store, [], settings))
        order = list(dict.fromkeys(first_passes(model)))
        assert store.chunk_text(last_chunk.id) in order[:2]
