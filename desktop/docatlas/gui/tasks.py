"""The one way DocAtlas runs background work: `TaskRunner`, one per window.

A *job* is a callable taking a `TaskContext`. It may be a generator (every yielded item is
relayed as progress; its return value is the result) or a plain function (it may call
`context.report(item)` for progress, e.g. streamed tokens; its return value is the result).
Jobs never touch widgets.

`run(name, job, writes=..., key=...)` returns a `BackgroundTask` whose signals arrive in
the GUI thread:
- writes: the job runs on the one writer thread, in the order asked (every job that
  writes the workspace; its factory marks it with `writes_workspace`, or pass
  writes=True); otherwise on one of a few reader threads.
- key: latest-only; a newer task with the same key drops the one still waiting (it ends
  with `dropped` set and neither `succeeded` nor `failed`), and two never run at once.
- pause(): a generator job is not pulled between two items; resume() continues.
- cancel(): sets `context.cancel` (core generators end cleanly at their next step, keeping
  the work done); a paused task is woken to see it, a waiting one never starts.

The worker threads hand everything over through one locked outbox and a payload-free
signal (`_Mailbox.ready`, connected queued); the slot drains the outbox in the GUI thread
and emits the task's signals there. No Python object is emitted from a worker, nothing
polls, and jobs and results are released by the GUI thread (see `task_threads`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from PySide6.QtCore import QObject, Qt, Signal, Slot

from docatlas.gui.task_context import UNEXPECTED, Job, TaskContext, TaskFailure, failure_of, is_writer, writes_workspace
from docatlas.gui.task_threads import DROPPED, FAILURE, PROGRESS, READERS, Lanes, Work

__all__ = ["UNEXPECTED", "BackgroundTask", "Job", "TaskContext", "TaskFailure", "TaskRunner", "failure_of",
           "writes_workspace"]


class _Mailbox(QObject):
    """Lives in the GUI thread; the workers emit `ready` (no arguments) when the outbox fills."""

    ready = Signal()


class BackgroundTask(QObject):
    """A handle on one job, living in the GUI thread; its signals are emitted there."""

    progressed = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)  # TaskFailure
    finished = Signal()  # last, after succeeded or failed (or alone when dropped)

    def __init__(self, runner: TaskRunner, work: Work):
        super().__init__()
        self.name = work.name
        self.key = work.key
        self.writes = work.writes
        self.cancel_event = work.cancel
        self.dropped = False
        self._runner, self._work = runner, work
        self._done = False

    def start(self) -> BackgroundTask:
        """Kept for the old call shape: `TaskRunner.run` has already queued the job."""
        return self

    def pause(self) -> None:
        """Stop pulling between two steps."""
        self._runner.lanes.pause(self._work)

    def resume(self) -> None:
        """Continue pulling."""
        self._runner.lanes.resume(self._work)

    def cancel(self) -> None:
        """Ask the job to stop at its next step (a paused job is woken to do so)."""
        self._runner.lanes.cancel(self._work)

    @property
    def is_paused(self) -> bool:
        """True while pulling is paused."""
        return not self._work.running.is_set() and not self._done

    @property
    def is_done(self) -> bool:
        """True once `finished` has been emitted."""
        return self._done

    def wait(self, timeout_ms: int) -> bool:
        """Block until the job has ended and deliver what it left (shutdown and tests); True if it did."""
        return self._runner.wait([self], timeout_ms)


class TaskRunner(QObject):
    """Runs jobs on the writer or the reader threads and calls their handlers in the GUI thread."""

    idle = Signal()  # the last task counted by `active` has finished (a closing window can go)

    def __init__(self, parent: QObject | None = None, readers: int = READERS):
        super().__init__(parent)
        self._mailbox = _Mailbox(self)
        self._mailbox.ready.connect(self._drain, Qt.ConnectionType.QueuedConnection)
        self.lanes = Lanes(self._mailbox.ready.emit, readers)
        lanes = self.lanes
        self.destroyed.connect(lambda *_: lanes.mute())
        self._tasks: dict[Work, BackgroundTask] = {}  # owned here (GUI thread) until finished

    def run(
        self,
        name: str,
        job: Job,
        *,
        on_progress: Callable[[object], None] | None = None,
        on_success: Callable[[object], None] | None = None,
        on_failure: Callable[[TaskFailure], None] | None = None,
        on_finished: Callable[[], None] | None = None,
        writes: bool | None = None,
        key: Hashable | None = None,
    ) -> BackgroundTask:
        """Queue `job`; the handlers are called in the GUI thread (see the module docstring).

        `writes` defaults to what the job's factory declared (`writes_workspace`)."""
        work = Work(self.lanes, name, job, is_writer(job) if writes is None else writes, key)
        task = BackgroundTask(self, work)
        for signal, handler in ((task.progressed, on_progress), (task.succeeded, on_success),
                                (task.failed, on_failure), (task.finished, on_finished)):
            if handler is not None:
                signal.connect(handler)
        self._tasks[work] = task
        self.lanes.submit(work)
        return task

    @Slot()
    def _drain(self) -> None:
        """Deliver what the workers handed over, in order, as the tasks' signals."""
        for work, kind, value in self.lanes.take():
            task = self._tasks.get(work)
            if task is None:
                continue
            if kind == PROGRESS:
                task.progressed.emit(value)
                continue
            del self._tasks[work]
            task._done = True
            if kind == DROPPED:
                task.dropped = True
            elif kind == FAILURE:
                task.failed.emit(value)
            else:
                task.succeeded.emit(value)
            task.finished.emit()
            if task.key is None and not self.active:
                self.idle.emit()

    @property
    def active(self) -> list[BackgroundTask]:
        """Tasks not finished yet that a closing window waits for: latest-only (keyed) view work,
        such as drawing or loading the graph, is not counted (it is dropped, not waited for)."""
        return [task for task in self._tasks.values() if task.key is None]

    def busy(self, key: Hashable) -> bool:
        """True while a task with `key` runs or waits."""
        return any(task.key == key for task in self._tasks.values())

    def wait(self, tasks: list[BackgroundTask], timeout_ms: int) -> bool:
        """Block until `tasks` have ended, then deliver their results here; True if all ended in time."""
        works = [task._work for task in tasks if not task.is_done]
        ended = self.lanes.wait(works, max(0, timeout_ms) / 1000)
        self._drain()
        return ended

    def stop(self, keys: list[Hashable], timeout_ms: int) -> bool:
        """Cancel the tasks with one of `keys` and wait for them (a widget going away); True if they ended."""
        tasks = [task for task in self._tasks.values() if task.key in keys]
        self.cancel(tasks)
        return self.wait(tasks, timeout_ms)

    def cancel(self, tasks: list[BackgroundTask] | None = None) -> None:
        """Cancel `tasks` (all when None)."""
        for task in list(self._tasks.values()) if tasks is None else tasks:
            task.cancel()

    def shutdown(self, timeout_ms: int = 15000) -> bool:
        """Cancel every task and wait at most `timeout_ms` for them; True if all ended in time.

        Never waits longer on a slow model call: with timeout 0 it only cancels. Writes
        already queued still run (a graph edit is never lost); a cancelled ingestion
        stops at its next step."""
        tasks = list(self._tasks.values())
        self.cancel([task for task in tasks if not task.writes or task.is_paused or task._work.started])
        return self.wait(tasks, timeout_ms)
