"""OllamaLLM keeps its HTTP connections from call to call, and reads a streamed line as Ollama's client would."""

from __future__ import annotations

import contextlib
import pathlib
import socket
import subprocess
import sys
import threading

import pytest
from httpcore._backends.sync import SyncStream

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from docatlas.core.base.errors import Cancelled, OllamaUnreachable
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm import failures, transport
from docatlas.core.llm.chat_lines import NotAnObject, ResponseError, count_of, piece_of
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.protocol import MemoryCache
from fixtures import ollama_fixture
from fixtures.ollama_server import DEFAULT_REPLY, FakeOllama

fake_ollama = ollama_fixture.fake_ollama


def make(server: FakeOllama) -> OllamaLLM:
    return OllamaLLM(OllamaSettings(host=server.host, timeout_s=5.0, retries=2, backoff_s=0.01))


def ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_calls_one_after_another_use_one_connection(fake_ollama: FakeOllama) -> None:
    llm = make(fake_ollama)
    replies = [llm.chat(ask(f"question {i}")).text for i in range(6)]
    assert replies == [DEFAULT_REPLY] * 6
    assert len(llm.embed(["a", "b"])) == 2
    assert fake_ollama.connections == 1  # /api/show, six chats and an embedding on one connection
    llm.close()


def test_four_threads_keep_at_most_four_connections(fake_ollama: FakeOllama) -> None:
    fake_ollama.latency = 0.05
    llm = make(fake_ollama)
    llm.context_length()
    errors: list[Exception] = []

    def work(worker: int) -> None:
        try:
            for i in range(5):
                llm.chat(ask(f"worker {worker} question {i}"))
        except Exception as exc:  # the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not errors and llm.calls == 20
    assert fake_ollama.connections <= 4
    llm.close()


def test_a_reply_stopped_by_the_loop_check_closes_its_connection_and_the_next_call_answers(
        fake_ollama: FakeOllama) -> None:
    record = '("entity"<|>Marley<|>person<|>Scrooge\'s late partner.)##\n'
    fake_ollama.responder = lambda request: (record * 100 if "loop" in request["messages"][0]["content"]
                                             else DEFAULT_REPLY)
    llm = make(fake_ollama)
    cache = MemoryCache()
    llm.cache = cache
    looped = llm.chat(ask("loop please"))
    assert looped.done_reason == "repeat" and looped.text.count("Marley") == 1
    assert llm.chat(ask("answer")).text == DEFAULT_REPLY
    assert fake_ollama.connections == 2  # the stopped reply's rest was not read: its connection went
    assert len(cache) == 1  # only the reply that ended by itself is kept


def test_a_reply_part_and_the_errors_read_as_the_official_client_gives_them() -> None:
    part = {"message": {"role": "assistant", "content": "Par"}, "done": False}
    assert piece_of(part) == "Par" and not part["done"]
    assert piece_of({"message": None, "done": True}) == ""
    assert count_of({"eval_count": 12}, "eval_count") == 12 and count_of({"eval_count": "many"}, "eval_count") == 0
    not_ollama = NotAnObject("a streamed line is not a JSON object")
    assert failures.kind(not_ollama) == "stream"  # retried, then named
    error = failures.user_error(not_ollama, "http://127.0.0.1:11434", "qwen2.5:7b", 5.0)
    assert isinstance(error, OllamaUnreachable) and "did not answer like Ollama" in error.message
    assert failures.kind(ResponseError("model runner crashed")) == "server"


def test_a_slot_is_held_around_the_model_call_alone(fake_ollama: FakeOllama) -> None:
    """The cache (the workspace's store, shared with the writer) is read and written outside the slot."""
    events: list[str] = []

    class Recording(MemoryCache):
        def get(self, key: str) -> str | None:
            events.append("cache get")
            return super().get(key)

        def put(self, key: str, model: str, reply: str) -> None:
            events.append("cache put")
            super().put(key, model, reply)

    @contextlib.contextmanager
    def slot():
        events.append("slot taken")
        yield
        events.append(f"slot given back after {len(chat_requests(fake_ollama))} chat")

    llm = make(fake_ollama)
    llm.cache = Recording()
    assert llm.chat(ask("question"), slot=slot()).text == DEFAULT_REPLY
    assert events == ["cache get", "slot taken", "slot given back after 1 chat", "cache put"]
    events.clear()
    assert llm.chat(ask("question"), slot=slot()).cached
    assert events == ["cache get"]  # a cached reply never waits for a slot


def chat_requests(server: FakeOllama) -> list[dict]:
    return [r for r in server.requests if r["path"] == "/api/chat"]


