"""The errors DocAtlas reads Ollama's replies by, and the fields it reads from a reply part.

`ollama_http` turns the official client's `ResponseError` into this module's (the same
message and status), and a reply that is JSON of the wrong shape into `NotAnObject`, so
`failures` can name them without importing the client.
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
