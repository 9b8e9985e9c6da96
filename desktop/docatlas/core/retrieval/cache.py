"""The answer cache: one row per (question, mode, history, settings, models, graph version).

Any change to the graph, the chunks, the embeddings or the community reports moves the
version, so every older answer stops matching; they are pruned on the next write.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict

from docatlas.core.base.settings import Settings
from docatlas.core.storage.database import Store


def knowledge_version(store: Store) -> str:
    """The graph and index counters together: "graph.index"."""
    rows = store.query("SELECT key, value FROM meta WHERE key IN ('graph_version', 'index_version')")
    values = {r["key"]: r["value"] for r in rows}
    return f"{values.get('graph_version', '0')}.{values.get('index_version', '0')}"


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
    rows = store.query("SELECT payload FROM answers WHERE key = ?", (key,))
    return json.loads(rows[0]["payload"]) if rows else None


def put_answer(store: Store, key: str, question: str, mode: str, version: str, payload: dict) -> None:
    """Keep an answer; drop those made for another version of the graph."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM answers WHERE version != ?", (version,))
        conn.execute(
            "INSERT OR REPLACE INTO answers(key, question, mode, version, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key, question, mode, version, json.dumps(payload, ensure_ascii=False), time.time()),
        )