def test_a_gzip_encoded_stream_from_a_proxy_is_read_too(fake_ollama: FakeOllama) -> None:
    fake_ollama.gzip_streams = True
    llm = make(fake_ollama)
    pieces: list[str] = []
    reply = llm.chat(ask("question"), on_token=pieces.append)
    assert reply.text == DEFAULT_REPLY and len(pieces) > 3 and reply.done_reason == "stop"
    assert llm.chat(ask("again")).text == DEFAULT_REPLY and fake_ollama.connections == 1


def test_one_thread_watches_every_call_for_a_stop_and_a_stop_cuts_them_all(fake_ollama: FakeOllama) -> None:
    fake_ollama.latency = 600.0  # only cut connections let the calls end before the test's timeout
    llm = make(fake_ollama)
    llm.context_length()
    cancel = threading.Event()
    outcomes: list[str] = []

    def work(i: int) -> None:
        try:
            llm.chat(ask(f"question {i}"), cancel=cancel)
            outcomes.append("answered")
        except Cancelled:
            outcomes.append("stopped")

    def watchers() -> int:  # other clients of this test session may have one of their own
        return sum(1 for t in threading.enumerate() if t.name == "docatlas-llm-cancel")

    before = watchers()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    while fake_ollama.in_flight < 3 and all(t.is_alive() for t in threads):  # the server holds all three
        threading.Event().wait(0.01)
    assert fake_ollama.in_flight == 3
    assert watchers() <= before + 1  # one thread for the client's calls, not one per call
    cancel.set()
    for thread in threads:
        thread.join(20)
    assert outcomes == ["stopped"] * 3
    fake_ollama.latency = 0.0
    assert llm.chat(ask("again")).text == DEFAULT_REPLY  # a fresh client serves the next call


def test_a_request_goes_out_in_one_send_when_its_reply_is_read() -> None:
    ours, theirs = socket.socketpair()
    stream = transport._TrackedStream(SyncStream(ours), transport.CallSockets())
    stream.write(b"POST /api/chat HTTP/1.1\r\nContent-Length: 2\r\n\r\n")
    stream.write(b"{}")
    stream.write(b"")
    theirs.setblocking(False)
    with pytest.raises(BlockingIOError):
        theirs.recv(1024)  # nothing sent yet
    theirs.setblocking(True)
    theirs.sendall(b"HTTP/1.1 200 OK\r\n")
    assert stream.read(1024) == b"HTTP/1.1 200 OK\r\n"
    assert theirs.recv(1024) == b"POST /api/chat HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
    big = transport.COALESCE_BYTES + 1
    received: list[int] = []
    reader = threading.Thread(target=lambda: received.append(len(theirs.recv(big, socket.MSG_WAITALL))))
    reader.start()
    stream.write(b"x" * big)  # a big body is not held back: it is sent before any read
    reader.join(20)
    assert received == [big]
    stream.close()
    theirs.close()


def test_clients_share_one_tls_context_and_httpx_brings_no_command_line_tool() -> None:
    """A question makes two clients and the window's watch one every 1.5 s: the certificate
    bundle is loaded once per process, only for https, and httpx's own CLI (click, rich) is
    never imported."""
    settings = OllamaSettings(host="http://127.0.0.1:9")
    plain = transport.new_client(settings, "http://127.0.0.1:9")
    first = transport.new_client(settings, "https://gpu1.lan:11434")
    second = transport.new_client(settings, "https://gpu2.lan:11434")
    contexts = {id(c._client._client._transport._pool._ssl_context) for c in (first, second)}
    assert contexts == {id(transport.shared_tls_context())}
    assert transport.shared_tls_context().verify_mode.name == "CERT_REQUIRED"  # still verified
    untrusting = plain._client._client._transport._pool._ssl_context
    assert untrusting is not transport.shared_tls_context()
    assert untrusting.verify_mode.name == "CERT_REQUIRED" and untrusting.cert_store_stats()["x509_ca"] == 0
    proxied = OllamaSettings(host="http://127.0.0.1:9", proxy="https://proxy.lan:3128")
    assert transport.tls_context_for("http://127.0.0.1:9", proxied.proxy) is transport.shared_tls_context()
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import docatlas.core.llm.ollama, httpx\n"
             "print(sorted(m for m in ('rich', 'click', 'pygments') if m in sys.modules), callable(httpx.main))\n")
    desktop = str(pathlib.Path(__file__).resolve().parents[2] / "desktop")
    out = subprocess.run([sys.executable, "-c", probe, desktop], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True"]
