"""Ollama's API through the official `ollama` client: the endpoints DocAtlas uses, as plain dicts.

Every call to Ollama goes through `ollama.Client` (the design card's client). This wrapper
adds what DocAtlas needs around it, without touching the client's internals:

- the httpx settings are ours, handed to the client as it allows (`timeout`, a `transport`
  whose sockets a cancel can shut, `trust_env=False` so no environment proxy is used, and
  `follow_redirects=False`: the documents' text goes to the configured host and nowhere else;
  a redirect is read as a server that does not speak Ollama's API);
- replies become plain dicts (the callers read a handful of fields; `model_dump` of the
  client's own models, without the unset ones);
- a streamed chat is read to its end after its `done` line, so the connection goes back to the
  pool for the next call (a reply stopped early, by the loop check or a cancel, closes its
  connection instead);
- errors keep one meaning for `failures`: Ollama's error (an HTTP error status, or a line with
  "error") is `chat_lines.ResponseError` with the server's message and status; a reply that is
  not JSON is `json.JSONDecodeError` and JSON of the wrong shape is `NotAnObject` (both: the
  host does not speak Ollama's API); transport faults stay httpx exceptions, or the builtin
  `ConnectionError` the client raises for a refused connection.

`ollama` is imported when the first client is made, so `--version`, `status` and the lock
check never load it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from docatlas.core.llm.chat_lines import NotAnObject, ResponseError


class OllamaHTTP:
    """One Ollama host's API over one `ollama.Client`; thread-safe (httpx's pool keeps a
    connection per call in flight)."""

    def __init__(self, host: str, *, timeout: httpx.Timeout, transport: httpx.BaseTransport) -> None:
        import ollama  # lazily: its pydantic models cost ~0.3 s: only a process that calls a model pays

        self._official = ollama
        self._client = ollama.Client(host=host, timeout=timeout, transport=transport, trust_env=False,
                                     follow_redirects=False)

    def close(self) -> None:
        """Close every connection."""
        self._client._client.close()  # ollama.Client has no close of its own; this is its httpx client

    def chat(self, *, model: str, messages: list[dict], think: bool | None = None,
             format: dict | str | None = None, options: dict | None = None) -> Iterator[dict]:
        """A streamed chat reply: each line as a dict, the last one with `done`."""
        return self._chat_lines(lambda: self._client.chat(model=model, messages=messages, stream=True,
                                                          think=think, format=format, options=options))

    def embed(self, *, model: str, input: list[str]) -> list[list[float]]:
        """One embedding per text."""
        embeddings = self._reply(lambda: self._client.embed(model=model, input=input)).get("embeddings")
        try:
            if not isinstance(embeddings, list) or not all(isinstance(e, list) for e in embeddings):
                raise TypeError(embeddings)
            return [list(map(float, vector)) for vector in embeddings]
        except (TypeError, ValueError):
            raise NotAnObject("the embed reply holds no list of embeddings") from None

    def show(self, model: str) -> dict:
        """The model's facts (`model_info`, `capabilities`)."""
        return self._reply(lambda: self._client.show(model))

    def tags(self) -> list[dict]:
        """The installed models as Ollama lists them (`model`, `size`, `details`)."""
        models = self._reply(self._client.list).get("models")
        if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
            raise NotAnObject("the tags reply holds no list of models")
        return models

    def pull(self, model: str) -> Iterator[dict]:
        """Have Ollama download `model`: its progress lines (`status`, `completed`, `total`)."""
        with self._errors():
            for part in self._client.pull(model, stream=True):
                yield _as_dict(part)

    def _reply(self, call: Callable[[], Any]) -> dict:
        """One reply of the client as a dict."""
        with self._errors():
            return _as_dict(call())

    def _chat_lines(self, start: Callable[[], Iterator[Any]]) -> Iterator[dict]:
        with self._errors():
            parts = start()
            try:
                for part in parts:
                    line = _as_dict(part)
                    if line.get("done"):
                        _drain(parts)
                        yield line
                        return
                    yield line
            finally:
                parts.close()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The client's errors as DocAtlas reads them (see the module's docstring)."""
        try:
            yield
        except self._official.ResponseError as exc:
            if 300 <= exc.status_code < 400:
                raise NotAnObject(f"the server answered {exc.status_code} and pointed elsewhere") from None
            raise ResponseError(str(exc.error), exc.status_code) from None
        except (AttributeError, TypeError) as exc:  # a line or reply that is JSON but no object
            raise NotAnObject("the reply is not a JSON object") from exc
        except ValueError as exc:
            if type(exc).__name__ == "ValidationError":  # pydantic's: JSON of the wrong shape
                raise NotAnObject("the reply is not what Ollama's API sends") from None
            raise


def _as_dict(reply: Any) -> dict:
    """A reply model of the client as the JSON Ollama sent (fields it left unset left out)."""
    return reply.model_dump(by_alias=True, exclude_none=True)


def _drain(parts: Iterator[Any]) -> None:
    """Read what follows the `done` line (normally only the end of the stream): the
    connection goes back to the pool. The reply is complete, so a fault here loses nothing."""
    try:
        for _ in parts:
            pass
    except Exception:  # the connection is closed instead of kept
        pass
