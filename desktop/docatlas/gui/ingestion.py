"""Ingestion in the window: one writing run at a time, pause/resume/cancel, a queue of adds.

The controller owns the running task; views ask it to act and listen to its signals.
Files added while a run is busy wait in a queue and start as soon as it ends. What it needs
to know about the documents (which have work, which failed) comes from its
`WorkspaceReader`, never from a query on the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from docatlas.core.base.errors import ModelNotFound, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.gui.jobs import IngestResult, delete_job, ingest_job, sync_job
from docatlas.gui.models.workspace_reader import WorkspaceReader
from docatlas.gui.run_state import RETRY_STAGE, RunState, chunks_left, describe_step, running_state, stopped_state
from docatlas.gui.tasks import BackgroundTask, Job, TaskFailure, TaskRunner
from docatlas.gui.throttle import Throttle
from docatlas.gui.workspace import Workspace

log = logging.getLogger("docatlas.gui.ingestion")

PAUSING_MS = 1500  # "Pausing" turns "Paused" when a call in flight lands, or after this long
__all__ = ["IngestionController", "describe_step", "run_summary"]


class IngestionController(QObject):
    """Runs ingestion and deletion for the open workspace, one at a time."""

    state_changed = Signal()  # running, paused or idle changed
    progressed = Signal(object)  # Progress
    redraw_due = Signal()  # draw the run again: after a progress, at most four times a second (Throttle)
    finished = Signal(str)  # a one-sentence summary of the run
    failed = Signal(object)  # TaskFailure
    documents_changed = Signal()  # the store changed: views should refresh
    ollama_needed = Signal(str)  # Ollama unreachable or a model missing: the sentence

    def __init__(self, tasks: TaskRunner, workspace: Workspace, settings: Callable[[], Settings],
                 parent: QObject | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.workspace = workspace
        self.settings = settings
        self.task: BackgroundTask | None = None
        self.kind = ""  # "ingest" or "delete" while a task runs
        self.queue: list[Path] = []
        self.last_progress: Progress | None = None
        self._redraw = Throttle(self.redraw_due.emit, self)  # progress comes tens of times a second
        self.skipped_paths: set[str] = set()  # unchanged files of the latest run (full paths)
        self.had_work: set[int] = set()  # documents with pending or failed chunks when the run started
        self.failures: tuple[tuple[str, str], ...] = ()  # files of the latest run that could not be added
        self.reader = WorkspaceReader(tasks, workspace, self)
        self.phase = "idle"  # see run_state.PHASES
        self.retry: Progress | None = None  # a model call is being retried (cleared by the next step)
        self.ended: RunState | None = None  # how the last run ended (done, stopped, failed)
        self._paused_timer = QTimer(self, singleShot=True, interval=PAUSING_MS, timeout=self._now_paused)

    # -- state -----------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """A run (or a deletion) is in progress, maybe paused."""
        return self.task is not None

    @property
    def paused(self) -> bool:
        """The run is paused."""
        return self.task is not None and self.task.is_paused

    @property
    def extracting(self) -> bool:
        """The run is past loading, in the extraction step."""
        return self.busy and self.kind == "ingest" and self.last_progress is not None and \
            self.last_progress.stage in ("extract", "merge")

    def run_state(self) -> RunState:
        """The one description of the run every view shows (see `run_state`)."""
        if self.busy and self.kind == "ingest":
            return running_state(self.phase, self.last_progress, self.retry)
        if self.busy:
            return RunState("running", "Deleting documents", 0, 0)
        left = self.workspace.pending_chunks() if self.workspace.is_open else 0
        ended = self.ended
        if ended is not None and ended.phase in ("done", "failed"):
            return ended
        if ended is not None and ended.phase == "stopped":
            return stopped_state(left or ended.left, ended.summary, ended.failures)
        if left:
            return stopped_state(left)
        return ended or RunState()

    def can_resume(self) -> bool:
        """Paused, or idle with pending chunks left by an earlier run."""
        if self.paused:
            return True
        return not self.busy and self.workspace.is_open and self.workspace.pending_chunks() > 0

    # -- actions -----------------------------------------------------------------------
    def add(self, paths: Sequence[Path]) -> None:
        """Ingest files or folders now, or as soon as the current run ends."""
        paths = [Path(p) for p in paths]
        if not paths:
            return
        if self.busy:
            self.queue += [p for p in paths if p not in self.queue]
            self.state_changed.emit()
            return
        self._start_ingest(paths)

    def resume(self) -> None:
        """Continue a paused run, or pick up pending chunks left by an earlier one."""
        if self.paused and self.task is not None:
            self.task.resume()
            self.phase = "running"
            self._paused_timer.stop()
            self.state_changed.emit()
        elif not self.busy:
            self._start_ingest([])

    def pause(self) -> None:
        """Stop pulling new work; the calls in flight finish, nothing is lost."""
        if self.task is not None and self.kind == "ingest":
            self.task.pause()
            self.phase = "pausing"
            self._paused_timer.start()
            self.state_changed.emit()

    def cancel(self) -> None:
        """Stop the run at its next step; the queue is dropped, pending chunks stay pending."""
        self.queue.clear()
        if self.task is not None:
            self.task.cancel()
            self.phase = "cancelling"
            self._paused_timer.stop()
            self.state_changed.emit()

    def retry_failed(self) -> None:
        """Run again over the failed documents (reading them again) and failed chunks."""
        paths = [Path(p) for p in self.reader.failed_paths()]
        if self.busy:
            self.add(paths)
        elif paths:
            self._start_ingest(paths)

    def delete(self, document_ids: Sequence[int]) -> bool:
        """Remove documents (the caller has asked the user); False while a run is busy."""
        if self.busy or not document_ids:
            return False
        self.kind = "delete"
        self.phase, self.ended = "running", None
        self.task = self.tasks.run(
            "Deleting documents", delete_job(self.workspace.db_path, list(document_ids)),
            on_success=lambda n: self.finished.emit(
                f"Deleted {n} document{'s' if n != 1 else ''} and what only {'they' if n != 1 else 'it'} supported."),
            on_failure=self._on_failure, on_finished=self._on_task_finished,
        )
        self.state_changed.emit()
        return True

    def sync(self, remove_gone: bool) -> bool:
        """Ingest what is new or changed in the linked folders (`jobs.sync`); False while a run is busy."""
        if self.busy:
            return False
        self._start_ingest([], sync_job(self.workspace.db_path, self.settings(), remove_gone))
        return True

    # -- running -----------------------------------------------------------------------
    def _start_ingest(self, paths: list[Path], job: Job | None = None) -> None:
        self.kind = "ingest"
        self.last_progress = None
        self.skipped_paths = set()
        self.had_work = self.reader.with_work()
        self.failures = ()
        self.phase, self.retry, self.ended = "running", None, None  # the last run's notice goes
        # The run stores documents as it goes: counts read during it fall behind (a question asked
        # during the run is answered from what is stored, not told to add documents first).
        self.workspace.storing = True
        job = job or ingest_job(self.workspace.db_path, paths, self.settings())
        self.task = self.tasks.run(
            "Ingestion", job, on_progress=self._on_progress, on_success=self._on_success,
            on_failure=self._on_failure, on_finished=self._on_task_finished,
        )
        log.info("ingestion started: %d paths", len(paths))
        self.state_changed.emit()

    def _now_paused(self) -> None:
        if self.phase == "pausing" and self.paused:
            self.phase = "paused"
            self.state_changed.emit()

    def _on_progress(self, item: object) -> None:
        if isinstance(item, Progress) and item.stage == RETRY_STAGE:
            self.retry = item
            self.state_changed.emit()  # "retrying" is drawn at once, not with the next redraw
            self.progressed.emit(item)
            self._redraw.poke()
            return
        if self.phase == "pausing":
            self._now_paused()  # the call that was in flight has landed
        self.retry = None
        if isinstance(item, Progress):
            before = self.last_progress
            if before is not None and item.documents_skipped > before.documents_skipped and item.document_path:
                self.skipped_paths.add(item.document_path)
            self.failures = item.failures
            self.last_progress = item
        self.progressed.emit(item)
        self._redraw.poke()

    def _on_success(self, result: object) -> None:
        if isinstance(result, IngestResult):
            summary = run_summary(result, len(self.had_work))
            p = result.last
            failures = p.failures if p is not None else ()
            if result.cancelled:
                self.ended = stopped_state(chunks_left(p), summary, failures)
            else:
                text = "Done" if not failures else f"Done; {len(failures)} could not be added (listed below)"
                self.ended = RunState("done", text, summary=summary, failures=failures)
            self.finished.emit(summary)
        elif self.kind == "delete":
            self.ended = RunState("done", "Idle")

    def _on_failure(self, failure: TaskFailure) -> None:
        if failure.cancelled:
            self.ended = stopped_state(chunks_left(self.last_progress), failure.message)
        else:
            self.ended = RunState("failed", "Failed: " + failure.message, summary=failure.message,
                                  failures=self.failures)
        if isinstance(failure.error, OllamaUnreachable | ModelNotFound):
            self.ollama_needed.emit(failure.message)
        self.failed.emit(failure)

    def _on_task_finished(self) -> None:
        cancelled = self.task is not None and self.task.cancel_event.is_set()
        self.task = None
        self.kind = ""
        self.workspace.storing = False
        self.phase, self.retry = "idle", None
        self._paused_timer.stop()
        self.documents_changed.emit()
        if self.queue and not cancelled:
            queued, self.queue = self.queue, []
            self._start_ingest(queued)
            return
        self.state_changed.emit()


def run_summary(result: IngestResult, resumed_documents: int = 0) -> str:
    """One sentence on how a run ended, counting this run's documents and chunks
    (`resumed_documents`: documents with work left when a run with no new files started)."""
    p = result.last
    if p is None:
        return "Nothing to do."
    if result.cancelled:
        return f"Stopped after {p.chunks_done} chunks; {chunks_left(p)} are still pending: press Resume to continue."
    documents = p.documents_total or resumed_documents
    parts = [f"{documents} document{'s' if documents != 1 else ''}"]
    details = []
    if p.documents_skipped:
        details.append(f"{p.documents_skipped} unchanged")
    if p.documents_failed:
        details.append(f"{p.documents_failed} failed")
    if details:
        parts[0] += f" ({', '.join(details)})"
    parts.append(f"{p.chunks_done} chunks extracted")
    if p.chunks_failed:
        parts.append(f"{p.chunks_failed} chunks failed (Retry Failed tries them again)")
    text = "Done: " + ", ".join(parts) + "."
    if result.embed_error:
        text += " " + result.embed_error
    if result.note:
        text += " " + result.note
    return text
