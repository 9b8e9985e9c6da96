"""The ingestion pipeline, readable in one screen: files -> chunks -> records -> graph.

`index()` is a generator of typed `Progress` events. The caller (CLI progress bar or GUI
worker thread) pulls events and may stop at any time by setting `cancel` or closing the
generator. Only the generator's own thread writes to the store; model calls run on a
small thread pool, at most `parallel` at once.

Nothing is ever half-written: every chunk is stored `pending` before any model call, and
becomes `done` in the same transaction that stores its records. A run that is killed
resumes from the pending chunks; cached replies make repeated work free. A drop (a delete,
a changed document) writes the keys it touched in its own transaction, and every writing
job starts by re-deriving what an earlier one left owed (`heal_steps`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

from docatlas.core.base.errors import Cancelled, LLMError, OllamaUnreachable
from docatlas.core.base.keys import entity_key
from docatlas.core.base.paths import shown_name, shown_path
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.graph.merge import Summarizer, rebuild, rebuild_steps
from docatlas.core.graph.summarize import ModelSummarizer
from docatlas.core.ingest.chunking import iter_chunks, page_starts
from docatlas.core.ingest.extract import ChunkExtraction, extract_chunk
from docatlas.core.ingest.findings import accepted_keys, record_findings
from docatlas.core.ingest.loaders import Document, DocumentError, TextStream, discover, file_hash, open_steps
from docatlas.core.jobs.auto_profile import AUTO, choose_profile, resolved_settings
from docatlas.core.jobs.parts import chunker, drop_parts, store_parts
from docatlas.core.jobs.run_health import finish_run_health
from docatlas.core.llm.ollama import OllamaLLM
from docatlas.core.llm.protocol import LLM
from docatlas.core.prompts.store import extraction_profile, merge_template
from docatlas.core.retrieval.communities import refresh_communities
from docatlas.core.retrieval.embed import embed_pending
from docatlas.core.storage import healing, scan_pages, sources
from docatlas.core.storage import health as stored_health
from docatlas.core.storage.database import ChunkRow, NewChunk, Store
from docatlas.core.storage.lock import writes_workspace

log = logging.getLogger("docatlas.pipeline")
# A document past this many chunks is worth a warning: the user may not want that many calls.
LARGE_DOCUMENT_CHUNKS = 2000
# The model time a warning assumes per call (a 7B model on a laptop GPU takes about this).
ASSUMED_SECONDS_PER_CALL = 10


def heal_steps(store: Store, summarize: Summarizer | None = None,
               cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Re-derive what an earlier run left owed: all of the graph when a merge stopped
    (`graph_dirty`), else the keys a drop wrote to `pending_rederive` before it was killed."""
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

    # Long merged descriptions are summarised by the model (cached); the client opens on first use.
    summarize = ModelSummarizer(lambda: llm or OllamaLLM(settings.ollama, cache=store), settings.extraction,
                                template=merge_template(store, "summarize"), cancel=cancel,
                                parallel=settings.ollama.parallel)
    yield from relay(heal_steps(store, summarize, cancel))  # what an earlier run left owed
    touched: set[str] = set()
    warnings: list[str] = []

    # 1. Documents: hash, load, chunk, store as pending.
    files, skipped = discover([Path(p) for p in paths])
    for folder in (Path(p) for p in paths):
        if folder.is_dir():  # a folder stays linked in place: `jobs.sync` follows it
            sources.add_source(store, str(folder.resolve()))
    failures = [(shown_path(p), reason) for p, reason in skipped]
    yield tick(documents_total=len(files), documents_failed=len(skipped), failures=tuple(failures))
    for number, path in enumerate(files, 1):
        if cancel.is_set():
            yield tick(stage="cancelled", message="Stopped; run again to continue.")
            return
        adding = _add_file(store, path, settings, failures, warnings, cancel)
        while True:  # the pages of a scan, OCR'd one by one
            try:
                page, pages = next(adding)
            except StopIteration as added:
                outcome, keys = added.value
                break
            yield tick(step_done=page, step_total=pages, message=f"OCR {shown_name(path)}: page {page} of {pages}")
        touched |= keys
        if outcome == "cancelled":
            yield tick(stage="cancelled", step_done=0, step_total=0, message="Stopped; run again to continue.")
            return
        yield tick(documents_done=number, step_done=0, step_total=0, document=shown_name(path),
                   document_path=shown_path(path.resolve()),
                   failures=tuple(failures), warnings=tuple(warnings),
                   documents_failed=len(failures),
                   documents_skipped=state.documents_skipped + (outcome == "unchanged"))

    # 2. Chunks: every pending (or failed) chunk in the workspace, this run's or an earlier one's.
    work = store.work_chunks(with_text=False)  # each text is read when its call starts
    yield tick(stage="extract", chunks_total=len(work), message=f"{len(work)} chunks to extract")
    if work:
        llm = llm or OllamaLLM(settings.ollama, cache=store)
        llm_check = getattr(llm, "check", None)
        if llm_check is not None:
            llm_check()
        spent: dict[str, int] = {}  # calls and tokens of the profile trial, counted in the run's totals
        if settings.extraction.profile == AUTO:
            scores: dict[str, int] = {}
            for step in choose_profile(store, work, settings, llm, cancel, scores, spent):
                yield tick(message=step.message, **spent)
            settings = resolved_settings(store, settings, llm.model)
        ratios = getattr(llm, "ratios", None)  # the model's tokens per one of ours, learned
        if ratios is not None:
            ratios.load(stored_health.token_ratios(store))
        try:
            for done in _extract_all(store, work, settings, llm, cancel, touched, spent):
                yield tick(**done)
        finally:
            if ratios is not None:
                stored_health.put_token_ratios(store, ratios.learned())
    health_warning = finish_run_health(store, [c.id for c in work], settings.extraction.profile)

    # 3. Graph: re-derive what the new records touched. A run stopped during extraction still
    # merges what it found (the summariser declines once stopped: descriptions are joined and
    # the graph stays dirty, so the next run summarises them); a stop during the merge holds.
    yield tick(stage="merge", message="Merging the graph")
    merge_cancel = threading.Event() if cancel.is_set() else cancel
    yield from relay(rebuild_steps(store, touched, summarize, merge_cancel))

    # 4. Search: embeddings and community reports for what changed (cheap when nothing did).
    if not cancel.is_set():
        llm = llm or OllamaLLM(settings.ollama, cache=store)
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


