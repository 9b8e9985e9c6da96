"""The writer's loop of a streaming ingest: store what the feed read, keep the model's slots full.

Runs on the generator's thread, the only one that writes the store. Each turn: the calls
that ended are replaced by new ones first (`Slots.refill`), then stored; then one read file
is stored and its chunks join the work; when the files are all read, the workspace's other
pending chunks (an earlier run's, attachments') join too. The first chunks open the slots:
the model is checked, `--profile auto` tried on them, the learned token ratios loaded (a
model that cannot be used is reported after every file is stored, as before streaming).
Progress counts what is known so far and says so (`still_reading`). The chunks are taken in
interest order and near-duplicates take their original's records (`slots`).

The graph grows during the run: the records stored since the last batch are merged once
`MERGE_CHUNKS` chunks or `MERGE_EVERY_S` seconds have gathered (`grow`), a provisional merge
of the keys they touched alone (no summaries: those wait for the run's final merge, and the
keys stay owed in `pending_rederive` until it), so the graph view, the graph query modes,
`export` and `status` see a chunk's entities seconds after it was extracted.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

from docatlas.core.base.errors import LLMError
from docatlas.core.base.paths import shown_name, shown_path
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import rebuild
from docatlas.core.jobs.auto_profile import AUTO, TRIAL_CHUNKS, choose_profile, resolved_settings
from docatlas.core.jobs.feed import Feed, Read, store_read
from docatlas.core.jobs.slots import Slots
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.protocol import LLM
from docatlas.core.storage import health as stored_health
from docatlas.core.storage.database import Store

WAIT_S = 0.5  # the longest sleep between two turns when nothing wakes the writer
MERGE_EVERY_S = 3.0  # records wait at most about this long for their batch merge...
MERGE_CHUNKS = 20  # ...or until this many chunks gathered, whichever comes first


class Stream:
    """One run's reading, storing and extracting, as a generator of progress changes."""

    def __init__(self, store: Store, feed: Feed, slots: Slots, settings: Settings, llm: LLM | None,
                 cancel: threading.Event, wake: threading.Event, failures: list, warnings: list[str]):
        self.store, self.feed, self.slots, self.settings, self.llm = store, feed, slots, settings, llm
        self.cancel, self.wake, self.failures, self.warnings = cancel, wake, failures, warnings
        self.touched = slots.touched
        self.ratios = None
        self.documents_done = self.documents_skipped = 0
        self.swept = False  # the workspace's other pending chunks have joined the work
        self.extract_started = 0.0
        self.merged_at = 0.0  # when the last batch was merged (monotonic): the first chunk merges at once
        self.chunks_merged = 0
        self.refused: LLMError | None = None  # the model could not be used: files are still stored

    def steps(self) -> Iterator[dict]:
        """Progress changes until every chunk is extracted, or the run stops."""
        slots, feed = self.slots, self.feed
        slots.add(slots.work.asked_first())  # the unread chunks that match the questions asked come first
        while True:
            self.wake.clear()
            ended = slots.finished()
            if slots.started:
                slots.refill()
            for future, item in ended:
                chunk = slots.keep(future, item)
                if chunk is not None:
                    yield self._known(message=f"Extracted chunk {chunk.idx + 1}", eta=self._eta())
            if self.grow():
                yield self._known()
            slots.add(slots.work.notice_questions())  # a question asked during the run puts its chunks first
            yield from self._pages()
            if not self.cancel.is_set():
                if not self.swept and feed.done:
                    self.swept = True  # every file is stored: the other pending chunks join
                    slots.add(self.store.work_chunks(with_text=False))  # an earlier run's, attachments'
                    if slots.started:
                        slots.refill()
                    yield self._known(message=f"{len(slots.ids)} chunks to extract")
                    continue
                if not slots.started and (slots.work or slots.parked) and self.refused is None and self._trial_ready():
                    yield from self._open()  # the first chunks are stored: the model starts now
                    continue
                read = feed.next()
                if read is not None:
                    yield self._store(read)
                    continue
            if self.cancel.is_set() and not slots.extracting:
                return  # an embedding batch still running is left to finish in the background
            if not slots.in_flight and self.swept and (slots.idle or self.refused):
                return
            self.wake.wait(WAIT_S)

    def grow(self, now: bool = False) -> bool:
        """Merge the records stored since the last batch when it is due (or `now`, also once
        stopped: the run's last batch); True if merged.

        Its cost follows the batch (the keys it touched, with their records), never the graph."""
        slots = self.slots
        if not slots.unmerged or (self.cancel.is_set() and not now):
            return False
        if not now and slots.unmerged_chunks < MERGE_CHUNKS and time.monotonic() - self.merged_at < MERGE_EVERY_S:
            return False
        keys, slots.unmerged = slots.unmerged, set()
        self.chunks_merged += slots.unmerged_chunks
        slots.unmerged_chunks = 0
        rebuild(self.store, keys, None, provisional=True)
        self.merged_at = time.monotonic()
        return True

    def _trial_ready(self) -> bool:
        """Enough chunks are stored to open the slots (`auto` tries its profiles on the first ones)."""
        return self.settings.extraction.profile != AUTO or len(self.slots.work) >= TRIAL_CHUNKS or self.swept

    def _open(self) -> Iterator[dict]:
        """The first chunks are stored: check the model, choose the profile, start extracting."""
        self.llm = self.llm or OllamaLLM(self.settings.ollama, cache=self.store)
        check = getattr(self.llm, "check", None)
        try:
            if check is not None:
                check()
        except LLMError as exc:  # Ollama down, the model missing: the files are still read and kept
            self.refused = exc
            yield self._known(message="The model cannot be used; the files are read and kept for the next run.")
            return
        spent: dict[str, int] = {}  # calls and tokens of the profile trial, counted in the run's totals
        if self.settings.extraction.profile == AUTO:
            scores: dict[str, int] = {}
            trial = list(itertools.islice(self.slots.work, TRIAL_CHUNKS))
            for step in choose_profile(self.store, trial, self.settings, self.llm, self.cancel, scores, spent):
                yield self._known(stage="extract", message=step.message, **spent)
            self.settings = resolved_settings(self.store, self.settings, self.llm.model)
        self.ratios = getattr(self.llm, "ratios", None)  # the model's tokens per one of ours, learned
        if self.ratios is not None:
            self.ratios.load(stored_health.token_ratios(self.store))
        self.slots.start(self.settings, self.llm, spent)
        self.extract_started = time.monotonic()
        self.slots.refill()
        what = "while the files are read" if not self.feed.done else f"{len(self.slots.ids)} chunks"
        yield self._known(stage="extract", message=f"Extracting {what}")

    def _store(self, read: Read) -> dict:
        """Store one read file; its chunks join the work."""
        outcome, keys, documents = store_read(self.store, read, self.settings, self.failures, self.warnings)
        self.touched |= keys
        self.slots.unmerged |= keys  # a changed document's old records are gone: its keys merge with the next batch
        if documents:
            self.slots.add(self.store.work_chunks(documents, with_text=False))
        if self.slots.started:
            self.slots.refill()
        self.documents_done += 1
        self.documents_skipped += outcome == "unchanged"
        return self._known(documents_done=self.documents_done, documents_skipped=self.documents_skipped,
                           documents_failed=len(self.failures), failures=tuple(self.failures),
                           warnings=tuple(self.warnings), document=shown_name(read.path),
                           document_path=shown_path(read.resolved or read.path), step_done=0, step_total=0)

    def _pages(self) -> Iterator[dict]:
        """A scan's pages as they are OCR'd (before extraction starts, as the load stage's steps)."""
        while self.feed.pages and not self.cancel.is_set():
            name, page, pages = self.feed.pages.popleft()
            message = f"OCR {name}: page {page} of {pages}"
            if self.slots.started:
                yield self._known(message=message)
            else:
                yield self._known(step_done=page, step_total=pages, message=message)

    def _known(self, **changes: object) -> dict:
        """The figures known so far, with `changes`."""
        figures = dict(self.slots.totals) if self.slots.started else {}
        figures.update(chunks_total=len(self.slots.ids), still_reading=not self.swept,
                       stage="extract" if self.slots.started else "load", chunks_merged=self.chunks_merged)
        if self.slots.started:
            figures["hosts"] = host_loads(self.llm)
        return figures | changes

    def _eta(self) -> float | None:
        """Seconds left at the rate so far; unknown while files are still read (the total grows)."""
        finished = self.slots.totals["chunks_done"] + self.slots.totals["chunks_failed"]
        if not self.swept or not finished:
            return None
        left = len(self.slots.ids) - finished
        return left * (time.monotonic() - self.extract_started) / finished

    def close(self) -> None:
        """Stop reading and calling; keep what the model learned of its token ratio."""
        if not self.feed.finished:
            self.cancel.set()  # the file being read (a scan mid-OCR) stops at its next page
        self.feed.stop()
        self.slots.close()
        if self.ratios is not None:
            stored_health.put_token_ratios(self.store, self.ratios.learned())


def host_loads(llm: LLM | None) -> tuple:
    """Each Ollama host's load, when the model is a pool of hosts that reports them."""
    loads = getattr(llm, "host_loads", None)
    return tuple(loads()) if callable(loads) else ()
