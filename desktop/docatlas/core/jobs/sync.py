"""Linked folders kept in sync: new and changed files are ingested, gone ones leave the graph.

A folder given to `index` is linked in place as a source (`storage.sources`); nothing is
copied. `plan_sync` compares each source's files with the documents stored under it by
modification time and size only (no hashing, nothing read); `sync` acts on that plan:
the gone documents are removed when asked (`remove_gone`), the new and changed files go
through `index` (which hashes them, so a file touched but not changed costs no model call).
A linked folder that is itself missing (an unplugged drive) is reported, and its documents
are never taken for gone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.base.paths import shown_path
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import rebuild_steps
from docatlas.core.ingest.loaders import SUPPORTED_SUFFIXES
from docatlas.core.jobs.ingest import heal_steps, index
from docatlas.core.llm.protocol import LLM
from docatlas.core.storage import sources
from docatlas.core.storage.database import Store, stored_path
from docatlas.core.storage.lock import writes_workspace


@dataclass(frozen=True)
class GoneFile:
    """A stored document whose file is no longer in its linked folder."""

    document_id: int
    path: str


@dataclass(frozen=True)
class SyncPlan:
    """What differs between the linked folders and the store."""

    new: tuple[Path, ...] = ()
    changed: tuple[Path, ...] = ()
    gone: tuple[GoneFile, ...] = ()
    missing_folders: tuple[str, ...] = ()
    stamps: tuple[tuple[str, int, int], ...] = ()  # (path, mtime_ns, size) of the new and changed files

    @property
    def files(self) -> list[Path]:
        """The files to read: new, then changed."""
        return [*self.new, *self.changed]

    def is_empty(self, with_gone: bool = True) -> bool:
        """Nothing to read (and, `with_gone`, nothing gone)."""
        return not self.new and not self.changed and not (with_gone and self.gone)


@dataclass(frozen=True)
class SyncReport:
    """How a sync ended: its plan, the documents it removed and the last progress of its run."""

    plan: SyncPlan
    removed: tuple[GoneFile, ...] = ()
    last: Progress | None = None


def plan_sync(store: Store, folders: Sequence[str] | None = None) -> SyncPlan:
    """Compare the linked folders (or `folders` among them) with the store, by stat only."""
    linked = [s.path for s in sources.list_sources(store)]
    chosen = linked if folders is None else [f for f in linked if f in set(folders)]
    new: list[Path] = []
    changed: list[Path] = []
    gone: list[GoneFile] = []
    missing: list[str] = []
    stamps: list[tuple[str, int, int]] = []
    for folder in chosen:
        if not os.path.isdir(folder):
            missing.append(folder)
            continue
        stored = {f.path: f for f in sources.files_under(store, folder)}
        for path, status in sorted(_supported_files(folder)):
            key = stored_path(path)[0]
            known = stored.pop(key, None)
            stamp = known.stamp if known is not None else None
            if known is None:  # a link to a file elsewhere, or a new file
                document = store.document_by_path(path)
                if document is None:
                    new.append(Path(path))
                    stamps.append((path, status.st_mtime_ns, status.st_size))
                    continue
                stamp = sources.stamp_of(store, document.id)
            if stamp != (status.st_mtime_ns, status.st_size):
                changed.append(Path(path))  # `index` hashes it: a touched file costs no model call
                stamps.append((path, status.st_mtime_ns, status.st_size))
        gone += [GoneFile(f.id, f.path) for f in stored.values() if not os.path.lexists(f.file)]
    return SyncPlan(tuple(new), tuple(changed), tuple(gone), tuple(missing), tuple(stamps))


def _supported_files(folder: str) -> Iterator[tuple[str, os.stat_result]]:
    """(resolved path, stat) of every supported file under `folder`, as `discover` finds them (hidden
    entries skipped, links to folders not followed) but with one stat a file: a look costs what a
    walk costs. Entries that vanish or cannot be read are left for the next look."""
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                found = list(entries)
        except OSError:
            continue
        for entry in found:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif os.path.splitext(entry.name)[1].lower() in SUPPORTED_SUFFIXES and entry.is_file():
                    path = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
                    yield path, entry.stat()
            except OSError:
                continue


@writes_workspace("sync")
def sync(store: Store, settings: Settings, llm: LLM | None = None, cancel: threading.Event | None = None,
         remove_gone: bool = False, folders: Sequence[str] | None = None) -> Iterator[Progress]:
    """Bring the store in line with the linked folders; the generator returns a `SyncReport`."""
    cancel = cancel or threading.Event()
    plan = plan_sync(store, folders)
    removed: tuple[GoneFile, ...] = ()
    last: Progress | None = None
    if remove_gone and plan.gone:
        for last in heal_steps(store, None, cancel):
            yield last
        touched: set[str] = set()
        for gone in plan.gone:
            touched |= store.delete_document(gone.document_id)
        removed = plan.gone
        count = len(removed)
        last = Progress(stage="merge", message=f"Removing {count} document{'s' if count != 1 else ''} "
                                                "whose files are gone")
        yield last
        for step in rebuild_steps(store, touched, None, threading.Event()):  # a removal is finished, not stopped
            last = Progress(stage="merge", message=step.message, step_done=step.step_done, step_total=step.step_total)
            yield last
    if plan.files:
        for last in index(store, plan.files, settings, llm, cancel):
            yield last
    if not cancel.is_set():
        for folder in folders if folders is not None else [s.path for s in sources.list_sources(store)]:
            sources.mark_synced(store, folder)
    if last is not None and last.stage not in ("done", "cancelled"):
        last = Progress(stage="cancelled" if cancel.is_set() else "done", message=last.message)
        yield last
    return SyncReport(plan, removed, last)


def describe(report: SyncReport) -> str:
    """One sentence on what a sync found and did."""
    plan = report.plan
    parts = []
    if plan.new:
        parts.append(f"{len(plan.new)} new")
    if plan.changed:
        parts.append(f"{len(plan.changed)} changed")
    same = report.last.documents_skipped if report.last is not None else 0
    if same:
        parts.append(f"{same} touched but unchanged")
    if report.removed:
        parts.append(f"{len(report.removed)} removed")
    text = "Linked folders: " + (", ".join(parts) if parts else "nothing new") + "."
    kept = len(plan.gone) - len(report.removed)
    if kept:
        text += (f" {kept} file{'s are' if kept != 1 else ' is'} gone but still in the graph; "
                 "remove them with `docatlas sync --remove-gone` or from the window.")
    for folder in plan.missing_folders:
        text += f" The linked folder {shown_path(folder)} is missing; reconnect it, its documents were kept."
    return text


def watched_folders(store: Store, limit: int) -> list[str]:
    """The linked folders and the folders inside them (hidden ones skipped), at most `limit`: what
    a window watches for files added, removed or renamed."""
    found: list[str] = []
    for source in sources.list_sources(store):
        for root, dirnames, _files in os.walk(source.path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            found.append(root)
            if len(found) >= limit:
                return found
    return found
