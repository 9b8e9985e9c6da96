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

from PySide6.QtCore import QObject, Signal

from docatlas.core.base.errors import ModelNotFound, OllamaUnreachable
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.gui.jobs import IngestResult, delete_job, ingest_job
from docatlas.gui.models.workspace_reader import WorkspaceReader
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner
from docatlas.gui.workspace import Workspace

log = logging.getLogger("docatlas.gui.ingestion")


class IngestionController(QObject):
    """Runs ingestion and deletion for the open workspace, one at a time."""

    state_changed = Signal()  # running, paused or idle changed
    progressed = Signal(object)  # Progress
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
        self.skipped_paths: set[str] = set()  # unchanged files of the latest run (full paths)
        self.had_work: set[int] = set()  # documents with pending or failed chunks when the run started
        self.failures: tuple[tuple[str, str], ...] = ()  # files of the latest run that could not be added
        self.reader = WorkspaceReader(tasks, workspace, self)

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
            self.state_changed.emit()
        elif not self.busy:
            self._start_ingest([])

    def pause(self) -> None:
        """Stop pulling new work; the calls in flight finish, nothing is lost."""
        if self.task is not None and self.kind == "ingest":
            self.task.pause()
            self.state_changed.emit()

    def cancel(self) -> None:
        """Stop the run at its next step; the queue is dropped, pending chunks stay pending."""
        self.queue.clear()
        if self.task is not None:
            self.task.cancel()
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
        self.task = self.tasks.run(
            "Deleting documents", delete_job(self.workspace.db_path, list(document_ids)),
            on_success=lambda n: self.finished.emit(
                f"Deleted {n} document{'s' if n != 1 else ''} and what only {'they' if n != 1 else 'it'} supported."),
            on_failure=self._on_failure, on_finished=self._on_task_finished,
        )
        self.state_changed.emit()
        return True

    # -- running -----------------------------------------------------------------------
    def _start_ingest(self, paths: list[Path]) -> None:
        self.kind = "ingest"
        self.last_progress = None
        self.skipped_paths = set()
        self.had_work = self.reader.with_work()
        self.failures = ()
        job = ingest_job(self.workspace.db_path, paths, self.settings())
        self.task = self.tasks.run(
            "Ingestion", job, on_progress=self._on_progress, on_success=self._on_success,
            on_failure=self._on_failure, on_finished=self._on_task_finished,
        )
        log.info("ingestion started: %d paths", len(paths))
        self.state_changed.emit()

    def _on_progress(self, item: object) -> None:
        if isinstance(item, Progress):
            before = self.last_progress
            if before is not None and item.documents_skipped > before.documents_skipped and item.document_path:
                self.skipped_paths.add(item.document_path)
            self.failures = item.failures
            self.last_progress = item
        self.progressed.emit(item)

    def _on_success(self, result: object) -> None:
        if isinstance(result, IngestResult):
            self.finished.emit(run_summary(result))

    def _on_failure(self, failure: TaskFailure) -> None:
        if isinstance(failure.error, OllamaUnreachable | ModelNotFound):
            self.ollama_needed.emit(failure.message)
        self.failed.emit(failure)

    def _on_task_finished(self) -> None:
        cancelled = self.task is not None and self.task.cancel_event.is_set()
        self.task = None
        self.kind = ""
        self.documents_changed.emit()
        if self.queue and not cancelled:
            queued, self.queue = self.queue, []
            self._start_ingest(queued)
            return
        self.state_changed.emit()


def run_summary(result: IngestResult) -> str:
    """One sentence on how a run ended."""
    p = result.last
    if p is None:
        return "Nothing to do."
    if result.cancelled:
        left = p.chunks_total - p.chunks_done - p.chunks_failed
        return (f"Stopped after {p.chunks_done} chunks; {max(0, left)} are still pending: "
                "press Resume to continue.")
    parts = [f"{p.documents_total} documents"]
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
    return text


def describe_step(item: object) -> tuple[str, int, int, float | None]:
    """(What is happening, done, total, ETA in seconds) for a progress item."""
    assert isinstance(item, Progress)
    if item.stage == "embed":
        return ("Embedding for search: " + item.message, item.step_done, item.step_total, None)
    if item.stage == "communities":
        return ("Summarising topics: " + item.message, item.step_done, item.step_total, None)
    if item.stage == "load":
        name = f" {item.document}" if item.document else ""
        return (f"Reading documents{name}", item.documents_done, item.documents_total, None)
    if item.stage == "extract":
        done = item.chunks_done + item.chunks_failed
        return ("Extracting entities and relations", done, item.chunks_total, item.eta)
    if item.stage == "merge":
        return ("Merging the graph", item.chunks_total, item.chunks_total, None)
    return (item.message or item.stage.capitalize(), 1, 1, None)
