"""OllamaLLM against FakeOllama over real HTTP: streaming, num_ctx, think, cache, faults."""

from __future__ import annotations

import math
import pathlib
import sys
import threading
import time

import ollama
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm.ollama import OllamaLLM, normalize_host
from docatlas.core.llm.protocol import LLM, MemoryCache, cache_key, strip_think
from fixtures import ollama_fixture
from fixtures.ollama_server import DEFAULT_REPLY, FakeOllama

fake_ollama = ollama_fixture.fake_ollama  # the fixture; the lead's conftest will provide it too
ASK = [{"role": "user", "content": "What is the capital of France?"}]


def make(server: FakeOllama, cache: MemoryCache | None = None, **overrides: object) -> OllamaLLM:
    """A client for the fake server with fast retries."""
    values: dict = {"host": server.host, "timeout_s": 5.0, "retries": 2, "backoff_s": 0.01}
    values.update(overrides)
    return OllamaLLM(OllamaSettings(**values), cache=cache, model=values.get("model"))  # type: ignore[arg-type]


def chat_bodies(server: FakeOllama) -> list[dict]:
    """The JSON bodies of the /api/chat requests so far."""
    return [r["body"] for r in server.requests if r["path"] == "/api/chat"]


def words(n: int) -> str:
    """About n cl100k tokens of text."""
    return "hello " * n


# -- streaming chat ------------------------------------------------------------------------
def test_streaming_chat_returns_text_tokens_and_pieces(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama)
    assert isinstance(llm, LLM)
    pieces: list[str] = []
    reply = llm.chat(ASK, on_token=pieces.append)
    assert reply.text == DEFAULT_REPLY
    assert len(pieces) > 3 and "".join(pieces) == DEFAULT_REPLY
    assert reply.completion_tokens == len(pieces)
    assert reply.prompt_tokens == 6 and not reply.cached and reply.seconds > 0
    (body,) = chat_bodies(fake_ollama)
    assert body["stream"] is True and body["think"] is False
    assert body["options"]["temperature"] == 0.0
    assert body["options"]["num_predict"] == 2048
    assert body["options"]["num_ctx"] == 3072
    assert llm.calls == 1


def test_format_and_num_predict_are_sent(fake_ollama: FakeOllama) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    make(fake_ollama).chat(ASK, format=schema, num_predict=100)
    (body,) = chat_bodies(fake_ollama)
    assert body["format"] == schema
    assert body["options"]["num_predict"] == 100 and body["options"]["num_ctx"] == 2048


def test_num_ctx_grows_with_prompt_and_is_capped(fake_ollama: FakeOllama) -> None:
    fake_ollama.models["tiny:1b"] = {"context_length": 8192, "family": "llama"}
    llm = make(fake_ollama)
    small = llm.num_ctx(ASK, 2048)
    big = llm.num_ctx([{"role": "user", "content": words(5000)}], 2048)
    assert small == 3072 and big > small and big % 1024 == 0
    assert big >= math.ceil((5000 + 64) * 1.1) + 2048
    assert llm.num_ctx([{"role": "user", "content": words(6000)}], 2048, "tiny:1b") == 8192
    capped = make(fake_ollama, max_context=4096)
    capped.chat([{"role": "user", "content": words(3000)}])
    assert chat_bodies(fake_ollama)[-1]["options"]["num_ctx"] == 4096


def test_prompt_longer_than_context_is_a_user_error(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama, max_context=4096)
    with pytest.raises(LLMError, match="smaller chunks or a model with a longer context"):
        llm.chat([{"role": "user", "content": words(5000)}])
    assert chat_bodies(fake_ollama) == []


# -- think -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>hmm</think>\nAnswer", "Answer"),
        ("A<think>x</think>B<THINK>y</THINK>C", "ABC"),
        ("<think>still thinking when the reply ended", ""),
        ("<think>", ""),
        ("Answer <think>cut off", "Answer"),
        ("reasoning opened by the template</think>Answer", "Answer"),
        ("plain", "plain"),
    ],
)
def test_strip_think(raw: str, clean: str) -> None:
    assert strip_think(raw) == clean


