"""One chunk through the model: first pass, gleaning rounds, optional loop check.

The model call is kept apart from the parse: this module talks to an `LLM`, and hands
each reply to the pure `parse_reply`, which reads every profile's format.

Gleaning continues the same conversation: the first prompt, the model's own reply, then
a short request for only what it left out. With `loop_check` on, a YES/NO question comes
before each round and a NO (or anything that is not a clear YES) ends the rounds. A round
that brings no new entity or relation ends them too. The loop check is not kept in the
conversation that the next gleaning round continues. A round is asked only while at least
`glean_min_missing` of the chunk's concept-layer names (capitalised names found without the
model) are not yet among the records: a first pass that named them all is not asked again. A
chunk with no such name (lower-case prose, a script without capitals) gleans as before.

A profile with `candidates` (`typing`) lists those names in its prompt and gets a JSON schema
built for the chunk; its replies are read by `typing_reply.read_reply`, not `parse_reply`.

Every reply has room that follows the chunk's size (`reply_limit`). A reply cut at that
limit is never cached (the transport caches only replies that ended by themselves); its
records are salvaged and the chunk is asked once more with twice the room; if that reply is
cut too, its records are salvaged and gleaning ends. A reply stopped while looping is
salvaged without a re-ask (more room only makes a longer loop). At the end the records are
held to the allowed types and grounded in the chunk's text (`grounding`); the rest are kept
as `ungrounded`, and the figures go to `health`. A grounded record the model wrote no
description for (the `lean` profile asks for none) quotes its chunk's sentence (`described`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from docatlas.core.base.keys import entity_key, relation_pair
from docatlas.core.base.records import EntityRecord, ParseResult, RelationRecord
from docatlas.core.base.settings import ExtractionSettings
from docatlas.core.base.tokens import count_tokens
from docatlas.core.ingest.described import describe_from_text
from docatlas.core.ingest.entity_types import TypeNote, hold_types
from docatlas.core.ingest.grounding import Ungrounded, ground
from docatlas.core.ingest.health import ChunkHealth, reply_format
from docatlas.core.ingest.parse import parse_reply
from docatlas.core.ingest.typing_reply import Candidates, candidates_of, read_reply, schema_for
from docatlas.core.llm.protocol import LLM, LLMReply
from docatlas.core.prompts.catalog import Profile, render
from docatlas.core.prompts.examples import example_names, shipped_example_names

LOOP_CHECK_TOKENS = 8  # room for "YES" or "NO" (and a stray word)
MIN_REPLY, MAX_REPLY = 512, 4096  # reply room for an extraction, before a re-ask doubles it
_ANSWER = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


@dataclass
class ChunkExtraction:
    """What one chunk gave: its records and what it cost."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    status: str = "done"  # "done", or "empty" when no record the text backs came
    calls: int = 0  # model calls answered by Ollama (not the cache)
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw_replies: list[str] = field(default_factory=list)
    gleaning_rounds: int = 0  # gleaning requests made
    loop_checks: int = 0  # YES/NO questions asked
    ungrounded: list[Ungrounded] = field(default_factory=list)  # records the text does not back
    type_notes: list[TypeNote] = field(default_factory=list)  # types mapped into the list
    health: ChunkHealth = field(default_factory=ChunkHealth)

    def count(self, reply: LLMReply) -> None:
        """Add one reply's cost."""
        self.raw_replies.append(reply.text)
        if reply.cached:
            self.cached_calls += 1
        else:
            self.calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens


