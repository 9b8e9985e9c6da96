"""The window follows its linked folders while it is open, and catches up when it opens.

A `QFileSystemWatcher` on the linked folders (and the folders inside them, up to
`MAX_WATCHED`) reports files added, removed or renamed; a timer every `sync.poll_s`
seconds (or 20 times as long as the last look took, on big folders) catches edits made in
place (a folder's watch does not see those). Either one,
debounced, starts a look on a reader (`jobs.sync.plan_sync`: stat only, off the GUI
thread); when the look finds files to read, the ingestion controller runs `jobs.sync` on
the writer. Documents whose files are gone leave the graph at once when `sync.gone_files`
is "remove"; with "ask" they are offered in the Documents tab (`gone_found`), with
"keep" they stay. A look while a run is busy waits for the run to end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from docatlas.core.base.paths import shown_path
from docatlas.core.base.settings import Settings
from docatlas.core.jobs.sync import GoneFile, SyncPlan, plan_sync, watched_folders
from docatlas.core.storage.database import Store
from docatlas.gui.ingestion import IngestionController
from docatlas.gui.tasks import TaskRunner
from docatlas.gui.workspace import READ_FOLDERS, Workspace

log = logging.getLogger("docatlas.gui.folder_sync")
MAX_WATCHED = 2000  # folders watched at once; deeper ones are still seen by the timer
DEBOUNCE_MS = 700  # a burst of changes (a copy of many files) makes one look
POLL_SHARE = 20  # the timer's looks take at most 1/20 of a reader's time, however big the folders
CHURN_SHARE = 5  # and looks after changes, under constant change, at most 1/6


@dataclass(frozen=True)
class FolderLook:
    """What a look found: the plan and the folders to watch."""

    plan: SyncPlan
    folders: tuple[str, ...]
    seconds: float  # how long the look took: the timer waits at least POLL_SHARE times as long


def look(store: Store) -> FolderLook:
    """The reader's work: compare the linked folders with the store, and list what to watch."""
    started = time.monotonic()
    plan, folders = plan_sync(store), tuple(watched_folders(store, MAX_WATCHED))
    return FolderLook(plan, folders, time.monotonic() - started)


class FolderSync(QObject):
    """Keeps the open workspace in line with its linked folders."""

    gone_found = Signal()  # `gone` changed: files of linked folders are gone and the setting asks
    message = Signal(str)  # a sentence for the status bar (a linked folder went missing)

    def __init__(self, tasks: TaskRunner, workspace: Workspace, controller: IngestionController,
                 settings: Callable[[], Settings], parent: QObject | None = None):
        super().__init__(parent)
        self.tasks, self.workspace, self.controller, self.settings = tasks, workspace, controller, settings
        self.gone: tuple[GoneFile, ...] = ()  # offered to the person (setting "ask")
        self.dismissed: set[int] = set()  # documents the person chose to keep, this session
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._changed)
        self.watcher.fileChanged.connect(self._changed)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS, timeout=self.check)
        self._poll = QTimer(self, timeout=self.check)
        self._owed = False  # a look is owed once the run ends
        self._looking = False
        self._last_tried: frozenset[str] | None = None  # the files (and stamps) the last sync was started for
        self._closed = False
        self._missing: tuple[str, ...] = ()  # linked folders that were not there at the last look
        controller.state_changed.connect(self._maybe_owed)
        controller.documents_changed.connect(self._debounce.start)  # e.g. a folder just added: watch it

    def start(self) -> None:
        """Follow the linked folders (when the setting says so), catching up with what changed while closed."""
        if not self.settings().sync.watch:
            return
        self._poll.setInterval(int(self.settings().sync.poll_s * 1000))
        self._poll.start()
        self.check()

    def check(self) -> None:
        """Look at the linked folders on a reader; a run follows if something differs."""
        if self._closed or not self.settings().sync.watch:
            return
        if self.controller.busy or self._looking:
            self._owed = True
            return
        self._looking = True
        self.tasks.run(READ_FOLDERS, self.workspace.read_job(look), on_success=self._on_look,
                       on_finished=self._look_finished)

    def remove_gone(self) -> bool:
        """Take the offered gone documents out of the graph; False while a run is busy."""
        ids = [g.document_id for g in self.gone]
        if not ids or not self.controller.delete(ids):
            return False
        self._set_gone(())
        return True

    def keep_gone(self) -> None:
        """Keep the offered gone documents; they are not offered again while the window is open."""
        self.dismissed |= {g.document_id for g in self.gone}
        self._set_gone(())

    def shutdown(self) -> None:
        """Stop following (the workspace is closing)."""
        self._closed = True
        self._poll.stop()
        self._debounce.stop()
        watched = self.watcher.directories() + self.watcher.files()
        if watched:
            self.watcher.removePaths(watched)

    def _changed(self, _path: str) -> None:
        self._last_tried = None  # a real change: a file that failed before is worth another try
        self._debounce.start()

    def _maybe_owed(self) -> None:
        if self._owed and not self.controller.busy and not self._looking:
            self._owed = False
            self.check()

    def _look_finished(self) -> None:
        self._looking = False
        self._maybe_owed()

    def _on_look(self, found: object) -> None:
        if self._closed or not isinstance(found, FolderLook):
            return
        self._watch(found.folders)
        self._poll.setInterval(int(max(self.settings().sync.poll_s, POLL_SHARE * found.seconds) * 1000))
        self._debounce.setInterval(int(max(DEBOUNCE_MS, CHURN_SHARE * found.seconds * 1000)))
        if found.plan.missing_folders != self._missing:
            self._missing = found.plan.missing_folders
            for folder in self._missing:
                self.message.emit(f"The linked folder {shown_path(folder)} is missing; reconnect it (its documents "
                                  "are kept).")
        plan, choice = found.plan, self.settings().sync.gone_files
        remove = choice == "remove"
        if choice == "ask":
            self._set_gone(tuple(g for g in plan.gone if g.document_id not in self.dismissed))
        tried = frozenset(map(str, plan.stamps)) | frozenset(str(g.document_id) for g in plan.gone if remove)
        if plan.is_empty(with_gone=remove) or tried == self._last_tried:
            return  # nothing new, or only what the last sync could not read
        if self.controller.sync(remove):
            self._last_tried = tried
            log.info("sync started: %d new, %d changed, %d gone", len(plan.new), len(plan.changed), len(plan.gone))
        else:
            self._owed = True

    def _watch(self, folders: tuple[str, ...]) -> None:
        """Watch exactly `folders` (at most MAX_WATCHED: the work on this thread stays bounded)."""
        watched = set(self.watcher.directories())
        wanted = set(folders)
        if watched - wanted:
            self.watcher.removePaths(sorted(watched - wanted))
        if wanted - watched:
            self.watcher.addPaths(sorted(wanted - watched))

    def _set_gone(self, gone: tuple[GoneFile, ...]) -> None:
        if gone != self.gone:
            self.gone = gone
            self.gone_found.emit()