def test_think_blocks_are_stripped_from_replies(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama)
    fake_ollama.responder = lambda request: "<think>let me see</think> Paris"
    assert llm.chat(ASK).text == "Paris"
    fake_ollama.responder = lambda request: "<think>let me see, the capital"
    assert llm.chat([{"role": "user", "content": "again"}]).text == ""


def test_model_that_rejects_think_is_asked_again_without_it(fake_ollama: FakeOllama) -> None:
    fake_ollama.models["old:1b"] = {
        "context_length": 4096,
        "family": "llama",
        "rejects_think": True,
    }
    llm = make(fake_ollama, model="old:1b")
    assert llm.chat(ASK).text == DEFAULT_REPLY
    first, second = chat_bodies(fake_ollama)
    assert first["think"] is False and "think" not in second
    llm.chat([{"role": "user", "content": "again"}])
    assert "think" not in chat_bodies(fake_ollama)[2] and len(chat_bodies(fake_ollama)) == 3


# -- cache -----------------------------------------------------------------------------------
def test_cache_hit_makes_no_http_request(fake_ollama: FakeOllama) -> None:
    cache = MemoryCache()
    llm = make(fake_ollama, cache=cache)
    first = llm.chat(ASK)
    seen = len(fake_ollama.requests)
    again = llm.chat(ASK)
    fresh = make(fake_ollama, cache=cache).chat(ASK)  # a new run: not even /api/show
    assert len(fake_ollama.requests) == seen
    assert again.cached and fresh.cached and again.text == first.text == fresh.text
    assert llm.calls == 1 and llm.cache_hits == 1


def test_cache_misses_on_other_options_messages_model_or_format(fake_ollama: FakeOllama) -> None:
    fake_ollama.models["other:1b"] = {"context_length": 4096, "family": "llama"}
    cache = MemoryCache()
    llm = make(fake_ollama, cache=cache)
    llm.chat(ASK)
    assert not llm.chat(ASK, num_predict=64).cached
    assert not llm.chat([{"role": "user", "content": "Other?"}]).cached
    assert not llm.chat(ASK, format="json").cached
    assert not make(fake_ollama, cache=cache, model="other:1b").chat(ASK).cached
    assert not make(fake_ollama, cache=cache, temperature=0.7).chat(ASK).cached
    assert len(chat_bodies(fake_ollama)) == 6 and len(cache) == 6
    base = cache_key("m", {"temperature": 0}, ASK, None)
    assert base == cache_key("m", {"temperature": 0}, [dict(ASK[0])], None)
    assert base != cache_key("m", {"temperature": 0}, ASK, {"type": "object"})


def test_empty_reply_is_not_cached(fake_ollama: FakeOllama) -> None:
    fake_ollama.responder = lambda request: ""
    llm = make(fake_ollama, cache=MemoryCache())
    assert llm.chat(ASK).text == "" and llm.chat(ASK).text == ""
    assert llm.calls == 2 and llm.cache_hits == 0


# -- faults and retries ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["http500", "drop_stream", "refuse"])
def test_transient_fault_is_retried(fake_ollama: FakeOllama, kind: str) -> None:
    fake_ollama.fail_next(kind)
    llm = make(fake_ollama)
    assert llm.chat(ASK).text == DEFAULT_REPLY
    assert len(chat_bodies(fake_ollama)) == 2 and llm.calls == 2


