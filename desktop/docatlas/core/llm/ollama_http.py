"""Ollama's REST API over one httpx client: the six endpoints DocAtlas uses, as plain dicts.

Our own client, not the official `ollama` package: that package builds some thirty pydantic
models as it is imported (about 0.3 s of CPU in every process that calls a model, much of it
in Rust holding the GIL, which froze the window at the start of a run) and validates every
reply into them, while DocAtlas reads six endpoints' JSON. The requests are the official
client's, field for field, with its headers (`tests/core/test_llm_official.py` sends both
through the test server and compares): JSON in and out, `OLLAMA_API_KEY` sent as a bearer
token when it is set. Unlike it, a redirect is never followed: the documents' text goes to the
configured host and nowhere else, and a reply that sends us elsewhere is not Ollama's.

A streamed reply (chat, pull) is read as it arrives, one `json.loads` a line, and a chat is
read to its end after its `done` line, so the connection is kept for the next call (a reply
stopped early, by the loop check or a cancel, closes its connection instead).

Errors, as the official client raises them: an HTTP error status, or a line or reply with
"error", is `ResponseError` (the server's message and status); a reply that is not JSON is
`json.JSONDecodeError`, and JSON of the wrong shape is `NotAnObject` (both: the host does not
speak Ollama's API); transport faults stay raw httpx exceptions.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator
from typing import Any

import httpx

from docatlas import __version__
from docatlas.core.llm.chat_lines import NotAnObject, ResponseError, parse_line


def _headers() -> dict[str, str]:
    """The official client's headers, with DocAtlas's name in the user agent."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": f"docatlas/{__version__} ({platform.machine()} {platform.system().lower()}) "
                      f"Python/{platform.python_version()}",
    }
    if api_key := os.environ.get("OLLAMA_API_KEY"):
        headers["authorization"] = f"Bearer {api_key}"
    return headers


class OllamaHTTP:
    """One Ollama host's API; thread-safe (httpx's pool keeps a connection per call in flight)."""

    def __init__(self, host: str, *, timeout: httpx.Timeout, transport: httpx.BaseTransport) -> None:
        self._client = httpx.Client(base_url=host, timeout=timeout, transport=transport, trust_env=False,
                                    follow_redirects=False, headers=_headers())

    def close(self) -> None:
        """Close every connection."""
        self._client.close()

    def chat(self, *, model: str, messages: list[dict], think: bool | None = None,
             format: dict | str | None = None, options: dict | None = None) -> Iterator[dict]:
        """A streamed chat reply: each line as a dict, the last one with `done`."""
        body = {"model": model, "stream": True, "options": options, "format": format,
                "messages": messages, "tools": [], "think": think}
        return self._chat_lines(_without_none(body))

    def embed(self, *, model: str, input: list[str]) -> list[list[float]]:
        """One embedding per text."""
        embeddings = self._reply("POST", "/api/embed", {"model": model, "input": input}).get("embeddings")
        try:
            if not isinstance(embeddings, list) or not all(isinstance(e, list) for e in embeddings):
                raise TypeError(embeddings)
            return [list(map(float, vector)) for vector in embeddings]
        except (TypeError, ValueError):
            raise NotAnObject("the embed reply holds no list of embeddings") from None

    def show(self, model: str) -> dict:
        """The model's facts (`model_info`, `capabilities`)."""
        return self._reply("POST", "/api/show", {"model": model})

    def tags(self) -> list[dict]:
        """The installed models as Ollama lists them (`model`, `size`, `details`)."""
        models = self._reply("GET", "/api/tags").get("models")
        if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
            raise NotAnObject("the tags reply holds no list of models")
        return models

    def pull(self, model: str) -> Iterator[dict]:
        """Have Ollama download `model`: its progress lines (`status`, `completed`, `total`)."""
        with self._client.stream("POST", "/api/pull", json={"model": model, "stream": True,
                                                             "insecure": False}) as response:
            _raise_for_status(response)
            yield from _parts(response)

    def _reply(self, method: str, path: str, body: dict | None = None) -> dict:
        """One JSON object for one request."""
        response = self._client.request(method, path, json=body)
        _raise_for_status(response)
        reply = json.loads(response.content)
        if not isinstance(reply, dict):
            raise NotAnObject("the reply is not a JSON object")
        if err := reply.get("error"):
            raise ResponseError(str(err), response.status_code)
        return reply

    def _chat_lines(self, body: dict) -> Iterator[dict]:
        with self._client.stream("POST", "/api/chat", json=body) as response:
            _raise_for_status(response)
            parts = _parts(response)
            for part in parts:
                if part.get("done"):
                    _drain(parts)
                    yield part
                    return
                yield part


def _without_none(body: dict) -> dict:
    """The body without its unset fields, as the official client sends it."""
    return {k: v for k, v in body.items() if v is not None}


def _raise_for_status(response: httpx.Response) -> None:
    """An HTTP error status as `ResponseError`, with the server's own message; a redirect as
    `NotAnObject` (Ollama never redirects, and the text is not sent on)."""
    if response.is_redirect:
        raise NotAnObject(f"the server answered {response.status_code} and pointed elsewhere")
    if response.is_error:
        response.read()
        raise ResponseError(response.text, response.status_code)


def _parts(response: httpx.Response) -> Iterator[dict]:
    """The reply's lines as dicts, as the bytes arrive.

    An uncompressed body (what Ollama sends) is read from the response's own stream, two
    generator layers and a chunker fewer per streamed line than `iter_bytes`; transport
    faults still arrive as httpx exceptions.
    """
    rest = b""
    stream: Any = response.stream if "content-encoding" not in response.headers else response.iter_bytes()
    for data in stream:
        *lines, rest = (rest + data).split(b"\n") if rest else data.split(b"\n")
        for line in lines:
            if part := parse_line(line):
                yield part
    if part := parse_line(rest):
        yield part


def _drain(parts: Iterator[dict]) -> None:
    """Read what follows the `done` line (normally only the end of the stream): the
    connection goes back to the pool. The reply is complete, so a fault here loses nothing."""
    try:
        for _ in parts:
            pass
    except (httpx.HTTPError, ValueError, ResponseError):
        pass  # the connection is closed instead of kept
