"""The reading side of `index`: files read on a loader thread, ahead of the writer, in a bounded queue.

The loader thread walks what was given (`discovery.walk`, one folder at a time: the first
file is read while the rest are still listed; a walk failure becomes a `Read` with its
sentence), hashes each file, passes over one whose stored version is unchanged, and
reads and cuts the others (PDF, Office, OCR: the slow part) into `Read` items. At most
`bound` read files wait in memory for the writer (the generator's thread, the only one that
writes the store), which stores each with `store_read` and hands its chunks to extraction;
so memory holds a few files, never the folder. A scan's pages are reported as they are
OCR'd (`pages`). A cancel stops it between files and between scanned pages.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from docatlas.core.base.errors import Cancelled, DocumentError
from docatlas.core.base.paths import shown_name, shown_path
from docatlas.core.base.settings import Settings
from docatlas.core.ingest.chunking import page_starts
from docatlas.core.ingest.discovery import Found
from docatlas.core.ingest.loaders import Document, TextStream, file_hash, open_steps
from docatlas.core.jobs.parts import Chunker, chunker, drop_parts, store_parts
from docatlas.core.storage import metadata as stored_metadata
from docatlas.core.storage import scan_pages, sources
from docatlas.core.storage.database import NewChunk, Store

log = logging.getLogger("docatlas.pipeline")
FEED_BOUND = 4  # files read and waiting for the writer, at most
PRECUT_BYTES = 4 << 20  # a plain-text file up to this size is cut on the loader; a larger one while stored
# A document past this many chunks is worth a warning: the user may not want that many calls.
LARGE_DOCUMENT_CHUNKS = 2000
# The model time a warning assumes per call (a 7B model on a laptop GPU takes about this).
ASSUMED_SECONDS_PER_CALL = 10


@dataclass
class Read:
    """One file as the loader left it for the writer."""

    path: Path
    resolved: str = ""
    stamp: tuple[int, int] | None = None  # (mtime_ns, size) from just before it was hashed
    digest: str = ""
    unchanged_id: int | None = None  # the stored document, when the file is unchanged
    document: Document | TextStream | None = None
    chunks: list[NewChunk] | None = None  # cut already; None: a large text file, cut while stored
    error: DocumentError | None = None  # it could not be read: a listed failure
    unreadable: str | None = None  # not even hashed: the sentence
    crash: BaseException | None = None  # a bug in a reader: raised on the writer's thread


class Feed:
    """The loader thread and its bounded queue of read files."""

    def __init__(self, store: Store, found: Iterable[Found], settings: Settings, cancel: threading.Event,
                 wake: threading.Event, bound: int = FEED_BOUND):
        self.store, self.settings, self.cancel, self.wake = store, settings, cancel, wake
        self.walk = iter(found)  # consumed on the loader thread
        self.found = 0  # entries walked so far (files and listed failures): the total so far
        self.items: queue.Queue[Read] = queue.Queue(maxsize=max(1, bound))
        self.pages: deque[tuple[str, int, int]] = deque()  # (file name, page, pages) of the scan being OCR'd
        self.halt = threading.Event()  # the writer is done with us
        self.finished = False  # every file has been put (or the loader stopped)
        self.blocked = threading.Event()  # set while the loader waits for room in the queue
        self.waiting = 0  # files read and not taken by the writer yet (the one waiting for room too)
        self.most_waiting = 0  # the most there ever were: at most `bound` + 1
        self._count = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="docatlas-feed", daemon=True)

    def start(self) -> Feed:
        """Start reading."""
        self._thread.start()
        return self

    def next(self) -> Read | None:
        """The next read file, if one is waiting."""
        try:
            item = self.items.get_nowait()
        except queue.Empty:
            return None
        with self._count:
            self.waiting -= 1
        return item

    @property
    def done(self) -> bool:
        """Every file has been read and taken."""
        return self.finished and self.items.empty()

    def stop(self) -> None:
        """Stop the loader (a read in progress ends at its next page or file) and drop what waits."""
        self.halt.set()
        while self.next() is not None:
            pass

    # -- the loader thread ------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not (self.halt.is_set() or self.cancel.is_set()):
                found = None
                try:
                    found = next(self.walk, None)
                    if found is None:
                        return  # every entry has been walked and put
                    self.found += 1
                    item = self._read(found)
                except Exception as exc:  # the store failed (a full disk), or a bug
                    if self.halt.is_set():
                        return  # the writer has gone and may have closed the store: nobody to tell
                    item = Read(found.path if found else Path(), crash=exc)  # raised on the writer's thread
                if item is None:
                    return
                with self._count:
                    self.waiting += 1
                    self.most_waiting = max(self.most_waiting, self.waiting)
                if not self._put(item):
                    return
        finally:
            self.finished = True
            self.wake.set()

    def _put(self, item: Read) -> bool:
        while not self.halt.is_set():
            try:
                self.items.put(item, timeout=0.05)
                self.blocked.clear()
                self.wake.set()
                return True
            except queue.Full:
                self.blocked.set()
        return False

    def _read(self, found: Found) -> Read | None:
        """Hash, and unless unchanged read and cut, one file; None when cancelled."""
        path = found.path
        item = Read(path, resolved=found.resolved, unreadable=found.problem)
        if found.problem is not None:
            return item  # a walk failure: listed as it is
        try:
            status = path.stat()  # before hashing: an edit made while it is read shows at the next sync
            item.digest, item.stamp = file_hash(path), (status.st_mtime_ns, status.st_size)
        except (OSError, RuntimeError) as exc:
            reason = getattr(exc, "strerror", None) or "a link that loops"
            item.unreadable = (f"{shown_name(path)} could not be read ({reason}); "
                               "check that it exists and that you may read it.")
            return item
        existing = self.store.document_by_path(item.resolved)
        if existing is not None and existing.content_hash == item.digest:
            # A file that failed to load is tried again (the reader may have improved since);
            # one that loaded has its chunks in the store, pending ones included.
            if not (existing.status == "failed" and not self.store.chunk_counts(existing.id)):
                item.unchanged_id = existing.id
                return item
        try:
            steps = open_steps(path, self.cancel)
            while True:  # the pages of a scan, OCR'd one by one
                try:
                    page, pages = next(steps)
                except StopIteration as opened:
                    item.document = opened.value
                    break
                self.pages.append((shown_name(path), page, pages))
                self.wake.set()
            if isinstance(item.document, Document) or item.stamp[1] <= PRECUT_BYTES:
                item.chunks = list(cutter(self.settings)(item.document))
        except Cancelled:
            return None
        except DocumentError as exc:
            item.error = exc
        except Exception as exc:
            item.crash = exc
        return item


def cutter(settings: Settings) -> Chunker:
    """The settings' chunker: a document's chunks as the store takes them."""
    return chunker(settings.chunking.chunk_tokens, settings.chunking.overlap_tokens)


def store_read(store: Store, item: Read, settings: Settings, failures: list,
               warnings: list[str]) -> tuple[str, set[str], list[int]]:
    """Store one read file (or its failure); add a warning for a very large or patched file.

    Returns the outcome ("added", "unchanged" or "failed"), the entity keys that the file's
    previous version supported (the graph must re-derive them) and the documents whose
    chunks may wait for extraction now (the file's, and its attachments')."""
    if item.crash is not None:
        raise item.crash
    if item.unreadable is not None:
        failures.append((shown_path(item.path), item.unreadable))
        return "failed", set(), []
    outcome, touched, documents = _store(store, item, settings, failures, warnings)
    sources.put_stamps(store, {item.resolved: item.stamp})  # what a sync compares
    return outcome, touched, documents


def _store(store: Store, item: Read, settings: Settings, failures: list,
           warnings: list[str]) -> tuple[str, set[str], list[int]]:
    path, resolved, document = item.path, item.resolved, item.document
    if item.unchanged_id is not None:
        return "unchanged", set(), [item.unchanged_id]
    count = 0
    cut = cutter(settings)

    def counted():
        nonlocal count
        for chunk in item.chunks if item.chunks is not None else cut(document):
            count += 1
            yield chunk

    try:
        if item.error is not None:
            raise item.error
        # Stored in one transaction (a large text file is read and cut as a stream inside it):
        # a read error keeps the old version.
        doc_id, touched = store.put_document(path=resolved, title=document.title, kind=document.kind,
                                             content_hash=item.digest, size=item.stamp[1], chunks=counted(),
                                             metadata=getattr(document, "metadata", ()),
                                             pages=() if isinstance(document, TextStream) else page_starts(document))
        documents = [doc_id]
        if isinstance(document, Document):  # attachments, a mailbox's messages: documents of their own
            warnings.extend(w for w in document.warnings if w not in warnings)
            touched |= store_parts(store, doc_id, resolved, document, cut, failures, warnings)
            if document.parts:
                documents += [part for part, _ in stored_metadata.documents_under(store, resolved)]
            scan_pages.put(store, doc_id, [(p.number, p.confidence) for p in document.pages
                                           if p.confidence is not None])
    except DocumentError as exc:
        failures.append((shown_path(resolved), exc.message))
        dropped = store.put_failed_document(
            path=resolved, title=shown_path(path.stem), kind=path.suffix.lstrip(".").lower(),
            content_hash=item.digest, size=item.stamp[1], error=exc.message)
        return "failed", dropped | drop_parts(store, resolved), []  # a damaged message keeps no old attachments
    name = shown_name(path)
    if isinstance(document, TextStream) and document.replaced:
        warnings.append(f"{name} has {document.replaced:,} bytes that are not valid UTF-8; they were "
                        "read as \ufffd and the rest as UTF-8, so check the file if names look wrong.")
    if count > LARGE_DOCUMENT_CHUNKS:
        calls = count * (1 + settings.extraction.gleaning)
        hours = calls * ASSUMED_SECONDS_PER_CALL / 3600
        warnings.append(f"{name} makes {count:,} chunks, about {calls:,} model calls or {hours:,.1f} hours "
                        f"at {ASSUMED_SECONDS_PER_CALL} s a call; press Cancel (Ctrl-C) and split the file "
                        "if that is more than you meant.")
    return "added", touched, documents