def test_a_retried_stream_does_not_show_the_answer_twice(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next("drop_stream")  # half the answer arrives, then the connection drops
    pieces: list[str] = []
    reply = make(fake_ollama).chat(ASK, on_token=pieces.append)
    assert len(chat_bodies(fake_ollama)) == 2
    assert "".join(pieces) == reply.text == DEFAULT_REPLY


def test_persistent_server_error_becomes_llm_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next("http500", times=3)
    with pytest.raises(LLMError, match="error was encountered while running the model"):
        make(fake_ollama).chat(ASK)
    assert len(chat_bodies(fake_ollama)) == 3


def test_hang_ends_in_timeout_after_retries(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next("hang", times=2)
    llm = make(fake_ollama, timeout_s=0.5, retries=1)
    started = time.monotonic()
    with pytest.raises(OllamaTimeout, match=r"did not answer within 0.5 s; try a smaller model"):
        llm.chat(ASK)
    assert 1.0 <= time.monotonic() - started < 3.0
    assert len(chat_bodies(fake_ollama)) == 2


def test_stopped_server_is_unreachable_then_back(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama)
    llm.chat(ASK)
    fake_ollama.stop()
    expected = (
        f"Ollama is not reachable at http://{fake_ollama.host}; start Ollama "
        "(run `ollama serve` or open the Ollama app) and try again."
    )
    with pytest.raises(OllamaUnreachable) as info:
        llm.chat([{"role": "user", "content": "new question"}])
    assert str(info.value) == expected
    with pytest.raises(OllamaUnreachable):
        llm.check()
    fake_ollama.start()
    assert llm.chat([{"role": "user", "content": "new question"}]).text == DEFAULT_REPLY


def test_unknown_model_is_not_retried(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama, model="llama9:70b")
    with pytest.raises(ModelNotFound, match=r"run `ollama pull llama9:70b` and try again"):
        llm.chat(ASK)
    assert len(fake_ollama.requests) == 1
    with pytest.raises(ModelNotFound):
        llm.embed(["x"], model="llama9:70b")
    assert len(fake_ollama.requests) == 2


# -- cancel --------------------------------------------------------------------------------------
def test_cancel_from_on_token_stops_the_stream(fake_ollama: FakeOllama) -> None:
    cancel = threading.Event()
    pieces: list[str] = []

    def on_token(piece: str) -> None:
        pieces.append(piece)
        cancel.set()

    cache = MemoryCache()
    with pytest.raises(Cancelled):
        make(fake_ollama, cache=cache).chat(ASK, cancel=cancel, on_token=on_token)
    assert len(pieces) == 1 and len(cache) == 0


def test_cancel_before_the_call_sends_nothing(fake_ollama: FakeOllama) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        make(fake_ollama).chat(ASK, cancel=cancel)
    assert fake_ollama.requests == []


def test_cancel_interrupts_the_backoff(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next("http500", times=5)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    # a 10-minute backoff: only an interrupted wait lets this test end before its timeout
    with pytest.raises(Cancelled):
        make(fake_ollama, backoff_s=600.0).chat(ASK, cancel=cancel)
    assert len(chat_bodies(fake_ollama)) == 1


def test_cancel_cuts_a_call_waiting_for_its_first_token(fake_ollama: FakeOllama) -> None:
    """A slow model may think for minutes before the first piece: Stop must not wait for it."""
    fake_ollama.latency = 600.0  # only a cut connection lets this test end before its timeout
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    llm = make(fake_ollama)
    with pytest.raises(Cancelled):
        llm.chat(ASK, cancel=cancel)
    assert fake_ollama.in_flight == 1  # the server is still "thinking": the client did not wait
    fake_ollama.latency = 0.0
    assert llm.chat([{"role": "user", "content": "again"}]).text  # a fresh connection serves the next call


# -- models, embeddings, host -------------------------------------------------------------------
def test_check_and_list_models(fake_ollama: FakeOllama) -> None:
    make(fake_ollama).check()
    fake_ollama.models["phi3:latest"] = {"context_length": 4096, "family": "phi3", "size": 10}
    make(fake_ollama, model="phi3").check()
    with pytest.raises(ModelNotFound, match="ollama pull mistral"):
        make(fake_ollama, model="mistral").check()
    models = make(fake_ollama).list_models()
    assert [m["name"] for m in models] == ["nomic-embed-text", "phi3:latest", "qwen2.5:7b"]
    assert models[2] == {
        "name": "qwen2.5:7b",
        "size": 4_683_087_332,
        "family": "qwen2",
        "parameter_size": "7.6B",
    }


def test_context_length_is_read_once_per_model(fake_ollama: FakeOllama) -> None:
    fake_ollama.models["bare:1b"] = {"family": "llama"}
    llm = make(fake_ollama)
    assert llm.context_length() == 32768 and llm.context_length("qwen2.5:7b") == 32768
    assert llm.context_length("nomic-embed-text") == 2048
    assert llm.context_length("bare:1b") == 4096
    assert fake_ollama.paths().count("/api/show") == 3


def test_embed_is_deterministic_unit_vectors(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama)
    a, b, a2 = llm.embed(["alpha", "beta", "alpha"])
    assert len(a) == 16 and a == a2 and a != b
    assert math.isclose(sum(v * v for v in a), 1.0, rel_tol=1e-9)
    assert llm.embed([]) == []
    assert fake_ollama.requests[-1]["body"]["model"] == "nomic-embed-text"


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        (":9999", "http://127.0.0.1:9999"),
        ("http://x:1", "http://x:1"),
        ("http://gpu-box", "http://gpu-box:80"),
        ("https://ollama.lan/", "https://ollama.lan:443"),
        ("gpu-box.local", "http://gpu-box.local:11434"),
        ("[::]:11434", "http://[::1]:11434"),
        ("[fe80::1]", "http://[fe80::1]:11434"),
        ("  localhost:1234/  ", "http://localhost:1234"),
    ],
)
def test_host_normalisation(given: str, url: str) -> None:
    assert normalize_host(given) == url
    assert OllamaLLM(OllamaSettings(host=given)).host == url


def test_bad_host_is_a_user_error() -> None:
    with pytest.raises(LLMError, match="not valid"):
        normalize_host("127.0.0.1:notaport")
    with pytest.raises(LLMError, match="not valid"):
        normalize_host("ftp://127.0.0.1")


def test_concurrent_calls_from_four_threads(fake_ollama: FakeOllama) -> None:
    fake_ollama.latency = 0.3
    fake_ollama.responder = lambda request: "reply to " + request["messages"][-1]["content"]
    llm = make(fake_ollama, cache=MemoryCache())
    results: dict[int, str] = {}
    errors: list[LLMError] = []

    def work(i: int) -> None:
        try:
            results[i] = llm.chat([{"role": "user", "content": f"q{i}"}]).text
        except LLMError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors
    assert results == {i: f"reply to q{i}" for i in range(4)}
    assert fake_ollama.max_in_flight == 4 and llm.calls == 4


# -- the fake itself, through the official client ----------------------------------------------
def test_fake_generate_and_pull_match_the_official_client(fake_ollama: FakeOllama) -> None:
    client = ollama.Client(host=fake_ollama.url)
    parts = list(client.generate(model="qwen2.5:7b", prompt="hi", stream=True))
    assert "".join(p.response or "" for p in parts) == DEFAULT_REPLY and parts[-1].done
    whole = client.chat(model="qwen2.5:7b", messages=ASK)
    assert whole.message.content == DEFAULT_REPLY and whole.eval_count
    statuses = [p.status for p in client.pull("llama3.2:1b", stream=True)]
    assert statuses[0] == "pulling manifest" and statuses[-1] == "success"
    assert "llama3.2:1b" in [m.model for m in client.list().models]
    assert client.show("qwen2.5:7b").capabilities == ["completion"]
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="nope", messages=ASK)
    assert info.value.status_code == 404
    assert info.value.error == 'model "nope" not found, try pulling it first'
    client.close()


def test_a_model_is_asked_for_the_same_context_after_a_longer_prompt(fake_ollama: FakeOllama) -> None:
    """Ollama reloads a model for every change of num_ctx, so a shorter prompt asks no less than before:
    the next question's client too (the window makes one a question), but never over a lower cap."""
    first = make(fake_ollama)
    first.chat(ASK)
    first.chat([{"role": "user", "content": words(5000)}])
    first.chat(ASK)
    make(fake_ollama).chat(ASK)
    asked = [b["options"]["num_ctx"] for b in chat_bodies(fake_ollama)]
    assert asked[0] == 3072 and asked[1] > 3072 and asked[1:] == [asked[1]] * 3
    assert fake_ollama.reloads == 1  # the one growth
    make(fake_ollama, max_context=4096).chat(ASK)
    assert chat_bodies(fake_ollama)[-1]["options"]["num_ctx"] == 4096
    fake_ollama.models["other:1b"] = {"context_length": 8192, "family": "llama"}
    make(fake_ollama, model="other:1b").chat(ASK)  # another model starts from its own need
    assert chat_bodies(fake_ollama)[-1]["options"]["num_ctx"] == 3072
