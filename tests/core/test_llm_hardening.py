"""Calls end: deadlines, the circuit breaker, cuts under a read, odd servers and proxies.

All against FakeOllama over real HTTP with its fault modes; a test that hangs instead of
ending is a failing test (pytest-timeout), no test measures time.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest
from docatlas.core.base.errors import Cancelled, LLMError, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm.breaker import CircuitOpen
from docatlas.core.llm.ollama import OllamaLLM
from fixtures import ollama_fixture
from fixtures.ollama_server import DEFAULT_REPLY, FakeOllama

fake_ollama = ollama_fixture.fake_ollama
ASK = [{"role": "user", "content": "What is the capital of France?"}]


def make(server: FakeOllama, **overrides: object) -> OllamaLLM:
    values: dict = {"host": server.host, "timeout_s": 5.0, "retries": 0, "backoff_s": 0.01}
    values.update(overrides)
    return OllamaLLM(OllamaSettings(**values))


def chats(server: FakeOllama) -> int:
    return sum(1 for p in server.paths() if p == "/api/chat")


def test_headers_then_silence_ends_at_the_first_token_deadline(fake_ollama):
    fake_ollama.fail_next("stall")
    fake_ollama.hang_s = 60
    with pytest.raises(OllamaTimeout, match="did not answer within 1 s"):
        make(fake_ollama, timeout_s=1.0).chat(ASK)


@pytest.mark.timeout(30)
def test_a_drip_from_the_start_never_resets_the_first_token_deadline(fake_ollama):
    """A byte every 0.2 s keeps a per-read timeout of 1 s happy forever; the deadline is not."""
    fake_ollama.fail_next("drip")
    fake_ollama.hang_s = 120  # the server would drip for two minutes
    with pytest.raises(OllamaTimeout, match="did not answer within 1 s"):
        make(fake_ollama, timeout_s=1.0).chat(ASK)


@pytest.mark.timeout(30)
def test_a_reply_that_drips_after_it_started_ends_at_the_whole_reply_deadline(fake_ollama):
    fake_ollama.responder = lambda request: "word " * 40
    llm = make(fake_ollama, timeout_s=1.0, num_predict=8)
    assert llm.chat(ASK).text  # a fast, complete reply: the speed is measured
    assert llm.deadlines.speed and llm.deadlines.speed > 8
    fake_ollama.fail_next("drip_late")
    fake_ollama.hang_s = 120
    with pytest.raises(OllamaTimeout, match="still coming after"):
        llm.chat([{"role": "user", "content": "again"}])


def test_garbage_lines_are_retried_then_named(fake_ollama):
    fake_ollama.fail_next("garbage")
    assert make(fake_ollama, retries=1).chat(ASK).text == DEFAULT_REPLY
    fake_ollama.fail_next("garbage", times=2)
    with pytest.raises(LLMError, match="did not answer like Ollama") as info:
        make(fake_ollama, retries=1).chat([{"role": "user", "content": "other"}])
    assert "<html" not in info.value.message and "Expecting value" not in info.value.message


def test_a_proxy_502_gets_a_real_reason(fake_ollama):
    fake_ollama.fail_next("bad_gateway", times=2)
    with pytest.raises(LLMError) as info:
        make(fake_ollama, retries=1).chat(ASK)
    assert "502 Bad Gateway" in info.value.message and "proxy" in info.value.message
    assert chats(fake_ollama) == 2


def test_a_plain_web_server_is_one_sentence_not_its_page(fake_ollama):
    fake_ollama.web_page = True
    llm = make(fake_ollama)
    for call in (llm.check, lambda: llm.chat(ASK), lambda: llm.embed(["x"], model="nomic-embed-text")):
        with pytest.raises(OllamaUnreachable) as info:
            call()
        message = info.value.message
        assert "did not answer like Ollama" in message and "<" not in message and "It works" not in message
        assert len(message.splitlines()) == 1


def test_a_server_that_dies_and_comes_back_is_waited_for(fake_ollama):
    fake_ollama.fail_next("die")
    fake_ollama.down_s = 0.3
    llm = make(fake_ollama, retries=6, backoff_s=0.2)
    assert llm.chat(ASK).text == DEFAULT_REPLY
    assert chats(fake_ollama) >= 2


def test_the_breaker_opens_after_three_timeouts_in_a_row(fake_ollama):
    fake_ollama.fail_next("stall", times=10)
    fake_ollama.hang_s = 60
    llm = make(fake_ollama, timeout_s=0.5, retries=5)
    with pytest.raises(CircuitOpen, match="timed out 3 times in a row, so the run stopped"):
        llm.chat(ASK)
    assert chats(fake_ollama) == 3  # not (retries + 1)
    with pytest.raises(CircuitOpen):
        llm.chat([{"role": "user", "content": "next chunk"}])
    assert chats(fake_ollama) == 3  # an open breaker sends nothing
    assert isinstance(CircuitOpen("x"), OllamaUnreachable)  # a run stops on it as on a dead host


def test_a_reply_closes_the_breaker_again(fake_ollama):
    fake_ollama.fail_next("stall", times=2)
    fake_ollama.hang_s = 60
    llm = make(fake_ollama, timeout_s=0.5, retries=5)
    assert llm.chat(ASK).text == DEFAULT_REPLY  # two timeouts, then an answer
    assert llm.breaker.timeouts == 0


@pytest.mark.timeout(30)
def test_cancel_cuts_a_dripping_call_under_its_read(fake_ollama):
    """Neither the per-read timeout (60 s) nor the first-token deadline ends this; the cut does."""
    fake_ollama.fail_next("drip", paths=("/api/chat",))
    fake_ollama.hang_s = 120
    llm = make(fake_ollama, timeout_s=60.0)
    cancel = threading.Event()

    def cancel_once_dripping() -> None:  # the drip has begun: the call is surely under its read
        while chats(fake_ollama) == 0:
            time.sleep(0.01)
        time.sleep(0.3)
        cancel.set()

    threading.Thread(target=cancel_once_dripping, daemon=True).start()
    with pytest.raises(Cancelled):
        llm.chat(ASK, cancel=cancel)
    assert llm.chat([{"role": "user", "content": "again"}]).text == DEFAULT_REPLY


class _Recorder:
    """A TCP listener that only counts the connections made to it (a proxy that must stay unused)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def test_the_environments_proxy_is_never_used_for_ollama(fake_ollama, monkeypatch):
    proxy = _Recorder()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert make(fake_ollama).chat(ASK).text == DEFAULT_REPLY  # loopback: straight to Ollama
    # a host on another machine: the client tries it directly (and fails here), never the proxy
    remote = OllamaLLM(OllamaSettings(host="10.255.255.1:11434", connect_timeout_s=0.3, timeout_s=1.0,
                                      retries=0))
    with pytest.raises(LLMError):
        remote.chat(ASK)
    assert proxy.connections == 0
    proxy.sock.close()


def test_a_proxy_is_used_when_the_setting_names_it(fake_ollama):
    proxy = _Recorder()
    llm = make(fake_ollama, proxy=proxy.url)
    with pytest.raises(LLMError):
        llm.chat(ASK)  # the recorder hangs up: no answer, but the call went through it
    assert proxy.connections >= 1 and chats(fake_ollama) == 0
    proxy.sock.close()
