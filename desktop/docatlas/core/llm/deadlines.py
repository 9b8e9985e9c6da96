"""Deadlines for one model call: the first token, and the whole reply.

The first token must come within `timeout_s` (the prompt is read in that time). The whole
reply must end within `timeout_s` after the first token plus the time `num_predict` tokens
take at the speed measured so far (three times over, for a margin), or at one token a
second before any call has finished. A call past its deadline has its connection shut
under the read (`transport.CallSockets.cut_thread`), so a server that drips a byte a
second is given up on, and the call fails with `DeadlinePassed` (a timeout, retried and
counted by the circuit breaker like any other).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import httpx

from docatlas.core.llm.chat_lines import count_of
from docatlas.core.llm.transport import CallSockets

MARGIN = 3.0  # a reply may be this many times slower than the speed measured so far
UNMEASURED_SPEED = 1.0  # tokens per second assumed before any reply was measured
MIN_MEASURED_TOKENS = 8  # shorter replies say little about the speed
_SMOOTHING = 0.3
T = TypeVar("T")


class DeadlinePassed(httpx.TimeoutException):
    """A call ran past its deadline; the message says which one, for the user."""

    def __init__(self, sentence: str):
        super().__init__(sentence)
        self.sentence = sentence


class CallClock:
    """The deadlines of one call on one thread; `token()` on each piece, `done()` at the end."""

    def __init__(self, watch: Deadlines, first_token_s: float, predict: int):
        self.watch = watch
        self.thread = threading.get_ident()
        self.started = time.monotonic()
        self.first_token_s = first_token_s
        self.predict = predict
        self.first_at: float | None = None
        self.expired = ""  # the sentence, once a deadline passed
        self.deadline = self.started + first_token_s

    def token(self) -> None:
        """A piece arrived; the first one starts the whole-reply deadline."""
        if self.first_at is None:
            self.first_at = time.monotonic()
            self.deadline = self.first_at + self.first_token_s + self.watch.reply_seconds(self.predict)

    def done(self, tokens: int) -> None:
        """The reply ended with `tokens` tokens: a measurement of the model's speed."""
        if self.first_at is not None:
            self.watch.measured(tokens, time.monotonic() - self.first_at)


class Deadlines:
    """Watches the calls of one client; cuts the connection of a call past its deadline."""

    def __init__(self, sockets: CallSockets):
        self.sockets = sockets
        self.speed: float | None = None  # tokens per second, smoothed over finished replies
        self._lock = threading.Lock()
        self._calls: set[CallClock] = set()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None

    def reply_seconds(self, predict: int) -> float:
        """How long `predict` tokens may take after the first one."""
        speed = self.speed or UNMEASURED_SPEED
        return MARGIN * max(1, predict) / speed

    def measured(self, tokens: int, seconds: float) -> None:
        """Fold one reply's speed into the estimate."""
        if tokens < MIN_MEASURED_TOKENS or seconds <= 0:
            return
        speed = tokens / seconds
        with self._lock:
            self.speed = speed if self.speed is None else (1 - _SMOOTHING) * self.speed + _SMOOTHING * speed

    def guard(self, parts: Iterator[dict], first_token_s: float, predict: int) -> Iterator[dict]:
        """A streamed reply (its lines as dicts) under its deadlines: each line counts as a
        token, the `done` one ends it."""
        try:
            with self.watch(first_token_s, predict) as clock:
                for part in parts:
                    clock.token()
                    if part.get("done"):
                        clock.done(count_of(part, "eval_count"))
                    yield part
        finally:
            close = getattr(parts, "close", None)
            if close is not None:
                close()

    def call(self, fn: Callable[[], T], seconds: float) -> T:
        """A call with one reply (embed, show, list) that must be complete within `seconds`."""
        with self.watch(seconds, 0):
            return fn()

    @contextmanager
    def watch(self, first_token_s: float, predict: int) -> Iterator[CallClock]:
        """Run a call under its deadlines; a call cut by one raises `DeadlinePassed`."""
        clock = CallClock(self, first_token_s, predict)
        with self._lock:
            self._calls.add(clock)
            self._ensure_thread()
            self._wake.notify()
        try:
            yield clock
        except Exception as exc:
            if clock.expired:
                raise DeadlinePassed(clock.expired) from exc
            raise
        finally:
            with self._lock:
                self._calls.discard(clock)
            self.sockets.forget_thread(clock.thread)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="docatlas-llm-deadlines", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._calls:
                    if not self._wake.wait(timeout=30):
                        if not self._calls:
                            self._thread = None
                            return
                    continue
                now = time.monotonic()
                late = [c for c in self._calls if now >= c.deadline]
                for clock in late:
                    clock.expired = clock.expired or _sentence(clock, now)
                pending = [c.deadline for c in self._calls if now < c.deadline]
                # a late call is cut again until it ends: it may have been connecting at the first cut
                wait = 0.2 if late else (min(pending) - now if pending else 30)
            for clock in late:
                self.sockets.cut_thread(clock.thread)
            with self._lock:
                self._wake.wait(timeout=max(0.02, min(wait, 0.5)))


def _sentence(clock: CallClock, now: float) -> str:
    if clock.first_at is None:
        return (f"Ollama did not answer within {clock.first_token_s:g} s; try a smaller model, "
                "fewer parallel calls, or a longer timeout.")
    return (f"Ollama's reply was still coming after {now - clock.started:.0f} s, longer than "
            f"{clock.predict} tokens take at the speed measured so far; try a smaller model or "
            "fewer parallel calls.")
