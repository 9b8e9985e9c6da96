"""Our Ollama API client against the official `ollama` package, through the same test server.

Every call DocAtlas makes goes through the official client (`core/llm/ollama_http.py` wraps
`ollama.Client`); these tests prove it by the User-Agent the server sees, and check that the
wrapper's requests, replies and errors are the official client's own. Each test makes the same
call with both, on one server, and compares the bodies the server received and what came back.
"""

from __future__ import annotations

import http.server
import threading

import httpx
import ollama
import pytest
from docatlas.core.base.errors import LLMError
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm import transport
from docatlas.core.llm.chat_lines import NotAnObject, ResponseError, piece_of
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.ollama_http import OllamaHTTP
from fixtures import ollama_fixture
from fixtures.ollama_fixture import CHAT_MODEL, EMBED_MODEL
from fixtures.ollama_server import FakeOllama

fake_ollama = ollama_fixture.fake_ollama
ASK = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Where is Paris?"}]


@pytest.fixture
def both(fake_ollama: FakeOllama):
    """(ours, official, server): two clients of one test server."""
    ours = transport.new_client(OllamaSettings(host=fake_ollama.host, timeout_s=5.0), fake_ollama.url)
    official = ollama.Client(host=fake_ollama.url)
    yield ours, official, fake_ollama
    ours.close()
    official.close()


def _last_two_bodies(server: FakeOllama, path: str) -> tuple:
    bodies = [r["body"] for r in server.requests if r["path"] == path]
    assert len(bodies) == 2, bodies
    return bodies[0], bodies[1]


@pytest.mark.parametrize("think, format", [(False, {"type": "object"}), (None, "json"), (None, None)])
def test_a_streamed_chat_sends_what_the_official_client_sends_and_reads_the_same_text(both, think, format):
    ours, official, server = both
    options = {"num_ctx": 4096, "temperature": 0, "num_predict": 64}
    lines = list(ours.chat(model=CHAT_MODEL, messages=ASK, think=think, format=format, options=options))
    parts = list(official.chat(model=CHAT_MODEL, messages=ASK, stream=True, think=think, format=format,
                               options=options))
    mine, theirs = _last_two_bodies(server, "/api/chat")
    assert mine == theirs
    assert "".join(map(piece_of, lines)) == "".join(p.message.content or "" for p in parts) != ""
    assert lines[-1]["done"] and lines[-1]["eval_count"] == parts[-1].eval_count
    assert lines[-1]["done_reason"] == parts[-1].done_reason


def test_embed_show_tags_and_pull_match_the_official_client(both):
    ours, official, server = both
    assert ours.embed(model=EMBED_MODEL, input=["alpha", "beta"]) == [
        list(v) for v in official.embed(model=EMBED_MODEL, input=["alpha", "beta"]).embeddings]
    assert _last_two_bodies(server, "/api/embed")[0] == _last_two_bodies(server, "/api/embed")[1]
    shown, reference = ours.show(CHAT_MODEL), official.show(CHAT_MODEL)
    assert shown["capabilities"] == reference.capabilities and shown["model_info"] == dict(reference.modelinfo)
    assert _last_two_bodies(server, "/api/show")[0] == _last_two_bodies(server, "/api/show")[1]
    assert [m["model"] for m in ours.tags()] == [m.model for m in official.list().models]
    statuses = [p["status"] for p in ours.pull("llama3.2:1b")]
    assert statuses == [p.status for p in official.pull("llama3.2:1b", stream=True)]
    assert _last_two_bodies(server, "/api/pull")[0] == _last_two_bodies(server, "/api/pull")[1]


def test_an_error_reads_as_the_official_clients_does(both):
    ours, official, _ = both
    with pytest.raises(ResponseError) as mine:
        list(ours.chat(model="nope", messages=ASK))
    with pytest.raises(ollama.ResponseError) as theirs:
        official.chat(model="nope", messages=ASK)
    assert (mine.value.error, mine.value.status_code) == (theirs.value.error, theirs.value.status_code) == (
        'model "nope" not found, try pulling it first', 404)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(ResponseError) as shown:
        ours.show("nope")
    assert shown.value.status_code == 404


class _WrongShape(http.server.BaseHTTPRequestHandler):
    """Answers every request with JSON that is not what Ollama's API sends."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(b'{"embeddings": ["none"]}')

    def do_GET(self) -> None:
        self._send(b'{"models": 3}')

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_reply_of_the_wrong_shape_is_not_taken_for_ollama():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WrongShape)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = OllamaHTTP(f"http://127.0.0.1:{server.server_address[1]}", timeout=httpx.Timeout(5.0),
                        transport=httpx.HTTPTransport())
    try:
        with pytest.raises(NotAnObject, match=r"no list of embeddings|not what Ollama"):
            client.embed(model=EMBED_MODEL, input=["alpha"])
        with pytest.raises(NotAnObject, match=r"no list of models|not what Ollama"):
            client.tags()
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_a_redirect_is_not_followed_and_the_text_goes_nowhere_else(fake_ollama: FakeOllama):
    """The official client follows redirects; ours must not send the documents' text on."""
    elsewhere = f"{fake_ollama.url}/api/chat"

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", elsewhere)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    llm = OllamaLLM(OllamaSettings(host=host, model=CHAT_MODEL, timeout_s=5.0, retries=0))
    try:
        with pytest.raises(LLMError, match="did not answer like Ollama"):
            llm.chat([{"role": "user", "content": "private text"}])
        assert fake_ollama.requests == []
    finally:
        llm.close()
        server.shutdown()
        server.server_close()


def test_every_call_of_a_real_ingest_and_query_goes_through_the_official_client(fake_ollama: FakeOllama, tmp_path):
    """A real `docatlas ingest` and `query` process: the server sees only the official client's agent."""
    import os
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("Maria Lopez founded Harbor Analytics in Porto. Jonas Weber joined her.")
    env = {**os.environ, "DOCATLAS_DATA_DIR": str(tmp_path / "ws"), "OLLAMA_HOST": fake_ollama.url}
    for args in (["ingest", str(docs), "--model", CHAT_MODEL, "--embed-model", EMBED_MODEL],
                 ["query", "Who founded Harbor Analytics?", "--json"]):
        subprocess.run([sys.executable, "-m", "docatlas", *args], env=env, capture_output=True, timeout=120)
    agents = {(r["path"], r["agent"]) for r in fake_ollama.requests}
    paths = {path for path, _ in agents}
    assert {"/api/chat", "/api/embed"} <= paths
    assert all((agent or "").startswith("ollama-python/") for _, agent in agents), agents
