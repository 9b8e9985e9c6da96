"""The model calls of an ingest: at most `parallel` in flight, kept full while files are still read.

Extraction of the chunks handed in (`add`) and, between them, batches of chunk embeddings
(`retrieval.embed.chunk_batch`: a chunk's text never changes, so its vector is made while
extraction runs; entities and relations wait for the merge). The model never waits for
DocAtlas: `parallel` more chunks than the slots are prepared on the pool (text read,
prompt built) and wait at the `Gate`, which lets at most `parallel` calls reach the model at
once, so a call starts the moment another ends, and a reply is parsed and grounded while
the next call runs. A pause (the generator not pulled) lets those prepared calls run too.
Only the writer's thread calls these methods; the calls run on a small thread pool and
`wake` the writer when one ends; the writer refills before it stores a finished one.

The chunks wait in interest order (`order.Work`: the questions asked first, then chunks rich
in names the graph lacks). A near-duplicate of another chunk (`storage.duplicates`) never
takes a slot: it waits for its original to finish (in this run, or already) and then takes
the original's records that its own text backs (`ingest.copies`), on the writer's thread. A
copy whose original failed stays pending with it, for the next run: never a second call for
the same body.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from docatlas.core.base.errors import Cancelled, LLMError, OllamaUnreachable
from docatlas.core.base.keys import entity_key
from docatlas.core.base.settings import Settings
from docatlas.core.ingest.copies import follow
from docatlas.core.ingest.extract import ChunkExtraction, extract_chunk
from docatlas.core.ingest.findings import accepted_keys, record_findings
from docatlas.core.jobs.order import Work
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import extraction_profile
from docatlas.core.retrieval.embed import chunk_batch, write_batch
from docatlas.core.storage import duplicates
from docatlas.core.storage.database import ChunkRow, Store

log = logging.getLogger("docatlas.pipeline")
FIGURES = ("calls", "cached_calls", "prompt_tokens", "completion_tokens")


class Embedding(list):
    """A batch of (queue item, text) of chunks being embedded."""


class Gate:
    """The model, let through by at most `slots` calls at once from any number of threads.

    The slot goes to the model's `chat`, which holds it around the model call alone, so its
    cache look-up and storing the reply (the store, shared with the writer) never keep a
    slot empty.
    """

    def __init__(self, llm: LLM, slots: int, cancel: threading.Event):
        self._llm, self._slots, self._cancel = llm, threading.BoundedSemaphore(slots), cancel

    def __getattr__(self, name: str):
        return getattr(self._llm, name)

    def chat(self, *args, **kwargs):
        """The model's `chat`, holding a slot while it asks the model."""
        return self._llm.chat(*args, slot=self._held(), **kwargs)

    def embed(self, *args, **kwargs):
        """The model's `embed`, once a slot is free."""
        with self._held():
            return self._llm.embed(*args, **kwargs)

    @contextmanager
    def _held(self) -> Iterator[None]:
        while not self._slots.acquire(timeout=0.1):
            if self._cancel.is_set():
                raise Cancelled("Stopped before the call was made.")
        try:
            yield
        finally:
            self._slots.release()


