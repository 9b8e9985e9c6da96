"""Streamed pieces relayed to a reader, and after a retry (or another host) only the new part."""

from __future__ import annotations

from collections.abc import Callable


class TokenSink:
    """Relays streamed pieces, and after a retry only what the reader has not had yet."""

    def __init__(self, on_token: Callable[[str], None]):
        self.on_token = on_token
        self.sent = 0  # characters the reader has
        self.attempt = 0  # characters of the current attempt

    def restart(self) -> None:
        """A new attempt begins (a stream was cut and the call is retried)."""
        self.attempt = 0

    def __call__(self, piece: str) -> None:
        start, self.attempt = self.attempt, self.attempt + len(piece)
        if self.attempt > self.sent:
            self.on_token(piece[max(0, self.sent - start):])
            self.sent = self.attempt

    def restarted(self) -> TokenSink:
        """This sink, at the start of a new attempt (the call went to another host)."""
        self.restart()
        return self
