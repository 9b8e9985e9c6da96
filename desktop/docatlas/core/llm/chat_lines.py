"""Ollama's streamed reply lines as plain dicts, and the error Ollama answers with.

Each NDJSON line is one `json.loads` (no model class per line: a few milliseconds a call under
the GIL with four calls in flight). A line with "error" is `ResponseError`; a line that is not
JSON is a `json.JSONDecodeError` and one that is JSON but not an object is `NotAnObject` (both:
the host does not speak Ollama's API). `ollama_http` reads the lines off the connection.
"""

from __future__ import annotations

import json


class NotAnObject(ValueError):
    """A reply or streamed line that is JSON but not what Ollama's API sends: not Ollama."""


class ResponseError(Exception):
    """Ollama answered with an error: its message (`error`) and HTTP status (-1 within a stream).

    As the official client's: a body that is JSON with "error" gives that message, any
    other body is the message itself."""

    def __init__(self, error: str, status_code: int = -1) -> None:
        try:
            parsed = json.loads(error)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "error" in parsed:
            error = str(parsed["error"])
        super().__init__(error)
        self.error = error
        self.status_code = status_code

    def __str__(self) -> str:
        return f"{self.error} (status code: {self.status_code})"


def parse_line(line: bytes) -> dict | None:
    """One streamed line as a dict (None for a blank one); an "error" line raises `ResponseError`."""
    line = line.strip()
    if not line:
        return None
    part = json.loads(line.decode("utf-8", "replace"))
    if not isinstance(part, dict):
        raise NotAnObject("a streamed line is not a JSON object")
    if err := part.get("error"):
        raise ResponseError(str(err))
    return part


def piece_of(part: dict) -> str:
    """The text a streamed chat line adds ("" when it adds none)."""
    message = part.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def count_of(part: dict, name: str) -> int:
    """A count in a reply or a line (`prompt_eval_count`, `eval_count`, a size in bytes); 0 when it is
    not a whole number."""
    value = part.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
