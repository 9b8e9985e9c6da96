"""Reads the Documents list and the workspace counts off the GUI thread, through the TaskRunner.

A full read (opening a workspace, after a run) returns every document and the counts. A
progress tick asks only for what it changed: the document just read (by path) and, while
chunks are extracted, the documents that still have work, through indexed queries. One
read runs at a time; asks that arrive meanwhile are merged into the next one, so a burst
of ticks costs one read. Results land in the GUI thread as signals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from docatlas.core.storage.database import Store
from docatlas.core.storage.read_models import (
    DocumentSummary,
    WorkspaceCounts,
    document_ids_of,
    document_summaries,
    documents_with_work,
    summaries_of,
    workspace_counts,
)
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner
from docatlas.gui.workspace import READ_DOCUMENTS, Workspace

CHANGES_MS = 300  # ticks closer than this are read together


@dataclass(frozen=True)
class DocumentsRead:
    """What one read found: rows (all of them when `whole`), and the counts of a full read."""

    rows: list[DocumentSummary]
    whole: bool
    counts: WorkspaceCounts | None = None


def read_everything(store: Store) -> DocumentsRead:
    """Every document and the workspace counts (opening a workspace, after a run)."""
    return DocumentsRead(document_summaries(store), True, workspace_counts(store))


def read_changes(store: Store, paths: Iterable[str], ids: Iterable[int], with_work: bool) -> DocumentsRead:
    """The documents stored under `paths`, those in `ids` and, with `with_work`, those with chunks to do."""
    wanted = document_ids_of(store, paths) | set(ids)
    if with_work:
        wanted |= documents_with_work(store)
    return DocumentsRead(summaries_of(store, wanted), False)


class WorkspaceReader(QObject):
    """The Documents list as last read, kept current by background reads."""

    rows_read = Signal(object)  # DocumentsRead
    counts_read = Signal(object)  # WorkspaceCounts
    idle = Signal()  # no read running and none asked for
    failed = Signal(object)  # TaskFailure

    def __init__(self, tasks: TaskRunner, workspace: Workspace, parent: QObject | None = None):
        super().__init__(parent)
        self.tasks = tasks
        self.workspace = workspace
        self.rows: dict[int, DocumentSummary] = {}
        self.task: BackgroundTask | None = None
        self._want_all = False
        self._want_paths: set[str] = set()
        self._want_work = False
        self._watched: set[int] = set()  # documents with work at the last read: read once more when done
        self._closed = False
        self._timer = QTimer(self, singleShot=True, interval=CHANGES_MS, timeout=self._start)

    @property
    def reading(self) -> bool:
        """A read is running or asked for."""
        return self.task is not None or self._want_all or bool(self._want_paths) or self._want_work

    # -- asking --------------------------------------------------------------------------
    def read_all(self) -> None:
        """Read every document and the counts again, now (or right after the read running).

        Asked for because they changed (a run ended, a refresh): the counts read before are
        not taken as current until this read lands."""
        if self._closed:
            return
        self.workspace.counts_known = False
        self._want_all = True
        self._timer.stop()
        self._start()

    def read_changed(self, paths: Iterable[str] = (), with_work: bool = False) -> None:
        """Read these documents (paths) and, with `with_work`, those with chunks to do, soon."""
        if self._closed:
            return
        self._want_paths.update(paths)
        self._want_work = self._want_work or with_work
        if self.reading and not self._timer.isActive() and self.task is None:
            self._timer.start()

    def failed_paths(self) -> list[str]:
        """Documents that failed to load or have failed chunks, as last read."""
        return [r.path for r in sorted(self.rows.values(), key=lambda r: r.id)
                if r.status == "failed" or r.chunks_failed]

    def with_work(self) -> set[int]:
        """Documents with pending or failed chunks, as last read."""
        return {r.id for r in self.rows.values() if r.chunks_pending or r.chunks_failed}

    def shutdown(self) -> None:
        """Ask for nothing more (the workspace is closing); a read running ends unseen."""
        self._closed = True
        self._timer.stop()

    # -- running ---------------------------------------------------------------------------
    def _start(self) -> None:
        if self.task is not None or self._closed or not self.reading:
            return
        if self._want_all:
            job = self.workspace.read_job(read_everything)
            self._want_all, self._want_paths, self._want_work = False, set(), False
        else:
            paths, ids, work = set(self._want_paths), set(self._watched), self._want_work
            self._want_paths, self._want_work = set(), False
            job = self.workspace.read_job(lambda store: read_changes(store, paths, ids, work))
        self.task = self.tasks.run(READ_DOCUMENTS, job, on_success=self._on_read,
                                   on_failure=self._on_failure, on_finished=self._on_finished)

    def _on_read(self, found: object) -> None:
        if self._closed or not isinstance(found, DocumentsRead):
            return
        if found.whole:
            self.rows = {r.id: r for r in found.rows}
        else:
            paths = {r.path: r.id for r in found.rows}
            for old in [r for r in self.rows.values() if paths.get(r.path, r.id) != r.id]:
                del self.rows[old.id]  # the file was read again: its old version is gone
            self.rows.update((r.id, r) for r in found.rows)
        self._watched = {r.id for r in found.rows if r.chunks_pending or r.chunks_failed} if not found.whole \
            else set()
        if found.counts is not None:
            self.workspace.counts = found.counts
            self.workspace.counts_known = True
        self.rows_read.emit(found)
        if found.counts is not None:
            self.counts_read.emit(found.counts)

    def _on_failure(self, failure: TaskFailure) -> None:
        if not self._closed:
            self.failed.emit(failure)

    def _on_finished(self) -> None:
        self.task = None
        if self._closed:
            return
        if self._want_all:
            self._start()
        elif self.reading:
            self._timer.start()
        else:
            self.idle.emit()
