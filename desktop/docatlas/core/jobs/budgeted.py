"""Budgeted reading at question time: a question may spend model calls reading what it needs first.

When the graph does not cover a question yet, the chunks ranked best for it that the model has
not read (full-text and vectors, `retrieval.search`) are extracted first, `parallel` at a time,
with the run's own call (`ingest.extract.extract_chunk`, the same profile, settings and reply
cache key): a chunk this reads costs the run no call later, and a reply already cached costs
this none. Like LazyGraphRAG's relevance test, then deepening: a chunk is relevant when its
records relate a name of the question (or a partner found so far) to another; the other ends
become partners, and the chunks naming them are read next, those whose relation shares a word
with the question first (the second hop of "Who funded the person X met?"). It stops when the
budget would be passed, nothing is left to read, several chunks in a row were not relevant,
or it is stopped (`stop`: the answer is then made from what was read).

Writes: with no run going, the reading holds the workspace lock and stores each chunk as a run
would (`finish_chunk` with its findings, then one provisional merge), so the work counts toward
the graph. While a run holds the lock (another process, or a run in this process), it stores
nothing but the replies (the cache) and lists the chunks in `wanted_chunks` for the run's
writer; the answer uses the records from memory, and says so.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack

from docatlas.core.base.concepts import find_concepts
from docatlas.core.base.errors import Cancelled, LLMError, ModelNotFound, OllamaUnreachable
from docatlas.core.base.keys import entity_key
from docatlas.core.base.progress import Progress
from docatlas.core.base.records import RelationRecord
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import rebuild
from docatlas.core.ingest.extract import ChunkExtraction, extract_chunk
from docatlas.core.ingest.findings import accepted_keys, record_findings
from docatlas.core.jobs.auto_profile import resolved_settings
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import extraction_profile, profile_for
from docatlas.core.retrieval.answer import Answer, ask
from docatlas.core.retrieval.fulltext import search_chunks
from docatlas.core.retrieval.keywords import content_words, stem
from docatlas.core.retrieval.read_first import ReadFirst
from docatlas.core.retrieval.search import find_chunks, question_vectors
from docatlas.core.storage import context as lookups
from docatlas.core.storage import wanted
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import WorkspaceBusy, jobs_here, workspace_writer

BUDGETS = (0, 10, 50, 200)  # the chat's choices (0: off); the CLI takes any number
CANDIDATES = 200  # chunks ranked per search, before those the model has read are left out
PARTNER_CHUNKS = 20  # chunks read per partner at most
RANKED = 1.0  # the chunks ranked for the question; a partner's whose relation shares a question word come first
AFTER_RANKED = 0.5  # a partner's whose relation shares none come after them
IRRELEVANT_RUN = 6  # chunks in a row that gave nothing for the question end the reading
LOCK_NAME = "query --budget"
RUN_HOLDS = ("A run is writing to this workspace, so what was read for this question is used for this answer "
             "only; its replies are kept, and the run adds them to the graph without asking the model again.")


def ask_within(store: Store, llm: LLM, question: str, settings: Settings, budget: int, *, mode: str | None = None,
               history: Sequence[dict] = (), on_token: Callable[[str], None] | None = None,
               cancel: threading.Event | None = None, stop: threading.Event | None = None,
               on_progress: Callable[[Progress], None] | None = None) -> Answer:
    """`retrieval.answer.ask`, after reading up to `budget` model calls' worth of chunks for the question.

    `stop` ends the reading (the answer is made from what was read); `cancel` ends everything."""
    read = None
    if budget > 0:
        steps = read_for_question(store, llm, question, settings, budget, stop=stop, cancel=cancel)
        while True:
            try:
                step = next(steps)
            except StopIteration as end:
                read = end.value
                break
            if on_progress is not None:
                on_progress(step)
    if cancel is not None and cancel.is_set():
        raise Cancelled("Stopped before the answer was made.")
    return ask(store, llm, question, settings, mode, history, on_token, cancel, read=read)


def spent_message(chunks: int, calls: int, budget: int) -> str:
    """The progress line: passages read and calls spent of the budget."""
    return (f"Reading for this question: {chunks:,} passage{'s' if chunks != 1 else ''} read, "
            f"{calls:,} of {budget:,} model calls spent")


def read_for_question(store: Store, llm: LLM, question: str, settings: Settings, budget: int, *,
                      stop: threading.Event | None = None,
                      cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Read the chunks the question needs within `budget` calls; Progress as it goes, then the `ReadFirst`."""
    stop = stop or threading.Event()
    with ExitStack() as stack:
        held = _take_lock(store, stack)
        reading = _Reading(store, llm, question, settings, budget, held is None, stop, cancel)
        if held is not None:
            reading.notes.append(held)
        yield Progress(stage="extract", message=spent_message(0, 0, budget), step_total=budget)
        yield from reading.run()
        return reading.result()


