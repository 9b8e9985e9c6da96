"""The official ollama client, with a streamed chat reply read as plain dicts on a kept connection.

`ollama.Client` still builds and sends the request (its ChatRequest, headers and address);
only the streamed reply of `chat` is read here. Each NDJSON line is one `json.loads` instead
of a pydantic `ChatResponse` (a few milliseconds a call under the GIL, with four calls in
flight), and the stream is read to its end after the `done` line, so httpx keeps the
connection for the next call instead of opening a new one (a reply stopped early, by the
loop check or a cancel, still closes its connection: the rest of it is not wanted).

Errors are the client's own: an HTTP error status is `ollama.ResponseError` (the server's
text and status), so is a line with "error"; a line that is not JSON is a
`json.JSONDecodeError` and one that is JSON but not an object is `NotAnObject` (both: the
host does not speak Ollama's API); transport faults stay raw httpx exceptions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import ollama


class NotAnObject(ValueError):
    """A streamed line that is JSON but not an object: not Ollama's API."""


class StreamingClient(ollama.Client):
    """`ollama.Client` whose streamed chat yields each line as a dict (see the module)."""

    def _request(self, cls: Any, *args: Any, stream: bool = False, **kwargs: Any) -> Any:
        if stream and cls is ollama.ChatResponse:
            return self._chat_lines(*args, **kwargs)
        return super()._request(cls, *args, stream=stream, **kwargs)

    def _chat_lines(self, *args: Any, **kwargs: Any) -> Iterator[dict]:
        with self._client.stream(*args, **kwargs) as response:
            try:
                response.raise_for_status()
            except httpx.HTTPStatusError as exc:
                exc.response.read()
                raise ollama.ResponseError(exc.response.text, exc.response.status_code) from None
            parts = _parts(response)
            for part in parts:
                if part.get("done"):
                    _drain(parts)
                    yield part
                    return
                yield part


def _parts(response: httpx.Response) -> Iterator[dict]:
    """The reply's lines as dicts, as the bytes arrive.

    An uncompressed body (what Ollama sends) is read from the response's own stream, two
    generator layers and a chunker fewer per streamed line than `iter_bytes`; transport
    faults still arrive as httpx exceptions.
    """
    rest = b""
    raw = "content-encoding" not in response.headers
    for data in (response.stream if raw else response.iter_bytes()):
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
    except (httpx.HTTPError, ValueError, ollama.ResponseError):
        pass  # the connection is closed instead of kept


def parse_line(line: bytes) -> dict | None:
    """One streamed line as a dict (None for a blank one); raise as the client would."""
    line = line.strip()
    if not line:
        return None
    part = json.loads(line.decode("utf-8", "replace"))
    if not isinstance(part, dict):
        raise NotAnObject("a streamed line is not a JSON object")
    if err := part.get("error"):
        raise ollama.ResponseError(err)
    return part


def piece_of(part: dict) -> str:
    """The text a streamed chat line adds ("" when it adds none)."""
    message = part.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def count_of(part: dict, name: str) -> int:
    """A token count of the `done` line (`prompt_eval_count`, `eval_count`); 0 when it is not a number."""
    value = part.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