def _add_file(store: Store, path: Path, settings: Settings, failures: list, warnings: list[str],
              cancel: threading.Event | None = None) -> Generator[tuple[int, int], None, tuple[str, set[str]]]:
    """Store one file's chunks (or its failure); add a warning for a very large or patched file.

    Yields (page, pages) while a scan is OCR'd. Returns the outcome ("added", "unchanged",
    "failed" or "cancelled": nothing of the file stored) and the entity keys that the file's
    previous version supported, which the graph must re-derive.
    """
    name = shown_name(path)
    try:
        resolved = str(path.resolve())
        status = path.stat()  # before hashing: an edit made while it is read shows at the next sync
        digest, size = file_hash(path), status.st_size
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or "a link that loops"
        failures.append((shown_path(path), f"{name} could not be read ({reason}); "
                                           "check that it exists and that you may read it."))
        return "failed", set()
    outcome, touched = yield from _store_file(store, path, resolved, digest, size, settings, failures, warnings,
                                              cancel)
    sources.put_stamps(store, {resolved: (status.st_mtime_ns, status.st_size)})  # what a sync compares
    return outcome, touched


def _store_file(store: Store, path: Path, resolved: str, digest: str, size: int, settings: Settings,
                failures: list, warnings: list[str], cancel: threading.Event | None = None,
                ) -> Generator[tuple[int, int], None, tuple[str, set[str]]]:
    """Store a read file's chunks, unless it is unchanged (yielding OCR's pages); see `_add_file`."""
    name = shown_name(path)
    existing = store.document_by_path(resolved)
    if existing is not None and existing.content_hash == digest:
        # A file that failed to load is tried again (the reader may have improved since);
        # one that loaded has its chunks in the store, pending ones included.
        if not (existing.status == "failed" and not store.chunk_counts(existing.id)):
            return "unchanged", set()
    count = 0

    def counted() -> Iterator[NewChunk]:
        nonlocal count
        for c in iter_chunks(document, settings.chunking.chunk_tokens, settings.chunking.overlap_tokens):
            count += 1
            yield NewChunk(c.text, c.tokens, c.page_start, c.page_end, c.start, c.end, c.lead)

    try:
        document = yield from open_steps(path, cancel)
        # Read, cut and stored as a stream in one transaction: a read error keeps the old version.
        doc_id, touched = store.put_document(path=resolved, title=document.title, kind=document.kind,
                                             content_hash=digest, size=size, chunks=counted(),
                                             metadata=getattr(document, "metadata", ()),
                                             pages=() if isinstance(document, TextStream) else page_starts(document))
        if isinstance(document, Document):  # attachments, a mailbox's messages: documents of their own
            warnings.extend(w for w in document.warnings if w not in warnings)
            touched |= store_parts(store, doc_id, resolved, document, chunker(
                settings.chunking.chunk_tokens, settings.chunking.overlap_tokens), failures, warnings)
        if not isinstance(document, TextStream):
            scan_pages.put(store, doc_id, [(p.number, p.confidence) for p in document.pages
                                           if p.confidence is not None])
    except Cancelled:
        return "cancelled", set()
    except DocumentError as exc:
        failures.append((shown_path(resolved), exc.message))
        dropped = store.put_failed_document(
            path=resolved, title=shown_path(path.stem), kind=path.suffix.lstrip(".").lower(),
            content_hash=digest, size=size, error=exc.message)
        return "failed", dropped | drop_parts(store, resolved)  # a damaged message keeps no old attachments
    if isinstance(document, TextStream) and document.replaced:
        warnings.append(f"{name} has {document.replaced:,} bytes that are not valid UTF-8; they were "
                        "read as \ufffd and the rest as UTF-8, so check the file if names look wrong.")
    if count > LARGE_DOCUMENT_CHUNKS:
        calls = count * (1 + settings.extraction.gleaning)
        hours = calls * ASSUMED_SECONDS_PER_CALL / 3600
        warnings.append(f"{name} makes {count:,} chunks, about {calls:,} model calls or {hours:,.1f} hours "
                        f"at {ASSUMED_SECONDS_PER_CALL} s a call; press Cancel (Ctrl-C) and split the file "
                        "if that is more than you meant.")
    return "added", touched


