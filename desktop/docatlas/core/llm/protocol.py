"""What the rest of DocAtlas knows of a model: the LLM protocol, its reply, the reply cache.

Extraction, summaries, retrieval and the jobs depend on these, never on the Ollama
transport (`llm.ollama`), so a cache-only replay (`llm.replay`) or a test stand-in fits.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm.chat_lines import count_of

_OPEN, _CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


@runtime_checkable
class ResponseCache(Protocol):
    """Where replies are kept between runs (the store implements it)."""

    def get(self, key: str) -> str | None:
        """The reply cached under `key`, or None."""
        ...

    def put(self, key: str, model: str, reply: str) -> None:
        """Keep `reply` (produced by `model`) under `key`."""
        ...


class MemoryCache:
    """A dict-backed ResponseCache, for tests and one-off use."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        """The cached reply for `key`, or None."""
        with self._lock:
            return self._data.get(key)

    def put(self, key: str, model: str, reply: str) -> None:
        """Remember `reply` under `key`."""
        with self._lock:
            self._data[key] = reply

    def __len__(self) -> int:
        return len(self._data)


def cache_key(model: str, options: dict, messages: list[dict], format: object | None) -> str:
    """sha256 over a canonical JSON of everything that decides the reply."""
    canonical = json.dumps(
        {"model": model, "options": options, "messages": messages, "format": format},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def reply_options(settings: OllamaSettings, num_predict: int | None) -> dict[str, Any]:
    """The options that shape a reply, and so its cache key (num_ctx is left out: it only
    makes room, and leaving it out lets a cache hit skip the /api/show call)."""
    return {"temperature": settings.temperature, "num_predict": num_predict or settings.num_predict}


@dataclass(frozen=True)
class LLMReply:
    """A finished reply, think blocks removed.

    `done_reason` is Ollama's: "stop" for a reply that ended by itself, "length" for one cut
    at the reply limit; "repeat" when DocAtlas stopped a reply that was looping. Only a
    "stop" reply is cached. `prompt_tokens` is the model's own count (`prompt_eval_count`).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    seconds: float
    done_reason: str = "stop"

    @property
    def cut(self) -> bool:
        """The reply did not end by itself (cut at the limit, or stopped while looping)."""
        return self.done_reason in ("length", "repeat")


@runtime_checkable
class LLM(Protocol):
    """What extraction and the pipeline depend on."""

    model: str

    def chat(
        self,
        messages: list[dict],
        *,
        format: dict | str | None = None,
        num_predict: int | None = None,
        cancel: threading.Event | None = None,
        on_token: Callable[[str], None] | None = None,
        slot: AbstractContextManager | None = None,
    ) -> LLMReply:
        """Answer `messages`; raise LLMError (user sentence) or Cancelled. `slot` (the caller's
        limit on calls in flight) is held only while the model itself is asked."""
        ...


def strip_think(text: str) -> str:
    """Remove <think>…</think> blocks, a stray leading …</think>, and an unclosed <think>…."""
    lower = text.lower()
    start, end = lower.find(_OPEN), lower.find(_CLOSE)
    if end != -1 and (start == -1 or end < start):  # the chat template opened the block
        text = text[end + len(_CLOSE) :]
    text = _THINK_BLOCK.sub("", text)
    cut = text.lower().find(_OPEN)
    if cut != -1:  # unclosed: everything after it is thinking, maybe all of it
        text = text[:cut]
    return text.strip()


def full_name(name: str) -> str:
    """Ollama's implicit tag: "qwen2.5" means "qwen2.5:latest"."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def model_rows(listed: list[dict]) -> list[dict]:
    """Ollama's /api/tags models as rows: name, size (bytes), family, parameter_size; sorted by name."""
    models = []
    for m in listed:
        details = m.get("details") if isinstance(m.get("details"), dict) else {}
        models.append({
            "name": str(m.get("model") or m.get("name") or ""),
            "size": count_of(m, "size"),
            "family": str(details.get("family") or ""),
            "parameter_size": str(details.get("parameter_size") or ""),
        })
    return sorted(models, key=lambda m: m["name"])
