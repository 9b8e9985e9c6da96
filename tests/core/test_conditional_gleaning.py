"""Gleaning only where the first pass left names of the text out: a round is asked while at
least `glean_min_missing` of the chunk's concept-layer names have no record yet (0: always),
over real HTTP against the scripted test server."""

from __future__ import annotations

import pytest
from docatlas.core.ingest.extract import extract_chunk, missing_names
from docatlas.core.ingest.typing_reply import candidates_of
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts.catalog import load_profile
from fixtures.fact_model import fact_responder
from fixtures.scripted_model import responder_for

TEXT = ("Ardel Voss funded Miro Tane. Coffee was served in the hall while the lists were checked. "
        "Lisa Orvik met Ardel Voss. Bari Nelos visited Port Quoza.")
NAMES = ["Ardel Voss", "Miro Tane", "Lisa Orvik", "Bari Nelos", "Port Quoza"]


def run(server, **extraction):
    from helpers import settings_for

    settings = settings_for(server, **{f"extraction__{k}": v for k, v in extraction.items()})
    llm = OllamaLLM(settings.ollama)
    try:
        return extract_chunk(llm, load_profile("lightrag"), TEXT, settings.extraction)
    finally:
        llm.close()


def chats(server) -> int:
    return sum(1 for r in server.requests if r["path"] == "/api/chat")


def test_the_candidates_are_the_texts_names():
    assert list(candidates_of(TEXT).names) == NAMES  # "Coffee" only starts its sentence


def test_a_first_pass_that_names_every_name_is_not_asked_again(fake_ollama):
    fake_ollama.responder = fact_responder  # writes a record for every name
    result = run(fake_ollama, gleaning=1)
    assert missing_names(candidates_of(TEXT), result) == 0
    assert (chats(fake_ollama), result.gleaning_rounds) == (1, 0)
    assert sorted(e.name for e in result.entities) == sorted(NAMES)


def test_a_first_pass_that_left_a_name_out_gleans_it(fake_ollama):
    fake_ollama.responder = responder_for("lightrag")  # holds the last name back until a glean
    result = run(fake_ollama, gleaning=3)
    assert result.gleaning_rounds == 1 and chats(fake_ollama) == 2  # the round brought it; none missing now
    assert sorted(e.name for e in result.entities) == sorted(NAMES)


@pytest.mark.parametrize(("threshold", "rounds"), [(0, 1), (1, 1), (2, 0)])
def test_the_threshold_decides(fake_ollama, threshold, rounds):
    fake_ollama.responder = responder_for("lightrag")  # one name missing after the first pass
    result = run(fake_ollama, gleaning=1, glean_min_missing=threshold)
    assert result.gleaning_rounds == rounds


def test_zero_gleans_as_before_even_when_nothing_is_missing(fake_ollama):
    fake_ollama.responder = fact_responder
    result = run(fake_ollama, gleaning=1, glean_min_missing=0)
    assert result.gleaning_rounds == 1 and chats(fake_ollama) == 2


def test_a_chunk_without_capitalised_names_gleans_as_before(fake_ollama):
    text = "小明在北京的一家公司工作。他的朋友小红住在上海。"  # no capitals: the concept layer cannot judge
    first = '("entity"<|>小明<|>person<|>在北京工作。)##("entity"<|>北京<|>location<|>城市。)<|COMPLETE|>'
    more = '("entity"<|>小红<|>person<|>小明的朋友。)<|COMPLETE|>'
    fake_ollama.responder = lambda request: first if len(request["messages"]) == 1 else more
    from helpers import settings_for

    settings = settings_for(fake_ollama, extraction__gleaning=1)
    llm = OllamaLLM(settings.ollama)
    try:
        result = extract_chunk(llm, load_profile("lightrag"), text, settings.extraction)
    finally:
        llm.close()
    assert candidates_of(text).names == ()
    assert result.gleaning_rounds == 1 and result.health.found == 3  # the round was asked and brought 小红
