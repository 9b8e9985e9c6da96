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
from docatlas.core.base.keys import split_relation_ref
from docatlas.core.base.settings import Settings
from docatlas.core.retrieval.vectors import bump_versions, load_matrix, write_vectors
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
    out: dict[str, str] = {}
    if kind == "relation":
        for ref in refs:
            source, target = split_relation_ref(ref)
            rows = store.query(
                "SELECT r.keywords, r.description, COALESCE(s.name, r.source_key) AS s, "
                "COALESCE(t.name, r.target_key) AS t FROM relations r "
                "LEFT JOIN entities s ON s.key = r.source_key LEFT JOIN entities t ON t.key = r.target_key "
                "WHERE r.source_key = ? AND r.target_key = ?", (source, target))
            if rows:
                r = rows[0]
                out[ref] = f"{r['s']} - {r['t']}: {r['keywords']}. {r['description']}"
        return {k: v[:MAX_CHARS] for k, v in out.items()}
    marks = ",".join("?" * len(refs))
    if kind == "entity":
        sql = f"SELECT key AS ref, name || ': ' || description AS text FROM entities WHERE key IN ({marks})"
    elif kind == "chunk":
        sql = f"SELECT CAST(id AS TEXT) AS ref, text FROM chunks WHERE id IN ({marks})"
    elif kind == "community":
        sql = (f"SELECT CAST(id AS TEXT) AS ref, title || '\n' || summary AS text FROM communities "
               f"WHERE status = 'done' AND id IN ({marks})")
    else:
        raise ValueError(f"unknown embedding kind {kind!r}")
    params = [int(r) for r in refs if r.isdigit()] if kind in ("chunk", "community") else list(refs)
    for row in store.query(sql, params):
        out[row["ref"]] = row["text"][:MAX_CHARS]
    return out


def pending_count(store: Store) -> int:
    """How many rows wait for an embedding."""
    return int(store.query("SELECT COUNT(*) AS n FROM embed_queue")[0]["n"])


def _switch_model(store: Store, model: str) -> None:
    """A new embedding model: queue every row again (old vectors stay until replaced)."""
    if store.get_meta("embed_model") == model:
        return
    with store.transaction() as conn:
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'chunk', CAST(id AS TEXT) FROM chunks")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) SELECT 'entity', key FROM entities")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) "
                     "SELECT 'relation', source_key || char(31) || target_key FROM relations")
        conn.execute("INSERT OR IGNORE INTO embed_queue(kind, ref) "
                     "SELECT 'community', CAST(id AS TEXT) FROM communities WHERE status = 'done'")
        store.set_meta("embed_model", model, conn)


def _error_sentence(exc: LLMError, model: str) -> str:
    if isinstance(exc, ModelNotFound):
        return (f"The embedding model {model} is not installed in Ollama, so questions use keyword "
                f"search only; run `ollama pull {model}` to add it.")
    return exc.message


def embed_pending(store: Store, llm: Embedder, settings: Settings,
                  cancel: threading.Event | None = None) -> Iterator[dict]:
    """Embed everything queued; yield progress dicts {stage, done, total, message[, error]}.

    Yields nothing when nothing is queued. Stops early (work kept) when `cancel` is set,
    with stage "cancelled"; on a model failure the last dict carries `error`, one sentence.
    """
    model = settings.ollama.embed_model
    if not model:
        return
    _switch_model(store, model)
    total = pending_count(store)
    if total == 0:
        return
    done, started = 0, time.monotonic()
    batch = max(1, settings.query.embed_batch)

    def progress(**extra: object) -> dict:
        return {"stage": "embed", "done": done, "total": total,
                "elapsed": time.monotonic() - started,
                "message": f"Embedded {done} of {total} items", **extra}

    yield progress()
    parallel = max(1, settings.ollama.parallel)
    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="docatlas-embed")
    try:
        while True:
            if cancel is not None and cancel.is_set():
                yield progress(stage="cancelled", message="Stopped; the rest is embedded next time.")
                return
            queued = store.query(f"SELECT id, kind, ref FROM embed_queue ORDER BY id LIMIT {_SCAN}")
            if not queued:
                break
            work, skipped = _sort_out(store, queued, model)
            with store.transaction() as conn:
                _drop(conn, skipped)
            done += len(skipped)
            batches = [work[i:i + batch] for i in range(0, len(work), batch)]
            # Up to `parallel` batches in flight at once, written here in order as they return.
            for first in range(0, len(batches), parallel):
                if cancel is not None and cancel.is_set():
                    break
                window = batches[first:first + parallel]
                try:
                    results = list(pool.map(lambda part: llm.embed([t for *_, t in part], model=model), window))
                except LLMError as exc:
                    log.warning("embedding stopped: %s", exc.message)
                    yield progress(error=_error_sentence(exc, model), message=_error_sentence(exc, model))
                    return
                for part, vectors in zip(window, results):
                    if len(vectors) != len(part):
                        yield progress(error=f"Ollama returned {len(vectors)} embeddings for {len(part)} texts "
                                             f"with {model}; try another embedding model.")
                        return
                    _store_vectors(store, model, part, vectors)
                    done += len(part)
                    yield progress()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    for kind in KINDS:  # load the search matrices now, so that the next question does not wait
        load_matrix(store, kind, model)


def _store_vectors(store: Store, model: str, part: list, vectors: list) -> None:
    """Write one batch's vectors and take its items off the queue, together."""
    with store.transaction() as conn:
        by_kind: dict[str, list] = {}
        for (_, kind, ref, text), vector in zip(part, vectors):
            by_kind.setdefault(kind, []).append((ref, text_hash(text), vector))
        for kind, rows in by_kind.items():
            write_vectors(conn, kind, model, rows)
        conn.executemany("DELETE FROM embed_queue WHERE id = ?", [(w[0],) for w in part])


def _sort_out(store: Store, queued: list[dict], model: str) -> tuple[list, list]:
    """Split queue rows into (id, kind, ref, text) to embed and (id, kind, ref, gone) to drop."""
    work: list[tuple[int, str, str, str]] = []
    skipped: list[tuple[int, str, str, bool]] = []
    by_kind: dict[str, list[dict]] = {}
    for row in queued:
        by_kind.setdefault(row["kind"], []).append(row)
    for kind, rows in by_kind.items():
        refs = [r["ref"] for r in rows]
        texts = embedding_texts(store, kind, refs) if kind in KINDS else {}
        marks = ",".join("?" * len(refs))
        stored = {r["ref"]: (r["model"], r["hash"]) for r in store.query(
            f"SELECT ref, model, hash FROM embeddings WHERE kind = ? AND ref IN ({marks})", [kind, *refs])}
        for row in rows:
            text = texts.get(row["ref"])
            if text is None:
                skipped.append((row["id"], kind, row["ref"], True))
            elif stored.get(row["ref"]) == (model, text_hash(text)):
                skipped.append((row["id"], kind, row["ref"], False))
            else:
                work.append((row["id"], kind, row["ref"], text))
    return work, skipped


def _drop(conn, skipped: list[tuple[int, str, str, bool]]) -> None:
    gone = [(kind, ref) for _, kind, ref, is_gone in skipped if is_gone]
    if gone:
        conn.executemany("DELETE FROM embeddings WHERE kind = ? AND ref = ?", gone)
        bump_versions(conn)
    conn.executemany("DELETE FROM embed_queue WHERE id = ?", [(s[0],) for s in skipped])
