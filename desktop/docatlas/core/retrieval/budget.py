"""Token budgets: how much context fits the model's window, and its split by part.

The window is the model's trained context capped by `max_context`. The LLM client asks
Ollama for (prompt + overhead per message) x SAFETY plus the reply room, so the room left
for the context is computed the same way: the assembled prompt never exceeds the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from docatlas.core.base.errors import LLMError, ModelNotFound, OllamaTimeout, OllamaUnreachable
from docatlas.core.base.settings import QuerySettings, Settings
from docatlas.core.base.tokens import count_tokens, token_bytes
from docatlas.core.llm.ollama import FALLBACK_CONTEXT, MESSAGE_OVERHEAD, SAFETY
from docatlas.core.llm.protocol import LLM


@dataclass(frozen=True)
class Budgets:
    """Tokens allowed for each part of the context."""

    entities: int
    relations: int
    chunks: int

    @property
    def total(self) -> int:
        """All parts together."""
        return self.entities + self.relations + self.chunks


def context_window(llm: LLM, settings: Settings) -> int:
    """Tokens the chat model may use: its trained context, capped by `max_context`."""
    getter = getattr(llm, "context_length", None)
    length = FALLBACK_CONTEXT
    if callable(getter):
        try:
            length = int(getter())
        except (OllamaUnreachable, OllamaTimeout, ModelNotFound):
            raise
        except LLMError:
            length = FALLBACK_CONTEXT
    return min(length, settings.ollama.max_context)


def reply_room(window: int, settings: QuerySettings) -> int:
    """Tokens kept for the answer: the setting, but never more than a third of the window."""
    return max(64, min(settings.answer_tokens, window // 3))


def free_room(window: int, messages: list[dict], reply: int) -> int:
    """Tokens left for the context after `messages` (without it) and the reply."""
    used = sum(count_tokens(str(m.get("content") or "")) for m in messages)
    return max(0, math.floor((window - reply) / SAFETY) - MESSAGE_OVERHEAD * len(messages) - used)


def split(settings: QuerySettings, mode: str, room: int) -> Budgets:
    """Each part's budget for a mode, scaled down together when the room is short."""
    if mode == "naive":
        wanted = Budgets(0, 0, settings.entity_budget + settings.relation_budget + settings.chunk_budget)
    else:
        wanted = Budgets(settings.entity_budget, settings.relation_budget, settings.chunk_budget)
    if wanted.total <= room or wanted.total == 0:
        return wanted
    scale = room / wanted.total
    return Budgets(*(math.floor(v * scale) for v in (wanted.entities, wanted.relations, wanted.chunks)))


def truncate(text: str, limit: int) -> str:
    """The text cut to at most `limit` tokens."""
    if limit <= 0:
        return ""
    if len(text) <= limit and text.isascii():  # an ASCII token is at least one character
        return text
    tokens = token_bytes(text)
    if len(tokens) <= limit:
        return text
    return b"".join(tokens[: max(0, limit - 2)]).decode("utf-8", "replace").rstrip() + "…"
