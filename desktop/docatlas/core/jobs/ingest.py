"""The ingestion pipeline, readable in one screen: files -> chunks -> records -> graph.

`index()` is a generator of typed `Progress` events. The caller (CLI progress bar or GUI
worker thread) pulls events and may stop at any time by setting `cancel` or closing the
generator. Reading, storing and extracting overlap: a loader thread walks the folders and
reads the files ahead into a bounded queue (`feed`; it starts first, so the first file is read
while the model's client loads), the generator's own thread, the only one that writes to the
store, stores each file's chunks and keeps the model busy with them while the next files
are read (`stream`); model calls run on a small thread pool, at most `parallel` at once,
chunk embeddings among them (`slots`).

Nothing is ever half-written: every chunk is stored `pending` before any model call, and
becomes `done` in the same transaction that stores its records and owes their keys a merge
(`pending_rederive`). The graph grows while the run goes on: the writer merges the new
records in small batches (`stream`, every few seconds, no summaries); the final merge
summarises what the run touched and settles the keys. A run that is killed resumes from the
pending chunks; cached replies make repeated work free. A drop (a delete, a changed document)
writes the keys it touched in its own transaction too, and every writing job starts by
re-deriving what an earlier one left owed (`heal_steps`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import Summarizer, rebuild, rebuild_steps
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.ingest.loaders import walk
from docatlas.core.jobs.feed import Feed
from docatlas.core.jobs.parts import drop_parts
from docatlas.core.jobs.run_health import finish_run_health
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import merge_template
from docatlas.core.storage import healing, sources
from docatlas.core.storage.database import Store
from docatlas.core.storage.lock import writes_workspace

__all__ = ["heal_steps", "index", "remove_document"]


def heal_steps(store: Store, summarize: Summarizer | None = None,
               cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Re-derive what an earlier run left owed: all of the graph when a merge stopped
    (`graph_dirty`), else the keys a drop or a finished chunk wrote to `pending_rederive` that
    no merge has settled (a run killed before its final merge: its summaries are made now)."""
    if store.get_meta("graph_dirty") == "1":
        yield from rebuild_steps(store, None, summarize, cancel)
        return
    owed = healing.pending(store)
    if owed:
        yield from rebuild_steps(store, owed, summarize, cancel)


