"""One chunk through the model over real HTTP: first pass, gleaning in the same conversation,
the YES/NO loop check, and when the rounds stop."""

from __future__ import annotations

import pytest
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.ingest.extract import extract_chunk, first_messages, follow_up, wants_more, yes_or_no
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.prompts.catalog import load_profile
from fixtures.scripted_model import PROFILES, responder_for, truth
from helpers import DOCUMENTS, settings_for

TEXT = DOCUMENTS["alpha.txt"]  # Maria Lopez, Harbor Analytics, Jonas Weber, Priya Nair


def chats(server) -> list[dict]:
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"]


def run(server, profile: str = "lightrag", **overrides):
    settings = settings_for(server, **overrides)
    llm = OllamaLLM(settings.ollama)
    try:
        return extract_chunk(llm, load_profile(profile), TEXT, settings.extraction), settings
    finally:
        llm.close()


@pytest.fixture
def model(fake_ollama):
    fake_ollama.responder = responder_for("lightrag")
    return fake_ollama


def test_gleaning_continues_the_conversation_and_asks_only_for_what_is_missing(model):
    result, settings = run(model, gleaning=1)
    names, _ = truth(TEXT)
    assert [e.name for e in result.entities] == names  # the held-back name came in the glean
    first, glean = chats(model)
    profile = load_profile("lightrag")
    assert first["messages"] == first_messages(profile, TEXT, settings.extraction)
    # the same conversation: the first prompt, the model's own reply, then the glean request
    assert glean["messages"][:1] == first["messages"]
    assert glean["messages"][1] == {"role": "assistant", "content": result.raw_replies[0]}
    assert glean["messages"][2] == follow_up(profile, "glean", settings.extraction)
    assert "missing" in glean["messages"][2]["content"] and "Do not repeat" in glean["messages"][2]["content"]
    assert (result.calls, result.gleaning_rounds, result.loop_checks) == (2, 1, 0)


def test_gleaning_stops_when_a_round_brings_nothing_new(model):
    result, _ = run(model, gleaning=5)
    assert result.gleaning_rounds == 2  # the second round found nothing, so no third
    assert len(chats(model)) == 3


def test_a_round_that_only_repeats_records_ends_the_gleaning(fake_ollama):
    first_reply = responder_for("compact")({"messages": [{"role": "user", "content": _prompt("compact")}]})
    fake_ollama.responder = lambda request: first_reply  # always the same records
    result, _ = run(fake_ollama, "compact", gleaning=4)
    assert result.gleaning_rounds == 1 and len(chats(fake_ollama)) == 2
    assert len(result.entities) == len(truth(TEXT)[0]) - 1  # no duplicates added


def test_loop_check_yes_then_no_stops_the_rounds(model):
    result, settings = run(model, gleaning=3, loop_check=True)
    bodies = chats(model)
    # first pass, check (YES: a name is missing), glean, check (NO) -> stop
    kinds = [_kind(b) for b in bodies]
    assert kinds == ["first", "check", "glean", "check"]
    assert (result.loop_checks, result.gleaning_rounds) == (2, 1)
    assert result.raw_replies[1] == "YES" and result.raw_replies[3] == "NO"
    check = bodies[1]
    assert check["options"]["num_predict"] == 8 and check.get("format") is None
    assert check["messages"][-1] == follow_up(load_profile("lightrag"), "loop_check", settings.extraction)
    # the check is not part of the conversation that the glean continues
    assert all("YES or NO" not in m["content"] for m in bodies[2]["messages"])
    assert len(result.entities) == len(truth(TEXT)[0])


def test_loop_check_no_before_the_first_round_saves_the_glean(fake_ollama):
    scripted = responder_for("lightrag")
    fake_ollama.responder = lambda r: "no." if "YES or NO" in r["messages"][-1]["content"] else scripted(r)
    result, _ = run(fake_ollama, gleaning=3, loop_check=True)
    assert [_kind(b) for b in chats(fake_ollama)] == ["first", "check"]
    assert result.gleaning_rounds == 0 and len(result.entities) == len(truth(TEXT)[0]) - 1


def test_without_loop_check_no_question_is_asked(model):
    run(model, gleaning=2, loop_check=False)
    assert "check" not in [_kind(b) for b in chats(model)]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_reaches_full_recall_on_one_chunk(fake_ollama, profile):
    fake_ollama.responder = responder_for(profile)
    result, _ = run(fake_ollama, profile, gleaning=1)
    names, pairs = truth(TEXT)
    assert {e.name for e in result.entities} == set(names)
    assert {frozenset((r.source, r.target)) for r in result.relations} == {frozenset(p) for p in pairs}
    bodies = chats(fake_ollama)
    schema = load_profile(profile).json_schema
    assert [b.get("format") for b in bodies] == [schema, schema]  # json only; None for the others


def test_yes_no_reading():
    assert [yes_or_no(t) for t in ("YES", "Yes.", "**No**", "no, all done", "I think yes", "maybe", "")] == [
        True, True, False, False, True, None, None]
    assert wants_more("YES") and not wants_more("maybe") and not wants_more("NO")
    assert yes_or_no("Nothing else; NO") is False  # "Nothing" is not the word "no"


def _prompt(profile: str) -> str:
    return first_messages(load_profile(profile), TEXT, ExtractionSettings())[0]["content"]


def _kind(body: dict) -> str:
    messages = body["messages"]
    if len(messages) == 1:
        return "first"
    return "check" if "YES or NO" in messages[-1]["content"] else "glean"
