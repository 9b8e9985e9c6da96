"""The circuit breaker: after repeated timeouts in a row, stop asking a host that does not answer.

Without it every chunk pays (retries + 1) x timeout against a hung Ollama: hours for a
folder. After `threshold` timeouts in a row (any call, any thread) the breaker opens and
every call fails at once with `CircuitOpen`, one sentence; a run treats that like an
unreachable Ollama and stops. After `cool_down_s` one call is let through again (the
window keeps its client for a long time), and a reply closes the breaker.
"""

from __future__ import annotations

import threading
import time

from docatlas.core.base.errors import OllamaUnreachable

THRESHOLD = 3
COOL_DOWN_S = 60.0


class CircuitOpen(OllamaUnreachable):
    """Ollama timed out too many times in a row; the run stops instead of waiting for each chunk."""


class Breaker:
    """Counts timeouts in a row for one client."""

    def __init__(self, host: str, threshold: int = THRESHOLD, cool_down_s: float = COOL_DOWN_S):
        self.host = host
        self.threshold = max(1, threshold)
        self.cool_down_s = cool_down_s
        self.timeouts = 0
        self._opened_at: float | None = None
        self._lock = threading.Lock()

    def sentence(self) -> str:
        """What the user reads when the breaker is open."""
        return (f"Ollama at {self.host} timed out {self.timeouts} times in a row, so the run stopped; "
                "check that Ollama is running and not overloaded (or choose a smaller model), then run "
                "the same command again to continue.")

    def check(self) -> None:
        """Raise CircuitOpen while the breaker is open (and not cooled down)."""
        with self._lock:
            if self._opened_at is None:
                return
            if time.monotonic() - self._opened_at >= self.cool_down_s:
                self._opened_at = None  # half open: let the next call try
                self.timeouts = self.threshold - 1
                return
        raise CircuitOpen(self.sentence())

    def timed_out(self) -> None:
        """A call timed out; raise CircuitOpen when that makes `threshold` in a row."""
        with self._lock:
            self.timeouts += 1
            if self.timeouts >= self.threshold and self._opened_at is None:
                self._opened_at = time.monotonic()
            is_open = self._opened_at is not None
        if is_open:
            raise CircuitOpen(self.sentence())

    def answered(self) -> None:
        """A call got a reply: the count starts again."""
        with self._lock:
            self.timeouts = 0
            self._opened_at = None