def reply_limit(chunk_tokens: int) -> int:
    """Reply room for a chunk: records run to about the chunk's own length, plus a margin."""
    return max(MIN_REPLY, min(MAX_REPLY, chunk_tokens * 3 // 2 + 256))


def first_messages(profile: Profile, text: str, settings: ExtractionSettings,
                   candidates: Candidates | None = None) -> list[dict]:
    """The conversation that starts a chunk: the rendered extraction prompt."""
    values = profile.values(entity_types=settings.entity_types, language=settings.language)
    prompt = profile.prompts["extract"]
    if "{candidate_" in prompt:
        found = candidates if candidates is not None else candidates_of(text)
        values |= {"candidate_names": found.listed_names(), "candidate_pairs": found.listed_pairs()}
    return [{"role": "user", "content": render(prompt, {**values, "input_text": text})}]


def missing_names(candidates: Candidates, result: ChunkExtraction) -> int:
    """How many of the chunk's candidate names no entity record names yet."""
    return len(set(candidates.keys) - {entity_key(e.name) for e in result.entities})


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
    *,
    accepted: Collection[str] = (),
    aliases: Mapping[str, Collection[str]] | None = None,
) -> ChunkExtraction:
    """Ask the model for a chunk's entities and relations, gleaning what it missed.

    `accepted`: entity keys the user accepted for this chunk (they count as grounded);
    `aliases`: entity key -> other names, for grounding."""
    candidates = candidates_of(text)
    messages = first_messages(profile, text, settings, candidates)
    result = ChunkExtraction()
    seen: set[object] = set()
    room = reply_limit(count_tokens(text))
    fmt = schema_for(candidates, settings.entity_types) if profile.candidates else profile.json_schema

    def parsed_of(reply: LLMReply) -> ParseResult:
        if profile.candidates:
            return read_reply(reply.text, candidates, text, settings.entity_types)
        return parse_reply(reply.text, entity_types=settings.entity_types)

    if profile.candidates and not candidates.names:
        result.health.reply_format = "empty"
        return _settle(result, profile, text, settings, accepted, aliases)  # nothing to type: no call
    reply = _ask(llm, messages, fmt, room, result, cancel)
    result.health.reply_format = reply_format(reply.text)
    parsed = parsed_of(reply)
    _add(result, parsed.entities, parsed.relations, seen)
    if parsed.record_count == 0:
        # Prose or a refusal: asking again in the same conversation only feeds a loop.
        return _settle(result, profile, text, settings, accepted, aliases)

    for _ in range(settings.gleaning):
        if reply.cut:  # out of room or looping: another round would be the same
            break
        if candidates.keys and missing_names(candidates, result) < settings.glean_min_missing:
            break  # the records already name (almost) every name the text shows (none shown: no judge)
        history = [*messages, {"role": "assistant", "content": reply.text}]
        if settings.loop_check and "loop_check" in profile.prompts:
            check = llm.chat([*history, follow_up(profile, "loop_check", settings)],
                             num_predict=LOOP_CHECK_TOKENS, cancel=cancel)
            result.count(check)
            result.loop_checks += 1
            if not wants_more(check.text):
                break
        messages = [*history, follow_up(profile, "glean", settings)]
        reply = _ask(llm, messages, fmt, room, result, cancel)
        result.gleaning_rounds += 1
        parsed = parsed_of(reply)
        if not _add(result, parsed.entities, parsed.relations, seen):
            break
    return _settle(result, profile, text, settings, accepted, aliases)


def settle_records(profile: Profile | None, text: str, settings: ExtractionSettings,
                   entities: list[EntityRecord], relations: list[RelationRecord],
                   accepted: Collection[str] = ()) -> ChunkExtraction:
    """Records from elsewhere (stored before grounding existed) held to the same rules."""
    result = ChunkExtraction(entities=list(entities), relations=list(relations))
    result.health.reply_format = "stored"
    return _settle(result, profile, text, settings, accepted, None)


def _ask(llm: LLM, messages: list[dict], fmt: dict | None, room: int, result: ChunkExtraction,
         cancel: threading.Event | None) -> LLMReply:
    """One extraction reply; a reply cut at the limit is asked once more with twice the room."""
    reply = llm.chat(messages, format=fmt, num_predict=room, cancel=cancel)
    result.count(reply)
    if reply.done_reason == "length":
        result.health.retries += 1
        again = llm.chat(messages, format=fmt, num_predict=room * 2, cancel=cancel)
        result.count(again)
        # the longer reply holds at least as much; a cut one is salvaged by the parser
        reply = again if len(again.text) >= len(reply.text) or not again.cut else reply
    if reply.cut:  # what is kept was cut (or stopped looping): its records are salvaged
        result.health.cut += 1
    return reply


def _settle(result: ChunkExtraction, profile: Profile | None, text: str, settings: ExtractionSettings,
            accepted: Collection[str], aliases: Mapping[str, Collection[str]] | None) -> ChunkExtraction:
    """Hold types to the list, ground the records in the text, fill in the health figures."""
    health = result.health
    health.found = len(result.entities) + len(result.relations)
    entities, result.type_notes = hold_types(result.entities, settings.entity_types)
    grounded = ground(entities, result.relations, text,
                      examples=(example_names(profile) if profile else frozenset()) | shipped_example_names(),
                      aliases=aliases, accepted=accepted)
    result.entities, result.relations = describe_from_text(text, grounded.entities, grounded.relations)
    result.ungrounded = grounded.ungrounded
    health.grounded = len(result.entities) + len(result.relations)
    health.grounded_entities = len(result.entities)
    health.ungrounded = len(result.ungrounded)
    health.remapped = len(result.type_notes)
    result.status = "done" if health.grounded else "empty"
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
