"""One chunk through the model: first pass, gleaning rounds, optional loop check.

The model call is kept apart from the parse: this module talks to an `LLM`, and hands
each reply to the pure `parse_reply`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from docatlas.core.config import ExtractionSettings
from docatlas.core.extraction.parse import parse_reply
from docatlas.core.extraction.records import EntityRecord, RelationRecord
from docatlas.core.llm import LLM, LLMReply
from docatlas.core.prompts import Profile, render


@dataclass
class ChunkExtraction:
    """What one chunk gave: its records and what it cost."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    status: str = "done"  # "done", or "empty" when the model gave no records at all
    calls: int = 0  # model calls answered by Ollama (not the cache)
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw_replies: list[str] = field(default_factory=list)

    def count(self, reply: LLMReply) -> None:
        """Add one reply's cost."""
        self.raw_replies.append(reply.text)
        if reply.cached:
            self.cached_calls += 1
        else:
            self.calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens


def extract_chunk(
    llm: LLM,
    profile: Profile,
    text: str,
    settings: ExtractionSettings,
    cancel: threading.Event | None = None,
) -> ChunkExtraction:
    """Ask the model for a chunk's entities and relations, gleaning what it missed."""
    values = profile.values(entity_types=settings.entity_types, language=settings.language)
    messages = [{"role": "user", "content": render(profile.prompts["extract"], {**values, "input_text": text})}]
    result = ChunkExtraction()

    reply = llm.chat(messages, format=profile.json_schema, cancel=cancel)
    result.count(reply)
    parsed = parse_reply(reply.text, entity_types=settings.entity_types)
    _add(result, parsed.entities, parsed.relations)
    if parsed.record_count == 0:
        # Prose or a refusal: asking again in the same conversation only feeds a loop.
        result.status = "empty"
        return result

    for round_number in range(settings.gleaning):
        if round_number > 0 and "loop_check" in profile.prompts:
            check = llm.chat(
                [*messages, {"role": "assistant", "content": reply.text},
                 {"role": "user", "content": render(profile.prompts["loop_check"], values)}],
                num_predict=8, cancel=cancel,
            )
            result.count(check)
            if not check.text.strip().upper().startswith("YES"):
                break
        messages = [*messages, {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": render(profile.prompts["glean"], values)}]
        reply = llm.chat(messages, format=profile.json_schema, cancel=cancel)
        result.count(reply)
        parsed = parse_reply(reply.text, entity_types=settings.entity_types)
        if not _add(result, parsed.entities, parsed.relations):
            break
    return result


def _add(result: ChunkExtraction, entities: list[EntityRecord], relations: list[RelationRecord]) -> int:
    """Add records not already present; return how many were new."""
    before = len(result.entities) + len(result.relations)
    seen_entities = set(result.entities)
    seen_relations = set(result.relations)
    result.entities += [e for e in dict.fromkeys(entities) if e not in seen_entities]
    result.relations += [r for r in dict.fromkeys(relations) if r not in seen_relations]
    return len(result.entities) + len(result.relations) - before