def _extract_all(
    store: Store, work: list[ChunkRow], settings: Settings, llm: LLM,
    cancel: threading.Event, touched: set[str], spent: dict[str, int] | None = None,
) -> Iterator[dict]:
    """Run extraction over `work` with at most `parallel` calls in flight; store each result."""
    profile = extraction_profile(store, settings.extraction.profile)  # the user's prompts; stamps the chunks
    parallel = max(1, settings.ollama.total_parallel)
    remaining = {c.document_id: 0 for c in work}
    for c in work:
        remaining[c.document_id] += 1
    totals = dict(chunks_done=0, chunks_failed=0, calls=0, cached_calls=0, prompt_tokens=0, completion_tokens=0)
    totals.update(spent or {})
    queue = iter(work)
    in_flight: dict[Future, ChunkRow] = {}
    fatal: LLMError | None = None
    started = time.monotonic()

    def run(chunk: ChunkRow, accepted: set[str]) -> ChunkExtraction:
        text = store.chunk_text(chunk.id)  # read when its call starts: memory does not grow with the file
        return extract_chunk(llm, profile, text, settings.extraction, cancel, accepted=accepted)

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="docatlas-llm")
    try:
        while True:
            while len(in_flight) < parallel and not cancel.is_set() and fatal is None:
                chunk = next(queue, None)
                if chunk is None:
                    break
                in_flight[pool.submit(run, chunk, accepted_keys(store, chunk.id))] = chunk
            if not in_flight:
                break
            finished, _ = wait(in_flight, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                chunk = in_flight.pop(future)
                error = future.exception()
                if isinstance(error, Cancelled):
                    continue
                if isinstance(error, OllamaUnreachable):
                    fatal = error
                    cancel.set()
                    continue
                if error is not None:
                    reason = error.message if isinstance(error, LLMError) else (
                        "Extraction failed unexpectedly; run again, and see the log if it repeats.")
                    if not isinstance(error, LLMError):
                        log.error("chunk %s failed", chunk.id, exc_info=error)
                    store.fail_chunk(chunk.id, reason)
                    totals["chunks_failed"] += 1
                else:
                    totals["chunks_done"] += 1
                    _store_result(store, chunk, future.result(), settings, llm, touched, totals)
                remaining[chunk.document_id] -= 1
                if remaining[chunk.document_id] == 0:
                    store.refresh_document_status(chunk.document_id)
                left = len(work) - totals["chunks_done"] - totals["chunks_failed"]
                rate = (time.monotonic() - started) / max(1, totals["chunks_done"] + totals["chunks_failed"])
                yield dict(totals, eta=left * rate, message=f"Extracted chunk {chunk.idx + 1}",
                           hosts=host_loads(llm))
    finally:
        if in_flight:  # closed early by the consumer, or cancelled: stop the calls in flight
            cancel.set()
        # Never wait here for a slow model: a call still running finishes in the
        # background and its reply lands in the cache, so the next run gets it free.
        pool.shutdown(wait=False, cancel_futures=True)
        for doc_id in remaining:
            store.refresh_document_status(doc_id)
    if fatal is not None:
        raise fatal


def host_loads(llm: LLM) -> tuple:
    """Each Ollama host's load, when the model is a pool of hosts that reports them."""
    loads = getattr(llm, "host_loads", None)
    return tuple(loads()) if callable(loads) else ()


def _store_result(store: Store, chunk: ChunkRow, result: ChunkExtraction, settings: Settings,
                  llm: LLM, touched: set[str], totals: dict) -> None:
    record_findings(store, chunk.id, result)  # first: a finished chunk always has its findings
    keys = [entity_key(e.name) for e in result.entities]
    pairs = [(entity_key(r.source), entity_key(r.target)) for r in result.relations]
    store.finish_chunk(
        chunk.id, result.entities, result.relations, status=result.status,
        profile=settings.extraction.profile, model=llm.model, calls=result.calls,
        keys=keys, relation_keys=pairs,
    )
    touched.update(keys)
    for pair in pairs:
        touched.update(pair)
    for name in ("calls", "cached_calls", "prompt_tokens", "completion_tokens"):
        totals[name] += getattr(result, name)
