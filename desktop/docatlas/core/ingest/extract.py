"""One chunk through the model: first pass, gleaning rounds, optional loop check.

The model call is kept apart from the parse: this module talks to an `LLM`, and hands
each reply to the pure `parse_reply`, which reads every profile's format.

Gleaning continues the same conversation: the first prompt, the model's own reply, then
a short request for only what it left out. With `loop_check` on, a YES/NO question comes
before each round and a NO (or anything that is not a clear YES) ends the rounds. A round
that brings no new entity or relation ends them too. The loop check is not kept in the
conversation that the next gleaning round continues.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from docatlas.core.base.keys import entity_key, relation_pair
from docatlas.core.base.records import EntityRecord, RelationRecord
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.ingest.parse import parse_reply
from docatlas.core.llm.protocol import LLM, LLMReply
from docatlas.core.prompts.catalog import Profile, render

LOOP_CHECK_TOKENS = 8  # room for "YES" or "NO" (and a stray word)
_ANSWER = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


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
    gleaning_rounds: int = 0  # gleaning requests made
    loop_checks: int = 0  # YES/NO questions asked

    def count(self, reply: LLMReply) -> None:
        """Add one reply's cost."""
        self.raw_replies.append(reply.text)
        if reply.cached:
            self.cached_calls += 1
        else:
            self.calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens


def first_messages(profile: Profile, text: str, settings: ExtractionSettings) -> list[dict]:
    """The conversation that starts a chunk: the rendered extraction prompt."""
    values = profile.values(entity_types=settings.entity_types, language=settings.language)
    return [{"role": "user", "content": render(profile.prompts["extract"], {**values, "input_text": text})}]


def follow_up(profile: Profile, prompt_name: str, settings: ExtractionSettings) -> dict:
    """A later user turn of the conversation: the rendered `glean` or `loop_check` prompt."""
    values = profile.values(entity_types=settings.entity_types, language=settings.language)
    return {"role": "user", "content": render(profile.prompts[prompt_name], values)}


def yes_or_no(answer: str) -> bool | None:
    """True for a YES reply, False for NO, None when neither word is there (the first one counts)."""
    match = _ANSWER.search(answer or "")
    return None if match is None else match.group(1).lower() == "yes"


def wants_more(answer: str) -> bool:
    """True when a loop-check reply says YES; NO or an unclear reply ends the rounds."""
    return yes_or_no(answer) is True


def extract_chunk(
    llm: LLM,
    profile: Profile,
    text: str,
    settings: ExtractionSettings,
    cancel: threading.Event | None = None,
) -> ChunkExtraction:
    """Ask the model for a chunk's entities and relations, gleaning what it missed."""
    messages = first_messages(profile, text, settings)
    result = ChunkExtraction()
    seen: set[object] = set()

    reply = llm.chat(messages, format=profile.json_schema, cancel=cancel)
    result.count(reply)
    parsed = parse_reply(reply.text, entity_types=settings.entity_types)
    _add(result, parsed.entities, parsed.relations, seen)
    if parsed.record_count == 0:
        # Prose or a refusal: asking again in the same conversation only feeds a loop.
        result.status = "empty"
        return result

    for _ in range(settings.gleaning):
        history = [*messages, {"role": "assistant", "content": reply.text}]
        if settings.loop_check and "loop_check" in profile.prompts:
            check = llm.chat([*history, follow_up(profile, "loop_check", settings)],
                             num_predict=LOOP_CHECK_TOKENS, cancel=cancel)
            result.count(check)
            result.loop_checks += 1
            if not wants_more(check.text):
                break
        messages = [*history, follow_up(profile, "glean", settings)]
        reply = llm.chat(messages, format=profile.json_schema, cancel=cancel)
        result.count(reply)
        result.gleaning_rounds += 1
        parsed = parse_reply(reply.text, entity_types=settings.entity_types)
        if not _add(result, parsed.entities, parsed.relations, seen):
            break
    return result


def _add(result: ChunkExtraction, entities: list[EntityRecord], relations: list[RelationRecord],
         seen: set[object]) -> int:
    """Add records not already present; return how many new entities or relation pairs came.

    A record that only re-describes an entity or pair already found is kept (its text may
    add something) but does not count as new, so a round of repeats ends the gleaning.
    """
    known_entities = set(result.entities)
    known_relations = set(result.relations)
    result.entities += [e for e in dict.fromkeys(entities) if e not in known_entities]
    result.relations += [r for r in dict.fromkeys(relations) if r not in known_relations]
    identities: set[object] = {entity_key(e.name) for e in entities}
    identities |= {relation_pair(entity_key(r.source), entity_key(r.target)) for r in relations}
    fresh = identities - seen
    seen |= fresh
    return len(fresh)
