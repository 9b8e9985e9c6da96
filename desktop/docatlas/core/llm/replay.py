"""An LLM that answers only from the reply cache: re-deriving the graph never calls the model.

`ReplayLLM` computes the same cache key as `OllamaLLM` (model, temperature, num_predict,
messages, format) and returns the reply stored under it. The first turn of a conversation
that is not cached raises `NotCached`; a later turn (a gleaning round or a loop check the
original run never made, because a new parser reads its replies differently) answers
with an empty reply, which ends the rounds as the original run ended them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

from docatlas.core.base.errors import LLMError
from docatlas.core.base.settings import OllamaSettings
from docatlas.core.llm.protocol import LLMReply, ResponseCache, cache_key, reply_options


class NotCached(LLMError):
    """The reply is not in the cache, and this LLM may not ask the model."""


class ReplayLLM:
    """The `LLM` protocol over the reply cache alone; counts hits and misses."""

    def __init__(self, settings: OllamaSettings, cache: ResponseCache, model: str | None = None):
        self.settings = settings
        self.cache = cache
        self.model = model or settings.model
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

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
        """The cached reply to `messages`; raise NotCached for an unknown first turn. No model is
        asked, so `slot` is never taken."""
        options = reply_options(self.settings, num_predict)
        hit = self.cache.get(cache_key(self.model, options, messages, format))
        with self._lock:
            if hit is not None:
                self.hits += 1
            else:
                self.misses += 1
        if hit is None:
            if len(messages) <= 1:
                raise NotCached(f"No reply of {self.model} to this prompt is cached.")
            hit = ""
        return LLMReply(hit, 0, 0, True, 0.0)
