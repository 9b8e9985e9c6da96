"""One thread per client that notices a set cancel event while calls are in flight.

The client sees a cancel only between streamed pieces, and a slow model may take minutes
to send the first one. While a call runs under `CancelWatch.watching(cancel)`, the watch
thread looks at its event every `POLL_S`; once it is set, `on_cancel` runs (the client
cuts its connections, which ends every call that shares the event). One thread serves
every call of the client, started when a call needs it and gone after a quiet minute, so
a call costs no thread of its own.

Two races are closed. A call that opens its connection just after the cut (a loaded machine)
would read on, uncut: while a cancelled call is still in flight, `recut` runs again at every
poll. And a call that ends while `on_cancel` is still replacing the client waits for it before
it leaves `watching`, so the next call never picks up the client being closed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

POLL_S = 0.1
IDLE_S = 60.0  # the thread ends after this long with no call to watch


class CancelWatch:
    """Runs `on_cancel` (from its own thread) when the cancel event of a watched call is set."""

    def __init__(self, on_cancel: Callable[[], None], recut: Callable[[], None] | None = None):
        self.on_cancel = on_cancel
        self.recut = recut or on_cancel
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._cutting = threading.Lock()  # held while `on_cancel` or `recut` runs
        self._calls: dict[object, threading.Event] = {}  # a token per call in flight -> its cancel event
        self._cut: set[object] = set()  # the calls `on_cancel` already ran for, still in flight
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self, cancel: threading.Event | None) -> Iterator[None]:
        """While the body runs, a set `cancel` makes the watch thread call `on_cancel`."""
        if cancel is None:
            yield
            return
        token = object()
        with self._lock:
            self._calls[token] = cancel
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="docatlas-llm-cancel", daemon=True)
                self._thread.start()
            self._wake.notify()
        try:
            yield
        finally:
            with self._lock:
                self._calls.pop(token, None)
                self._cut.discard(token)
            if cancel.is_set():
                with self._cutting:  # a cut under way ends before the next call starts
                    pass

    def _run(self) -> None:
        idle = 0.0
        while True:
            with self._lock:
                if not self._calls:
                    if idle >= IDLE_S:
                        self._thread = None
                        return
                    self._wake.wait(POLL_S)
                    idle += POLL_S
                    continue
                idle = 0.0
                cancelled = {key for key, event in self._calls.items() if event.is_set()}
                fresh = bool(cancelled - self._cut)
                self._cut |= cancelled
                if cancelled:
                    self._cutting.acquire()  # before the lock goes: an ending call waits for this cut
            if cancelled:
                try:
                    (self.on_cancel if fresh else self.recut)()
                finally:
                    self._cutting.release()
            with self._lock:
                self._wake.wait(POLL_S)
