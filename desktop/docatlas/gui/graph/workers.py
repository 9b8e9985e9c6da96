"""Two small ways of running explorer work off the GUI thread, results back to the GUI thread.

`LatestRunner`: one job at a time; a newer request replaces an older waiting one (loading,
drawing, scene building: only the latest matters). `SerialRunner`: every job, in order
(edits to the store, where each one counts). Jobs never touch widgets.

Results do not travel by a signal emitted on the worker thread: PySide can deadlock when a
worker emits a signal carrying Python objects while the GUI thread holds the GIL and waits
on a lock the emission holds. Instead a finished job leaves its result in a thread-safe
deque, and a timer in the GUI thread (running only while work is out) hands it to the
callbacks. Shut a runner down before its owner goes away; afterwards it starts and
delivers nothing.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

log = logging.getLogger("docatlas.gui.graph")

Job = Callable[[], Any]
Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]
POLL_MS = 8


class _Runnable(QRunnable):
    """A job for the pool; leaves (result, error) in the runner's outbox."""

    def __init__(self, job: Job, outbox: deque, token: tuple):
        super().__init__()
        self.job, self.outbox, self.token = job, outbox, token

    def run(self) -> None:
        """Run the job on the pool's thread; keep whatever comes of it."""
        try:
            result, error = self.job(), None
        except BaseException as exc:  # reported to the GUI thread, never lost
            result, error = None, exc
        self.outbox.append((self.token, result, error))


class _Base(QObject):
    idle = Signal()  # nothing running or waiting

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._outbox: deque = deque()
        self._running: tuple | None = None
        self._closed = False
        self.cancel = threading.Event()  # set at shutdown; long jobs may watch it
        self._timer = QTimer(self, interval=POLL_MS, timeout=self._collect)

    def _launch(self, job: Job, done: Done | None, failed: Failed | None) -> None:
        token = (done, failed)
        self._running = token
        self._timer.start()
        self._pool.start(_Runnable(job, self._outbox, token))

    def _collect(self) -> None:
        while self._outbox:
            (done, failed), result, error = self._outbox.popleft()
            self._running = None
            if self._closed:
                continue
            try:
                if error is not None:
                    if failed is not None:
                        failed(error)
                    else:
                        log.error("background work failed", exc_info=error)
                elif done is not None:
                    done(result)
            finally:
                self._next()
        if self._running is None and not self._outbox:
            self._timer.stop()

    def _next(self) -> None:
        raise NotImplementedError

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        raise NotImplementedError

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Drop waiting jobs, wait for the running one, and deliver no more results."""
        self._drop()
        self._closed = True
        self.cancel.set()
        self._timer.stop()
        return self._pool.waitForDone(timeout_ms)

    def _drop(self) -> None:
        raise NotImplementedError


class LatestRunner(_Base):
    """Runs the latest job only: a new submit replaces the one waiting."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._waiting: tuple[Job, Done | None, Failed | None] | None = None

    def submit(self, job: Job, done: Done | None = None, failed: Failed | None = None) -> None:
        """Run `job` when the running one ends (replacing any job waiting); nothing after shutdown."""
        if self._closed:
            return
        self._waiting = (job, done, failed)
        if self._running is None:
            self._next()

    def _next(self) -> None:
        if self._waiting is not None and self._running is None:
            job, done, failed = self._waiting
            self._waiting = None
            self._launch(job, done, failed)
        elif self._running is None:
            self.idle.emit()

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        return self._running is not None or self._waiting is not None

    def _drop(self) -> None:
        self._waiting = None


class SerialRunner(_Base):
    """Runs every job, one after another, in the order submitted."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._queue: list[tuple[Job, Done | None, Failed | None]] = []

    def submit(self, job: Job, done: Done | None = None, failed: Failed | None = None) -> None:
        """Queue `job` (after shutdown, run it here and now: an edit is never lost)."""
        if self._closed:
            job()
            return
        self._queue.append((job, done, failed))
        if self._running is None:
            self._next()

    def _next(self) -> None:
        if self._queue and self._running is None:
            self._launch(*self._queue.pop(0))
        elif self._running is None:
            self.idle.emit()

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        return self._running is not None or bool(self._queue)

    def _drop(self) -> None:
        self._queue.clear()

    def finish(self, timeout_ms: int = 10_000) -> bool:
        """Wait for the running job, then run the queued ones here (at shutdown: no edit is lost)."""
        self._closed = True
        self._timer.stop()
        done = self._pool.waitForDone(timeout_ms)
        queued, self._queue = self._queue, []
        for job, _, _ in queued:
            try:
                job()
            except Exception:  # shutting down: log, and go on with the next
                log.exception("background work failed at shutdown")
        return done
