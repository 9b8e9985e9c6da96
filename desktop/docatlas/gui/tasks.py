"""The one way DocAtlas runs background work: a job on a QThread, reported by signals.

A *job* is a callable taking a `TaskContext`. It may be a generator (every yielded item is
relayed as progress; its return value is the result) or a plain function (it may call
`context.report(item)` for progress, e.g. streamed tokens; its return value is the result).
The worker pulls the generator on its own thread and only ever talks to the GUI thread
through queued signals, so widgets are touched only by the GUI thread.

- pause(): the worker stops pulling between two items (a core generator then starts no
  new work); resume() continues.
- cancel(): sets `context.cancel`; core generators honour it at their next step and end
  cleanly (work done so far is kept); a paused task is woken to do so.

Handlers receive, in the GUI thread: progress items, the result, or a `TaskFailure` that
holds one user sentence (the full detail is in the log).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

from docatlas.core.base.errors import Cancelled, DocAtlasError

log = logging.getLogger("docatlas.gui.tasks")

UNEXPECTED = "{what} failed unexpectedly; the details are in the log (Help > Open Log File)."


class TaskContext:
    """What a running job may use: the cancel flag and a thread-safe progress reporter."""

    def __init__(self, cancel: threading.Event, report: Callable[[object], None]):
        self.cancel = cancel
        self.report = report


Job = Callable[[TaskContext], Any]


@dataclass(frozen=True)
class TaskFailure:
    """Why a task ended without a result: one sentence for the user, and the exception."""

    message: str
    error: BaseException
    cancelled: bool = False


def failure_of(what: str, error: BaseException) -> TaskFailure:
    """Turn an exception into a TaskFailure; unexpected ones are logged with their traceback."""
    if isinstance(error, Cancelled):
        return TaskFailure(error.message, error, cancelled=True)
    if isinstance(error, DocAtlasError):
        log.warning("%s: %s", what, error.message)
        return TaskFailure(error.message, error)
    log.error("%s failed unexpectedly", what, exc_info=error)
    return TaskFailure(UNEXPECTED.format(what=what), error)


class _Worker(QObject):
    """Runs one job on the task's thread; never touches widgets."""

    progressed = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)
    done = Signal()

    def __init__(self, name: str, job: Job, cancel: threading.Event, running: threading.Event):
        super().__init__()
        self.name = name
        self.job = job
        self.cancel = cancel
        self.running = running

    @Slot()
    def run(self) -> None:
        """Pull the job to its end (or its failure), relaying every step."""
        context = TaskContext(self.cancel, self.progressed.emit)
        try:
            outcome = self.job(context)
            if inspect.isgenerator(outcome):
                outcome = self._pull(outcome)
            self.succeeded.emit(outcome)
        except BaseException as exc:  # everything ends as a signal, never on a console
            self.failed.emit(failure_of(self.name, exc))
        finally:
            # Be destroyed by the GUI thread: PySide's destructor on this thread waits for
            # the GIL while holding a Qt lock the GUI thread may be waiting on (a deadlock
            # seen as a frozen window about one start in fifteen).
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())
            self.done.emit()

    def _pull(self, generator) -> object:
        try:
            while True:
                self.running.wait()  # paused: the generator stays suspended between two steps
                try:
                    item = next(generator)
                except StopIteration as stop:
                    return stop.value
                self.progressed.emit(item)
        finally:
            generator.close()


class BackgroundTask(QObject):
    """A handle on one running job, living in the GUI thread; its signals arrive there."""

    progressed = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)  # TaskFailure
    finished = Signal()  # after succeeded or failed, once the thread has ended

    def __init__(self, name: str, job: Job, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self.cancel_event = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._done = False
        self._thread = QThread()
        self._thread.setObjectName(f"docatlas-{name}")
        self._worker = _Worker(name, job, self.cancel_event, self._running)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.progressed.connect(self._relay_progress)
        self._worker.succeeded.connect(self._relay_success)
        self._worker.failed.connect(self._relay_failure)
        # quit() is thread-safe: call it from the worker's thread, so that a GUI thread
        # blocked in wait() (shutdown) does not have to run an event loop for it.
        self._worker.done.connect(self._thread.quit, Qt.ConnectionType.DirectConnection)
        self._thread.finished.connect(self._on_thread_finished)

    def start(self) -> BackgroundTask:
        """Start the job's thread."""
        self._thread.start()
        return self

    # -- control (GUI thread) ------------------------------------------------------------
    def pause(self) -> None:
        """Stop pulling between two steps."""
        if not self.cancel_event.is_set():
            self._running.clear()

    def resume(self) -> None:
        """Continue pulling."""
        self._running.set()

    def cancel(self) -> None:
        """Ask the job to stop at its next step (a paused job is woken to do so)."""
        self.cancel_event.set()
        self._running.set()

    @property
    def is_paused(self) -> bool:
        """True while pulling is paused."""
        return not self._running.is_set() and not self._done

    @property
    def is_done(self) -> bool:
        """True once the thread has ended."""
        return self._done

    def wait(self, timeout_ms: int) -> bool:
        """Block until the thread ends (for shutdown only); True if it did."""
        return self._done or self._thread.wait(timeout_ms)

    # -- relays (GUI thread) -------------------------------------------------------------
    @Slot(object)
    def _relay_progress(self, item: object) -> None:
        self.progressed.emit(item)

    @Slot(object)
    def _relay_success(self, result: object) -> None:
        self.succeeded.emit(result)

    @Slot(object)
    def _relay_failure(self, failure: TaskFailure) -> None:
        self.failed.emit(failure)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._thread.wait()  # `finished` comes just before the thread ends; let it end
        self._worker.deleteLater()
        self._done = True
        self.finished.emit()


class TaskRunner(QObject):
    """Starts background tasks with their handlers and keeps them alive until they end."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._tasks: set[BackgroundTask] = set()

    def run(
        self,
        name: str,
        job: Job,
        *,
        on_progress: Callable[[object], None] | None = None,
        on_success: Callable[[object], None] | None = None,
        on_failure: Callable[[TaskFailure], None] | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> BackgroundTask:
        """Run `job` in the background; the handlers are called in the GUI thread."""
        task = BackgroundTask(name, job)  # owned here (by Python) until it has finished
        if on_progress is not None:
            task.progressed.connect(on_progress)
        if on_success is not None:
            task.succeeded.connect(on_success)
        if on_failure is not None:
            task.failed.connect(on_failure)
        if on_finished is not None:
            task.finished.connect(on_finished)
        task.finished.connect(lambda: self._tasks.discard(task))
        self._tasks.add(task)
        return task.start()

    @property
    def active(self) -> list[BackgroundTask]:
        """Tasks whose thread has not ended yet."""
        return [t for t in self._tasks if not t.is_done]

    def shutdown(self, timeout_ms: int = 15000) -> bool:
        """Cancel every task and wait for their threads; True if all ended in time."""
        tasks = self.active
        for task in tasks:
            task.cancel()
        return all(task.wait(timeout_ms) for task in tasks)
