"""The answer cache: one row per (question, mode, history, settings, models, graph version).

Any change to the graph, the chunks, the embeddings or the community reports moves the
version, so every older answer stops matching; they are pruned on the next write.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from docatlas.core.base.settings import Settings
from docatlas.core.storage import answers as stored
from docatlas.core.storage.database import Store


def knowledge_version(store: Store) -> str:
    """The graph and index counters together: "graph.index"."""
    graph, index = stored.version_counters(store)
    return f"{graph}.{index}"


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


def put_answer(store: Store, key: str, question: str, mode: str, version: str, payload: dict) -> None:
    """Keep an answer; drop those made for another version of the graph."""
    stored.keep_answer(store, key, question, mode, version, json.dumps(payload, ensure_ascii=False))