class Slots:
    """The calls in flight and the chunks waiting for a slot."""

    def __init__(self, store: Store, cancel: threading.Event, wake: threading.Event, touched: set[str]):
        self.store, self.cancel, self.wake, self.touched = store, cancel, wake, touched
        self.work = Work(store)  # ids only: a text is read when its call starts
        self.parked: dict[int, list[ChunkRow]] = {}  # original id -> its copies waiting for it
        self._unchecked: set[int] = set()  # originals of copies parked since the last look at them
        self._sources: dict[int, tuple[int, ...]] = {}  # copy id -> its originals (one, or two it straddles)
        self.in_flight: dict[Future, ChunkRow | Embedding] = {}
        self.ids: list[int] = []  # every chunk of this run, in the order handed in
        self.remaining: dict[int, int] = {}  # per document: chunks not finished yet
        self.totals = dict(chunks_done=0, chunks_failed=0, chunks_copied=0, **dict.fromkeys(FIGURES, 0))
        self.fatal: LLMError | None = None
        self.unembedded = 0  # chunks extracted since the last embedding batch: embedding trails extraction
        self.unmerged: set[str] = set()  # keys stored since the last batch merge (`Stream` merges them)
        self.unmerged_chunks = 0  # chunks whose records wait for that merge
        self._seen: set[int] = set()
        self._pool: ThreadPoolExecutor | None = None

    def add(self, chunks: Iterable[ChunkRow]) -> int:
        """Queue chunks for extraction (each once per run; a copy waits for its original); how many were new."""
        new = []
        for chunk in chunks:
            if chunk.id not in self._seen:
                self._seen.add(chunk.id)
                new.append(chunk)
                self.ids.append(chunk.id)
                self.remaining[chunk.document_id] = self.remaining.get(chunk.document_id, 0) + 1
        originals = duplicates.originals_of(self.store, [c.id for c in new])
        self._sources.update(originals)
        for chunk in new:
            if chunk.id in originals:
                self.parked.setdefault(originals[chunk.id][0], []).append(chunk)
                self._unchecked.add(originals[chunk.id][0])
        self.work.extend(c for c in new if c.id not in originals)
        if self.started:
            self._follow_finished()
        return len(new)

    def start(self, settings: Settings, llm: LLM, spent: dict[str, int]) -> None:
        """Open the slots: extraction with `settings` (its profile resolved) by `llm`."""
        self.settings, self.llm = settings, llm
        self.profile = extraction_profile(self.store, settings.extraction.profile)  # stamps the chunks
        self.parallel = max(1, settings.ollama.total_parallel)
        self.gate = Gate(llm, self.parallel, self.cancel)
        self.embed_model = settings.ollama.embed_model if callable(getattr(llm, "embed", None)) else ""
        self.batch = max(1, settings.query.embed_batch)
        for name, value in spent.items():
            self.totals[name] = self.totals.get(name, 0) + value
        self._pool = ThreadPoolExecutor(max_workers=2 * self.parallel, thread_name_prefix="docatlas-llm")
        self._follow_finished()

    @property
    def started(self) -> bool:
        """The slots are open."""
        return self._pool is not None

    @property
    def extracting(self) -> int:
        """Extraction calls in flight (or prepared); embedding batches are not counted."""
        return sum(1 for item in self.in_flight.values() if not isinstance(item, Embedding))

    @property
    def idle(self) -> bool:
        """Nothing in flight and nothing waiting."""
        return not self.in_flight and not self.work

    def refill(self) -> None:
        """Fill every free slot (and prepare as many calls again, waiting at the gate)."""
        while len(self.in_flight) < 2 * self.parallel and not self.cancel.is_set() and self.fatal is None:
            if self._embedding_due():
                part = Embedding(chunk_batch(self.store, self.embed_model, self.batch))
                self.unembedded = max(0, self.unembedded - self.batch) if part else 0
                if part:
                    self._submit(self._embed, part)
                    continue
            if not self.work:
                return
            self._submit(self._extract, self.work.popleft())

    def _embedding_due(self) -> bool:
        """A whole batch of chunks waits for its vectors (the rest is embedded after the merge)."""
        if not self.embed_model or any(isinstance(i, Embedding) for i in self.in_flight.values()):
            return False
        return self.unembedded >= self.batch

    def _submit(self, run, item: ChunkRow | Embedding) -> None:
        future = self._pool.submit(run, item)
        self.in_flight[future] = item
        future.add_done_callback(lambda _: self.wake.set())

    def _extract(self, chunk: ChunkRow) -> ChunkExtraction | None:
        if self.cancel.is_set():  # prepared before a stop: the run (and maybe the store) is over
            raise Cancelled("Stopped before the call was made.")
        try:
            text = self.store.chunk_text(chunk.id)  # read when its call starts: memory does not grow
        except IndexError:
            return None  # its document was replaced meanwhile
        return extract_chunk(self.gate, self.profile, text, self.settings.extraction, self.cancel,
                             accepted=accepted_keys(self.store, chunk.id))

    def _embed(self, part: Embedding) -> list[list[float]]:
        return self.gate.embed([text for _, text in part], model=self.embed_model)

    def finished(self) -> list[tuple[Future, ChunkRow | Embedding]]:
        """The calls that have ended, taken off the slots (refill, then `keep` each)."""
        done = [(f, item) for f, item in self.in_flight.items() if f.done()]
        for future, _ in done:
            del self.in_flight[future]
        return done

    def keep(self, future: Future, item: ChunkRow | Embedding) -> ChunkRow | None:
        """Store an ended call's result (or its failure); the chunk when one was finished."""
        error = future.exception()
        if isinstance(item, Embedding):
            if isinstance(error, LLMError) or (error is None and not write_batch(
                    self.store, self.embed_model, item, future.result())):
                log.warning("embedding during extraction stopped: %s", getattr(error, "message", "count"))
                self.embed_model = ""  # the embed stage after the merge says what is wrong
            elif error is not None and not isinstance(error, Cancelled):
                raise error
            return None
        if isinstance(error, Cancelled) or (error is None and future.result() is None):
            return None
        if isinstance(error, OllamaUnreachable):
            self.fatal = error
            self.cancel.set()
            return None
        if error is not None:
            reason = error.message if isinstance(error, LLMError) else (
                "Extraction failed unexpectedly; run again, and see the log if it repeats.")
            if not isinstance(error, LLMError):
                log.error("chunk %s failed", item.id, exc_info=error)
            self.store.fail_chunk(item.id, reason)
            self.totals["chunks_failed"] += 1
        else:
            self.totals["chunks_done"] += 1
            self._store_result(item, future.result())
        self._finished(item)
        if error is None:
            self._follow(item.id)
        return item

    def _finished(self, chunk: ChunkRow) -> None:
        self.unembedded += 1
        self.remaining[chunk.document_id] -= 1
        if self.remaining[chunk.document_id] == 0:
            self.store.refresh_document_status(chunk.document_id)

    def _follow_finished(self) -> None:
        """The parked copies whose original is finished already take its records now."""
        looked, self._unchecked = self._unchecked, set()
        for original_id, status in duplicates.statuses(self.store, looked).items():
            if status in duplicates.FINISHED:
                self._follow(original_id)

    def _follow(self, original_id: int) -> None:
        """A finished original's parked copies take its records (no model call)."""
        for chunk in self.parked.pop(original_id, []):
            sources = self._sources[chunk.id]
            original = duplicates.finished_originals(self.store, sources)
            if original is None:  # another of its originals is not finished: it waits for that one
                waiting = duplicates.waiting_for(self.store, sources)
                self.parked.setdefault(original_id if waiting is None else waiting, []).append(chunk)
                continue
            try:
                _, owed = follow(self.store, chunk.id, original, self.profile, self.settings.extraction)
            except IndexError:
                continue  # its document was replaced meanwhile
            self.touched.update(owed)
            self.unmerged.update(owed)
            self.unmerged_chunks += 1
            self.totals["chunks_done"] += 1
            self.totals["chunks_copied"] += 1
            self._finished(chunk)

    def _store_result(self, chunk: ChunkRow, result: ChunkExtraction) -> None:
        if not duplicates.statuses(self.store, [chunk.id]):
            return  # its document was replaced during the run (it was taken up before the file was read again)
        record_findings(self.store, chunk.id, result)  # first: a finished chunk always has its findings
        keys = [entity_key(e.name) for e in result.entities]
        pairs = [(entity_key(r.source), entity_key(r.target)) for r in result.relations]
        owed = self.store.finish_chunk(
            chunk.id, result.entities, result.relations, status=result.status,
            profile=self.settings.extraction.profile, model=self.llm.model, calls=result.calls,
            keys=keys, relation_keys=pairs,
        )  # the reply's keys and those of the records it replaced (the chunk's concept names)
        self.touched.update(owed)
        self.unmerged.update(owed)
        self.unmerged_chunks += 1
        for name in FIGURES:
            self.totals[name] += getattr(result, name)

    def close(self) -> None:
        """Stop: calls still running finish in the background (their replies land in the cache)."""
        if self.in_flight:  # closed early by the consumer, or cancelled: stop the calls in flight
            self.cancel.set()
        if self._pool is not None:
            # Never wait here for a slow model: the next run gets a cached reply free.
            self._pool.shutdown(wait=False, cancel_futures=True)
        for doc_id, left in self.remaining.items():
            if left:
                self.store.refresh_document_status(doc_id)