def _take_lock(store: Store, stack: ExitStack) -> str | None:
    """Hold the workspace lock for the reading; the sentence why not when a run holds it."""
    if jobs_here(store):
        return RUN_HOLDS
    try:
        stack.enter_context(workspace_writer(store, LOCK_NAME))
    except WorkspaceBusy:
        return RUN_HOLDS
    return None


class _Reading:
    """One question's reading: the ranked chunks, the calls in flight, what they gave."""

    def __init__(self, store: Store, llm: LLM, question: str, settings: Settings, budget: int, storing: bool,
                 stop: threading.Event, cancel: threading.Event | None):
        self.store, self.llm, self.question, self.budget, self.storing = store, llm, question, budget, storing
        self.stop, self.cancel = stop, cancel
        self.settings = resolved_settings(store, settings, llm.model)  # `auto`: the profile chosen for the model
        self.extraction = self.settings.extraction
        name = self.extraction.profile
        self.profile = extraction_profile(store, name) if storing else profile_for(store, name)
        self.per_chunk = 1 + self.extraction.gleaning * (2 if self.extraction.loop_check else 1)
        self.parallel = max(1, settings.ollama.total_parallel)
        names = find_concepts(question).names
        self.seeds = set(names)
        named = {stem(w) for name in names.values() for w in content_words(name)}
        self.words = {stem(w) for w in content_words(question)} - named  # what is asked, not about whom
        self.partners: dict[str, float] = {}
        self.calls = 0
        self.read: list[int] = []
        self.relevant: list[int] = []
        self.relations: list[tuple[float, int, RelationRecord]] = []
        self.unstored: list[int] = []
        self.owed: set[str] = set()
        self.notes: list[str] = []
        self.stopped = False
        self.why = ""
        self.queue: list[tuple[float, int, int]] = []  # (-priority, order, chunk): a heap
        self.order = itertools.count()
        self.taken: set[int] = set()

    def run(self) -> Iterator[Progress]:
        """Extract, store or keep, deepen; a Progress after each chunk."""
        self._push(self._unread(self._ranked()), RANKED)
        self._deepen(self._graph_partners())
        irrelevant = 0
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="docatlas-question") as pool:
            flight: dict[Future, int] = {}
            while True:
                while len(flight) < self.parallel and self._may_start(len(flight)) and irrelevant < IRRELEVANT_RUN:
                    chunk = self._next()
                    if chunk is None:
                        break
                    flight[pool.submit(self._extract, chunk)] = chunk
                if not flight:
                    break
                done, _ = wait(flight, return_when=FIRST_COMPLETED)
                for future in done:
                    chunk = flight.pop(future)
                    gave = self._keep(chunk, future)
                    irrelevant = 0 if gave else irrelevant + 1
                    yield Progress(stage="extract", message=spent_message(len(self.read), self.calls, self.budget),
                                   step_done=min(self.calls, self.budget), step_total=self.budget)
        if self.stop.is_set() or (self.cancel is not None and self.cancel.is_set()):
            self.stopped = True
        if self.owed:
            rebuild(self.store, self.owed, None, provisional=True)  # summaries wait for a run: the keys stay owed
        if self.unstored:
            wanted.want(self.store, self.unstored)

    def result(self) -> ReadFirst:
        """What the reading gave, for the answer."""
        best = sorted(self.relations, key=lambda r: -r[0])
        return ReadFirst(self.budget, self.calls, tuple(self.read), tuple(self.relevant),
                         tuple((chunk, record) for _, chunk, record in best), not self.unstored and self.storing,
                         self.stopped and not self.why, tuple(self.notes), self.why)

    # -- choosing ---------------------------------------------------------------------
    def _ranked(self) -> list[int]:
        """The chunks best for the question: full text and (when embedded) vectors."""
        q = self.settings.query
        vecs, _ = question_vectors(self.store, self.llm, self.settings.ollama.embed_model, "naive", self.question,
                                   None)
        phrases = [self.question, *find_concepts(self.question).names.values()]
        return find_chunks(self.store, phrases, vecs.question, vecs.model, CANDIDATES, q.min_similarity)

    def _unread(self, ids: Sequence[int]) -> list[int]:
        return [i for i in wanted.unread_chunks(self.store, ids) if i not in self.taken]

    def _graph_partners(self) -> list[tuple[str, str, float]]:
        """(partner key, name, score) of the graph's relations of the question's names."""
        rows = lookups.relations_touching(self.store, sorted(self.seeds))
        texts = lookups.relation_texts(self.store, [(s, t) for s, t, _ in rows])
        out = []
        for (s, t), r in texts.items():
            other, name = (t, r.target) if s in self.seeds else (s, r.source)
            out.append((other, name, self._score(f"{r.keywords} {r.description}")))
        return out

    def _score(self, text: str) -> float:
        """How many of the question's words a relation's words share."""
        return float(len({stem(w) for w in content_words(text)} & self.words))

    def _deepen(self, partners: Sequence[tuple[str, str, float]]) -> None:
        """Chunks naming new partners join the reading: first if their relation shares a question word."""
        for key, name, score in sorted(partners, key=lambda p: -p[2]):
            if key in self.seeds or (key in self.partners and self.partners[key] >= score):
                continue
            first_time = key not in self.partners
            self.partners[key] = score
            if not first_time and score <= 0:
                continue
            named = search_chunks(self.store, [name], PARTNER_CHUNKS)
            order = {c: i for i, c in enumerate(search_chunks(self.store, [name, self.question], CANDIDATES))}
            chunks = self._unread(sorted(named, key=lambda c: order.get(c, len(order))))
            self._push(chunks, RANKED + score if score > 0 else AFTER_RANKED)

    def _push(self, chunks: Sequence[int], priority: float) -> None:
        """Queue chunks at `priority` (higher first; in the order given within it)."""
        for chunk in chunks:
            heapq.heappush(self.queue, (-priority, next(self.order), chunk))

    def _next(self) -> int | None:
        while self.queue:
            _, _, chunk = heapq.heappop(self.queue)
            if chunk not in self.taken:
                self.taken.add(chunk)
                return chunk
        return None

    def _may_start(self, in_flight: int) -> bool:
        if self.stop.is_set() or (self.cancel is not None and self.cancel.is_set()):
            return False
        return self.calls + (in_flight + 1) * self.per_chunk <= self.budget

    # -- reading ----------------------------------------------------------------------
    def _extract(self, chunk: int) -> ChunkExtraction:
        text = self.store.chunk_text(chunk)
        return extract_chunk(self.llm, self.profile, text, self.extraction, self.stop,
                             accepted=accepted_keys(self.store, chunk))

    def _keep(self, chunk: int, future: Future) -> bool:
        """Store (or keep) one chunk's result; True when it gave something for the question."""
        error = future.exception()
        if isinstance(error, Cancelled):
            return False
        if isinstance(error, OllamaUnreachable | ModelNotFound):
            self.notes.append(error.message)
            self.why = "the model could not be used"
            self.stop.set()  # the answer is made from what is there
            return False
        if isinstance(error, LLMError):
            self.calls += 1
            return False
        if error is not None:
            raise error
        result: ChunkExtraction = future.result()
        self.calls += result.calls
        self.read.append(chunk)
        self._store(chunk, result)
        found = []
        for record in result.relations:
            ends = {entity_key(record.source), entity_key(record.target)}
            shared = self._score(f"{record.keywords} {record.description}")
            if not ends & (self.seeds | set(self.partners)) and (self.seeds or not shared):
                continue  # relates nothing the question names (or, naming nothing, shares none of its words)
            found.append((shared + 2.0 * len(ends & self.seeds), chunk, record))
            others = ends - self.seeds
            if ends & self.seeds and len(others) == 1:  # a partner of a name of the question: the next hop
                other = others.pop()
                name = record.target if entity_key(record.target) == other else record.source
                self._deepen([(other, name, shared)])
        if found:
            self.relevant.append(chunk)
            self.relations += found
        return bool(found)

    def _store(self, chunk: int, result: ChunkExtraction) -> None:
        """As the run stores a chunk (`jobs.slots`), when this reading holds the workspace alone."""
        if not self.storing or jobs_here(self.store) > 1:  # a run of this process began meanwhile
            self.unstored.append(chunk)
            if self.storing and RUN_HOLDS not in self.notes:
                self.notes.append(RUN_HOLDS)
            return
        record_findings(self.store, chunk, result)
        keys = [entity_key(e.name) for e in result.entities]
        pairs = [(entity_key(r.source), entity_key(r.target)) for r in result.relations]
        self.owed |= self.store.finish_chunk(chunk, result.entities, result.relations, status=result.status,
                                             profile=self.extraction.profile, model=self.llm.model,
                                             calls=result.calls, keys=keys, relation_keys=pairs)
        state = wanted.chunk_states(self.store, [chunk]).get(chunk)
        if state is not None:
            self.store.refresh_document_status(state.document_id)
