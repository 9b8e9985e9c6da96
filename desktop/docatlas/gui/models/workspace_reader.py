"""Reads the Documents list and the workspace counts off the GUI thread, through the TaskRunner.

A full read (opening a workspace, after a run) returns the first rows of the list in the
table's order and filter (a page, or as many as the table had read), its total, the
counts kept per document (`document_counts`), the documents with work and those that failed.
Scrolling asks for the next page. A progress tick asks only for what it changed: the
document just read (by path) and, while chunks are extracted, the documents that had work,
by id. One read runs at a time; asks that arrive meanwhile are merged into the next one, so
a burst of ticks costs one read. Results land in the GUI thread as signals.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from docatlas.core.storage import document_list
from docatlas.core.storage.database import Store
from docatlas.core.storage.document_list import DocumentQuery
from docatlas.core.storage.read_models import (
    DocumentSummary,
    WorkspaceCounts,
    document_ids_of,
    documents_with_work,
    summaries_of,
    summaries_page,
    workspace_counts,
)
from docatlas.gui.models.documents_model import PAGE
from docatlas.gui.tasks import BackgroundTask, TaskFailure, TaskRunner
from docatlas.gui.workspace import READ_DOCUMENTS, Workspace

CHANGES_MS = 300  # ticks closer than this are read together
EVERY_DOCUMENT = DocumentQuery()  # in the order they were added, unfiltered


@dataclass(frozen=True)
class DocumentsRead:
    """What one read found: rows (the first of the list when `whole`, a page from `offset` when
    `page`, else the documents a tick named), the list's total and, for a full read, the counts."""

    rows: list[DocumentSummary]
    whole: bool
    counts: WorkspaceCounts | None = None
    total: int | None = None  # rows the query has in all
    query: DocumentQuery = field(default_factory=DocumentQuery)
    page: bool = False
    offset: int = 0
    with_work: frozenset[int] | None = None  # with a full read: documents with pending or failed chunks
    failed: tuple[tuple[int, str], ...] | None = None  # with a full read: (id, path) of the documents that failed


def read_everything(store: Store, query: DocumentQuery = EVERY_DOCUMENT, limit: int = PAGE) -> DocumentsRead:
    """The first `limit` rows of the list, its total, the counts, the documents with work and those failed."""
    return DocumentsRead(summaries_page(store, query, 0, limit), True, workspace_counts(store),
                         document_list.total(store, query.text), query,
                         with_work=frozenset(documents_with_work(store)),
                         failed=tuple(document_list.failed_documents(store).items()))


def read_page(store: Store, query: DocumentQuery, offset: int, limit: int) -> DocumentsRead:
    """One page of the list from `offset`, and its total."""
    return DocumentsRead(summaries_page(store, query, offset, limit), False, None,
                         document_list.total(store, query.text), query, page=True, offset=offset)