@writes_workspace("ingest")
def index(
    store: Store,
    paths: Sequence[Path],
    settings: Settings,
    llm: LLM | None = None,
    cancel: threading.Event | None = None,
) -> Iterator[Progress]:
    """Ingest `paths` (files or folders) into the store and extract their graph."""
    cancel = cancel or threading.Event()
    started = time.monotonic()
    state = Progress(stage="load")

    def tick(**changes: object) -> Progress:
        nonlocal state
        state = replace(state, elapsed=time.monotonic() - started, **changes)
        return state

    def relay(steps: Iterator[Progress]) -> Iterator[Progress]:
        """A stage's own steps (merge, summaries) as this run's progress."""
        for step in steps:
            yield tick(stage=step.stage, message=step.message, step_done=step.step_done, step_total=step.step_total)

    # 1-2. Documents and chunks: a loader thread walks the folders and reads the files ahead (at
    # most a few wait in memory) from the start; this thread stores each as pending and extracts
    # its chunks while the next are found and read. The totals grow as the walk goes on.
    given = [Path(p) for p in paths]
    wake = threading.Event()
    feed = Feed(store, walk(given), settings, cancel, wake).start()
    try:
        # Long merged descriptions are summarised by the model (cached); the client opens on first use.
        summarize = ModelSummarizer(lambda: llm or _client(settings, store), settings.extraction,
                                    template=merge_template(store, "summarize"), cancel=cancel,
                                    parallel=settings.ollama.total_parallel)
        yield from relay(heal_steps(store, summarize, cancel))  # what an earlier run left owed
        for folder in given:
            if folder.is_dir():  # a folder stays linked in place: `jobs.sync` follows it
                sources.add_source(store, str(folder.resolve()))
        yield tick(still_reading=True)
        # The model's side (the client and its libraries, the embedding of chunks) loads while the
        # first file is read and cut (the tokenizer loads on the loader thread).
        from docatlas.core.jobs.slots import Slots
        from docatlas.core.jobs.stream import Stream

        llm = llm or _client(settings, store)
        touched: set[str] = set()
        failures: list[tuple[str, str]] = []
        warnings: list[str] = []
        run = Stream(store, feed, Slots(store, cancel, wake, touched), settings, llm, cancel, wake, failures,
                     warnings)
    except BaseException:
        feed.stop()
        raise
    try:
        for changes in run.steps():
            yield tick(documents_total=feed.found, **changes)
    finally:
        run.close()
    if run.grow(now=True):  # the last batch: every record stored is in the graph, whatever happens next
        yield tick(chunks_merged=run.chunks_merged)
    settings, llm, slots = run.settings, run.llm, run.slots
    if slots.fatal is not None or run.refused is not None:
        raise slots.fatal or run.refused
    if cancel.is_set() and not slots.started:
        yield tick(stage="cancelled", step_done=0, step_total=0, message="Stopped; run again to continue.",
                   still_reading=False)
        return
    health_warning = finish_run_health(store, slots.ids, settings.extraction.profile)

    # 3. Graph: re-derive what the new records touched. A run stopped during extraction still
    # merges what it found (the summariser declines once stopped: descriptions are joined and
    # the graph stays dirty, so the next run summarises them); a stop during the merge holds.
    yield tick(stage="merge", message="Merging the graph", still_reading=False, eta=None)
    merge_cancel = threading.Event() if cancel.is_set() else cancel
    yield from relay(rebuild_steps(store, touched, summarize, merge_cancel))

    # 4. Search: the rest of the embeddings (chunks' were made during extraction) and community
    # reports for what changed (cheap when nothing did).
    if not cancel.is_set():
        from docatlas.core.retrieval.communities import refresh_communities  # networkx: only at this stage
        from docatlas.core.retrieval.embed import embed_pending

        llm = llm or _client(settings, store)
        # The second embedding pass covers the vectors of the reports just written.
        jobs = (embed_pending, refresh_communities, embed_pending) if settings.query.community_reports else (
            embed_pending,)
        for job in jobs:
            for step in job(store, llm, settings, cancel):
                warnings += [w for w in step.warnings if w not in warnings]
                yield tick(stage="embed" if job is embed_pending else "communities", message=step.message,
                           step_done=step.step_done, step_total=step.step_total, warnings=tuple(warnings))
            if cancel.is_set():
                break
    stage = "cancelled" if cancel.is_set() else "done"
    yield tick(stage=stage, eta=0.0, message="Stopped; run again to continue." if cancel.is_set() else "Done",
               warnings=state.warnings + ((health_warning,) if health_warning else ()))


def _client(settings: Settings, store: Store) -> LLM:
    """The Ollama client of a run that was given none."""
    from docatlas.core.llm.ollama import OllamaLLM

    return OllamaLLM(settings.ollama, cache=store)


@writes_workspace("delete")
def remove_document(store: Store, document_id: int, summarize: Summarizer | None = None) -> set[str]:
    """Delete a document and re-derive what it touched, without the model reading any document.

    Without `summarize`, descriptions that lost a part are joined again; with it, they may
    be summarised (from the cache when the same set was summarised before)."""
    for _ in heal_steps(store, summarize):  # what an earlier run left owed comes first
        pass
    row = next((d for d in store.find_documents(str(document_id)) if d.id == document_id), None)
    touched = drop_parts(store, row.path) if row is not None else set()  # its attachments go with it
    touched |= store.delete_document(document_id)
    rebuild(store, touched, summarize)
    return touched


