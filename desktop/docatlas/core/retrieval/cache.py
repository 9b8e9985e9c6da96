"""The answer cache: one row per (question, mode, history, settings, models, graph version).

Any change to the graph, the chunks, the embeddings or the community reports moves the
version, so every older answer stops matching; they are pruned on the next write.

Queries (CLI `query`, `evaluate`, the window's chat) write here without the workspace lock,
so that they run during an ingestion: each write is one short transaction of its own that
checks, under SQLite's write lock, that the answer's version is still the workspace's. An
answer made while another process changed the graph is not kept (it would prune the newer
answers), and a database kept busy by another process leaves the answer uncached rather
than lost.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict

from docatlas.core.base.settings import Settings
from docatlas.core.prompts.store import prompts_fingerprint
from docatlas.core.storage import answers as stored
from docatlas.core.storage.database import Store, StoreBusy

log = logging.getLogger(__name__)


def knowledge_version(store: Store) -> str:
    """The graph and index counters together: "graph.index"."""
    graph, index = stored.version_counters(store)
    return f"{graph}.{index}"


def answer_version(store: Store) -> str:
    """The version an answer is kept under: the graph and index counters and the prompts in use."""
    return f"{knowledge_version(store)}.{prompts_fingerprint(store)}"


def answer_key(question: str, mode: str, history: list[dict], settings: Settings, chat_model: str,
               version: str) -> str:
    """The cache key of an answer."""
    canonical = json.dumps(
        {"q": " ".join(question.split()), "mode": mode, "history": history, "version": version,
         "query": asdict(settings.query), "model": chat_model, "embed": settings.ollama.embed_model},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def get_answer(store: Store, key: str) -> dict | None:
    """A cached answer payload, or None."""
    payload = stored.answer_payload(store, key)
    return json.loads(payload) if payload is not None else None


def put_answer(store: Store, key: str, question: str, mode: str, version: str, payload: dict) -> bool:
    """Keep an answer made at `version` (see `answer_version`); drop those of another version.

    False when it was not kept: the workspace changed meanwhile, or another process kept the
    database busy (the answer itself is still the caller's to show).
    """
    try:
        kept = stored.keep_answer(store, key, question, mode, version, json.dumps(payload, ensure_ascii=False),
                                  lambda: answer_version(store))
    except StoreBusy:
        log.warning("an answer was left uncached: the workspace was busy in another process")
        return False
    if not kept:
        log.info("an answer was left uncached: the workspace changed while it was being made")
    return kept
