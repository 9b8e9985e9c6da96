"""The thread side of `tasks.TaskRunner`: one writer thread, a few reader threads, one outbox. No Qt here.

Everything that writes the workspace runs on the single writer thread, in the order it was
asked for; a generator job there is stepped one item at a time, so a long run (ingestion)
lets the short writes queued behind it (graph edits, prompt saves) go between two of its
items, and a paused one simply is not stepped. Reads run on a small pool of reader threads.
A job with a *key* is latest-only: a newer one with the same key replaces the one still
waiting, and two with the same key never run at once.

The threads never call the GUI. Whatever a job produces (progress, result, failure) goes
into one locked outbox, and `notify()` (a payload-free Qt signal, connected queued) is
called when the outbox stops being empty; the GUI thread drains it. Emitting a signal
that carries Python objects from a worker can deadlock PySide (the GUI thread holds the
GIL and waits on a lock the emission holds), and so can a Qt object destroyed on a
worker's own thread (a frozen window about one start in fifteen, with the old QThread
workers): so the threads hold no Qt object, and keep no reference to what they hand over
(see `Lanes._hand_over`), so jobs, results and what they hold are released by the GUI
thread. The threads are daemons: a model call still running never holds up the exit.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from docatlas.core.base.errors import Cancelled
from docatlas.gui.task_context import Job, TaskContext, failure_of

READERS = 4  # reader threads at most: model calls may hold some for minutes
IDLE_SECONDS = 30.0  # an idle thread ends after this long (a new one starts when work comes)
NOT_STARTED = "{what} was cancelled before it started."
PROGRESS, SUCCESS, FAILURE, DROPPED = "progress", "success", "failure", "dropped"


class Work:
    """One job as the threads see it (plain Python: no Qt object ever reaches a worker)."""

    def __init__(self, lanes: Lanes, name: str, job: Job, writes: bool, key: Hashable | None):
        self.name, self.job, self.writes, self.key = name, job, writes, key
        self.cancel = threading.Event()
        self.running = threading.Event()  # cleared while paused
        self.running.set()
        me = weakref.ref(self)  # no cycle: a Work is freed by its last owner (the GUI thread), not by gc
        self.context = TaskContext(self.cancel, lambda item: lanes.post(me(), PROGRESS, [item]))
        self.generator: Any = None  # a started generator job parked on the writer thread
        self.started = False
        self.ended = False  # its last message is in the outbox


class Lanes:
    """The writer thread, the reader threads and the outbox they fill."""

    def __init__(self, notify: Callable[[], None], readers: int = READERS):
        self._notify = notify
        self._muted = False  # the GUI side is gone: fill the outbox, call nobody
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._writes: deque[Work] = deque()  # not started yet, in order
        self._parked: deque[Work] = deque()  # started generators, stepped in turn
        self._reads: deque[Work] = deque()
        self._running_keys: set[Hashable] = set()
        self._outbox: list[tuple[Work, str, object]] = []
        self._open: set[Work] = set()  # submitted and not ended
        self._max_readers = readers
        self._readers = self._idle_readers = 0
        self._writer_alive = False

    # -- GUI side ------------------------------------------------------------------------
    def submit(self, work: Work) -> None:
        """Queue `work` (replacing a waiting one with its key) and wake or start a thread for it."""
        with self._changed:
            queue = self._writes if work.writes else self._reads
            if work.key is not None:
                for older in [w for w in queue if w.key == work.key]:
                    queue.remove(older)
                    self._end(older, DROPPED, [None])
            queue.append(work)
            self._open.add(work)
            if work.writes and not self._writer_alive:
                self._writer_alive = True
                self._start(self._write_loop, "docatlas-writer")
            elif not work.writes and self._idle_readers == 0 and self._readers < self._max_readers:
                self._readers += 1
                self._start(self._read_loop, f"docatlas-reader-{self._readers}")
            self._changed.notify_all()

    def pause(self, work: Work) -> None:
        """Stop stepping `work` between two items."""
        with self._changed:
            if not work.cancel.is_set():
                work.running.clear()

    def resume(self, work: Work) -> None:
        """Step `work` again."""
        with self._changed:
            work.running.set()
            self._changed.notify_all()

    def cancel(self, work: Work) -> None:
        """Set the cancel flag (a paused job is woken to see it); a job not started yet never starts."""
        with self._changed:
            work.cancel.set()
            work.running.set()
            for queue in (self._writes, self._reads):
                if work in queue:
                    queue.remove(work)
                    self._end(work, FAILURE, [failure_of(work.name, Cancelled(NOT_STARTED.format(what=work.name)))])
            self._changed.notify_all()

    def take(self) -> list[tuple[Work, str, object]]:
        """Everything the threads have handed over since the last call."""
        with self._lock:
            taken, self._outbox = self._outbox, []
            return taken

    def wait(self, works: list[Work], timeout_s: float) -> bool:
        """Block until every one of `works` has ended (at most `timeout_s`); True if they did."""
        with self._changed:
            return self._changed.wait_for(lambda: all(w.ended for w in works), timeout_s)

    def open_works(self) -> list[Work]:
        """Works submitted and not ended yet."""
        with self._lock:
            return list(self._open)

    def mute(self) -> None:
        """Never call `notify` again (its Qt object is going away)."""
        with self._lock:
            self._muted = True

    # -- thread side ---------------------------------------------------------------------
    def post(self, work: Work, kind: str, box: list) -> None:
        """Hand `box`'s one item over to the GUI thread (the box is emptied: no reference stays here)."""
        with self._changed:
            self._hand_over(work, kind, box)

    def _end(self, work: Work, kind: str, box: list) -> None:
        """Hand over the last message of `work` (lock held)."""
        work.ended = True
        self._open.discard(work)
        if work.key is not None and work.started and not work.writes:
            self._running_keys.discard(work.key)  # a dropped or cancelled one never held its key
        self._hand_over(work, kind, box)
        self._changed.notify_all()

    def _hand_over(self, work: Work, kind: str, box: list) -> None:
        # Lock held. The value moves from the box into the outbox without a name in between,
        # so the GUI thread, which drains under the same lock, always drops the last reference.
        self._outbox.append((work, kind, box.pop()))
        if len(self._outbox) == 1 and not self._muted:
            self._notify()  # a payload-free signal, queued to the GUI thread: nothing is converted here

    def _start(self, loop: Callable[[], None], name: str) -> None:
        threading.Thread(target=loop, name=name, daemon=True).start()

    def _write_loop(self) -> None:
        """The writer thread: new writes in order, and between them one step of a parked generator."""
        while True:
            with self._changed:
                box = self._next_write()
                while not box:
                    if not self._changed.wait(IDLE_SECONDS) and not self._writes and not self._parked:
                        self._writer_alive = False
                        return
                    box = self._next_write()
            self._step(box)

    def _next_write(self) -> list:
        if self._writes:
            return [self._writes.popleft()]
        for work in self._parked:
            if work.running.is_set():
                self._parked.remove(work)
                return [work]
        return []

    def _step(self, box: list) -> None:
        """Start a write job, or pull one item from a parked generator."""
        work, value, failed = box[0], [], []
        try:
            if not work.started:
                work.started = True
                outcome = work.job(work.context)
                if inspect.isgenerator(outcome):
                    work.generator = outcome
                else:
                    value.append(outcome)
                outcome = None
            if work.generator is not None:
                item = [next(work.generator)]
                self.post(work, PROGRESS, item)
                with self._changed:
                    self._parked.append(work)
                return
        except StopIteration as stop:
            value.append(stop.value)
        except BaseException as exc:  # everything ends as a message, never on a console
            failed.append(failure_of(work.name, exc))
        work.generator = None
        work = outcome = None
        self._finish(box, FAILURE if failed else SUCCESS, failed or value)

    def _read_loop(self) -> None:
        """A reader thread: take the next read whose key is not running, and run it to its end."""
        while True:
            with self._changed:
                self._idle_readers += 1
                box = self._next_read()
                while not box:
                    if not self._changed.wait(IDLE_SECONDS) and not self._reads:
                        self._idle_readers -= 1
                        self._readers -= 1
                        return
                    box = self._next_read()
                self._idle_readers -= 1
            self._run(box)

    def _next_read(self) -> list:
        for work in self._reads:
            if work.key is None or work.key not in self._running_keys:
                self._reads.remove(work)
                work.started = True
                if work.key is not None:
                    self._running_keys.add(work.key)
                return [work]
        return []

    def _run(self, box: list) -> None:
        """Run a read job to its end; a generator is pulled item by item, waiting while paused."""
        work, value, failed = box[0], [], []
        try:
            outcome = work.job(work.context)
            if inspect.isgenerator(outcome):
                generator, outcome = outcome, None
                try:
                    while True:
                        work.running.wait()
                        item = [next(generator)]
                        self.post(work, PROGRESS, item)
                finally:
                    generator.close()
                    generator = None
            value.append(outcome)
        except StopIteration as stop:
            value.append(stop.value)
        except BaseException as exc:  # everything ends as a message, never on a console
            failed.append(failure_of(work.name, exc))
        work = outcome = None
        self._finish(box, FAILURE if failed else SUCCESS, failed or value)

    def _finish(self, box: list, kind: str, value: list) -> None:
        # `box` holds the work and `value` the outcome; the caller keeps no other name on either.
        with self._changed:
            self._end(box.pop(), kind, value)
