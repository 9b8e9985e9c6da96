"""Embedding work: vectors for chunks, entities, relations and community reports.

Triggers put every changed row on `embed_queue`; `embed_pending` drains it in batches.
A row whose text is unchanged (same hash, same model) costs no model call, a row that is
gone loses its vector, and a changed embedding model queues everything again. When the
embedding model is missing or Ollama is down, it reports one sentence and stops: the
queue stays, and questions fall back to full-text search.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from docatlas.core.base.errors import LLMError, ModelNotFound
from docatlas.core.base.progress import Progress
from docatlas.core.base.settings import Settings
from docatlas.core.retrieval.vectors import pack, refresh_index
from docatlas.core.storage import vectors as stored
from docatlas.core.storage.database import Store

log = logging.getLogger("docatlas.retrieval")

KINDS = ("chunk", "entity", "relation", "community")
MAX_CHARS = 8000  # Ollama truncates to the model's context anyway; keep requests small
_SCAN = 512


class Embedder(Protocol):
    """What embedding needs from the LLM client (OllamaLLM has it)."""

    def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]:
        """One vector per text."""
        ...


def text_hash(text: str) -> str:
    """A short stable fingerprint of an embedded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def embedding_texts(store: Store, kind: str, refs: Sequence[str]) -> dict[str, str]:
    """The text each ref is embedded from; refs whose row is gone are left out."""
    return {ref: text[:MAX_CHARS] for ref, text in stored.source_texts(store, kind, refs).items()}


def pending_count(store: Store) -> int:
    """How many rows wait for an embedding."""
    return stored.queue_length(store)


def _switch_model(store: Store, model: str) -> None:
    """A new embedding model: queue every row again (old vectors stay until replaced)."""
    if store.get_meta("embed_model") != model:
        stored.queue_everything(store, model)


def _error_sentence(exc: LLMError, model: str) -> str:
    if isinstance(exc, ModelNotFound):
        return (f"The embedding model {model} is not installed in Ollama, so questions use keyword "
                f"search only; run `ollama pull {model}` to add it.")
    return exc.message


def embed_pending(store: Store, llm: Embedder, settings: Settings,
                  cancel: threading.Event | None = None) -> Iterator[Progress]:
    """Embed everything queued; yield Progress (stage "embed", step_done of step_total).

    Yields nothing when nothing is queued. Stops early (work kept) when `cancel` is set,
    with stage "cancelled"; on a model failure the last Progress carries the reason, one
    sentence, as its message and its only warning.
    """
    model = settings.ollama.embed_model
    if not model:
        return
    _switch_model(store, model)
    total = pending_count(store)
    if total == 0:
        _refresh_indexes(store, model)  # nothing to embed, but an index may lag (a crash after a commit, an upgrade)
        return
    done, started = 0, time.monotonic()
    batch = max(1, settings.query.embed_batch)

    def progress(stage: str = "embed", message: str = "", warning: str = "") -> Progress:
        return Progress(stage=stage, step_done=done, step_total=total, elapsed=time.monotonic() - started,
                        message=message or warning or f"Embedded {done} of {total} items",
                        warnings=(warning,) if warning else ())

    yield progress(message=f"Embedding {total} items")  # not "Embedded 0 of N": nothing is done yet
    parallel = max(1, settings.ollama.total_parallel)
    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="docatlas-embed")
    try:
        while True:
            if cancel is not None and cancel.is_set():
                yield progress("cancelled", "Stopped; the rest is embedded next time.")
                return
            queued = stored.queued(store, _SCAN)
            if not queued:
                break
            work, skipped = _sort_out(store, queued, model)
            stored.drop_queued(store, [item.id for item, _ in skipped],
                               [(item.kind, item.ref) for item, gone in skipped if gone])
            done += len(skipped)
            batches = [work[i:i + batch] for i in range(0, len(work), batch)]
            # Up to `parallel` batches in flight at once, written here in order as they return.
            for first in range(0, len(batches), parallel):
                if cancel is not None and cancel.is_set():
                    break
                window = batches[first:first + parallel]
                try:
                    results = list(pool.map(lambda part: llm.embed([t for _, t in part], model=model), window))
                except LLMError as exc:
                    log.warning("embedding stopped: %s", exc.message)
                    yield progress(warning=_error_sentence(exc, model))
                    return
                for part, vectors in zip(window, results):
                    if len(vectors) != len(part):
                        yield progress(warning=f"Ollama returned {len(vectors)} embeddings for {len(part)} "
                                               f"texts with {model}; try another embedding model.")
                        return
                    stored.write_vectors(store, model, [
                        stored.NewVector(item.id, item.kind, item.ref, text_hash(text), len(vector), pack(vector))
                        for (item, text), vector in zip(part, vectors)])
                    done += len(part)
                    yield progress()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    _refresh_indexes(store, model)


def _refresh_indexes(store: Store, model: str) -> None:
    """The on-disk indexes take in what changed (a small change waits: searches score it from SQL)."""
    for kind in KINDS:
        change = refresh_index(store, kind, model)
        if change.written:
            log.info("vector index %s: %d added, %d removed%s", kind, change.added, change.removed,
                     " (built again)" if change.rebuilt else "")


def chunk_batch(store: Store, model: str, size: int) -> list[tuple[stored.QueuedItem, str]]:
    """Up to `size` queued chunks to embed now, with their texts, for embedding while extraction runs.

    Chunks whose vector is current, or that are gone, leave the queue here; entities and
    relations wait for `embed_pending` after the merge (their descriptions still change)."""
    _switch_model(store, model)
    queued = [item for item in stored.queued(store, _SCAN) if item.kind == "chunk"]
    work, skipped = _sort_out(store, queued, model)
    if skipped:
        stored.drop_queued(store, [item.id for item, _ in skipped],
                           [(item.kind, item.ref) for item, gone in skipped if gone])
    return work[:size]


def write_batch(store: Store, model: str, part: Sequence[tuple[stored.QueuedItem, str]],
                vectors: Sequence[Sequence[float]]) -> bool:
    """Store the vectors of a batch from `chunk_batch`; False when the model returned another count."""
    if len(vectors) != len(part):
        return False
    stored.write_vectors(store, model, [
        stored.NewVector(item.id, item.kind, item.ref, text_hash(text), len(vector), pack(vector))
        for (item, text), vector in zip(part, vectors)])
    return True


def _sort_out(store: Store, queued: list[stored.QueuedItem],
              model: str) -> tuple[list[tuple[stored.QueuedItem, str]], list[tuple[stored.QueuedItem, bool]]]:
    """Split queue rows into (item, text) to embed and (item, gone) to drop."""
    work: list[tuple[stored.QueuedItem, str]] = []
    skipped: list[tuple[stored.QueuedItem, bool]] = []
    by_kind: dict[str, list[stored.QueuedItem]] = {}
    for item in queued:
        by_kind.setdefault(item.kind, []).append(item)
    for kind, items in by_kind.items():
        refs = [item.ref for item in items]
        texts = embedding_texts(store, kind, refs) if kind in KINDS else {}
        hashes = stored.stored_hashes(store, kind, refs)
        for item in items:
            text = texts.get(item.ref)
            if text is None:
                skipped.append((item, True))
            elif hashes.get(item.ref) == (model, text_hash(text)):
                skipped.append((item, False))
            else:
                work.append((item, text))
    return work, skipped