def read_changes(store: Store, paths: Iterable[str], ids: Iterable[int], with_work: bool,
                 query: DocumentQuery = EVERY_DOCUMENT, shown: Collection[int] | None = None) -> DocumentsRead:
    """The documents stored under `paths`, those in `ids` and, with `with_work`, those with chunks
    to do (of them, only those in `shown` when given: the rows the table holds), each only if the
    filter lets it through, and the list's total."""
    wanted = document_ids_of(store, paths) | set(ids)
    if with_work:
        work = documents_with_work(store)
        wanted |= work if shown is None else work & set(shown)
    return DocumentsRead(summaries_of(store, wanted, query.text), False, None,
                         document_list.total(store, query.text), query)


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
        self.rows: dict[int, DocumentSummary] = {}  # the documents read so far (pages and ticks), by id
        self.task: BackgroundTask | None = None
        # what the table shows: its query and how many rows a full read covers; the ids it shows
        self.view: Callable[[], tuple[DocumentQuery, int]] = lambda: (EVERY_DOCUMENT, PAGE)
        self.shown: Callable[[], Collection[int]] = lambda: self.rows.keys()
        self._want_all = False
        self._want_page: int | None = None
        self._want_paths: set[str] = set()
        self._want_work = False
        self._watched: set[int] = set()  # documents with work at the last read: read once more when done
        self._with_work: set[int] = set()  # documents with pending or failed chunks, kept from the reads
        self._failed: dict[int, str] = {}  # id -> path of the documents that failed, kept from the reads
        self._paths: dict[str, int] = {}  # path -> id of the documents read
        self._closed = False
        self._timer = QTimer(self, singleShot=True, interval=CHANGES_MS, timeout=self._start)

    @property
    def reading(self) -> bool:
        """A read is running or asked for."""
        return self.task is not None or self._want_all or bool(self._want_paths) or self._want_work \
            or self._want_page is not None

    # -- asking --------------------------------------------------------------------------
    def read_all(self) -> None:
        """Read the list's first rows and the counts again, now (or right after the read running).

        Asked for because they changed (a run ended, a refresh, another order): the counts read
        before are not taken as current until this read lands."""
        if self._closed:
            return
        self.workspace.counts_known = False
        self._want_all = True
        self._want_page = None
        self._timer.stop()
        self._start()

    def read_more(self, offset: int) -> None:
        """Read the page of the list that starts at `offset` (the table scrolled to its end)."""
        if self._closed:
            return
        self._want_page = offset
        self._start()

    def read_changed(self, paths: Iterable[str] = (), with_work: bool = False) -> None:
        """Read these documents (paths) and, with `with_work`, those shown with chunks to do, soon."""
        if self._closed:
            return
        self._want_paths.update(paths)
        self._want_work = self._want_work or with_work
        if self.reading and not self._timer.isActive() and self.task is None:
            self._timer.start()

    def failed_paths(self) -> list[str]:
        """Documents that failed to load or have failed chunks, as last read (the whole workspace)."""
        return [self._failed[i] for i in sorted(self._failed)]

    def has_failures(self) -> bool:
        """Some document failed to load or has failed chunks, as last read."""
        return bool(self._failed)

    def with_work(self) -> set[int]:
        """Documents with pending or failed chunks, as last read (the whole workspace)."""
        return set(self._with_work)

    def shutdown(self) -> None:
        """Ask for nothing more (the workspace is closing); a read running ends unseen."""
        self._closed = True
        self._timer.stop()

    # -- running ---------------------------------------------------------------------------
    def _start(self) -> None:
        if self.task is not None or self._closed or not self.reading:
            return
        query, limit = self.view()
        if self._want_all:
            job = self.workspace.read_job(lambda store: read_everything(store, query, limit))
            self._want_all, self._want_paths, self._want_work, self._want_page = False, set(), False, None
        elif self._want_page is not None:
            offset, self._want_page = self._want_page, None
            job = self.workspace.read_job(lambda store: read_page(store, query, offset, PAGE))
        else:
            paths, ids, work = set(self._want_paths), set(self._watched), self._want_work
            shown = frozenset(self.shown()) if work else frozenset()
            self._want_paths, self._want_work = set(), False
            job = self.workspace.read_job(lambda store: read_changes(store, paths, ids, work, query, shown))
        self.task = self.tasks.run(READ_DOCUMENTS, job, on_success=self._on_read,
                                   on_failure=self._on_failure, on_finished=self._on_finished)

    def _on_read(self, found: object) -> None:
        if self._closed or not isinstance(found, DocumentsRead):
            return
        if found.whole:
            self.rows = {r.id: r for r in found.rows}
            self._with_work = set(found.with_work or ())
            self._failed = dict(found.failed or ())
            self._paths = {}
        else:
            for new in found.rows:
                old = self._paths.get(new.path)
                if old is not None and old != new.id:  # the file was read again: its old version is gone
                    self.rows.pop(old, None)
                    self._with_work.discard(old)
                    self._failed.pop(old, None)
            self.rows.update((r.id, r) for r in found.rows)
            if not found.page:
                self._watched = {r.id for r in found.rows if r.chunks_pending or r.chunks_failed}
        for row in found.rows:
            self._paths[row.path] = row.id
            (self._with_work.add if row.chunks_pending or row.chunks_failed else self._with_work.discard)(row.id)
            if row.status == "failed" or row.chunks_failed:
                self._failed[row.id] = row.path
            else:
                self._failed.pop(row.id, None)
        if found.whole:
            self._watched = set()
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
        if self._want_all or self._want_page is not None:
            self._start()
        elif self.reading:
            self._timer.start()
        else:
            self.idle.emit()
